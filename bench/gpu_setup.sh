# Sourced by bench/gpu_run.sh and bench/gpu_ab.sh on the device machine: unpacks .payload's
# binaries into /tmp/tessel ($B), points the loader at them, gives the run a fresh compilation
# cache (every kernel is compiled by this build) and records the GPU in $OUT/gpu.txt.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/tessel
# Unpacked once per payload: scripts running side by side must not overwrite binaries in use.
stamp=$(cksum < .payload/bin.tar.xz)
if [ "$(cat /tmp/tessel/.payload-stamp 2>/dev/null)" != "$stamp" ]; then
  xz -dc .payload/bin.tar.xz | tar -C /tmp/tessel -xf -
  echo "$stamp" > /tmp/tessel/.payload-stamp
fi
export LD_LIBRARY_PATH=/tmp/tessel:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=$(mktemp -d)
B=/tmp/tessel
# The name the executables load the lowering by (its soname, libtessel_lowering.so.MAJOR.MINOR):
# a lowering library swapped in for an A/B or a mutant goes under it.
LOWERING_SONAME=$(cd "$B" && ls libtessel_lowering.so.* 2>/dev/null | grep -E '\.so\.[0-9]+\.[0-9]+$' | head -n 1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
