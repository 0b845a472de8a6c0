#!/usr/bin/env bash
# A planned net computes the same bits as an unplanned one: runs braid_run on NET with
# --memory-plan off and on, each with the simple executor and with dag on 2 threads, plus the
# renamed net (shared blob names) braid_plan --out writes, and checks that every run prints the same
# checksum lines ("output NAME shape ... fnv=...") and that planned runs print the plan's summary;
# a bad --memory-plan value exits 2.
#
#   memory_plan_checksums.sh BRAID_RUN BRAID_PLAN NET INIT_NET
set -euo pipefail

readonly braid_run=$1 braid_plan=$2 net=$3 init=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME NET_FILE ARGS...: braid_run's checksum lines in $work/NAME.sums.
run() {
  local name=$1 net_file=$2
  shift 2
  if ! "$braid_run" "$net_file" --init "$init" --iters 3 "$@" \
    >"$work/$name.out" 2>"$work/$name.err"; then
    cat "$work/$name.out" "$work/$name.err" >&2
    echo "memory_plan_checksums.sh: braid_run $net_file $* failed" >&2
    exit 1
  fi
  grep '^output ' "$work/$name.out" >"$work/$name.sums" || true
}

run off-simple "$net" --memory-plan off --executor simple
run off-dag "$net" --memory-plan off --executor dag --threads 2
run on-simple "$net" --memory-plan on --executor simple
run on-dag "$net" --memory-plan on --executor dag --threads 2
"$braid_plan" "$net" --init "$init" --out "$work/renamed.pbtxt" >"$work/plan.out"
run renamed-dag "$work/renamed.pbtxt" --executor dag --threads 2

if [[ ! -s $work/off-simple.sums ]]; then
  echo "memory_plan_checksums.sh: braid_run printed no 'output' checksum lines" >&2
  exit 1
fi
failures=0
for name in off-dag on-simple on-dag renamed-dag; do
  if ! diff -u "$work/off-simple.sums" "$work/$name.sums"; then
    echo "memory_plan_checksums.sh: $name disagrees with off-simple (diff above)" >&2
    failures=$((failures + 1))
  fi
done
for name in on-simple on-dag; do
  if ! grep -q '^memory plan: naive .* planned .* lower bound ' "$work/$name.out"; then
    echo "memory_plan_checksums.sh: $name printed no 'memory plan:' summary line" >&2
    failures=$((failures + 1))
  fi
done
if grep -q '^memory plan:' "$work/off-simple.out"; then
  echo "memory_plan_checksums.sh: --memory-plan off printed a plan" >&2
  failures=$((failures + 1))
fi
code=0
"$braid_run" "$net" --memory-plan maybe >/dev/null 2>"$work/bad-flag.err" || code=$?
if [[ $code -ne 2 ]] || ! grep -q -- "--memory-plan must be" "$work/bad-flag.err"; then
  echo "memory_plan_checksums.sh: --memory-plan maybe exited $code (want 2):" >&2
  cat "$work/bad-flag.err" >&2
  failures=$((failures + 1))
fi
[[ $failures -eq 0 ]]
grep '^memory plan:' "$work/on-dag.out"
echo "memory plan off/on x simple/dag and the renamed net agree on" \
  "$(wc -l <"$work/off-simple.sums") outputs"
