#!/usr/bin/env bash
# tools/multihost/netns_job.sh: two hosts simulated with network namespaces, one rank each,
# rendezvous through redis-server on host 0, train ResNet-20 to the bits of one process with two
# devices, print the same test accuracy, and each rank listens on its own host's address. A rank
# SIGKILLed mid-run fails the job within seconds, and SIGTERM to the script stops it; after every
# run no namespace or process of the job is left. Exits 77 (skipped, reason on stdout) where
# namespaces cannot be created.
#
#   multihost_netns_test.sh NETNS_JOB BRAID_TRAIN PROTOC BRAID_PROTO
set -uo pipefail

readonly job=$1 train=$2 protoc=$3 proto=$4
dir=$(mktemp -d)
tag="mh$$"
# A port of this test run's own: the job's processes are found by it (redis://A.B.C.1:PORT).
port=$((20000 + $$ % 20000))
trap 'kill -9 $(jobs -p) 2>/dev/null; for i in 1 2 3; do "$job" --cleanup "$tag$i"; done; rm -rf "$dir"' EXIT
failures=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
# Every process chooses the same algorithms (the bits must match).
export BRAID_ALGORITHM_SEARCH=rule
common=(--model resnet20 --data synthetic --synthetic_examples 64 --image_size 12 --batch_size 16
        --test_batch_size 16 --lr_policy fixed --executor dag --threads 1 --intra_op_threads 1
        --log_every 1 --rendezvous_timeout 10)

# Nothing of job ID is left: no namespace, no rank, no redis-server.
check_clean() {
  local id=$1
  ip netns list | grep -q "^${id}_braid_" && fail "$id: namespaces left: $(ip netns list | grep "^${id}_")"
  pgrep -f -- "redis://[0-9.]*:$port|redis-server.*:$port" >/dev/null &&
    fail "$id: processes left: $(pgrep -af -- "redis://[0-9.]*:$port|redis-server.*:$port")"
}

# Waits (30 s at most) until FILE has a line matching PATTERN.
wait_for() {
  for _ in $(seq 300); do grep -q -- "$2" "$1" && return 0; sleep 0.1; done
  fail "no '$2' in $1: $(tail -5 "$1")"
  return 1
}

# 1. Two hosts, one rank each, 4 iterations.
start=$(date +%s%N)
"$job" --job_id "${tag}1" --port "$port" -- "$train" "${common[@]}" --iters 4 --devices cpu:0 \
  --checkpoint "$dir/net.pb" >"$dir/job1.log" 2>&1
code=$?
if ((code == 77)); then
  echo "SKIPPED: $(grep skipped "$dir/job1.log")"
  exit 77
fi
echo "two simulated hosts: exit $code in $((($(date +%s%N) - start) / 1000000)) ms"
[[ $code -eq 0 ]] || fail "the two-host job failed ($code): $(tail -20 "$dir/job1.log")"
check_clean "${tag}1"
accuracy() { grep "^\[host $1 rank $1\]   test accuracy" "$dir/job1.log" | awk '{print $NF}'; }
a0=$(accuracy 0) a1=$(accuracy 1)
[[ -n $a0 && $a0 == "$a1" ]] || fail "both ranks should print the same test accuracy: '$a0' '$a1'"
echo "ok: both ranks finished, test accuracy $a0"

# The same training in one process with two devices: its checkpoint holds every tensor once per
# device; with cpu_1's copies dropped it is the two hosts' checkpoint, byte for byte.
"$train" "${common[@]}" --iters 4 --devices cpu:0,cpu:1 --checkpoint "$dir/one.pb" \
  >"$dir/one.log" 2>&1 || fail "the one-process run failed: $(tail -5 "$dir/one.log")"
decode=(--proto_path="$(dirname "$proto")" "$proto")
"$protoc" "${decode[@]}" --decode=braid.TensorProtos <"$dir/one.pb" |
  awk '/^protos \{/ { n = 0; keep = 1 }
       { line[n++] = $0 }
       /name: "cpu_[1-9]/ { keep = 0 }
       /^\}/ { if (keep) for (i = 0; i < n; ++i) print line[i] }' |
  "$protoc" "${decode[@]}" --encode=braid.TensorProtos >"$dir/one_cpu0.pb" ||
  fail "cannot re-encode one process's checkpoint"
cmp "$dir/net.pb" "$dir/one_cpu0.pb" ||
  fail "the two hosts' checkpoint differs from one process with two devices"
echo "ok: the checkpoint is one process's with two devices, byte for byte"

# 2. A long job: each rank listens on its own host's address; then rank 1 is SIGKILLed and the
#    job fails within seconds, leaving nothing.
"$job" --job_id "${tag}2" --port "$port" -- "$train" "${common[@]}" --iters 100000 \
  --devices cpu:0 >"$dir/job2.log" 2>&1 &
pid=$!
if wait_for "$dir/job2.log" "^\[host 1 rank 1\] iter 3/"; then
  # Gloo's connections, seen from each host: its rank's address to the other host's.
  for h in 0 1; do
    conns=$(ip netns exec "${tag}2_braid_h$h" ss -tnpH state established | grep braid_train)
    grep -Eq "10\.213\.57\.$((h + 1)):[0-9]+ +10\.213\.57\.$((2 - h)):[0-9]+" <<<"$conns" ||
      fail "host $h's rank should connect from 10.213.57.$((h + 1)) to 10.213.57.$((2 - h)): '$conns'"
  done
  echo "ok: rank connections (host 1's view):" \
    $(ip netns exec "${tag}2_braid_h1" ss -tnpH state established | grep braid_train | awk '{print $3, $4}')
  rank1=$(ip netns pids "${tag}2_braid_h1" | head -1)
  kill -9 "$rank1"
  start=$(date +%s)
  wait "$pid"
  code=$?
  elapsed=$(($(date +%s) - start))
  [[ $code -ne 0 ]] || fail "the job should fail when rank 1 is killed"
  ((elapsed <= 15)) || fail "the job took $elapsed s to end after rank 1 was killed"
  echo "ok: after SIGKILL to rank 1 the job exited $code in $elapsed s:" \
    "$(grep 'job failed' "$dir/job2.log")"
fi
check_clean "${tag}2"

# 3. SIGTERM to the script mid-run: it stops the ranks and redis and removes the namespaces.
"$job" --job_id "${tag}3" --port "$port" -- "$train" "${common[@]}" --iters 100000 \
  --devices cpu:0 >"$dir/job3.log" 2>&1 &
pid=$!
if wait_for "$dir/job3.log" "^\[host 1 rank 1\] iter 3/"; then
  kill -TERM "$pid"
  wait "$pid"
  code=$?
  [[ $code -eq 143 ]] || fail "the script should exit 143 on SIGTERM, got $code"
  echo "ok: SIGTERM to the script: exit $code"
fi
check_clean "${tag}3"

[[ $failures -eq 0 ]] && echo "multi-host namespace tests ok"
[[ $failures -eq 0 ]]
