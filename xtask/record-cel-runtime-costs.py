#!/usr/bin/env python3
"""Records where kube-apiserver's runtime CEL cost limit stops a rule, for recon-fake's
charges to be checked against (`fixtures/cel/runtime-cost-boundaries.json`).

    . target/kube-apiserver/env   # a kube-apiserver started by xtask/kube-apiserver.sh
    python3 xtask/record-cel-runtime-costs.py > fixtures/cel/runtime-cost-boundaries.json

Each rule below sits on a list field of its own (`maxItems` keeps the CRD-time estimate under
its limit). The CRD is created, then for each field the smallest list (of 0, 1, 2, ... as
integers, their decimal strings, or objects `{a: i}`) whose dry-run create the per-call limit refuses is found
by bisection; the CRD is deleted at the end.
"""

import json
import os
import ssl
import sys
import time
import urllib.request

# (field, item type, maxItems, rule)
RULES = [
    ("allAll", "integer", 1400, "self.all(x, self.all(y, x >= 0))"),
    ("allExists", "integer", 1000, "self.all(x, self.exists(y, y < 0) || true)"),
    ("allExistsOne", "integer", 1000, "self.all(x, self.exists_one(y, y == x))"),
    ("allMap", "integer", 700, "self.all(x, self.map(y, y + x).size() > 0)"),
    ("allFilter", "integer", 700, "self.all(x, self.filter(y, y > x).size() >= 0)"),
    ("allIn", "integer", 2000, "self.all(x, x in self)"),
    ("allSort", "integer", 150, "self.all(x, self.sort().size() > 0)"),
    ("strings", "string", 700, "self.all(x, self.all(y, x.contains(y) || y.size() >= 0))"),
    ("transform", "integer", 700, "self.all(x, self.transformList(i, v, v * i).size() > 0)"),
    ("presence", "object", 1000, "self.all(x, self.all(y, has(y.a) && x.a >= 0))"),
    ("mapLiteral", "integer", 800, "self.all(x, self.map(y, 1).size() >= 0)"),
    ("existsOneTrue", "integer", 1000, "self.all(x, self.exists_one(y, true) || true)"),
    ("presenceOnly", "object", 700, "self.all(x, self.all(y, has(y.a)))"),
]
GROUP = "conformance.example.com"
PLURAL = "runtimecosts"


def context():
    ctx = ssl.create_default_context(cafile=os.environ["KUBE_APISERVER_CA"])
    ctx.load_cert_chain(os.environ["KUBE_APISERVER_CLIENT_CERT"], os.environ["KUBE_APISERVER_CLIENT_KEY"])
    return ctx


def request(ctx, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(os.environ["KUBE_APISERVER_URL"] + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def schema():
    props = {}
    for field, item, max_items, rule in RULES:
        items = {"type": item}
        if item == "string":
            items["maxLength"] = 6
        if item == "object":
            items["properties"] = {"a": {"type": "integer"}}
        props[field] = {"type": "array", "maxItems": max_items, "items": items,
                        "x-kubernetes-validations": [{"rule": rule}]}
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def values(item, n):
    return {"integer": list(range(n)), "string": [str(i) for i in range(n)],
            "object": [{"a": i} for i in range(n)]}[item]


def refusal(ctx, field, item, n):
    body = {"apiVersion": GROUP + "/v1", "kind": "RuntimeCost", "metadata": {"name": "probe"},
            "spec": {field: values(item, n)}}
    code, status = request(ctx, "POST", f"/apis/{GROUP}/v1/namespaces/default/{PLURAL}?dryRun=All", body)
    if code < 300:
        return None
    if "call cost exceeds limit" not in status["message"]:
        sys.exit(f"{field}: {n} items refused for another reason: {status['message']}")
    return status["message"]


def main():
    ctx = context()
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"{PLURAL}.{GROUP}"},
           "spec": {"group": GROUP, "scope": "Namespaced",
                    "names": {"plural": PLURAL, "singular": "runtimecost", "kind": "RuntimeCost",
                              "listKind": "RuntimeCostList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema()}}]}}
    code, status = request(ctx, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    if code >= 300:
        sys.exit(f"the CRD was refused: {status.get('message')}")
    try:
        time.sleep(3)
        cases = []
        for field, item, max_items, rule in RULES:
            lo, hi = 0, max_items
            if refusal(ctx, field, item, hi) is None:
                sys.exit(f"{field}: {max_items} items are not refused; raise maxItems")
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if refusal(ctx, field, item, mid) is None:
                    lo = mid
                else:
                    hi = mid
            message = refusal(ctx, field, item, hi).split(" is invalid: ", 1)[1]
            cases.append({"field": field, "rule": rule, "refusedAt": hi, "message": message})
        json.dump({"schema": schema(), "cases": cases}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    finally:
        request(ctx, "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{PLURAL}.{GROUP}")


main()
