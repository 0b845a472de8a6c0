#!/usr/bin/env bash
# Runs braid_run on a net with the simple executor and with the dag executor on 2 threads, and
# checks that the checksum lines ("output NAME shape ... fnv=...") agree bit for bit. The dag run
# also writes a Chrome trace, which must be JSON with traceEvents.
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
cat "$work/dag.out"

if [[ ! -s $work/simple.sums ]]; then
  echo "compare_executors.sh: braid_run printed no 'output' checksum lines" >&2
  exit 1
fi
if ! diff -u "$work/simple.sums" "$work/dag.sums"; then
  echo "compare_executors.sh: simple and dag executors disagree (diff above)" >&2
  exit 1
fi
if ! grep -q '"traceEvents"' "$work/trace.json"; then
  echo "compare_executors.sh: --trace did not write a Chrome trace" >&2
  exit 1
fi
echo "simple and dag (2 threads) agree on $(wc -l <"$work/simple.sums") outputs"
