#!/bin/sh
# Runs every tessel command the docs show (issue 24: what a reader copies must work):
#   doc_commands.sh TESSEL SOURCE_DIR WORK_DIR TUNE_RESULTS
# The ```sh blocks of README.md, docs/*.md and docs/tutorials/*.md are read by doc_commands.awk;
# each `tessel ...` / `build/tools/tessel/tessel ...` line runs against TESSEL on the CPU interpreter
# (TESSEL_INTERPRET=1). Each page's commands run in order, as a reader would, in a fresh
# directory WORK_DIR/<page> with its own TESSEL_CACHE_DIR (the tuning database defaults into it).
# Expected: exit 0; `tune` and `bench` (but `tune --list` and --host-timer runs) need a GPU and
# must refuse with exit 1 and the CLI's "<command> needs a GPU: ..." line. `tessel report` draws
# the results a GPU's `tune` stores: TUNE_RESULTS (a `tune --json` output) stands in for them.
# Exit status: 0 when every command did what it should, 1 otherwise, each failure named by
# FILE:LINE and the command; 77 (skipped) without ptxas, which the pages' cubin commands need
# (a failure under TESSEL_TEST_REQUIRE_PTXAS=1, as CI sets).
set -u
[ $# -eq 4 ] || { echo "usage: doc_commands.sh TESSEL SOURCE_DIR WORK_DIR TUNE_RESULTS"; exit 1; }
tessel=$1
src=$2
work=$3
tune_results=$4
[ -f "$tune_results" ] || { echo "FAIL: no tuning results fixture $tune_results"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$tessel" ] || { echo "FAIL: $tessel is not an executable"; exit 1; }
case $tessel in /*) ;; *) tessel=$(pwd)/$tessel ;; esac   # the commands run in other directories
ptxas=$("$tessel" --version | sed -n 's/^ptxas: //p')
case $ptxas in
  "not found"* | "")
    [ "${TESSEL_TEST_REQUIRE_PTXAS:-0}" = 0 ] || { echo "FAIL: TESSEL_TEST_REQUIRE_PTXAS=1 but ptxas ${ptxas:-unreported}"; exit 1; }
    echo "SKIPPED: ptxas ${ptxas:-unreported}; the pages' cubin commands need it"; exit 77 ;;
esac

# Commands the test cannot run as written: a command whose text in the page contains one of
# these placeholders is skipped. Keep this short: a command that can run should run (fix the
# page instead).
skip_list='
cache info KEY
--plugin libmykernels.so
'
# Why each is skipped:
#   cache info KEY            KEY stands for an entry key, a hash that differs between builds
#                             (tests/cli/cache_cli.sh runs `cache info` on a real key).
#   --plugin libmykernels.so  the reader's own plugin and kernels (tests/plugin runs the sample
#                             plugin through the same subcommands).
skipped() {
  printf '%s\n' "$skip_list" | {
    while read -r p; do [ -z "$p" ] || case $1 in *"$p"*) exit 0 ;; esac; done
    exit 1
  }
}

# needs_gpu COMMAND: true for the commands that must refuse on the interpreter.
needs_gpu() {
  case " $1 " in
    *" --host-timer "*) return 1 ;;
    *" tune --list "*) return 1 ;;
    *" tune "* | *" bench "*) return 0 ;;
  esac
  return 1
}

# prepare COMMAND: what the GPU would have left for it. `report` reads the results `tune` keeps
# beside the database (tuning_results.json in the cache directory); without a GPU nothing tuned.
prepare() {
  case " $1 " in
    *" report "*) [ -f "$TESSEL_CACHE_DIR/tuning_results.json" ] ||
                  cp "$tune_results" "$TESSEL_CACHE_DIR/tuning_results.json" ;;
  esac
}

rm -rf "$work"
mkdir -p "$work" || { echo "FAIL: cannot make $work"; exit 1; }
list=$work/commands.tsv
(cd "$src" && awk -f "$here/doc_commands.awk" README.md docs/*.md docs/tutorials/*.md) >"$list" ||
  { echo "FAIL: doc_commands.awk failed"; exit 1; }
[ -s "$list" ] || { echo "FAIL: no tessel commands found in the docs"; exit 1; }

export TESSEL_INTERPRET=1
unset TESSEL_TUNE_DB TESSEL_DEVICE 2>/dev/null
tab=$(printf '\t')
failures=0
ran=0
used_skips=
page=
fail() { echo "FAIL: $1:$2: $3"; echo "      $4"; failures=$((failures + 1)); }
while IFS=$tab read -r file line text cmd; do
  where="$file:$line"
  if [ "$cmd" = STRAY ]; then
    fail "$file" "$line" "$text" "a tessel command outside a \`\`\`sh block (mark the block \`\`\`sh so it is tested)"
    continue
  fi
  if skipped "$text"; then
    [ "$where" = "${last_skip:-}" ] || echo "SKIP: $where: $text (allow-listed in doc_commands.sh)"
    last_skip=$where
    used_skips="$used_skips$text
"
    continue
  fi
  if [ "$file" != "$page" ]; then
    page=$file
    dir=$work/$(echo "$file" | tr '/.' '__')
    mkdir -p "$dir/cache"
    export TESSEL_CACHE_DIR="$dir/cache"
  fi
  # The binary for the page's `tessel` or `build/tools/tessel/tessel`, after any NAME=VALUE prefix.
  run=$(printf '%s\n' "$cmd" | sed -E 's#^(([A-Z_][A-Z0-9_]*=[^ ]* +)*)(build/tools/tessel/)?tessel( |$)#\1"$TESSEL_BIN"\4#')
  prepare "$cmd"
  echo "=== $where: $cmd"
  out=$(cd "$dir" && TESSEL_BIN=$tessel timeout 300 sh -c "$run" 2>&1 </dev/null)
  got=$?
  ran=$((ran + 1))
  printf '%s\n' "$out" | sed 's/^/    /'
  if needs_gpu "$cmd"; then
    if [ "$got" -ne 1 ] || ! printf '%s\n' "$out" | grep -Eq '^tessel: error: (tune|bench) needs a GPU: '; then
      fail "$file" "$line" "$cmd" "exit $got; a GPU-only command must refuse on the interpreter: exit 1, 'needs a GPU'"
      continue
    fi
    echo "--- ok (exit 1, needs a GPU, as expected without one)"
  elif [ "$got" -ne 0 ]; then
    fail "$file" "$line" "$cmd" "exit $got, expected 0"
  else
    echo "--- ok (exit 0)"
  fi
done <"$list"

# An allow-list entry that no page has any more is stale: the list must shrink with the docs.
printf '%s\n' "$skip_list" | while read -r entry; do
  [ -n "$entry" ] || continue
  printf '%s' "$used_skips" | grep -qF -- "$entry" || { echo "FAIL: allow-listed '$entry' is in no page any more"; exit 1; }
done || failures=$((failures + 1))

echo "$ran commands run, $failures failures"
[ "$failures" -eq 0 ] || exit 1
echo "PASS: doc commands"
