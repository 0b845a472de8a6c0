#!/usr/bin/env bash
# braid_run --algo-cache: a first run of ResNet-20's test net (written by braid_model) searches its
# convolutions' algorithms and saves them; a second run loads them, searches nothing and computes the
# same bits; a malformed cache file exits 1 naming the file and line.
#
#   braid_run_algo_cache.sh BRAID_RUN BRAID_MODEL
set -uo pipefail

readonly braid_run=$1 braid_model=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$braid_model" --model resnet20 --batch-size 8 --out-dir "$work/r20" >/dev/null || exit 1
run() { "$braid_run" "$work/r20/test.pbtxt" --init "$work/r20/init.pbtxt" "$@" 2>&1; }

first=$(run --algo-cache "$work/algo.txt") || { echo "$first" >&2; exit 1; }
second=$(run --algo-cache "$work/algo.txt") || { echo "$second" >&2; exit 1; }
echo "$first" | grep 'algorithm searches'
echo "$second" | grep 'algorithm searches'
searched=$(echo "$first" | sed -n 's/^algorithm searches: \([0-9]*\) (0 keys loaded.*/\1/p')
[[ -n $searched && $searched -gt 0 ]] || { echo "FAILED: the first run searched nothing" >&2; exit 1; }
echo "$second" | grep -q "^algorithm searches: 0 ($searched keys loaded" ||
  { echo "FAILED: the second run searched again" >&2; exit 1; }
[[ "$(echo "$first" | grep '^output')" == "$(echo "$second" | grep '^output')" ]] ||
  { echo "FAILED: the loaded choices computed other bits" >&2; exit 1; }

printf 'braid-algorithm-registry 1\nnot a valid line\n' >"$work/bad.txt"
bad=$(run --algo-cache "$work/bad.txt")
code=$?
[[ $code -eq 1 ]] || { echo "FAILED: a malformed cache exited $code" >&2; exit 1; }
echo "$bad" | grep -q "bad.txt' line 2" || { echo "FAILED: no file and line in: $bad" >&2; exit 1; }
