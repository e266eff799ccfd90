# xtask/real-server.sh: what xtask/real-apiserver.sh and xtask/kube-apiserver.sh share, sourced
# by both: finding the tool, the work directory under the target directory, and the
# `run COMMAND... | start | stop` commands.
#
# The sourcing script sets `me` (its name, for messages), `tool` (the tool folder), `tool_var`
# (the variable that overrides it), `workdir` (the folder under the target directory),
# `binary` (the server binary whose pid file says whether it runs), and defines `start` (install
# if needed, then start) and `export_env` (the variables COMMAND sees, after `. WORKDIR/env`);
# then it calls `real_server_main "$@"`.

die() { echo "$me: $*" >&2; exit 1; }

real_server_main() {
  local script
  for script in install.sh start.sh stop.sh; do
    [ -x "$tool/$script" ] || die "no tool at $tool ($script missing or not executable);" \
      "set $tool_var to the folder holding its install.sh, start.sh and stop.sh"
  done
  tool=$(cd "$tool" && pwd)
  local target=${CARGO_TARGET_DIR:-$repo/target}
  mkdir -p "$target/$workdir"
  work=$(cd "$target/$workdir" && pwd)

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
        echo "$me: using the server already running in $work" >&2
      else
        # Stopped however COMMAND ends, interrupted included.
        trap '"$tool/stop.sh" "$work" || true' EXIT
        start
      fi
      # shellcheck source=/dev/null
      . "$work/env"
      export_env
      "$@"
      ;;
    *)
      die "usage: $0 run COMMAND... | start | stop"
      ;;
  esac
}

# Is a server started in WORKDIR still running? (The same test as the tools': the pid in the
# file runs WORKDIR's binary.)
running() {
  local pid exe
  pid=$(cat "$work/$binary.pid" 2>/dev/null) || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$work/bin/$binary" ]
}
