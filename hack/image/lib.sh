# Shared by the hack/image scripts (sourced, not run): step logging in the style of
# hack/build-control-plane.sh — each step says what it does and how long it took, and a failure
# names the step, shows the end of its log and says how to retry.
#
# The caller sets TAG (the log prefix), WORK (where step logs go) and optionally FIX (the advice
# printed after a failed step).

log() { echo "[$TAG] $*" >&2; }

# step NAME COMMAND...: runs COMMAND (in a subshell) with its output in $WORK/NAME.log.
step() {
  local name="$1"; shift
  local t0=$SECONDS
  log "$name ..."
  # A subshell with -e of its own: under `if !` bash would ignore -e inside the function.
  local rc
  set +e
  ( set -e; "$@" ) >"$WORK/$name.log" 2>&1
  rc=$?
  set -e
  if [[ $rc != 0 ]]; then
    echo "[$TAG] step '$name' failed; the last lines of its log ($WORK/$name.log):" >&2
    tail -n 30 "$WORK/$name.log" >&2
    echo "[$TAG] ${FIX:-fix the cause above and run the same make target again}" >&2
    exit 1
  fi
  log "$name done in $((SECONDS - t0))s"
}

# need_tools CMD:PACKAGE...: installs the Debian packages of the missing commands (apt-get).
need_tools() {
  local missing=() pair
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  [[ ${#missing[@]} == 0 ]] && return 0
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    log "missing tools; install the Debian packages: ${missing[*]}"; exit 1
  fi
  FIX="install them by hand: apt-get update && apt-get install -y ${missing[*]}" \
    step install-tools bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing[*]}"
}

# The date every file, layer and config of the images carries: the last commit's date unless
# SOURCE_DATE_EPOCH is set, so a rebuild of the same tree from the same packages is identical.
source_date_epoch() {
  if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then echo "$SOURCE_DATE_EPOCH"; return; fi
  git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0
}
