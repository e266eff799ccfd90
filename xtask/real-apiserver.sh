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
# shellcheck source=xtask/real-server.sh
. "$repo/xtask/real-server.sh"
me=real-apiserver.sh
tool_var=RECON_REAL_APISERVER_TOOL
tool=${RECON_REAL_APISERVER_TOOL:-$repo/../shared/tools/real-apiserver}
workdir=real-apiserver
binary=crdapiserver

start() {
  "$tool/install.sh" "$work"
  "$tool/start.sh" "$work"
}

export_env() {
  export KUBECONFIG REAL_APISERVER_URL REAL_APISERVER_CA REAL_APISERVER_CLIENT_CERT REAL_APISERVER_CLIENT_KEY
  export RECON_CONFORMANCE_SERVER=apiextensions
}

real_server_main "$@"
