#!/usr/bin/env python3
"""Records the objects kube-apiserver creates as it boots, for the in-memory server to start
with the same cluster.

    xtask/kube-apiserver.sh run python3 xtask/record-boot-objects.py OUT.json

Run it against a freshly started server (nothing created by hand): it lists, from the server
xtask/kube-apiserver.sh exports, every object of the kinds below (the bootstrap RBAC policy of
`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`, the system priority classes, API priority
and fairness's mandatory and suggested configuration, the local APIServices) and writes them as
they would be created: without what the server assigns (uid, resourceVersion, timestamps,
generation, managedFields) nor status, which the server's own strategies and controllers write
again. The Service `default/kubernetes` and its endpoints are not recorded: they carry the
server's address, which the in-memory server words itself.
"""

import json
import os
import ssl
import sys
import urllib.request

RESOURCES = [
    "apis/rbac.authorization.k8s.io/v1/clusterroles",
    "apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "apis/rbac.authorization.k8s.io/v1/roles",
    "apis/rbac.authorization.k8s.io/v1/rolebindings",
    "apis/scheduling.k8s.io/v1/priorityclasses",
    "apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
    "apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
    "apis/apiregistration.k8s.io/v1/apiservices",
]

ASSIGNED = {"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"}


def get(path):
    env = os.environ
    context = ssl.create_default_context(cafile=env["REAL_APISERVER_CA"])
    context.load_cert_chain(env["REAL_APISERVER_CLIENT_CERT"], env["REAL_APISERVER_CLIENT_KEY"])
    url = env["REAL_APISERVER_URL"].rstrip("/") + "/" + path
    with urllib.request.urlopen(url, context=context) as response:
        return json.load(response)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: record-boot-objects.py OUT.json (under xtask/kube-apiserver.sh run)")
    objects = []
    for path in RESOURCES:
        listed = get(path)
        api_version = "/".join(path.split("/")[1:3])
        kind = listed["kind"].removesuffix("List")
        for item in sorted(listed["items"], key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"])):
            item["apiVersion"] = api_version
            item["kind"] = kind
            item["metadata"] = {k: v for k, v in item["metadata"].items() if k not in ASSIGNED}
            item.pop("status", None)
            objects.append(item)
    version = get("version")["gitVersion"]
    with open(sys.argv[1], "w") as out:
        json.dump({"kubernetes": version, "objects": objects}, out, indent=None, sort_keys=True, separators=(",", ":"))
        out.write("\n")
    print(f"{sys.argv[1]}: {len(objects)} objects from Kubernetes {version}")


if __name__ == "__main__":
    main()
