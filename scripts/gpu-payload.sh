#!/usr/bin/env bash
# Builds self-contained GPU binaries (LLVM's NVPTX components linked statically into
# libtessel_lowering.so, tessel libraries shared) and packs them, xz-compressed, with
# triton_ref.py into .payload/ for the device machine (bench/gpu_run.sh unpacks them there).
# PAYLOAD_DIR=dir packs into dir instead (a device call may be reading .payload meanwhile); the
# archive is written beside it and moved in whole.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_STATIC_LLVM=ON -DBUILD_SHARED_LIBS=ON >/dev/null
cmake --build build-gpu
out=${PAYLOAD_DIR:-.payload}
mkdir -p "$out"
stage=$(mktemp -d)
find build-gpu -path build-gpu/tests -prune -o -name 'libtessel_*.so*' -exec cp -L {} "$stage" \;  # not the install test's (older) copies
cp build-gpu/tools/tessel/tessel build-gpu/bench/tessel_bench build-gpu/bench/tessel_bench_reductions build-gpu/bench/tessel_bench_matmul build-gpu/bench/tessel_bench_bundle build-gpu/bench/tessel_bench_embedding build-gpu/bench/tessel_bench_attention build-gpu/bench/tessel_bench_quant "$stage"
cp build-gpu/samples/production/tessel_production build-gpu/samples/production/tessel_launcher_example build-gpu/samples/production/tessel_embedded_example "$stage"
cp -r build-gpu/samples/production/aot/bundle build-gpu/samples/production/aot/bundle.tsb "$stage"
for t in build-gpu/tests/test_* build-gpu/tests/tessel_*_child build-gpu/tests/tutorials/tutorial_* build-gpu/tests/libtessel_test_plugin.so; do [ -x "$t" ] && [ -f "$t" ] && cp "$t" "$stage"; done
for lib in libfmt.so.9 libzstd.so.1 libxxhash.so.0; do cp "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" "$stage/"; done
find "$stage" -maxdepth 1 -type f -exec strip --strip-unneeded {} \; 2>/dev/null || true
# An install tree (headers, CMake package) for what is built there against tessel (samples/torch):
# its libraries are links to the copies above, so they travel once.
cmake --install build-gpu --prefix "$stage/install" >/dev/null
for f in "$stage"/install/lib/libtessel_*.so*; do
  [ -L "$f" ] && continue
  base=$(basename "$f")
  [ -f "$stage/$base" ] && ln -sf "../../$base" "$f"
done
rm -rf "$stage/install/bin"
tar -C "$stage" -cf - . | xz -9 -T2 > "$out/bin.tar.xz.part"
mv "$out/bin.tar.xz.part" "$out/bin.tar.xz"
cp bench/triton_ref.py bench/quant_ref.py "$out/"
rm -rf "$stage"
du -sh "$out"/*
