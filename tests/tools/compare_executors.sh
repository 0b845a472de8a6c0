#!/usr/bin/env bash
# Runs braid_run on a net with the simple executor and with the dag executor on 2 threads, on the
# host and on simulated GPUs (--device sim:0, sim:1), and checks that the checksum lines ("output
# NAME shape ... fnv=...") agree bit for bit. The dag runs also write Chrome traces, which must be
# JSON with traceEvents; on sim:1, with a track per stream.
#
#   compare_executors.sh BRAID_RUN NET INIT_NET
set -euo pipefail

readonly braid_run=$1 net=$2 init=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {
  local name=$1
  shift
  if ! "$braid_run" "$net" --init "$init" --iters 3 "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    cat "$work/$name.out" "$work/$name.err" >&2
    echo "compare_executors.sh: braid_run $* failed" >&2
    exit 1
  fi
  grep '^output ' "$work/$name.out" >"$work/$name.sums" || true
}

run simple --executor simple
run dag --executor dag --threads 2 --trace "$work/trace.json"
run sim_simple --executor simple --device sim:0
run sim_dag --executor dag --threads 2 --device sim:1 --memory-plan on --trace "$work/sim.json"
cat "$work/dag.out"

if [[ ! -s $work/simple.sums ]]; then
  echo "compare_executors.sh: braid_run printed no 'output' checksum lines" >&2
  exit 1
fi
for other in dag sim_simple sim_dag; do
  if ! diff -u "$work/simple.sums" "$work/$other.sums"; then
    echo "compare_executors.sh: simple and $other disagree (diff above)" >&2
    exit 1
  fi
done
if ! grep -q '"traceEvents"' "$work/trace.json"; then
  echo "compare_executors.sh: --trace did not write a Chrome trace" >&2
  exit 1
fi
if ! grep -q '"args":{"name":"sim:1"}' "$work/sim.json" || ! grep -q '"name":"stream 0"' "$work/sim.json"; then
  echo "compare_executors.sh: the trace on sim:1 has no sim:1 process with stream tracks" >&2
  exit 1
fi
echo "simple and dag (2 threads), on the host and on sim devices, agree on $(wc -l <"$work/simple.sums") outputs"
