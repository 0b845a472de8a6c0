#!/usr/bin/env bash
# A GPU window's one command, run on the GPU machine from the repository copy the device tool
# makes, with the package carried over (README.md, "GPU acceptance run"): unpacks it, records the
# machine (nvidia-smi, PyTorch and NVIDIA wheels, the toolkit's tools), runs the acceptance into
# $OUT/acc, with --profile also where ResNet-50's time goes (braid_bench_training --profile, with
# and without CUDA_LAUNCH_BLOCKING=1, beside PyTorch's profiler: tools/gpu/torch_profile.py), and
# packs the work files into $OUT/work.tgz (the device tool brings back only a few files).
#
#   tools/gpu/window.sh ARCHIVE [--profile] [-- acceptance args, e.g. --steps throughput]
#
# ACC_TIMEOUT (default 400 s) bounds the acceptance; BRAID_KEEP_WORK=1 keeps its work files.
set -u
archive=${1:?usage: tools/gpu/window.sh ARCHIVE [--profile] [-- acceptance args]}
shift
profile=0
if [[ ${1:-} == --profile ]]; then profile=1; shift; fi
[[ ${1:-} == -- ]] && shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
start=$SECONDS
py=$(command -v python3)
{
  date -u
  nvidia-smi
  "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
            "cudnn", torch.backends.cudnn.version())'
  "$py" -c 'import torchvision; print("torchvision", torchvision.__version__)'
  "$py" -m pip list 2>/dev/null | grep -i -E 'nvidia|torch'
  ls /usr/local/cuda/bin
} >"$OUT/machine.txt" 2>&1
mkdir -p /tmp/braid_window
tar -xJf "$archive" -C /tmp/braid_window || "$py" -m tarfile -e "$archive" /tmp/braid_window
home=$(ls -d /tmp/braid_window/braid-*/ | head -1)
echo "unpacked in $((SECONDS - start)) s: $home" | tee -a "$OUT/machine.txt"
"$home/bin/braid-env" --python "$py" >"$OUT/braid-env.txt" 2>&1
BRAID_KEEP_WORK=1 timeout -k 5 "${ACC_TIMEOUT:-400}" "$home/tools/gpu/acceptance.sh" \
  --out "$OUT/acc" --python "$py" "$@"
echo "acceptance: exit $? after $((SECONDS - start)) s"

bench() {  # a name, then braid_bench_training's flags
  local name=$1
  shift
  echo "=== $name: $*"
  timeout 60 "$home/bin/braid-env" --quiet --python "$py" -- "$home/bin/braid_bench_training" \
    --executor=dag --devices cuda:0 --rounds=1 --min_seconds=2 --max_iters=20 \
    --algo_cache=/tmp/braid_window/algorithms.txt "$@" 2>&1 | tail -40
}
if [[ $profile -eq 1 ]]; then
  {
    CUDA_LAUNCH_BLOCKING=1 bench train-blocking --rows=resnet50-b32-train --profile --recompute=false
    bench train --rows=resnet50-b32-train --profile --recompute=false
    echo "=== PyTorch, train"
    timeout 60 "$py" "$here/torch_profile.py" train 2>&1 | tail -50
  } >"$OUT/profile.txt" 2>&1
fi
tar -czf "$OUT/work.tgz" -C "$OUT/acc" . && rm -rf "$OUT"/acc/work.*
echo "done in $((SECONDS - start)) s"
cat "$OUT/acc/report.md" 2>/dev/null
