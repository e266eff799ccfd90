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
# shellcheck source=xtask/real-server.sh
. "$repo/xtask/real-server.sh"
me=kube-apiserver.sh
tool_var=RECON_KUBE_APISERVER_TOOL
tool=${RECON_KUBE_APISERVER_TOOL:-$repo/../shared/tools/kube-apiserver}
workdir=kube-apiserver
binary=kube-apiserver

start() {
  # The tool's stop.sh knows its processes by /proc/PID/exe, which resolves symbolic links: a
  # linked bin/ would leave every server it starts running (and holding its ports).
  if [ -L "$work/bin" ] || [ -L "$work/bin/kube-apiserver" ]; then
    die "$work/bin is a symbolic link: copy or hard-link (cp -al) the binaries instead, or" \
      "stop.sh cannot stop what start.sh starts"
  fi
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

export_env() {
  export KUBECONFIG
  export REAL_APISERVER_URL=$KUBE_APISERVER_URL REAL_APISERVER_CA=$KUBE_APISERVER_CA
  export REAL_APISERVER_CLIENT_CERT=$KUBE_APISERVER_CLIENT_CERT
  export REAL_APISERVER_CLIENT_KEY=$KUBE_APISERVER_CLIENT_KEY
  export RECON_CONFORMANCE_SERVER=kube-apiserver
}

real_server_main "$@"
