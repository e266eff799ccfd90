"""What the scripts that read Kubernetes' Go sources share (record-go-field-order.py,
record-go-proto-fields.py, record-go-internal-types.py): reading files from the git directory
KUBE_SRC_GIT names, the package of an OpenAPI schema name, and the lines of a struct."""

import re
import subprocess

STRUCT = re.compile(r"^type (\w+) struct \{$")
IMPORT = re.compile(r'^(?:import )?\s*(\w+\s+)?"([\w./-]+)"$')
# A field of a struct with a tag: its name (or embedded type), its type, its tag.
FIELD = re.compile(r"^\s*(\*?[\w.]+)(?:\s+([^`]+?))?\s+`([^`]*)`")
JSON_TAG = re.compile(r'json:"([^"]*)"')


def git(git_dir, *args):
    """The output of `git --git-dir GIT_DIR ARGS...`."""
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True
    ).stdout


def package_dir(schema_prefix):
    """`io.k8s.api.core.v1` to `staging/src/k8s.io/api/core/v1` (and so for every staging
    repository: apimachinery, apiextensions-apiserver, kube-aggregator)."""
    parts = schema_prefix.split(".")
    if parts[:2] == ["io", "k8s"] and len(parts) > 3:
        return f"staging/src/k8s.io/{parts[2]}/" + "/".join(parts[3:])
    raise SystemExit(f"no package directory for {schema_prefix}")


def schema_prefix(import_path):
    """`k8s.io/apimachinery/pkg/apis/meta/v1` to `io.k8s.apimachinery.pkg.apis.meta.v1`."""
    head, _, rest = import_path.partition("/")
    if head != "k8s.io":
        return None
    return "io.k8s." + rest.replace("/", ".")


def package_sources(git_dir, subdir, prefix):
    """The Go files of the package of schema prefix PREFIX, tests and generated code aside."""
    root = f"{subdir}/{package_dir(prefix)}/"
    for path in git(git_dir, "ls-tree", "--name-only", "HEAD", root).split():
        if path.endswith(".go") and not path.endswith("_test.go") and "zz_generated" not in path:
            yield git(git_dir, "show", f"HEAD:{path}")


def imported(line):
    """The (alias, import path) an import line declares, or None."""
    found = IMPORT.match(line)
    if not found:
        return None
    path = found.group(2)
    return (found.group(1) or path.rsplit("/", 1)[-1]).strip(), path
