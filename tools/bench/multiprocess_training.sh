#!/usr/bin/env bash
# multiprocess_training.sh: ResNet-20 training images/s with P processes of one thread each
# (braid_launch -n P -- braid_train --devices cpu:0 --threads 1, gradients all-reduced across the
# processes with Gloo over loopback) against one process with P cpu devices and P dag workers
# (braid_train --devices cpu:0,...,cpu:{P-1} --threads P), for P in 1 2 4, one table with the
# ratio multi-process / one process, once with the gradients in buckets of BUCKET_MIB (default 1)
# and once with one Gloo all-reduce per gradient (--allreduce_bucket_mib 0). Synthetic 1x28x28 data, the same global batch on every row
# (each of P devices or processes trains batch / P), --intra_op_threads 1 everywhere, dag
# executor, no evaluation. images/s is braid_train's summary line ("training images/s": the job's
# images over the seconds of training steps; under the launcher rank 0's, which counts the global
# batch). Each row runs the three ROUNDS times (default 2), alternating which goes first, and
# keeps the best of each, as other work on a shared machine only ever slows a run down. Rows with
# more processes or devices than `nproc` share the cores: the header says how
# many there are.
#
#   tools/bench/multiprocess_training.sh [BUILD_DIR]     # default build/release; 2-3 min on 2 cores
#   ITERS=60 BATCH=64 PROCS="1 2 4" ALGORITHM=halving_doubling BUCKET_MIB=4 \
#     tools/bench/multiprocess_training.sh
#
# Not part of ctest. Exit status: 0, or 1 when a run failed (its output is printed).
set -euo pipefail

build=${1:-build/release}
train=$build/tools/braid_train
launch=$build/tools/launch/braid_launch
iters=${ITERS:-30}
batch=${BATCH:-64}
procs=${PROCS:-1 2 4}
algorithm=${ALGORITHM:-ring}
bucket_mib=${BUCKET_MIB:-1}
rounds=${ROUNDS:-2}
for binary in "$train" "$launch"; do
  [[ -x $binary ]] || { echo "multiprocess_training.sh: $binary not built" >&2; exit 1; }
done

common=(--model resnet20 --data synthetic --synthetic-examples 256 --image-size 28 --channels 1
        --classes 10 --batch-size "$batch" --iters "$iters" --log-every "$iters" --eval=false
        --executor dag --intra_op_threads 1)

# Runs "$@" and prints the images/s of its (rank 0's) summary line; on failure prints the output.
images_per_second() {
  local out
  if ! out=$("$@" 2>&1); then
    echo "multiprocess_training.sh: failed: $*" >&2
    echo "$out" >&2
    return 1
  fi
  sed -n 's/^\(\[rank 0\] \)\{0,1\} *training images\/s *\([0-9.]*\).*/\2/p' <<<"$out" | head -1
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "ResNet-20 training, synthetic 1x28x28, global batch $batch, $iters iterations, dag," \
     "intra_op_threads 1, all-reduce $algorithm in buckets of $bucket_mib MiB; best of $rounds rounds"
echo "machine: nproc=$(nproc), $cpu; $(date -u +%Y-%m-%d); load average $(cut -d" " -f1-3 /proc/loadavg)"
printf '%-5s | %-32s %9s | %9s | %9s | %8s %8s\n' procs "1 process, P devices" images/s \
  "P x 1 proc" "unbucketed" "bucketed/1" "unbuck/1"
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for p in $procs; do
  devices=$(seq -s, -f 'cpu:%g' 0 $((p - 1)))
  bucketed=0 unbucketed=0 single=0
  for ((round = 0; round < rounds; ++round)); do
    sides="bucketed unbucketed single"
    ((round % 2 == 0)) || sides="single unbucketed bucketed"
    for side in $sides; do
      case $side in
        bucketed|unbucketed)
          mib=$bucket_mib
          [[ $side == unbucketed ]] && mib=0
          images=$(images_per_second "$launch" -n "$p" -- "$train" "${common[@]}" \
                   --devices cpu:0 --threads 1 --allreduce_algorithm "$algorithm" \
                   --allreduce_bucket_mib "$mib")
          printf -v "$side" '%s' "$(max "${!side}" "$images")" ;;
        single)
          single=$(max "$single" "$(images_per_second "$train" "${common[@]}" \
                   --devices "$devices" --threads "$p")") ;;
      esac
    done
  done
  printf '%-5s | %-32s %9.1f | %9.1f | %9.1f | %8s %8s\n' "$p" "$devices --threads $p" "$single" \
    "$bucketed" "$unbucketed" "$(ratio "$bucketed" "$single")" "$(ratio "$unbucketed" "$single")"
done
