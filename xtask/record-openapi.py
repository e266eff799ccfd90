#!/usr/bin/env python3
"""Records the OpenAPI v3 schemas of the built-in kinds recon-fake serves from a real
kube-apiserver, for typed decoding and field management of built-ins.

    xtask/kube-apiserver.sh run python3 xtask/record-openapi.py OUT.json

(`cargo xtask openapi` runs exactly that.) It reads the server from the variables
xtask/kube-apiserver.sh exports, fetches `/openapi/v3/<group-version>` for every group-version
below, and writes one JSON object: every schema of their `components.schemas` by name, without
descriptions and defaults (prose and values recon-fake does not read), keys sorted, so
re-recording from the same server gives the same bytes.
"""

import json
import os
import ssl
import sys
import urllib.request

# Every built-in group version kube-apiserver 1.36 serves (its discovery).
GROUP_VERSIONS = [
    "api/v1",
    "apis/admissionregistration.k8s.io/v1",
    "apis/apiextensions.k8s.io/v1",
    "apis/apiregistration.k8s.io/v1",
    "apis/apps/v1",
    "apis/authentication.k8s.io/v1",
    "apis/authorization.k8s.io/v1",
    "apis/autoscaling/v1",
    "apis/autoscaling/v2",
    "apis/batch/v1",
    "apis/certificates.k8s.io/v1",
    "apis/coordination.k8s.io/v1",
    "apis/discovery.k8s.io/v1",
    "apis/events.k8s.io/v1",
    "apis/flowcontrol.apiserver.k8s.io/v1",
    "apis/networking.k8s.io/v1",
    "apis/node.k8s.io/v1",
    "apis/policy/v1",
    "apis/rbac.authorization.k8s.io/v1",
    "apis/resource.k8s.io/v1",
    "apis/scheduling.k8s.io/v1",
    "apis/storage.k8s.io/v1",
]

DROPPED = {"description"}


def get(path):
    """The JSON the server answers a GET of `path` with, over its client certificate."""
    env = os.environ
    context = ssl.create_default_context(cafile=env["REAL_APISERVER_CA"])
    context.load_cert_chain(env["REAL_APISERVER_CLIENT_CERT"], env["REAL_APISERVER_CLIENT_KEY"])
    url = env["REAL_APISERVER_URL"].rstrip("/") + path
    with urllib.request.urlopen(url, context=context) as response:
        return json.load(response)


def strip(schema, properties=False):
    """`schema` without its prose; the keys of a `properties` map are field names, kept even
    when a field is called `description` (a PriorityClass's)."""
    if isinstance(schema, dict):
        return {
            k: strip(v, k == "properties" and not properties)
            for k, v in schema.items()
            if properties or k not in DROPPED
        }
    if isinstance(schema, list):
        return [strip(item) for item in schema]
    return schema


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: record-openapi.py OUT.json (under xtask/kube-apiserver.sh run)")
    schemas = {}
    for group_version in GROUP_VERSIONS:
        document = get("/openapi/v3/" + group_version)
        for name, schema in document["components"]["schemas"].items():
            schemas[name] = strip(schema)
    version = get("/version")["gitVersion"]
    out = {"kubernetes": version, "schemas": schemas}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    print(f"{sys.argv[1]}: {len(schemas)} schemas from Kubernetes {version}")


if __name__ == "__main__":
    main()
