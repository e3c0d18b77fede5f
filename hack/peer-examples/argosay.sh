#!/bin/sh
# A stand-in for the peer's test image argoproj/argosay:v2, whose entrypoint is a small program of
# a few verbs; the examples run it by its verbs only (`args: [echo, hi, /tmp/out]`). No registry is
# reachable here and the local runner runs commands on this host, so the peer-examples harness
# points the image's entrypoint at this file. Written from what the verbs are documented to do:
#   (none)                 print "hello argo"
#   echo [TEXT [FILE]]     print TEXT (default "hello argo"), or write it to FILE (parents made)
#   cat FILE               print FILE
#   assert_contains F S    succeed when file F contains the text S
#   sleep D                sleep D
#   exit [N]               exit with N (0)
#   sh [FILE]              run FILE with sh
set -eu
verb=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$verb" ]; then
  printf '%s\n' 'hello argo'
  exit 0
fi
case $verb in
  echo)
    text=${1:-hello argo}
    if [ $# -ge 2 ]; then
      mkdir -p "$(dirname -- "$2")"
      printf '%s\n' "$text" >"$2"
    else
      printf '%s\n' "$text"
    fi
    ;;
  cat) cat -- "$1" ;;
  assert_contains) grep -qF -- "$2" "$1" ;;
  sleep) sleep "$1" ;;
  exit) exit "${1:-0}" ;;
  sh) sh "$1" ;;
  *)
    printf 'argosay: unknown verb %s\n' "$verb" >&2
    exit 1
    ;;
esac
