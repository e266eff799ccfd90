#!/usr/bin/env python3
"""Records the Go struct field order of the built-in types recon-fake decodes, for the errors
that quote an object as kube-apiserver's JSON encoder wrote it (fields in declaration order,
not sorted).

    KUBE_SRC_GIT=GIT_DIR python3 xtask/record-go-field-order.py OPENAPI.json OUT.json

(`cargo xtask openapi` runs it after recording OPENAPI.json.) KUBE_SRC_GIT names a git
directory whose HEAD holds a Kubernetes tree at KUBE_SRC_SUBDIR, the same variables
xtask/kube-apiserver.sh builds the server from (the microshift snapshot, whose tree is at
`deps/github.com/openshift/kubernetes`, the default). For every struct schema of OPENAPI.json (the file `cargo xtask
openapi` records) it finds the Go struct of that name in its package's sources, expands the
fields embedded with `json:",inline"`, and writes the JSON field names in declaration order.
It fails when a struct is missing or its fields differ from the schema's properties, so a
recording from another Kubernetes version cannot go stale silently.

It also writes, per struct, the fields the encoder writes even when unset, with the value
written: those without `omitempty` (`null` for a pointer, slice or map, `""`, `0` or `false`),
and, since `omitempty` never leaves out a struct, those of struct type that are not pointers
nor `omitzero` (`{}` with the struct's own such fields, `null` for a `metav1.Time`).
"""

import json
import os
import re
import sys

from go_sources import (
    FIELD,
    JSON_TAG,
    STRUCT,
    git,
    imported,
    package_dir,
    package_sources,
    schema_prefix,
)

NAMED = re.compile(r"^type (\w+) ([\w.]+)\s*(//.*)?$")
# Struct types with a JSON form of their own, by their zero value.
ZERO_LEAVES = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": None,
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": None,
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration": "0s",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "0",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": 0,
    # `RawExtension.MarshalJSON` writes `null` when it holds nothing.
    "io.k8s.apimachinery.pkg.runtime.RawExtension": None,
}


class Package:
    """The structs of one Go package: per struct, its fields as (json name | inline type)."""

    def __init__(self, git_dir, subdir, prefix):
        self.prefix = prefix
        self.structs = {}
        # Per struct, its non-inline fields as (json name, Go type, tag options, aliases).
        self.typed = {}
        # Named non-struct types (`type Protocol string`) to what they are.
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
                current = []
                self.structs[started.group(1)] = current
                typed = self.typed.setdefault(started.group(1), [])
                continue
            if current is None:
                named = NAMED.match(line)
                if named:
                    self.named[named.group(1)] = named.group(2)
                continue
            if line.startswith("}"):
                current = None
                continue
            field = FIELD.match(line)
            if not field or line.lstrip().startswith("//"):
                continue
            name, ty, tags = field.group(1), field.group(2), field.group(3)
            tag = JSON_TAG.search(tags)
            json_name = tag.group(1).split(",")[0] if tag else None
            inline = tag is not None and ",inline" in tag.group(1)
            if json_name == "-":
                continue
            if inline or (ty is None and not json_name):
                # An embedded struct without a name of its own: its fields are this struct's.
                embedded = name.lstrip("*")
                alias, _, short = embedded.rpartition(".")
                prefix = schema_prefix(aliases.get(alias, "")) if alias else self.prefix
                if prefix is not None:
                    current.append(("inline", f"{prefix}.{short}"))
            else:
                current.append(("field", json_name or name))
                options = tag.group(1).split(",")[1:] if tag else []
                typed.append((json_name or name, ty or name, options, aliases))


def main():
    if len(sys.argv) != 3 or not os.environ.get("KUBE_SRC_GIT"):
        raise SystemExit(__doc__)
    openapi_path, out_path = sys.argv[1:3]
    git_dir = os.environ["KUBE_SRC_GIT"]
    subdir = os.environ.get("KUBE_SRC_SUBDIR", "deps/github.com/openshift/kubernetes")
    with open(openapi_path) as f:
        openapi = json.load(f)
    schemas = openapi["schemas"]
    packages = {}

    def struct(name):
        prefix, _, short = name.rpartition(".")
        if prefix not in packages:
            packages[prefix] = Package(git_dir, subdir, prefix)
        fields = packages[prefix].structs.get(short)
        if fields is None:
            raise SystemExit(f"{name}: no Go struct {short} in {package_dir(prefix)}")
        return fields

    def order(name):
        names = []
        for what, value in struct(name):
            names.extend(order(value) if what == "inline" else [value])
        return names

    def package_of(name):
        prefix, _, short = name.rpartition(".")
        if prefix not in packages:
            packages[prefix] = Package(git_dir, subdir, prefix)
        return packages[prefix], short

    def resolve(ty, prefix, aliases):
        """A field's type as a schema-style name (`io.k8s.api.core.v1.ContainerState`), or
        the builtin it is; None for pointers, slices, maps and interfaces."""
        if ty.startswith(("*", "[]", "map[", "interface")):
            return None
        alias, _, short = ty.rpartition(".")
        if alias:
            prefix = schema_prefix(aliases.get(alias, ""))
            if prefix is None:
                return ty
        full = f"{prefix}.{short}"
        if full in ZERO_LEAVES:
            return full
        package, _ = package_of(full)
        if short in package.named:
            return resolve(package.named[short], prefix, aliases)
        return full if short in package.structs else short

    def zero_fields(name):
        """The fields of struct `name` written when unset, with the value written."""
        package, short = package_of(name)
        found = {}
        for what, value in struct(name):
            if what == "inline":
                found.update(zero_fields(value))
        for key, ty, options, aliases in package.typed.get(short, []):
            full = resolve(ty, name.rpartition(".")[0], aliases)
            if "omitzero" in options:
                continue
            if full is not None and "." in full:
                found[key] = zero(full)
            elif "omitempty" not in options:
                found[key] = basic_zero(full)
        return found

    def basic_zero(resolved):
        """The zero of a pointer, slice or map (None), or of a builtin."""
        if resolved is None:
            return None
        return {"string": "", "bool": False}.get(resolved, 0)

    def zero(full):
        """The JSON the encoder writes for the zero value of struct `full`."""
        if full in ZERO_LEAVES:
            return ZERO_LEAVES[full]
        package, short = package_of(full)
        out = {}
        for what, value in struct(full):
            if what == "inline":
                out.update(zero(value))
        for key, ty, options, aliases in package.typed.get(short, []):
            resolved = resolve(ty, full.rpartition(".")[0], aliases)
            if "omitzero" in options:
                continue
            if resolved is not None and "." in resolved:
                out[key] = zero(resolved)
            elif "omitempty" not in options:
                out[key] = basic_zero(resolved)
        return out

    structs = {}
    zeros = {}
    for name, schema in sorted(schemas.items()):
        properties = schema.get("properties")
        if not properties:
            continue
        fields = order(name)
        if sorted(fields) != sorted(properties):
            raise SystemExit(
                f"{name}: Go fields {sorted(fields)} differ from the schema's {sorted(properties)}"
            )
        structs[name] = fields
        if zero_fields(name):
            zeros[name] = zero_fields(name)
    commit = git(git_dir, "rev-parse", "HEAD").strip()
    with open(out_path, "w") as f:
        f.write('{"kubernetes": "%s",\n"source": "%s %s",\n"structs": {\n' % (
            openapi["kubernetes"], commit, subdir))
        f.write(",\n".join(f"{json.dumps(n)}: {json.dumps(o)}" for n, o in structs.items()))
        f.write('\n},\n"zero_fields": {\n')
        f.write(",\n".join(f"{json.dumps(n)}: {json.dumps(z)}" for n, z in zeros.items()))
        f.write("\n}}\n")


if __name__ == "__main__":
    main()
