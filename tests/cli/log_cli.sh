#!/bin/sh
# CLI checks of tessel's log on stderr (TESSEL_LOG, the driver notice, the interpreter fallback):
# log_cli.sh CASE TESSEL. The driver is hidden with TESSEL_CUDA_LIBRARY, so each case holds on a
# GPU host too. Exit status: 0 pass, 1 fail, 77 skipped (compile --emit cubin without ptxas).
. "$(dirname "$0")/case_setup.sh"
err=$dir.err
unset TESSEL_INTERPRET TESSEL_REQUIRE_GPU TESSEL_LOG TESSEL_PRINT_AUTOTUNING
TESSEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1
export TESSEL_CUDA_LIBRARY
fail() { echo "FAIL: $*"; echo "--- stdout:"; cat "$out"; echo "--- stderr:"; cat "$err"; exit 1; }
# run ARGS...: runs tessel with stdout in $out and stderr in $err; it must succeed.
run() {
  "$tessel" "$@" >"$out" 2>"$err"
  got=$?
  [ "$got" -eq 0 ] || fail "tessel $* exited $got, expected 0"
}
quiet() { [ ! -s "$err" ] || fail "stderr is not empty"; }
lines() { [ "$(wc -l <"$err")" -eq "$1" ] || fail "stderr has $(wc -l <"$err") lines, expected $1"; }
expect() { grep -Eq "$1" "$err" || fail "stderr lacks /$1/"; }
# cubin ENV...: `compile add --emit cubin` (which asks for the driver) with the variables given.
cubin() {
  env "$@" "$tessel" compile add --emit cubin -o "$dir/add.cubin" >"$out" 2>"$err"
  got=$?
  if [ "$got" -ne 0 ]; then
    grep -q "ptxas" "$err" && { echo "SKIPPED: no ptxas"; cat "$err"; exit 77; }
    fail "compile --emit cubin exited $got"
  fi
}

case $case_name in
  interpret_quiet)
    # Asked for the interpreter: nothing on stderr at the default level, even where the driver is
    # looked for (a cubin for the GPU's architecture asks it first).
    export TESSEL_INTERPRET=1
    run run add --size 1000
    quiet
    cubin TESSEL_INTERPRET=1
    quiet
    # The same notices at info.
    cubin TESSEL_INTERPRET=1 TESSEL_LOG=info
    expect "^tessel: CUDA driver unavailable, GPU features disabled: /nonexistent/libcuda.so.1 \(TESSEL_CUDA_LIBRARY\) not found"
    TESSEL_LOG=info run run add --size 1000
    expect "^tessel: kernels run on the CPU interpreter \(requested with TESSEL_INTERPRET=1\)$"
    lines 1
    ;;
  fallback_warns)
    # Not asked for: one warning at the default level, none at error.
    run run add --size 1000
    expect "^tessel: no usable GPU \(no CUDA driver: /nonexistent/libcuda.so.1 \(TESSEL_CUDA_LIBRARY\) not found.*\): kernels run on the CPU interpreter \(TESSEL_INTERPRET=1 asks for it"
    lines 1
    TESSEL_LOG=error run run add --size 1000
    quiet
    ;;
  bogus_level)
    TESSEL_INTERPRET=1 TESSEL_LOG=bogus run run add --size 1000
    expect "^tessel: TESSEL_LOG=bogus is not a level \(expected error, warn, info or debug\); using warn$"
    lines 1
    # "using warn": the fallback warning still shows.
    TESSEL_LOG=bogus run run add --size 1000
    expect "no usable GPU"
    lines 2
    ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
echo "PASS: $case_name"
