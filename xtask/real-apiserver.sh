#!/usr/bin/env bash
# xtask/real-apiserver.sh: a real Kubernetes API server of this repository's own, for recording
# the conformance fixtures (apiextensions-apiserver + etcd: custom resources only).
#
#   xtask/real-apiserver.sh run COMMAND...  start it, run COMMAND with its variables, stop it
#                                           (one already started with `start` is used and kept)
#   xtask/real-apiserver.sh start           start it and leave it running (`. WORKDIR/env`)
#   xtask/real-apiserver.sh stop            stop the one `start` left running
#
# The server is built and run by the real-apiserver tool (its install.sh, start.sh, stop.sh and
# README), found at $RECON_REAL_APISERVER_TOOL, by default ../shared/tools/real-apiserver beside
# the repository. WORKDIR is $CARGO_TARGET_DIR/real-apiserver (target/real-apiserver by
# default). The first install builds the server from Debian packages (minutes, ~6 GB of free
# disk while building); to skip it, copy a built bin/ (crdapiserver, etcd) to WORKDIR/bin.
# COMMAND sees REAL_APISERVER_URL, REAL_APISERVER_CA, REAL_APISERVER_CLIENT_CERT,
# REAL_APISERVER_CLIENT_KEY and KUBECONFIG. The tool's own variables (APISERVER_EXTRA_ARGS, ...)
# pass through.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "real-apiserver.sh: $*" >&2; exit 1; }

tool=${RECON_REAL_APISERVER_TOOL:-$repo/../shared/tools/real-apiserver}
for script in install.sh start.sh stop.sh; do
  [ -x "$tool/$script" ] || die "no real-apiserver tool at $tool ($script missing or not executable);" \
    "set RECON_REAL_APISERVER_TOOL to the folder holding its install.sh, start.sh and stop.sh"
done
tool=$(cd "$tool" && pwd)

target=${CARGO_TARGET_DIR:-$repo/target}
mkdir -p "$target/real-apiserver"
work=$(cd "$target/real-apiserver" && pwd)

# Is a server started in WORKDIR still running? (The same test as the tool's: the pid in the
# file runs WORKDIR's binary.)
running() {
  local pid exe
  pid=$(cat "$work/crdapiserver.pid" 2>/dev/null) || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$work/bin/crdapiserver" ]
}

start() {
  "$tool/install.sh" "$work"
  "$tool/start.sh" "$work"
}

case "${1:-}" in
  start)
    running && die "already running; see $work/env"
    start
    ;;
  stop)
    "$tool/stop.sh" "$work"
    ;;
  run)
    shift
    [ $# -gt 0 ] || die "run needs a command"
    if running; then
      echo "real-apiserver.sh: using the server already running in $work" >&2
    else
      # Stopped however COMMAND ends, interrupted included.
      trap '"$tool/stop.sh" "$work" || true' EXIT
      start
    fi
    # shellcheck source=/dev/null
    . "$work/env"
    export KUBECONFIG REAL_APISERVER_URL REAL_APISERVER_CA REAL_APISERVER_CLIENT_CERT REAL_APISERVER_CLIENT_KEY
    export RECON_CONFORMANCE_SERVER=apiextensions
    "$@"
    ;;
  *)
    die "usage: $0 run COMMAND... | start | stop"
    ;;
esac
