#!/bin/sh
# CLI checks of `tessel tune`, `tessel bench` and `tessel report`: tune_cli.sh CASE TESSEL FIXTURE.
# Works in $TESSEL_TUNE_DB's directory (a scratch directory the test names), emptied first.
# Exit status: 0 pass, 1 fail, 77 skipped (the case needs a GPU, or needs its absence; no GPU is
# a failure under TESSEL_TEST_REQUIRE_GPU=1). Every tessel call goes through run(), which asserts
# its exit status exactly.
set -u
case_name=$1
tessel=$2
fixture=$3
db=${TESSEL_TUNE_DB:?the test must set TESSEL_TUNE_DB}
dir=$(dirname "$db")
rm -rf "$dir"
mkdir -p "$dir"
out=$dir/out.txt
fail() { echo "FAIL: $*"; echo "--- last output:"; cat "$out" 2>/dev/null; exit 1; }
# run EXPECTED_STATUS ARGS...: runs tessel, output in $out (and echoed), checks the exit status.
run() {
  want=$1
  shift
  "$tessel" "$@" >"$out" 2>&1
  got=$?
  cat "$out"
  [ "$got" -eq "$want" ] || fail "tessel $* exited $got, expected $want"
}
expect() { grep -Eq "$1" "$out" || fail "output lacks /$1/"; }
expect_in() { grep -Eq "$2" "$1" || fail "$1 lacks /$2/"; }
count_in() { grep -o "$2" "$1" | wc -l | tr -d ' '; }
has_gpu() { "$tessel" run add --size 1 2>/dev/null | grep -q "^device: *GPU"; }

case $case_name in
  nogpu)
    if has_gpu; then echo "SKIP: a GPU is present"; exit 77; fi
    run 1 tune add --sizes 1M --db "$db"
    expect "^tessel: error: tune needs a GPU: ."
    # one error line, the last (the device layer may warn about the driver before it)
    [ "$(grep -c '^tessel: error:' "$out")" -eq 1 ] || fail "not exactly one error line"
    tail -n 1 "$out" | grep -q "^tessel: error: tune needs a GPU: ." ||
      fail "the error is not the last line"
    run 1 bench softmax --db "$db"
    expect "^tessel: error: bench needs a GPU: ."
    run 1 tune --all --db "$db"
    expect "^tessel: error: tune needs a GPU: ."
    [ ! -e "$db" ] || fail "a refused tune wrote the database"
    ;;
  report)
    run 0 report "$dir/r.svg" --from "$fixture" --table
    expect "^wrote .*r.svg \(5 kernels, 6 problem sizes\)"
    expect "compile error: synthetic: too many registers"
    expect "^\*   1  BLOCK=4096 num_warps=8"
    expect_in "$dir/r.svg" "^<svg xmlns=\"http://www.w3.org/2000/svg\""
    expect_in "$dir/r.svg" "^</svg>$"
    [ "$(count_in "$dir/r.svg" 'class="point"')" -eq 6 ] || fail "expected 6 roofline points"
    [ "$(count_in "$dir/r.svg" 'class="fusion-arrow"')" -eq 2 ] || fail "expected 2 fusion arrows"
    expect_in "$dir/r.svg" "bandwidth 3000 GB/s<"
    expect_in "$dir/r.svg" "compute 50.0 TFLOP/s"
    ;;
  plot)
    # tune --plot alone draws the results kept next to the database (no GPU needed)
    run 1 tune --plot "$dir/p.svg" --db "$db"
    expect "no tuning results at .*tuning_results.json"
    cp "$fixture" "$dir/tuning_results.json"
    run 0 tune --plot "$dir/p.svg" --db "$db"
    expect "^wrote .*p.svg \(5 kernels"
    expect_in "$dir/p.svg" 'data-kernel="softmax_unfused"'
    run 0 report "$dir/q.svg"  # from TESSEL_TUNE_DB's results (the test sets it to $db)
    cmp -s "$dir/p.svg" "$dir/q.svg" || fail "tune --plot and report drew different pictures"
    echo '{"kernels": 3}' >"$dir/bad.json"
    run 1 report "$dir/b.svg" --from "$dir/bad.json"
    expect "bad.json: tuning results"
    ;;
  host)
    # the whole tune -> database -> bench path on any device, timed with the host clock
    run 0 tune add chain5 --sizes 1000,3000 --budget 0.2 --interpret --host-timer --db "$db" --plot "$dir/h.svg"
    expect "^add n=1000 8/8 BLOCK="
    expect "^roofline probes bandwidth [0-9.]+ GB/s, compute [0-9.]+ TFLOP/s"
    expect "^roofline probes .*, tensor cores f16 [0-9.e+-]+ bf16 [0-9.e+-]+ tf32 [0-9.e+-]+ TFLOP/s"
    expect "^\*   1  BLOCK=[0-9]+ num_warps=[48] num_stages=1 "
    expect "^wrote .*h.svg \(2 kernels, 4 problem sizes\)"
    expect_in "$db" '"add"'
    expect_in "$dir/tuning_results.json" '"name": "chain5"'
    expect_in "$dir/h.svg" 'data-kernel="chain5" data-size="n=3000"'
    expect_in "$dir/h.svg" 'class="tensor-ceiling" data-dtype="f16"'
    expect_in "$dir/h.svg" 'class="size-label"'
    expect_in "$dir/tuning_results.json" '"tensor_gflops": [{]'
    # a second process finds the tuned configs in the database
    run 0 bench add --sizes 1000,3000 --interpret --host-timer --db "$db"
    expect "^add +n=3000 .*x  BLOCK="
    run 0 bench chain5_unfused --sizes 1000 --interpret --host-timer --db "$db"
    expect "not tuned: run tessel tune chain5_unfused --sizes 1000"
    run 0 tune softmax --sizes 5x300 --budget 0.2 --interpret --host-timer --json --db "$db"
    expect '"name": "softmax"'
    # the ceilings the first run measured are reused (stored beside the database), unless asked
    expect "^roofline bandwidth [0-9.]+ GB/s, .*tensor cores f16 .*\(measured earlier, stored in .*tuning_results.json"
    if grep -q "^roofline probes" "$out"; then fail "the second tune measured the roofline again"; fi
    expect '"rows": 5,'
    expect '"cols": 300'
    expect_in "$dir/tuning_results.json" '"name": "add"'
    # --config-budget sets each config's timing budget (1 ms: far below the 1000-repetition cap
    # the default 0.2 s reaches here); a total --budget beside it is refused
    run 0 tune add --sizes 1000 --config-budget 0.001 --interpret --host-timer --json --db "$db" --remeasure-roofline
    expect "^roofline probes bandwidth [0-9.]+ GB/s"
    expect '"reps": [0-9]'
    if grep -q '"reps": 1000' "$out"; then fail "--config-budget 0.001 still ran 1000 repetitions"; fi
    run 1 tune add --sizes 1000 --budget 1 --config-budget 0.1 --interpret --host-timer --db "$db"
    expect "excludes"
    ;;
  gpu)
    if ! has_gpu; then
      # the device runs (TESSEL_TEST_REQUIRE_GPU=1) must run this case: no GPU is a failure there
      [ "${TESSEL_TEST_REQUIRE_GPU:-0}" = 0 ] || fail "no GPU under TESSEL_TEST_REQUIRE_GPU=1"
      echo "SKIP: no GPU"; exit 77
    fi
    run 0 tune add --sizes 1M,4M --budget 1 --db "$db" --plot "$dir/add.svg"
    expect "^\*   1  BLOCK="
    expect "roofline probes .*GB/s"
    expect "roofline probes .*, tensor cores f16 [0-9.]+ bf16 [0-9.]+ tf32 [0-9.]+ TFLOP/s"
    expect_in "$dir/add.svg" 'class="tensor-ceiling" data-dtype="f16"'
    expect_in "$db" '"add"'
    # a second process reuses the database: bench finds the tuned config without tuning
    run 0 bench add --sizes 1M,4M --db "$db"
    expect "^add +n=1048576 .*x  BLOCK="
    run 0 tune softmax --sizes 4096x1000 --budget 1 --json --db "$db"
    expect '"name": "softmax"'
    # attention: the tuner picks among schedules and register budgets (producer warps with
    # setmaxnreg) at an odd length; every config is checked against the host reference
    run 0 tune attention_fwd --sizes 2x4x1000x128x1 --budget 2 --db "$db"
    expect "^\*   1  BLOCK_M="
    expect "consumer_registers=240"
    if grep -q "wrong output" "$out"; then fail "an attention config computed a wrong output"; fi
    if grep "consumer_registers" "$out" | grep -q "error"; then fail "a producer-warp config did not run"; fi
    ;;
  differs)
    # bench checks the tuned config's output against the default's: a database whose tuned
    # config computes something else (softmax's one-tile kernel with BLOCK < cols sees only
    # part of each row) is a verification failure, exit 3
    run 0 tune softmax --sizes 5x300 --budget 0.2 --interpret --host-timer --db "$db"
    run 0 bench softmax --sizes 5x300 --interpret --host-timer --db "$db"
    expect "^softmax +rows=5,cols=300 .*x  BLOCK=(512|1024) "
    if grep -q "OUTPUT DIFFERS" "$out"; then fail "the honest database already differs"; fi
    sed 's/"BLOCK=[0-9]*/"BLOCK=64/' "$db" >"$db.tmp" && mv "$db.tmp" "$db" || fail "cannot edit $db"
    expect_in "$db" '"BLOCK=64 num_warps'
    run 3 bench softmax --sizes 5x300 --interpret --host-timer --db "$db"
    expect "^softmax +rows=5,cols=300 .*x  BLOCK=64 num_warps=[0-9]+ num_stages=1  OUTPUT DIFFERS at \\[[0-9]+\\]"
    run 3 bench softmax --sizes 5x300 --interpret --host-timer --db "$db" --json
    expect '"same_output": false'
    ;;
  plugin)
    # one namespace: a plugin kernel registered with a workload runs, tunes and benches like a
    # built-in sample (on the interpreter, timed with the host clock)
    p=${TESSEL_PLUGIN_LIB:?the test must set TESSEL_PLUGIN_LIB}
    run 0 --plugin "$p" list
    expect "^  plugin_axpy1 +out = x \\* s \\+ 1"
    expect "also: +run, tune, bench"
    run 0 --plugin "$p" run plugin_axpy1 --interpret --sizes 4097
    expect "^config: +BLOCK=512 num_warps=4 num_stages=1"
    expect "^verified: 4097 elements match the host reference on the CPU interpreter"
    run 0 --plugin "$p" run plugin_axpy1 --interpret --size 1 -D BLOCK=128 --num-warps 2
    expect "^config: +BLOCK=128 num_warps=2 num_stages=1"
    expect "^verified: 1 elements match"
    # the kernel's prune sees the problem: BLOCK=1024 is pruned at n = 100
    run 1 --plugin "$p" run plugin_axpy1 --interpret --sizes 100 -D BLOCK=1024
    expect "the config BLOCK=1024 num_warps=4 num_stages=1 is pruned by the kernel at this size"
    run 1 --plugin "$p" run plugin_axpy1 --interpret --sizes 3x4
    expect "kernel 'plugin_axpy1' takes n"
    run 0 --plugin "$p" tune --list
    expect "^  plugin_axpy1 +out = x"
    run 0 --plugin "$p" tune plugin_axpy1 --sizes 1000,100 --budget 0.2 --interpret --host-timer --db "$db"
    expect "^plugin_axpy1 n=100 3/3 "
    expect "pruned"
    expect_in "$db" '"plugin_axpy1"'
    run 0 --plugin "$p" bench plugin_axpy1 --sizes 1000 --interpret --host-timer --db "$db"
    expect "^plugin_axpy1 +n=1000 .*x  BLOCK="
    # a reference the output does not match: run fails verification, tune finds no correct config
    run 3 --plugin "$p" run plugin_axpy1_badref --interpret --sizes 4097
    expect "^FAILED: 4097 of 4097 elements differ from the host reference; first: output\\[0\\] = "
    run 3 --plugin "$p" tune plugin_axpy1_badref --sizes 1000 --budget 0.2 --interpret --host-timer --db "$db"
    expect "no config is correct \\(3 of 3 gave a wrong output\\)"
    # names that are not what the command takes say what they are
    run 1 run gelu --interpret
    expect "run: 'gelu' has no sample or workload"
    run 1 compile softmax_unfused --emit tir
    expect "compile: 'softmax_unfused' is a chain of kernels \\(row_max, exp_sum, row_divide\\)"
    run 1 run sum_of_squares --interpret
    expect "'sum_of_squares' is now called 'sum_squares'"
    run 1 tune gelu --interpret --host-timer --db "$db"
    expect "tune: 'gelu' has no tuning problem"
    ;;
  plugin_gpu)
    if ! has_gpu; then
      [ "${TESSEL_TEST_REQUIRE_GPU:-0}" = 0 ] || fail "no GPU under TESSEL_TEST_REQUIRE_GPU=1"
      echo "SKIP: no GPU"; exit 77
    fi
    p=${TESSEL_PLUGIN_LIB:?the test must set TESSEL_PLUGIN_LIB}
    run 0 --plugin "$p" run plugin_axpy1 --sizes 1000003
    expect "^verified: 1000003 elements match the host reference on the GPU"
    run 0 --plugin "$p" tune plugin_axpy1 --sizes 16M,4097 --budget 1 --db "$db"
    expect "^\\*   1  BLOCK="
    run 0 --plugin "$p" bench plugin_axpy1 --sizes 16M,4097 --db "$db"
    expect "^plugin_axpy1 +n=16777216 .*x  BLOCK="
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: $case_name"
