#!/usr/bin/env python3
"""Records the protobuf fields of the built-in types, for sizing an object as etcd holds it
(kube-apiserver stores built-in kinds as protobuf: the size of a write that is too large is
quoted in its error).

    KUBE_SRC_GIT=GIT_DIR python3 xtask/record-go-proto-fields.py OPENAPI.json OUT.json

KUBE_SRC_GIT and KUBE_SRC_SUBDIR are those of xtask/record-go-field-order.py. For every struct
schema of OPENAPI.json it reads the Go struct's fields that carry a `protobuf` tag, in field
number order, as `[json name, number, shape]`: the json name is "" for a struct embedded with
`json:",inline"` (its fields are the parent's in JSON, a message of its own in protobuf). A
shape is "string", "int", "bool", "double", "bytes" (a `[]byte`, written when not nil), a
schema name (a struct, always written), one of the types with a protobuf form of their own
("Time", "MicroTime", "Duration", "Quantity", "IntOrString", "Raw"), or {"ptr": shape} (written
when set), {"list": shape}, {"map": shape} (string keys).
"""

import json
import os
import re
import subprocess
import sys

from go_sources import FIELD, JSON_TAG, STRUCT, imported, package_sources, schema_prefix

# `type X struct{}`: a struct without fields, declared on one line.
EMPTY_STRUCT = re.compile(r"^type (\w+) struct ?\{\}$")

NAMED = re.compile(r"^type (\w+) (\S.*?)\s*(//.*)?$")
PROTO_TAG = re.compile(r'protobuf:"\w+,(\d+),')
SPECIAL = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration": "Duration",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "IntOrString",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "Raw",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "Raw",
}
INTS = {"int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"}


class Package:
    """One Go package: its structs' protobuf fields and its named types, each with the
    import aliases of its file."""

    def __init__(self, git_dir, subdir, prefix):
        self.prefix = prefix
        self.structs = {}
        self.named = {}
        for source in package_sources(git_dir, subdir, prefix):
            self.read(source)

    def read(self, source):
        aliases = {}
        current = None
        for line in source.splitlines():
            declared = imported(line)
            if declared and current is None:
                aliases[declared[0]] = declared[1]
                continue
            started = STRUCT.match(line)
            if started:
                current = self.structs.setdefault(started.group(1), [])
                continue
            empty = EMPTY_STRUCT.match(line)
            if empty and current is None:
                self.structs.setdefault(empty.group(1), [])
                continue
            if current is None:
                named = NAMED.match(line)
                if named and not named.group(2).startswith(("struct", "interface", "func", "=")):
                    self.named[named.group(1)] = (named.group(2), aliases)
                continue
            if line.startswith("}"):
                current = None
                continue
            field = FIELD.match(line)
            if not field or line.lstrip().startswith("//"):
                continue
            name, ty, tags = field.group(1), field.group(2), field.group(3)
            proto = PROTO_TAG.search(tags)
            if not proto:
                continue
            tag = JSON_TAG.search(tags)
            json_name = tag.group(1).split(",")[0] if tag else ""
            inline = tag is not None and ",inline" in tag.group(1)
            if json_name == "-" and "Raw" not in name:
                continue
            current.append((
                "" if inline or (ty is None and not json_name) else (json_name or name),
                int(proto.group(1)),
                ty or name,
                aliases,
            ))


def main():
    if len(sys.argv) != 3 or not os.environ.get("KUBE_SRC_GIT"):
        raise SystemExit(__doc__)
    openapi_path, out_path = sys.argv[1:3]
    git_dir = os.environ["KUBE_SRC_GIT"]
    subdir = os.environ.get("KUBE_SRC_SUBDIR", "deps/github.com/openshift/kubernetes")
    with open(openapi_path) as f:
        schemas = json.load(f)["schemas"]
    packages = {}

    def package(prefix):
        if prefix not in packages:
            packages[prefix] = Package(git_dir, subdir, prefix)
        return packages[prefix]

    def shape(ty, prefix, aliases):
        ty = ty.strip()
        if ty.startswith("*"):
            return {"ptr": shape(ty[1:], prefix, aliases)}
        if ty == "[]byte":
            return "bytes"
        if ty.startswith("[]"):
            return {"list": shape(ty[2:], prefix, aliases)}
        if ty.startswith("map["):
            return {"map": shape(ty[ty.index("]") + 1:], prefix, aliases)}
        if ty == "string":
            return "string"
        if ty in INTS:
            return "int"
        if ty == "bool":
            return "bool"
        if ty in ("float64", "float32"):
            return "double"
        alias, _, short = ty.rpartition(".")
        if alias:
            prefix = schema_prefix(aliases.get(alias, ""))
            if prefix is None:
                raise SystemExit(f"{ty}: not a Kubernetes type")
        full = f"{prefix}.{short}"
        if full in SPECIAL:
            return SPECIAL[full]
        pkg = package(prefix)
        if short in pkg.named:
            underlying, named_aliases = pkg.named[short]
            return shape(underlying, prefix, named_aliases)
        if short in pkg.structs:
            return full
        raise SystemExit(f"{full}: unknown type")

    out = {}
    pending = [name for name, s in schemas.items() if s.get("type") == "object" or "properties" in s]
    seen = set()
    while pending:
        name = pending.pop()
        if name in seen or name in SPECIAL:
            continue
        seen.add(name)
        prefix, _, short = name.rpartition(".")
        try:
            fields = package(prefix).structs.get(short)
        except subprocess.CalledProcessError:
            fields = None
        if fields is None:
            continue
        entries = []
        for json_name, number, ty, aliases in sorted(fields, key=lambda f: f[1]):
            s = shape(ty, prefix, aliases)
            entries.append([json_name, number, s])
            stack = [s]
            while stack:
                top = stack.pop()
                if isinstance(top, dict):
                    stack.extend(top.values())
                elif top.startswith("io."):
                    pending.append(top)
        out[name] = entries
    with open(out_path, "w") as f:
        json.dump({"structs": dict(sorted(out.items()))}, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
