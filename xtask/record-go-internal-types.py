#!/usr/bin/env python3
"""Records the layout of kube-apiserver's internal core types that its validation prints as
JSON: a changed pod spec or claim spec is quoted as a unified diff of
`json.MarshalIndent(internalSpec)`, an immutable Job template as `json.Marshal` of the
internal `PodTemplateSpec`, and resource.k8s.io's immutable claim and template specs and
allocations as `json.Marshal` of theirs. Internal types carry no JSON tags, so Go writes every field under
its Go name, in declaration order, embedded structs flattened; this file tells recon-fake
those names, their types and which field of the served (v1) object each one is read from.

    KUBE_SRC_GIT=GIT_DIR python3 xtask/record-go-internal-types.py OUT.json

(`cargo xtask openapi` runs it.) KUBE_SRC_GIT names a git directory whose HEAD holds a
Kubernetes tree at KUBE_SRC_SUBDIR (default `deps/github.com/openshift/kubernetes`, as in the
microshift snapshot xtask/kube-apiserver.sh builds from). It reads `pkg/apis/core/types.go`
and `pkg/apis/resource/types.go` (internal), `staging/src/k8s.io/api/core/v1/types.go` and
`staging/src/k8s.io/api/resource/v1/types.go` (the served field names) and
`staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go` (metav1 keeps its JSON tags), and
writes every struct reachable from the roots below. It fails on a type it cannot place, so a
tree of another version cannot go stale silently.
"""

import json
import os
import re
import sys

from go_sources import JSON_TAG, git

ROOTS = [
    "core.PodSpec",
    "core.PodTemplateSpec",
    "core.PersistentVolumeClaimSpec",
    "core.PodIP",
    "core.HostIP",
    # resource.k8s.io: an immutable claim spec, template spec or allocation is quoted whole.
    "dra.ResourceClaimSpec",
    "dra.ResourceClaimTemplateSpec",
    "dra.AllocationResult",
    # An attribute with more than one value is quoted whole.
    "dra.DeviceAttribute",
]
BUILTIN = {"string", "bool", "int", "int32", "int64", "float64", "byte"}
# Types written by a MarshalJSON of their own, or as plain strings.
LEAVES = {
    "resource.Quantity",
    "intstr.IntOrString",
    "metav1.Time",
    "metav1.MicroTime",
    "metav1.Duration",
    "types.UID",
    "metav1.FieldsV1",
    "runtime.RawExtension",
}
# Internal fields with no field of the same name in v1: `Convert_v1_PodSpec_To_core_PodSpec`
# moves the pod's host namespace settings into its security context, where recon-fake copies
# them before reading (under these v1 names).
MOVED = {
    "core.PodSecurityContext": {
        "HostNetwork": "hostNetwork",
        "HostPID": "hostPID",
        "HostIPC": "hostIPC",
        "ShareProcessNamespace": "shareProcessNamespace",
        "HostUsers": "hostUsers",
    }
}
SOURCES = {
    "core": "pkg/apis/core/types.go",
    "v1": "staging/src/k8s.io/api/core/v1/types.go",
    "metav1": "staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go",
    # The internal resource.k8s.io package is named `dra` here: `resource.` is the quantity's.
    "dra": "pkg/apis/resource/types.go",
    "resourcev1": "staging/src/k8s.io/api/resource/v1/types.go",
}
# Each internal package and the served package its fields are read from.
INTERNAL = {"core": "v1", "dra": "resourcev1"}

STRUCT = re.compile(r"^type (\w+) struct \{\s*$")
NAMED = re.compile(r"^type (\w+) ([\w.\[\]*]+)\s*(//.*)?$")
FIELD = re.compile(r"^\s*(\w+)\s+([\w.\[\]*]+)\s*(`[^`]*`)?\s*(//.*)?$")
EMBED = re.compile(r"^\s*(\*?[\w.]+)\s*(`[^`]*`)?\s*(//.*)?$")


def qualify(expr, package):
    """`[]Volume` in package core to `[]core.Volume`; builtins and qualified names stay."""
    prefix = ""
    while True:
        if expr.startswith("*"):
            prefix, expr = prefix + "*", expr[1:]
        elif expr.startswith("[]"):
            prefix, expr = prefix + "[]", expr[2:]
        else:
            break
    if expr.startswith("map["):
        key, _, value = expr[4:].partition("]")
        return f"{prefix}map[{qualify(key, package)}]{qualify(value, package)}"
    if expr in BUILTIN or "." in expr:
        return prefix + expr
    return f"{prefix}{package}.{expr}"


def parse(source, package, tagged):
    """The structs of one file: per struct, its fields as dicts; and its named non-struct types."""
    structs, named = {}, {}
    current = None
    in_comment = False
    for line in source.splitlines():
        # Block comments inside structs hold commented-out fields.
        if in_comment:
            in_comment = "*/" not in line
            continue
        if line.lstrip().startswith("/*"):
            in_comment = "*/" not in line
            continue
        if current is None:
            started = STRUCT.match(line)
            if started:
                current = []
                structs[f"{package}.{started.group(1)}"] = current
                continue
            other = NAMED.match(line)
            if other and other.group(2) not in ("struct", "interface"):
                named[f"{package}.{other.group(1)}"] = qualify(other.group(2), package)
            continue
        if line.startswith("}"):
            current = None
            continue
        if line.lstrip().startswith("//") or not line.strip():
            continue
        field = FIELD.match(line)
        if field:
            go_name, ty, tags = field.group(1), field.group(2), field.group(3) or ""
            tag = JSON_TAG.search(tags)
            options = tag.group(1).split(",") if tag else [go_name]
            if options[0] == "-":
                continue
            if tagged and "inline" in options[1:]:
                current.append({"embed": qualify(ty, package), "go": go_name})
                continue
            current.append(
                {
                    "go": go_name,
                    "key": options[0] or go_name,
                    "type": qualify(ty, package),
                    "omit": [o for o in options[1:] if o in ("omitempty", "omitzero")],
                }
            )
            continue
        embedded = EMBED.match(line)
        if embedded:
            tags = embedded.group(2) or ""
            tag = JSON_TAG.search(tags)
            ty = embedded.group(1)
            if tag and tag.group(1).split(",")[0] not in ("", "-"):
                # An embedded struct given a key of its own is a field named after its type.
                options = tag.group(1).split(",")
                current.append(
                    {
                        "go": ty.lstrip("*").rpartition(".")[2],
                        "key": options[0],
                        "type": qualify(ty, package),
                        "omit": [o for o in options[1:] if o in ("omitempty", "omitzero")],
                    }
                )
                continue
            current.append({"embed": qualify(embedded.group(1).lstrip("*"), package)})
            continue
        # Failed on only if the struct is reached from the roots.
        current.append({"unreadable": line.strip()})
    return structs, named


def referenced(expr):
    """The named types an expression mentions."""
    return [t for t in re.split(r"[\[\]*]|map", expr) if t and t not in BUILTIN]


def main():
    if len(sys.argv) != 2 or not os.environ.get("KUBE_SRC_GIT"):
        raise SystemExit(__doc__)
    out_path = sys.argv[1]
    git_dir = os.environ["KUBE_SRC_GIT"]
    subdir = os.environ.get("KUBE_SRC_SUBDIR", "deps/github.com/openshift/kubernetes")
    structs, named = {}, {}
    for package, path in SOURCES.items():
        s, n = parse(git(git_dir, "show", f"HEAD:{subdir}/{path}"), package, package not in INTERNAL)
        structs.update(s)
        named.update(n)

    out_structs, out_named = {}, {}
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in out_structs or name in out_named or name in LEAVES:
            continue
        if name in named:
            out_named[name] = named[name]
            pending.extend(referenced(named[name]))
            continue
        fields = structs.get(name)
        if fields is None:
            raise SystemExit(f"no Go type {name}")
        package, _, short = name.partition(".")
        served = {}
        if package in INTERNAL:
            served_package = INTERNAL[package]
            # The served field of each internal one: the v1 struct of the same name, same Go
            # name (the v1 embedded structs are inlined, as the internal ones are embedded).
            def served_keys(v1_name):
                for f in structs.get(v1_name, []):
                    if "embed" in f:
                        served_keys(f["embed"].replace(f"{package}.", f"{served_package}.", 1))
                    else:
                        served[f["go"]] = f["key"]

            served_keys(f"{served_package}.{short}")
        entries = []
        for f in fields:
            if "unreadable" in f:
                raise SystemExit(f"{name}: cannot read the field {f['unreadable']!r}")
            if "embed" in f:
                # Read from the served object itself when v1 inlines it too, else from the key
                # v1 gives it (`metadata` of a PodTemplateSpec).
                entries.append({"embed": f["embed"], "from": served.get(f["embed"].rpartition(".")[2])})
                pending.append(f["embed"])
                continue
            entry = {"key": f["key"], "type": f["type"]}
            if package in INTERNAL:
                entry["from"] = served.get(f["go"]) or MOVED.get(name, {}).get(f["go"])
                if entry["from"] is None:
                    raise SystemExit(f"{name}.{f['go']}: no v1 field to read it from")
            if f["omit"]:
                entry["omit"] = f["omit"]
            entries.append(entry)
            pending.extend(referenced(f["type"]))
        out_structs[name] = entries

    commit = git(git_dir, "rev-parse", "HEAD").strip()
    with open(out_path, "w") as f:
        f.write('{"source": "%s %s",\n"roots": %s,\n"named": {\n' % (commit, subdir, json.dumps(ROOTS)))
        f.write(",\n".join(f"{json.dumps(n)}: {json.dumps(t)}" for n, t in sorted(out_named.items())))
        f.write('\n},\n"structs": {\n')
        f.write(",\n".join(f"{json.dumps(n)}: {json.dumps(e)}" for n, e in sorted(out_structs.items())))
        f.write("\n}}\n")


if __name__ == "__main__":
    main()
