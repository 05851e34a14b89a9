# Sourced by the CLI case scripts (SCRIPT CASE TESSEL): names the case and the binary, empties
# the scratch cache directory the test names ($TESSEL_CACHE_DIR), and puts $out beside it.
set -u
case_name=$1
tessel=$2
dir=${TESSEL_CACHE_DIR:?the test must set TESSEL_CACHE_DIR}
rm -rf "$dir"
mkdir -p "$dir"
out=$dir.out
