#!/usr/bin/env python3
"""Records how kube-apiserver writes built-in objects, byte for byte, for
`crates/recon-fake/tests/api/byte_order.rs` to compare the in-memory server's bytes with.

    xtask/kube-apiserver.sh run python3 xtask/record-byte-order.py

Run it against a freshly started server. For each `fixtures/byte-order/requests/<case>.json`
(`{"create": [[collection, body], ...], "get": path}`) it POSTs each body with
`fieldManager=order`, then GETs `path` and writes the answer, unchanged, to
`fixtures/byte-order/<case>.json`.
"""

import json
import os
import ssl
import sys
import urllib.error
import urllib.request

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "byte-order")


def send(method, path, body=None):
    env = os.environ
    context = ssl.create_default_context(cafile=env["REAL_APISERVER_CA"])
    context.load_cert_chain(env["REAL_APISERVER_CLIENT_CERT"], env["REAL_APISERVER_CLIENT_KEY"])
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        env["REAL_APISERVER_URL"] + path,
        data=data,
        method=method,
        headers={
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": "kubectl/v1.36",
        },
    )
    try:
        with urllib.request.urlopen(request, context=context) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        sys.exit(f"{method} {path}: {e.code} {e.read().decode(errors='replace')}")


def main():
    requests = os.path.join(ROOT, "requests")
    for name in sorted(os.listdir(requests)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(requests, name)) as f:
            case = json.load(f)
        for collection, body in case["create"]:
            send("POST", collection + "?fieldManager=order", body)
        served = send("GET", case["get"])
        with open(os.path.join(ROOT, name), "wb") as f:
            f.write(served + b"\n")
        print(f"recorded {name}")


if __name__ == "__main__":
    main()
