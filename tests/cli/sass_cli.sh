#!/bin/sh
# CLI checks of `tessel compile K --emit sass`: sass_cli.sh CASE TESSEL.
#   real     with nvdisasm or cuobjdump (found as tessel finds them) and ptxas: the SASS of add
#            for sm_80, its entry named for the variant; skipped (77) without the tools.
#   fake     a stand-in nvdisasm on PATH: the arguments tessel passes, its output, its failure.
#   missing  with neither tool: exit 1 and one line naming both tools and where they were looked
#            for; skipped (77) where /usr/local/cuda/bin has one (it is always searched).
#   uniform  with the tools: the wgmma descriptors of attention's two consumer warpgroups (from
#            Lowerer::warp_uniform) stay in uniform registers: at most 8 R2UR moves in the kernel
#            (97 when the warp index was per thread, each descriptor word moved before each wgmma).
# Exit status: 0 pass, 1 fail (with the reason), 77 skipped.
set -u
case=$1
tessel=$2
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp) || fail "mktemp"
trap 'rm -f "$out"' EXIT
# tool NAME: the path tessel would run, or nothing (PATH, $CUDA_PATH/bin, $CUDA_HOME/bin, /usr/local/cuda/bin).
tool() {
  command -v "$1" 2>/dev/null && return
  for d in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
    [ -n "$d" ] && [ -x "$d/bin/$1" ] && { echo "$d/bin/$1"; return; }
  done
}

case $case in
  real)
    if [ -z "$(tool nvdisasm)$(tool cuobjdump)" ]; then
      echo "SKIP: no nvdisasm or cuobjdump on PATH, in \$CUDA_PATH/bin, \$CUDA_HOME/bin or /usr/local/cuda/bin"
      exit 77
    fi
    [ -n "$(tool ptxas)" ] || { echo "SKIP: no ptxas to make the cubin"; exit 77; }
    "$tessel" compile add --emit sass --arch sm_80 >"$out" 2>&1
    got=$?
    head -40 "$out"
    [ "$got" -eq 0 ] || fail "tessel compile add --emit sass exited $got, expected 0"
    grep -q "add_BLOCK1024_w4_s1" "$out" || fail "the SASS does not name the entry add_BLOCK1024_w4_s1"
    grep -Eq "EXIT|LDG|STG" "$out" || fail "no SASS instructions (EXIT, LDG, STG) in the output"
    echo "PASS: real" ;;
  missing)
    if [ -x /usr/local/cuda/bin/nvdisasm ] || [ -x /usr/local/cuda/bin/cuobjdump ]; then
      echo "SKIP: /usr/local/cuda/bin has a disassembler (always searched)"
      exit 77
    fi
    PATH=/nonexistent CUDA_PATH= CUDA_HOME=/nonexistent "$tessel" compile add --emit sass --arch sm_80 >"$out" 2>&1
    got=$?
    cat "$out"
    [ "$got" -eq 1 ] || fail "--emit sass without a disassembler exited $got, expected 1"
    grep -q "^tessel: error: cannot disassemble to SASS: neither nvdisasm nor cuobjdump was found on PATH, in \\\$CUDA_PATH/bin (unset), \\\$CUDA_HOME/bin (/nonexistent/bin) or /usr/local/cuda/bin; install the CUDA toolkit" "$out" \
      || fail "not the missing-disassembler message"
    [ "$(wc -l <"$out")" -eq 1 ] || fail "more than one line of output"
    echo "PASS: missing" ;;
  fake)
    # A stand-in nvdisasm on PATH: tessel runs the first one it finds, with -c and the cubin, and
    # prints what it prints; one that fails is reported with its status and output (exit 1).
    [ -n "$(tool ptxas)" ] || { echo "SKIP: no ptxas to make the cubin"; exit 77; }
    bin=$(mktemp -d) || fail "mktemp -d"
    trap 'rm -f "$out"; rm -rf "$bin"' EXIT
    printf '#!/bin/sh\necho "fake-nvdisasm $1 $(basename "$2") $(head -c 4 "$2" | tail -c 3)"\n' >"$bin/nvdisasm"
    chmod +x "$bin/nvdisasm"
    PATH="$bin:$PATH" "$tessel" compile add --emit sass --arch sm_80 >"$out" 2>&1
    got=$?
    cat "$out"
    [ "$got" -eq 0 ] || fail "--emit sass with the stand-in exited $got, expected 0"
    grep -q "^fake-nvdisasm -c kernel.cubin ELF$" "$out" || fail "the stand-in did not get -c and an ELF cubin"
    printf '#!/bin/sh\necho "bad cubin" >&2\nexit 3\n' >"$bin/nvdisasm"
    PATH="$bin:$PATH" "$tessel" compile add --emit sass --arch sm_80 >"$out" 2>&1
    got=$?
    cat "$out"
    [ "$got" -eq 1 ] || fail "--emit sass with a failing disassembler exited $got, expected 1"
    grep -q "^tessel: error: $bin/nvdisasm failed (exit status 3): bad cubin" "$out" || fail "not the tool's failure"
    echo "PASS: fake" ;;
  uniform)
    if [ -z "$(tool nvdisasm)$(tool cuobjdump)" ] || [ -z "$(tool ptxas)" ]; then
      echo "SKIP: needs ptxas and nvdisasm or cuobjdump"
      exit 77
    fi
    "$tessel" compile attention_fwd --emit sass --arch sm_90a --aligned -D HEAD_DIM=128 -D BLOCK_M=128 \
      -D BLOCK_N=128 --num-warps 8 --num-stages 2 --warp-specialize --consumer-registers 232 \
      --warpgroup-turns >"$out" 2>&1
    got=$?
    [ "$got" -eq 0 ] || { head -20 "$out"; fail "tessel compile attention_fwd --emit sass exited $got"; }
    grep -q "HGMMA.64x128x16.F32" "$out" || fail "no HGMMA.64x128x16 in the SASS"
    n=$(grep -c "R2UR" "$out")
    echo "R2UR: $n"
    [ "$n" -le 8 ] || fail "$n R2UR moves (at most 8: the descriptors are uniform)"
    echo "PASS: uniform" ;;
  *) fail "unknown case '$case'" ;;
esac
