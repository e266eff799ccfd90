#!/usr/bin/env bash
# xtask/kube-apiserver.sh: a real kube-apiserver (with etcd, without controllers) of this
# repository's own, for recording the conformance scenarios of built-in kinds.
#
#   xtask/kube-apiserver.sh run COMMAND...  start it, run COMMAND with its variables, stop it
#                                           (one already started with `start` is used and kept)
#   xtask/kube-apiserver.sh start           start it and leave it running (`. WORKDIR/env`)
#   xtask/kube-apiserver.sh stop            stop the one `start` left running
#
# The server is built and run by the kube-apiserver tool (its install.sh, start.sh, stop.sh and
# README), found at $RECON_KUBE_APISERVER_TOOL, by default ../shared/tools/kube-apiserver beside
# the repository. WORKDIR is $CARGO_TARGET_DIR/kube-apiserver (target/kube-apiserver by
# default). The first install builds Kubernetes from the tree carried in a git snapshot of
# github.com/openshift/microshift, named by KUBE_SRC_GIT (about 10 minutes of two cores); to
# skip it, copy a built bin/ (etcd, kube-apiserver, kube-controller-manager) to WORKDIR/bin.
# kube-controller-manager is not started unless RECON_KUBE_CONTROLLERS=1: without it no
# controller acts between a scenario's steps, so every answer is the API server's own; the demo
# (`cargo xtask demo --real`) wants it (garbage collector, namespace lifecycle). COMMAND sees REAL_APISERVER_URL,
# REAL_APISERVER_CA, REAL_APISERVER_CLIENT_CERT, REAL_APISERVER_CLIENT_KEY, KUBECONFIG and
# RECON_CONFORMANCE_SERVER=kube-apiserver.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "kube-apiserver.sh: $*" >&2; exit 1; }

tool=${RECON_KUBE_APISERVER_TOOL:-$repo/../shared/tools/kube-apiserver}
for script in install.sh start.sh stop.sh; do
  [ -x "$tool/$script" ] || die "no kube-apiserver tool at $tool ($script missing or not executable);" \
    "set RECON_KUBE_APISERVER_TOOL to the folder holding its install.sh, start.sh and stop.sh"
done
tool=$(cd "$tool" && pwd)

target=${CARGO_TARGET_DIR:-$repo/target}
mkdir -p "$target/kube-apiserver"
work=$(cd "$target/kube-apiserver" && pwd)

# Is a server started in WORKDIR still running? (The pid in the file runs WORKDIR's binary.)
running() {
  local pid exe
  pid=$(cat "$work/kube-apiserver.pid" 2>/dev/null) || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$work/bin/kube-apiserver" ]
}

start() {
  if [ ! -x "$work/bin/kube-apiserver" ]; then
    [ -n "${KUBE_SRC_GIT:-}" ] || die "kube-apiserver is not built in $work/bin: set KUBE_SRC_GIT" \
      "to the git directory of a github.com/openshift/microshift snapshot (see the tool's README)," \
      "or copy a built bin/ there"
    KUBE_SRC_SUBDIR=${KUBE_SRC_SUBDIR:-deps/github.com/openshift/kubernetes} "$tool/install.sh" "$work"
  fi
  if [ "${RECON_KUBE_CONTROLLERS:-0}" = 1 ]; then
    "$tool/start.sh" "$work"
  else
    KCM=0 "$tool/start.sh" "$work"
  fi
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
      echo "kube-apiserver.sh: using the server already running in $work" >&2
    else
      # Stopped however COMMAND ends, interrupted included.
      trap '"$tool/stop.sh" "$work" || true' EXIT
      start
    fi
    # shellcheck source=/dev/null
    . "$work/env"
    export KUBECONFIG
    export REAL_APISERVER_URL=$KUBE_APISERVER_URL REAL_APISERVER_CA=$KUBE_APISERVER_CA
    export REAL_APISERVER_CLIENT_CERT=$KUBE_APISERVER_CLIENT_CERT
    export REAL_APISERVER_CLIENT_KEY=$KUBE_APISERVER_CLIENT_KEY
    export RECON_CONFORMANCE_SERVER=kube-apiserver
    "$@"
    ;;
  *)
    die "usage: $0 run COMMAND... | start | stop"
    ;;
esac
