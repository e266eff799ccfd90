#!/usr/bin/env python3
"""Records where kube-apiserver's CEL cost estimate refuses a rule, for recon-fake's estimator
to be checked against (`fixtures/cel/cost-boundaries.json`).

    . target/kube-apiserver/env   # a kube-apiserver started by xtask/kube-apiserver.sh
    python3 xtask/record-cel-costs.py < RULES.txt > fixtures/cel/cost-boundaries.json

RULES.txt has one rule per line; the cases already in the fixture are a good start. Each rule
is put on the items of an array `w` whose `maxItems` multiplies its cost, and the smallest
`maxItems` the server refuses is found by bisection with dry-run creates of a CRD. The server's
factor (`exceeds budget by factor of 1.000014x`) then pins the estimate to about ten units.
"""

import json
import os
import ssl
import sys
import urllib.request

ITEM = {
    "type": "object",
    "properties": {
        "l": {"type": "array", "maxItems": 100, "items": {"type": "integer"}},
        "s": {"type": "string", "maxLength": 50},
        "t": {"type": "string", "maxLength": 20},
        "ss": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 8}},
        "m": {"type": "object", "maxProperties": 20,
              "additionalProperties": {"type": "string", "maxLength": 10}},
        "e": {"type": "string", "enum": ["a", "bbb"]},
        "ts": {"type": "string", "format": "date-time"},
        "q": {"type": "integer"},
    },
}


def context():
    ctx = ssl.create_default_context(cafile=os.environ["KUBE_APISERVER_CA"])
    ctx.load_cert_chain(os.environ["KUBE_APISERVER_CLIENT_CERT"], os.environ["KUBE_APISERVER_CLIENT_KEY"])
    return ctx


def crd(rule, max_items):
    item = dict(ITEM, **{"x-kubernetes-validations": [{"rule": rule}]})
    spec = {"type": "object", "properties": {"w": {"type": "array", "maxItems": max_items, "items": item}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "costs.conformance.example.com"},
        "spec": {"group": "conformance.example.com", "scope": "Namespaced",
                 "names": {"plural": "costs", "singular": "cost", "kind": "Cost", "listKind": "CostList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]},
    }


def refusal(ctx, rule, max_items):
    """The server's message when it refuses the CRD, else None."""
    url = os.environ["KUBE_APISERVER_URL"] + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All"
    req = urllib.request.Request(url, data=json.dumps(crd(rule, max_items)).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx):
            return None
    except urllib.error.HTTPError as e:
        return json.loads(e.read())["message"]


def boundary(ctx, rule):
    if refusal(ctx, rule, 1) is not None:
        return 1
    lo, hi = 1, 2
    while refusal(ctx, rule, hi) is None:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refusal(ctx, rule, mid) is None:
            lo = mid
        else:
            hi = mid
    return hi


def main():
    ctx = context()
    cases = []
    for rule in (line.rstrip("\n") for line in sys.stdin):
        if not rule:
            continue
        k = boundary(ctx, rule)
        message = refusal(ctx, rule, k)
        cases.append({"rule": rule, "refusedAt": k, "message": message.split(" is invalid: ", 1)[1]})
    json.dump({"item": ITEM, "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
