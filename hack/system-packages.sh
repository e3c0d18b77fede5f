#!/usr/bin/env bash
# Installs the Debian packages a README command needs, so `make dev` and `make test` do their own
# set-up on a fresh machine (CI's .ci/run calls the same script). Root with apt-get: what is missing
# is installed. Otherwise: a required package that is missing stops the command at once, naming
# the one command that installs it; an optional one (the real-node suite's) is reported, and that
# suite is skipped with its reason.
#
#   hack/system-packages.sh dev     what `make dev` runs: util-linux (mount namespaces of the pod
#                                   runner), curl, python3 (the example plugins), postgresql (the
#                                   workflow archive's server)
#   hack/system-packages.sh test    the above, git (the git artifact suites), chromium (the web UI's
#                                   browser tests), python3-venv (the Hera client suite); optional: containerd, runc, the CNI plugins,
#                                   iptables, conntrack, openssl, umoci, mmdebstrap (test/node/)
set -euo pipefail

profile="${1:-dev}"
case "$profile" in dev | test) ;; *)
  echo "[system-packages] unknown profile '$profile' (dev or test)" >&2
  exit 2
  ;;
esac

missing_required=()
missing_optional=()
need() { # need <required|optional> <package> <test…>
  local kind="$1" pkg="$2"
  shift 2
  if ! "$@" >/dev/null 2>&1; then
    if [[ $kind == required ]]; then missing_required+=("$pkg"); else missing_optional+=("$pkg"); fi
  fi
}
has() { command -v "$1"; }
has_postgres() { compgen -G '/usr/lib/postgresql/*/bin/postgres'; }

need required util-linux has unshare
need required curl has curl
need required python3 has python3
need required postgresql has_postgres
if [[ $profile == test ]]; then
  need required git has git
  need required chromium has chromium
  need required python3-venv python3 -c 'import ensurepip, venv'
  need optional containerd has containerd
  need optional runc has runc
  need optional conntrack has conntrack
  need optional iptables has iptables
  need optional openssl has openssl
  need optional umoci has umoci
  need optional mmdebstrap has mmdebstrap
  need optional containernetworking-plugins test -x /usr/lib/cni/bridge
fi

all=("${missing_required[@]}" "${missing_optional[@]}")
if [[ ${#all[@]} -eq 0 ]]; then
  echo "[system-packages] $profile: every package is installed"
  exit 0
fi

if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  t0=$SECONDS
  echo "[system-packages] installing ${all[*]} (apt-get; a minute or two) ..."
  log="$(mktemp -t plugflow-apt-XXXXXX.log)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${all[@]}"; } >"$log" 2>&1; then
    echo "[system-packages] apt-get install ${all[*]} failed; the last lines of its log ($log):" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  echo "[system-packages] installed ${all[*]} in $((SECONDS - t0))s"
  exit 0
fi

how="sudo apt-get install -y --no-install-recommends"
if [[ ${#missing_optional[@]} -gt 0 ]]; then
  echo "[system-packages] optional, not installed: ${missing_optional[*]} — the real-node suite (test/node/) will be skipped;" >&2
  echo "[system-packages]   to run it: $how ${missing_optional[*]}" >&2
fi
if [[ ${#missing_required[@]} -gt 0 ]]; then
  echo "[system-packages] 'make $profile' needs ${missing_required[*]}, which this machine lacks." >&2
  if command -v apt-get >/dev/null; then
    echo "[system-packages] install them with:  $how ${missing_required[*]}" >&2
    echo "[system-packages] (or run the command as root: it installs what is missing itself)" >&2
  else
    echo "[system-packages] install them with your system's package manager, then run the command again" >&2
  fi
  exit 1
fi
