#!/usr/bin/env bash
# The relocatable package (tools/package.sh) unpacked into a temporary folder:
#  (a) every ELF file of bin/, lib/ and tests/ has an $ORIGIN-relative RUNPATH only, and every
#      library it needs (readelf's NEEDED, ldd's resolution) is in the package's lib/, or is the
#      system's C/C++ runtime, or is NVIDIA's (which may be missing here); lib/ carries none of
#      those; bin/braid-env finds NVIDIA's libraries in a Python environment's wheels (both
#      layouts) and in BRAID_CUDA_LIBS;
#  (b) inside a private mount namespace where every shared library of the Debian packages
#      tools/setup.sh installs for braid (its -dev packages and the packages they depend on,
#      except the base system's: the Essential packages and what they depend on, and the C/C++
#      runtime) and every CUDA toolkit library are hidden (/dev/null bound over them), the
#      packaged tests of oneDNN, OpenBLAS, oneTBB, protobuf, Gloo, ONNX import and the tools run,
#      and so do braid_train on two simulated GPUs (on the packaged Fashion-MNIST) and the GPU
#      acceptance run on sim (tools/gpu/acceptance.sh --device sim), with the NVIDIA libraries libbraid links
#      reached only through bin/braid-env and BRAID_CUDA_LIBS (a second view of the toolkit's
#      folder, as a wheel's). A library missing from the package fails (b) at load time.
#
#   bash relocatable_package_test.sh ARCHIVE|UNPACKED_DIR SOURCE_DIR
#
# Exit 77 (skipped, after (a) passed) where no mount namespace can be made (not root) or there is
# no dpkg.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 ARCHIVE|UNPACKED_DIR SOURCE_DIR" >&2; exit 2; }
readonly INPUT=$1 SOURCE_DIR=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/braid_package_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if [[ -d $INPUT ]]; then
  root=$(cd "$INPUT" && pwd)
else
  tar -C "$work" -xf "$INPUT"
  root=$(echo "$work"/braid-*-linux-x86_64)
fi
[[ -x $root/bin/braid-env ]] || { echo "FAIL: $INPUT holds no braid-*/bin/braid-env"; exit 1; }
root=$(readlink -f "$root")  # as ldd's paths resolve
system_regex=$(awk '$1 == "system" { print $2 }' "$root/share/braid/outside-libraries" | paste -sd'|')
nvidia_regex=$(awk '$1 == "nvidia" { print $2 }' "$root/share/braid/outside-libraries" | paste -sd'|')
is_elf() { [[ -f $1 && ! -L $1 && $(head -c 4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]; }

# ---- (a) RUNPATHs and dependencies ----------------------------------------------------------
elf_files=()
while IFS= read -r -d '' file; do
  if is_elf "$file"; then elf_files+=("$file"); fi
done < <(find "$root/bin" "$root/lib" "$root/tests" -type f -print0)
for file in "${elf_files[@]}"; do
  relative=${file#"$root"/}
  case $relative in lib/*) want='$ORIGIN' ;; *) want='$ORIGIN/../lib' ;; esac
  dynamic=$(readelf -d "$file")
  if grep -q '(RPATH)' <<<"$dynamic"; then fail "$relative has an RPATH (only RUNPATH is set)"; fi
  runpath=$(sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' <<<"$dynamic")
  [[ $runpath == "$want" ]] || fail "$relative: RUNPATH '$runpath', not '$want'"
  for needed in $(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dynamic"); do
    if [[ -e $root/lib/$needed ]] || grep -qE "$system_regex|$nvidia_regex" <<<"$needed"; then
      continue
    fi
    fail "$relative needs $needed, which the package lacks"
  done
  # The loader's view: each resolved library inside the package, or allowed outside it.
  while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    if grep -qE "$nvidia_regex" <<<"$name"; then continue; fi
    if [[ $path == /* && $(readlink -f "$path") == "$root/lib/"* ]]; then continue; fi
    if grep -qE "$system_regex" <<<"$name" && [[ $path == /* ]]; then continue; fi
    fail "$relative: ldd resolves $name to '$path'"
  done < <(ldd "$file" 2>&1 || true)
done
for file in "$root"/lib/*; do
  name=$(basename "$file")
  if grep -qE "$system_regex|$nvidia_regex" <<<"$name"; then fail "lib/ carries $name"; fi
done
echo "(a) ${#elf_files[@]} ELF files: RUNPATH and dependencies checked"

# bin/braid-env takes each library from BRAID_CUDA_LIBS, else from a Python environment's wheels
# (CUDA 13's nvidia/cu13/lib and CUDA 12's nvidia/<name>/lib layouts; the version from the wheel's
# RECORD), before /usr/local/cuda; --print exports the folders it used in that order.
mapfile -t needed_nvidia < <(grep -v '^#' "$root/share/braid/nvidia-libraries")
if [[ ${#needed_nvidia[@]} -gt 0 ]] && ! command -v python3 >/dev/null; then
  echo "(a) braid-env's wheel search not checked: no python3 here"
elif [[ ${#needed_nvidia[@]} -gt 0 ]]; then
  site=$work/site-packages override=$work/override
  cu13=$site/nvidia/cu13/lib cudnn=$site/nvidia/cudnn/lib
  record=$site/nvidia_cudnn_cu13-9.1.0.dist-info/RECORD
  mkdir -p "$cu13" "$cudnn" "$(dirname "$record")" "$override"
  declare -A expected_dir=()
  for library in "${needed_nvidia[@]}"; do
    if [[ $library == libcudnn* ]]; then
      touch "$cudnn/$library" && echo "nvidia/cudnn/lib/$library,sha256=0,1" >>"$record"
      expected_dir[$library]=$cudnn
    elif [[ -z ${expected_dir[override]:-} ]]; then
      touch "$override/$library" "$cu13/$library"  # in both: BRAID_CUDA_LIBS wins
      expected_dir[$library]=$override expected_dir[override]=$library
    else
      touch "$cu13/$library" && expected_dir[$library]=$cu13
    fi
  done
  braid_env() { PYTHONPATH=$site BRAID_CUDA_LIBS=$override "$root/bin/braid-env" --python python3 "$@"; }
  report=$(braid_env) || fail "braid-env reports a library missing: $report"
  expected_order=""
  for dir in "$override" "$cu13" "$cudnn"; do
    for library in "${needed_nvidia[@]}"; do
      [[ ${expected_dir[$library]} == "$dir" ]] || continue
      grep -qF "$dir/$library" <<<"$report" || fail "braid-env did not take $library from $dir: $report"
      [[ $expected_order == *"$dir"* ]] || expected_order+=${expected_order:+:}$dir
    done
  done
  if [[ -s $record ]] && ! grep -q 'wheel nvidia_cudnn_cu13 9.1.0' <<<"$report"; then
    fail "braid-env gave no wheel version for cuDNN: $report"
  fi
  exports=$(braid_env --print 2>/dev/null)
  grep -qx "export BRAID_CUDA_LIBS=$expected_order" <<<"$exports" ||
    fail "braid-env --print, not $expected_order: $exports"
  echo "(a) braid-env: BRAID_CUDA_LIBS, the wheels' two layouts and --print checked"
fi

# ---- (b) the package alone, in a mount namespace --------------------------------------------
if ! command -v dpkg-query >/dev/null; then
  echo "SKIP (b): no dpkg here to name the Debian packages' libraries"
  [[ $failures -eq 0 ]] || exit 1
  exit 77
fi
if ! unshare -m true 2>/dev/null; then
  echo "SKIP (b): cannot create a mount namespace here (unshare -m needs root)"
  [[ $failures -eq 0 ]] || exit 1
  exit 77
fi

# The packages whose libraries are hidden: the closure of dependencies of setup.sh's -dev
# packages, less the base system (closure of the Essential packages) and the C/C++ runtime's.
depends() {
  dpkg-query -W -f='${Depends}, ${Pre-Depends}\n' "$1" 2>/dev/null | tr ',|' '\n\n' |
    sed 's/([^)]*)//; s/:any//; s/[[:space:]]//g' | grep -v '^$' || true
}
closure() {
  local -A seen=()
  local queue=("$@") package
  while [[ ${#queue[@]} -gt 0 ]]; do
    package=${queue[0]}
    queue=("${queue[@]:1}")
    [[ -z ${seen[$package]:-} ]] || continue
    # No `| grep -q`: it stops reading at the first match, and under pipefail the writer's SIGPIPE
    # (exit 141) would count as "not installed".
    [[ $(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) == *"ok installed"* ]] || continue
    seen[$package]=1
    mapfile -t -O "${#queue[@]}" queue < <(depends "$package")
  done
  printf '%s\n' "${!seen[@]}"
}
mapfile -t dev_packages < <(sed -n '/^readonly PACKAGES=(/,/^)/p' "$SOURCE_DIR/tools/setup.sh" |
  tr ' ' '\n' | grep -E '^[a-z0-9.+-]+-dev$')
mapfile -t essential < <(dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" { print $1 }')
owner() {  # the package owning library file $1, under its /usr-merged name or the other one
  local path=$1
  dpkg -S "$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null
}
runtime_owners=()
for name in libc.so.6 libstdc++.so.6 libgcc_s.so.1; do
  # awk reads to the end: exiting early would SIGPIPE ldconfig (its listing outgrows the pipe)
  # and, under pipefail and set -e, end the script with status 141 now and then.
  path=$(ldconfig -p | awk -v n="$name" '$1 == n && !found { print $NF; found = 1 }')
  package=$(owner "$path" | cut -d: -f1) || true
  [[ -n $package ]] || { echo "FAIL: no Debian package owns $name ($path)"; exit 1; }
  runtime_owners+=("$package")
done
keep=" $(closure "${essential[@]}" | tr '\n' ' ') ${runtime_owners[*]} "
hidden_packages=()
for package in $(closure "${dev_packages[@]}"); do
  [[ $keep == *" $package "* ]] || hidden_packages+=("$package")
done
mapfile -t hidden < <(
  for package in "${hidden_packages[@]}"; do dpkg -L "$package"; done | grep -E '\.so(\.[0-9.]+)?$' |
    while read -r path; do [[ -e $path ]] && readlink -f "$path"; done
  # The CUDA toolkit's libraries and every NVIDIA library the loader's cache knows.
  find /usr/local/cuda*/ -path '*/lib*' -name '*.so*' \( -type f -o -type l \) -exec readlink -f {} + 2>/dev/null
  ldconfig -p | awk '{ print $1, $NF }' | grep -E "^($nvidia_regex) " | cut -d' ' -f2 | xargs -r readlink -f
)
mapfile -t hidden < <(printf '%s\n' "${hidden[@]}" | sort -u | while read -r p; do [[ -f $p ]] && echo "$p"; done)
echo "(b) hiding ${#hidden[@]} library files of ${#hidden_packages[@]} packages and the CUDA toolkit"
for package in "${dev_packages[@]}"; do
  [[ " ${hidden_packages[*]} " == *" $package "* ]] || fail "setup.sh's $package is not hidden"
done

# The NVIDIA libraries stay reachable only through a second view of the folder the loader finds
# them in here (the toolkit's), as they would be in a wheel's folder.
cuda_lib=""
if [[ ${#needed_nvidia[@]} -gt 0 ]]; then
  first=$(ldconfig -p | awk -v n="${needed_nvidia[0]}" '$1 == n && !found { print $NF; found = 1 }')
  [[ -n $first ]] || { echo "FAIL: ${needed_nvidia[0]} is not installed here"; exit 1; }
  cuda_lib=$(dirname "$(readlink -f "$first")")
fi
nvidia_view=$work/view/nvidia/cu13/lib
mkdir -p "$nvidia_view"
printf '%s\n' "${hidden[@]}" >"$work/hidden"

# Runs inside the namespace: the gtest binaries with filters that touch each bundled library.
cat >"$work/inside.sh" <<'INSIDE'
set -uo pipefail
root=$1 work=$2 cuda_lib=$3 view=$4
if [[ -n $cuda_lib ]]; then mount --bind "$cuda_lib" "$view" || exit 1; fi
while read -r path; do mount --bind /dev/null "$path" || exit 1; done <"$work/hidden"
export BRAID_CUDA_LIBS=$view
export BRAID_ALGORITHM_SEARCH=rule  # the same kernels on every run: this checks loading, not timing
status=0
check() {  # check NAME COMMAND...: runs it, prints its time and a tail of its output on failure
  local start=$SECONDS output
  if output=$("${@:2}" 2>&1); then
    echo "  ok   $1 ($((SECONDS - start)) s):" \
      "$(grep -E '^\[  PASSED  \]|^ *peak resident|^braid-env: NVIDIA' <<<"$output" | tail -1)"
    grep -E '^\[  SKIPPED \]|^\| ' <<<"$output" | sed 's/^/       /' || true
  else
    echo "  FAIL $1 ($((SECONDS - start)) s):"; tail -25 <<<"$output" | sed 's/^/       /'; status=1
  fi
}
# Without braid-env the NVIDIA libraries libbraid links are not found: the toolkit is hidden.
unaided=$("$root/bin/braid_run" --help 2>&1)
if [[ -n $cuda_lib ]] &&
    ! grep -qE 'error while loading shared libraries: (/[^ ]*/)?lib(cu|nccl)' <<<"$unaided"; then
  echo "  FAIL braid_run without bin/braid-env found NVIDIA's libraries (toolkit visible): $unaided"
  status=1
fi
env=("$root/bin/braid-env" --python '' -q --)
check "braid-env finds every NVIDIA library" "$root/bin/braid-env" --python ''
# (Not the tests that time threads: this machine may be busy with other tests.)
runtime_filter='Ranks/ProcessGroupRanksTest.AllreduceSum*:ProtoIoTest.*:DagNetTest.*'
runtime_filter+=':PredictorTest.*:SimDeviceTest.*:-DagNetTest.*Parallel*:DagNetTest.Concurrent*'
check "braid_runtime_tests (oneTBB dag, protobuf, Gloo ranks, oneDNN Predictor, sim)" "${env[@]}" \
  "$root/tests/braid_runtime_tests" --gtest_filter="$runtime_filter"
check "braid_ops_tests (OpenBLAS FC and BatchMatMul)" "${env[@]}" "$root/tests/braid_ops_tests" \
  --gtest_filter='MathOpsTest.FC*:BatchMatMulOpTest.*:FCGradientTest.*:AllreduceTest.*'
# (LargeBatchesRunInChunks asserts a scratch size that depends on the algorithm chosen.)
check "braid_ops_nn_tests (oneDNN Conv, Pool, SpatialBN)" "${env[@]}" "$root/tests/braid_ops_nn_tests" \
  --gtest_filter='ConvOpTest.*:PoolOpTest.*:SpatialBNTest.*:-ConvOpTest.LargeBatchesRunInChunks*'
check "braid_onnx_tests (ONNX import, packaged braid_import and braid_run)" "${env[@]}" \
  "$root/tests/braid_onnx_tests"
check "braid_model_tools_tests (tests/data fixtures, packaged tools)" "${env[@]}" \
  "$root/tests/braid_model_tools_tests"
check "braid_planner_tests" "${env[@]}" "$root/tests/braid_planner_tests" \
  --gtest_filter='DataflowTest.*:MemoryPlanTest.*'
check "braid_train resnet20 on sim:0,sim:1 (the packaged Fashion-MNIST)" "${env[@]}" \
  "$root/bin/braid_train" --model resnet20 --data fashion-mnist --eval=false \
  --data_dir "$root/share/braid/data/fashion-mnist" --devices sim:0,sim:1 --iters 3 --batch-size 8
# The GPU acceptance run, end to end on sim, as on a GPU machine (it goes through bin/braid-env).
acceptance() {
  "$root/tools/gpu/acceptance.sh" --device sim --out "$work/acceptance" &&
    cat "$work/acceptance/report.md"
}
check "tools/gpu/acceptance.sh --device sim" acceptance
exit $status
INSIDE
echo "(b) in a mount namespace:"
unshare -m bash "$work/inside.sh" "$root" "$work" "$cuda_lib" "$nvidia_view" || failures=$((failures + 1))

if [[ $failures -gt 0 ]]; then
  echo "FAILED: $failures"
  exit 1
fi
echo "PASSED"
