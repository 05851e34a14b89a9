#!/usr/bin/env bash
# On the GPU machine: builds samples/torch against an installed tessel and PyTorch, then runs
# test_tessel_torch.py and bench_tessel_torch.py, and two_gpu_mse.py where nvidia-smi lists two
# GPUs or more. Logs and JSON go to $OUT. Exits non-zero when the build, the test, the benchmark
# or the two-GPU step fails (a missed speed-up target is reported, not failed).
#
#   B=/tmp/tessel OUT=/tmp/out samples/torch/run_on_device.sh
#
# B: where the payload is unpacked, tessel's install tree at $B/install (lib/libtessel_*.so,
# include/, lib/cmake/tessel); the libraries those need and do not carry (libfmt.so.9,
# libxxhash, libzstd) in $B/install/lib or $B. PYTHON: the interpreter with torch and triton
# (default python3); cmake and ninja are taken from its bin directory first (pip installs them there).
set -uo pipefail
export NCCL_NVLS_ENABLE=0  # house rule on the device machines
export PYTHONFAULTHANDLER=1  # a crash in an operator prints the Python stack that called it

here=$(cd "$(dirname "$0")" && pwd)
B=${B:-/tmp/tessel}
OUT=${OUT:-/tmp/out}
PYTHON=${PYTHON:-python3}
BUILD=${BUILD:-/tmp/tessel_torch_build}
mkdir -p "$OUT" "$BUILD"
export OUT
export PATH="$(dirname "$(command -v "$PYTHON")"):$PATH"
# The library must use the GPU (no silent fall-back to the CPU interpreter), with a cache of its
# own so every kernel is compiled by this build.
export TESSEL_REQUIRE_GPU=1
export TESSEL_CACHE_DIR=$(mktemp -d)
export LD_LIBRARY_PATH="$B/install/lib:$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
summary=()

if [ ! -d "$B/install/lib/cmake/tessel" ]; then
  echo "FAIL: no tessel install tree at $B/install (expected $B/install/lib/cmake/tessel)"
  exit 1
fi
torch_prefix=$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)') || {
  echo "FAIL: $PYTHON cannot import torch"
  exit 1
}

# The CUDA toolkit for find_package(CUDAToolkit) (tessel's config and PyTorch's both ask for it).
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; }
cuda_args=()
if [ -n "$nvcc" ]; then
  cuda_args+=("-DCMAKE_CUDA_COMPILER=$nvcc" "-DCUDAToolkit_ROOT=$(dirname "$(dirname "$(readlink -f "$nvcc")")")")
fi
# PyTorch's config otherwise probes the GPU for TORCH_CUDA_ARCH_LIST (nothing here is CUDA code).
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)}
[ -n "$TORCH_CUDA_ARCH_LIST" ] || unset TORCH_CUDA_ARCH_LIST

# tessel's config asks for fmt (fmt::fmt is in its libraries' link interface; no public header
# includes it). Without libfmt-dev's CMake package here, a stand-in target: the shared tessel
# libraries already name libfmt.so.9, which the loader finds beside them.
fmt_args=()
fmt_cfg=$(find "$B" /usr/lib /usr/lib64 /usr/local/lib -name fmt-config.cmake -print -quit 2>/dev/null)
if [ -n "$fmt_cfg" ]; then
  fmt_args+=("-Dfmt_DIR=$(dirname "$fmt_cfg")")
else
  mkdir -p "$BUILD/fmt-stand-in"
  cat > "$BUILD/fmt-stand-in/fmt-config.cmake" <<'EOF'
# Stand-in for libfmt-dev's CMake package (written by samples/torch/run_on_device.sh).
if(NOT TARGET fmt::fmt)
  add_library(fmt::fmt INTERFACE IMPORTED)
endif()
set(fmt_FOUND TRUE)
EOF
  fmt_args+=("-Dfmt_DIR=$BUILD/fmt-stand-in")
  echo "note: no fmt CMake package found; using a stand-in fmt::fmt target" | tee -a "$OUT/torch_build.log"
fi

# ---- build ----
# CMAKE_POLICY_VERSION_MINIMUM: CMake 4 (pip's) refuses package files written for CMake < 3.5
# unless told the minimum policy version to assume; CMake 3 ignores it.
lib=""
{
  echo "== cmake configure"
  cmake -S "$here" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$B/install;$torch_prefix" "${fmt_args[@]}" "${cuda_args[@]}" \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
  echo "== cmake build" &&
  cmake --build "$BUILD" -- -v
} >> "$OUT/torch_build.log" 2>&1
if [ $? -eq 0 ] && [ -f "$BUILD/libtessel_torch_ops.so" ]; then
  lib=$BUILD/libtessel_torch_ops.so
  summary+=("PASS build (CMake): $lib")
else
  status=1
  summary+=("FAIL build (CMake): see torch_build.log")
  # Still get results: build the same source with torch.utils.cpp_extension, which needs no CMake
  # package of PyTorch's. Reported as a failure all the same.
  echo "== fallback: torch.utils.cpp_extension" >> "$OUT/torch_build.log"
  B="$B" HERE="$here" BUILD="$BUILD" "$PYTHON" - >> "$OUT/torch_build.log" 2>&1 <<'EOF'
import os
from torch.utils import cpp_extension
B, here = os.environ["B"], os.environ["HERE"]
out = os.path.join(os.environ["BUILD"], "cpp_extension")
os.makedirs(out, exist_ok=True)
libdir = os.path.join(B, "install", "lib")
# Builds out/tessel_torch_ops.so and loads it (torch.ops.load_library): a load error shows here.
cpp_extension.load(
    name="tessel_torch_ops", sources=[os.path.join(here, "tessel_torch_ops.cpp"), os.path.join(here, "dlpack_scale_op.cpp")],
    extra_include_paths=[os.path.join(B, "install", "include"), here, os.path.join(here, "..", "include")],
    extra_cflags=["-O2", "-std=c++20"],  # after the default -std=c++17, so it wins
    extra_ldflags=[f"-L{libdir}", "-ltessel_jit", "-ltessel_lang", "-ltessel_ir", f"-Wl,-rpath,{libdir}"],
    with_cuda=True, is_python_module=False, build_directory=out, verbose=True)
EOF
  lib=$BUILD/cpp_extension/tessel_torch_ops.so
  if [ -f "$lib" ]; then summary+=("NOTE fallback build (torch.utils.cpp_extension) made $lib: tested below")
  else lib=""; summary+=("FAIL fallback build (torch.utils.cpp_extension) too: see torch_build.log"); fi
fi

# ---- test and benchmark ----
# TORCH_STEPS=build: stop after the build (the library stays in $BUILD for a debugger);
# TORCH_STEPS=test: after the test (no benchmark, no two-GPU step).
if [ "${TORCH_STEPS:-all}" = build ]; then
  echo "== samples/torch: built ${lib:-nothing}"
  exit $status
fi
if [ -n "$lib" ]; then
  timeout -s KILL 420 "$PYTHON" "$here/test_tessel_torch.py" "$lib" > "$OUT/torch_test.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then summary+=("PASS test: $(grep '^summary:' "$OUT/torch_test.log")")
  else status=1; summary+=("FAIL test (exit $rc): $(grep '^summary:' "$OUT/torch_test.log" || tail -n 3 "$OUT/torch_test.log")"); fi
  if [ "${TORCH_STEPS:-all}" = test ]; then  # TORCH_STEPS=test: build and test only
    echo "== samples/torch on the device"; printf '%s\n' "${summary[@]}"; exit $status
  fi
  timeout -s KILL 240 "$PYTHON" "$here/bench_tessel_torch.py" "$lib" > "$OUT/torch_bench.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then summary+=("PASS bench: see torch_bench.log / torch_bench.json")
  else status=1; summary+=("FAIL bench (exit $rc): $(tail -n 3 "$OUT/torch_bench.log")"); fi
  cat "$OUT/torch_bench.log"
  # The data-parallel step on two GPUs (one process each, NCCL; NCCL_NVLS_ENABLE=0 is exported
  # above and set by the script itself).
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  if [ "${gpus:-0}" -ge 2 ]; then
    timeout -s KILL 300 "$PYTHON" "$here/two_gpu_mse.py" "$lib" > "$OUT/two_gpu_mse.log" 2>&1
    rc=$?
    cat "$OUT/two_gpu_mse.log"
    ratio=$(grep '^throughput ratio' "$OUT/two_gpu_mse.log")
    if [ $rc -eq 0 ]; then summary+=("PASS two_gpu_mse: $ratio")
    else status=1; summary+=("FAIL two_gpu_mse (exit $rc): $(grep '^FAIL' "$OUT/two_gpu_mse.log" || tail -n 3 "$OUT/two_gpu_mse.log")"); fi
  else
    summary+=("SKIP two_gpu_mse: nvidia-smi lists ${gpus:-0} GPU(s), it needs 2")
  fi
else
  summary+=("SKIP test and bench: no library built")
fi
rm -rf "$TESSEL_CACHE_DIR"

echo "== samples/torch on the device"
printf '%s\n' "${summary[@]}"
exit $status
