#!/bin/sh
# Runs a command and asserts its exact exit status and its combined output: the CLI tests' wrapper.
#
#   expect_exit.sh [-c DIR] [-e NAME=VALUE]... [-n REGEX] [-s CODE] STATUS REGEX COMMAND [ARG...]
#
#   STATUS  the exit status the command must return (0 success, 1 user error, 2 internal error,
#           3 verification failed: the tessel CLI's codes).
#   REGEX   an extended regex that must match the command's stdout and stderr together, taken as
#           one string as CMake's PASS_REGULAR_EXPRESSION does: '.' also matches a newline and '^'
#           anchors at the start of the output only.
#   -n REGEX  a regex that must NOT match the output.
#   -c DIR    a fresh scratch cache: DIR is emptied and becomes TESSEL_CACHE_DIR, and TESSEL_TUNE_DB
#             is unset so the tuning database defaults into DIR too (never the user's cache).
#   -e NAME=VALUE  exported to the command (after -c, in order).
#   -s CODE   the command's "skipped" status (77): passed on as it is, so ctest reports a skip.
#
# Exit status: 0 when every check holds, else 1 with a diagnosis (command, status, output, and
# each failed check); CODE when the command skipped. PASS_REGULAR_EXPRESSION is not used with
# this wrapper: ctest judges its exit status, and the status is what the wrapper checks.
set -u

usage() { echo "usage: expect_exit.sh [-c DIR] [-e NAME=VALUE]... [-n REGEX] [-s CODE] STATUS REGEX COMMAND [ARG...]"; exit 1; }

not_regex=
skip_code=
while [ $# -gt 0 ]; do
  case $1 in
    -c)
      [ $# -ge 2 ] || usage
      rm -rf "$2" && mkdir -p "$2" || { echo "expect_exit: cannot make scratch cache $2"; exit 1; }
      TESSEL_CACHE_DIR=$2
      export TESSEL_CACHE_DIR
      unset TESSEL_TUNE_DB
      shift 2 ;;
    -e)
      [ $# -ge 2 ] || usage
      case $2 in *=*) ;; *) usage ;; esac
      export "$2"
      shift 2 ;;
    -n) [ $# -ge 2 ] || usage; not_regex=$2; shift 2 ;;
    -s) [ $# -ge 2 ] || usage; skip_code=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || usage
want=$1
regex=$2
shift 2
case $want in '' | *[!0-9]*) echo "expect_exit: STATUS '$want' is not a number"; usage ;; esac

# What each status means, for the diagnosis.
meaning() {
  case $1 in
    0) echo "success" ;;
    1) echo "user error, or a test script's failed check" ;;
    2) echo "internal error" ;;
    3) echo "verification failed" ;;
    77) echo "skipped" ;;
    126) echo "not executable" ;;
    127) echo "command not found" ;;
    *) if [ "$1" -gt 128 ]; then echo "killed by signal $(($1 - 128))"; else echo "unexpected status"; fi ;;
  esac
}

out=$(mktemp "${TMPDIR:-/tmp}/expect_exit.XXXXXX") || { echo "expect_exit: mktemp failed"; exit 1; }
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
got=$?

echo "expect_exit: command: $*"
echo "--- output ---"
cat "$out"
echo "--- end of output (exit status $got: $(meaning "$got")) ---"

if [ -n "$skip_code" ] && [ "$got" -eq "$skip_code" ]; then
  echo "expect_exit: SKIPPED (the command exited $got)"
  exit "$got"
fi

# matches REGEX: the whole output as one string (awk: '.' matches a newline, as in CMake).
matches() { RE=$1 awk '{ s = s $0 "\n" } END { exit !(s ~ ENVIRON["RE"]) }' "$out"; }

failed=0
if [ "$got" -ne "$want" ]; then
  echo "expect_exit: FAIL: exit status $got ($(meaning "$got")), expected $want ($(meaning "$want"))"
  failed=1
fi
if ! matches "$regex"; then
  echo "expect_exit: FAIL: the output does not match /$regex/"
  failed=1
fi
if [ -n "$not_regex" ] && matches "$not_regex"; then
  echo "expect_exit: FAIL: the output matches /$not_regex/, which it must not"
  failed=1
fi
[ "$failed" -eq 0 ] || exit 1
echo "expect_exit: PASS (exit status $got, output matches)"
exit 0
