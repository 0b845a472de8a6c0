#!/usr/bin/env bash
# Installs the Debian 12 packages braid needs, only those missing. Quiet when nothing is missing.
# As root it runs apt-get itself; otherwise it prints the command to run and exits 1.
#
#   bash tools/setup.sh
set -euo pipefail

readonly PACKAGES=(
  build-essential cmake ninja-build ccache
  libtbb-dev libgoogle-glog-dev libgflags-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev opencl-c-headers libgloo-dev libhiredis-dev redis-server zlib1g-dev
  nlohmann-json3-dev
  liblmdb-dev  # ops/data, runtime/io: Caffe2's DB input over LMDB
  dataset-fashion-mnist
  patchelf xz-utils zstd  # tools/package.sh: $ORIGIN RUNPATHs, the archive
  clang libclang-rt-14-dev libomp-14-dev  # the fuzz preset: clang, libFuzzer, clang's OpenMP
)

missing_packages() {
  local package
  for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q '^install ok installed$'; then
      echo "$package"
    fi
  done
}

main() {
  local missing
  mapfile -t missing < <(missing_packages)
  [[ ${#missing[@]} -eq 0 ]] && return 0

  if [[ $(id -u) -ne 0 ]]; then
    echo "braid needs these Debian packages: ${missing[*]}" >&2
    echo "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
}

main "$@"
