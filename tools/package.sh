#!/usr/bin/env bash
# Builds braid's relocatable binary package from a release build: one archive that runs on a Linux
# x86-64 machine with glibc >= 2.36 and none of braid's Debian dependencies (README.md, "A
# relocatable package"; the archive's own README says how to run it).
#
#   tools/package.sh     # builds build/release; writes build/package/braid-<version>-linux-x86_64.tar.xz
#   tools/package.sh --build-dir DIR --out-dir DIR --compression xz|zstd|fast --no-build
#
# Steps: `cmake --install --component package` of the build into
# OUT/braid-<version>-linux-x86_64/ (the rules and layout are in cmake/package.cmake), tools/gpu/
# copied when the repository has it, every ELF file stripped and given an $ORIGIN-relative RUNPATH
# (patchelf), share/braid/nvidia-libraries written (what bin/braid-env looks for), then the folder
# archived. --compression: xz (default, xz -9: 27.5 MiB, about 3 min on 2 cores; unpacks with
# tar -xJf or python3 -m tarfile -e), zstd (zstd -19 --long: faster to unpack), fast (zstd -9:
# 32.2 MiB in seconds; ctest's). Prints the archive's path and size, and the largest files.
set -euo pipefail

SOURCE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly SOURCE_DIR
build_dir=$SOURCE_DIR/build/release
out_dir=""
compression=xz
build=1

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die() { echo "package.sh: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(cd "$2" && pwd); shift 2 ;;
    --out-dir) out_dir=$2; shift 2 ;;
    --compression) compression=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "package.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case $compression in xz | zstd | fast) ;; *) die "--compression is xz, zstd or fast, not '$compression'" ;; esac
[[ -n $out_dir ]] || out_dir=$(dirname "$build_dir")/package
for tool in patchelf strip readelf tar xz zstd; do
  command -v "$tool" >/dev/null || die "needs $tool (bash tools/setup.sh installs it)"
done
[[ -f $build_dir/CMakeCache.txt ]] || die "$build_dir is not a configured build (cmake --preset release)"

start=$SECONDS
if [[ $build -eq 1 ]]; then cmake --build "$build_dir"; fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
name=braid-$version-linux-x86_64
stage=$out_dir/$name
rm -rf "$stage"
mkdir -p "$out_dir"
cmake --install "$build_dir" --prefix "$stage" --component package >"$out_dir/install.log" ||
  die "cmake --install failed; see $out_dir/install.log"
if [[ -d $SOURCE_DIR/tools/gpu ]]; then
  mkdir -p "$stage/tools" && cp -a "$SOURCE_DIR/tools/gpu" "$stage/tools/gpu"
  rm -rf "$stage/tools/gpu/__pycache__"
fi

# Fashion-MNIST for the acceptance run's ResNet-20 step (tools/gpu/acceptance.py): the first
# $fashion_train training images and the whole test set, from Debian's dataset-fashion-mnist, as
# IDX files whose header counts what they hold (5.8 MB instead of the whole set's 30 MB).
readonly fashion_dir=/usr/share/datasets/fashion-mnist fashion_train=12000
# idx_subset NAME COUNT HEADER_BYTES ITEM_BYTES: the first COUNT items of NAME.gz into the package.
idx_subset() {
  local name=$1 count=$2 header=$3 item=$4 raw
  raw=$(mktemp)
  gzip -dc "$fashion_dir/$name.gz" >"$raw"
  { head -c 4 "$raw"
    printf '%b' "$(printf '\\x%02x' $((count >> 24 & 255)) $((count >> 16 & 255)) \
      $((count >> 8 & 255)) $((count & 255)))"
    head -c $((header + count * item)) "$raw" | tail -c +9
  } | gzip -9n >"$stage/share/braid/data/fashion-mnist/$name.gz"
  rm -f "$raw"
}
[[ -f $fashion_dir/train-images-idx3-ubyte.gz ]] ||
  die "$fashion_dir holds no Fashion-MNIST (bash tools/setup.sh installs dataset-fashion-mnist)"
mkdir -p "$stage/share/braid/data/fashion-mnist"
idx_subset train-images-idx3-ubyte "$fashion_train" 16 784
idx_subset train-labels-idx1-ubyte "$fashion_train" 8 1
cp "$fashion_dir"/t10k-*.gz "$stage/share/braid/data/fashion-mnist/"

is_elf() { [[ -f $1 && ! -L $1 && $(head -c 4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]; }

# Every ELF file: stripped, and RUNPATH $ORIGIN-relative only (libraries: their own folder, where
# the libraries they need are; executables: ../lib). A bundled library needs its own RUNPATH too:
# RUNPATH applies only to the dependencies of the file that carries it.
while IFS= read -r -d '' file; do
  is_elf "$file" || continue
  strip --strip-unneeded "$file"
  case ${file#"$stage"/} in
    lib/*) patchelf --set-rpath '$ORIGIN' "$file" ;;
    bin/* | tests/*) patchelf --set-rpath '$ORIGIN/../lib' "$file" ;;
    *) die "an ELF file outside bin/, lib/ and tests/: $file" ;;
  esac
done < <(find "$stage" -type f -print0)

# What bin/braid-env looks for: libbraid's NVIDIA DT_NEEDED entries, and the cuBLAS (with its
# cuBLASLt) that libbraid loads with dlopen on first use (ops/common/cublas_library.cc).
nvidia_regex=$(awk '$1 == "nvidia" { print $2 }' "$stage/share/braid/outside-libraries" | paste -sd'|')
libbraid=$(find "$stage/lib" -name 'libbraid.so.*' -type f | head -1)
[[ -n $libbraid ]] || die "no libbraid in $stage/lib"
{
  echo "# NVIDIA libraries libbraid needs (written by tools/package.sh; read by bin/braid-env)"
  readelf -d "$libbraid" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -E "$nvidia_regex" || true
  for cublas in $(grep -aoE 'libcublas\.so\.[0-9]+' "$libbraid" | sort -u); do
    echo "$cublas"
    echo "libcublasLt.so.${cublas##*.so.}"
  done
} >"$stage/share/braid/nvidia-libraries"

case $compression in
  xz) archive=$out_dir/$name.tar.xz; compress=(xz -T0 -9) ;;
  zstd) archive=$out_dir/$name.tar.zst; compress=(zstd -q -T0 -19 --long=27) ;;
  fast) archive=$out_dir/$name.tar.zst; compress=(zstd -q -T0 -9) ;;
esac
rm -f "$out_dir/$name".tar.*
tar -C "$out_dir" --sort=name --owner=0 --group=0 --numeric-owner -cf - "$name" |
  "${compress[@]}" >"$archive"

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo "package.sh: $archive"
echo "  $(mib "$(stat -c %s "$archive")") compressed ($compression)," \
  "$(mib "$(du -sb "$stage" | cut -f1)") unpacked, $(find "$stage" -type f | wc -l) files," \
  "$((SECONDS - start)) s"
echo "  largest files:"
find "$stage" -type f -printf '%s %P\n' | sort -rn | head -15 |
  while read -r size path; do printf '    %10s  %s\n' "$(mib "$size")" "$path"; done
