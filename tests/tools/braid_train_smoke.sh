#!/usr/bin/env bash
# braid_train end to end on synthetic data: trains, evaluates, checkpoints, resumes from the
# checkpoint, dumps readable nets, trains data parallel on two devices with a summary and a trace;
# fills parameters on the host for a device unless --init-on-host=false; --algo-cache saves and reloads algorithm choices; bad flags, models and device lists exit 2.
#
#   braid_train_smoke.sh BRAID_TRAIN
set -uo pipefail

readonly braid_train=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# expect_line LOG REGEX
expect_line() {
  grep -Eq -- "$2" "$1" || fail "no line matching '$2' in $1:$(printf '\n'; cat "$1")"
}

readonly common=(--model resnet20 --data synthetic --synthetic-examples 64 --image-size 12
                 --batch-size 16 --test-batch-size 16 --lr 0.05 --log-every 2
                 --checkpoint "$dir/ckpt.pb")

"$braid_train" "${common[@]}" --iters 4 --dump-nets "$dir/nets" >"$dir/first.log" 2>&1 ||
  fail "first run exited $?: $(cat "$dir/first.log")"
expect_line "$dir/first.log" "^iter 4/4 epoch 1 loss [0-9.]+ accuracy [0-9.]+ lr [0-9.e-]+ images/s [0-9.]+$"
expect_line "$dir/first.log" "^epoch 1 test accuracy [0-9.]+ loss [0-9.]+ \(64 images"
expect_line "$dir/first.log" "saved at iter 4$"
[[ -s "$dir/ckpt.pb" ]] || fail "no checkpoint written"
grep -q 'type: "MomentumSGDUpdate"' "$dir/nets/resnet20_train.pbtxt" || fail "no readable train net"

"$braid_train" "${common[@]}" --iters 6 --resume >"$dir/resumed.log" 2>&1 ||
  fail "resumed run exited $?: $(cat "$dir/resumed.log")"
expect_line "$dir/resumed.log" "starting at 4;"
expect_line "$dir/resumed.log" "^iter 6/6 epoch 2 "

"$braid_train" "${common[@]}" --iters 3 --devices cpu:0,cpu:1 --executor dag --threads 2 \
  --trace "$dir/trace.json" >"$dir/dp.log" 2>&1 || fail "data-parallel run exited $?: $(cat "$dir/dp.log")"
expect_line "$dir/dp.log" "^summary: resnet20 on cpu:0,cpu:1, executor dag$"
expect_line "$dir/dp.log" "^  cpu:1 +[0-9.]+ [KMG]iB +[0-9.]+ [KMG]iB +[0-9.]+ [KMG]iB$"
expect_line "$dir/dp.log" "^  test net extra +0 B shared"
expect_line "$dir/dp.log" "^  scratch areas +[0-9.]+ [KMG]iB train, [0-9.]+ ([KMG]i)?B test$"
expect_line "$dir/dp.log" "^  peak resident +[0-9.]+ [KMG]iB$"
grep -q '"traceEvents"' "$dir/trace.json" || fail "no trace written"

# On a device (sim here, cuda alike) the random fills run on the host and are copied over, unless
# --init-on-host=false: the dumped init net says which.
for init_on_host in true false; do
  "$braid_train" "${common[@]}" --iters 1 --eval=false --devices sim:0 \
    --init-on-host="$init_on_host" --dump-nets "$dir/sim_nets_$init_on_host" \
    >"$dir/sim_$init_on_host.log" 2>&1 ||
    fail "--init-on-host=$init_on_host run exited $?: $(cat "$dir/sim_$init_on_host.log")"
done
grep -q 'output: "host/' "$dir/sim_nets_true/resnet20_init.pbtxt" ||
  fail "--init-on-host: no fill writes a host blob"
grep -q 'output: "host/' "$dir/sim_nets_false/resnet20_init.pbtxt" &&
  fail "--init-on-host=false: a fill writes a host blob"

# --algo-cache: the first run searches and saves its choices, the second loads them and searches
# nothing; a malformed cache exits 1 naming the file and line.
for run in first second; do
  "$braid_train" "${common[@]}" --iters 1 --eval=false --algo-cache "$dir/algo.txt" \
    >"$dir/algo_$run.log" 2>&1 || fail "--algo-cache $run run exited $?: $(cat "$dir/algo_$run.log")"
done
expect_line "$dir/algo_first.log" "^  algorithm searches: [1-9][0-9]* \(0 keys loaded from $dir/algo.txt\)$"
expect_line "$dir/algo_second.log" "^  algorithm searches: 0 \([1-9][0-9]* keys loaded from $dir/algo.txt\)$"
echo "not an algorithm cache" >"$dir/bad_algo.txt"
"$braid_train" "${common[@]}" --iters 1 --algo-cache "$dir/bad_algo.txt" >"$dir/bad_algo.log" 2>&1
[[ $? -eq 1 ]] || fail "a malformed --algo-cache should exit 1"
expect_line "$dir/bad_algo.log" "bad_algo.txt' line 1: expected the version line"

# On a terminal (script(1) provides one) the progress line is redrawn in place instead of logged.
if command -v script >/dev/null; then
  script -qec "$braid_train ${common[*]} --iters 3 --eval=false" /dev/null >"$dir/tty.log" 2>&1
  tr '\r' '\n' <"$dir/tty.log" >"$dir/tty_lines.log"
  expect_line "$dir/tty_lines.log" "^\[#+\.*\] iter 3/3 loss [0-9.]+ accuracy [0-9.]+ images/s [0-9.]+ ETA 0:00"
fi

# A GPU the machine lacks too: refused in one line, with CUDA's error.
for devices in cpu:0,cpu:0 gpu:0 cpu:x "" cuda:99; do
  "$braid_train" --devices "$devices" >"$dir/bad.log" 2>&1
  [[ $? -eq 2 ]] || fail "--devices '$devices' should exit 2"
  [[ $(wc -l <"$dir/bad.log") -eq 1 ]] || fail "--devices '$devices' should print one line"
done
grep -Eq "braid_train: --devices cuda:99 does not exist: " "$dir/bad.log" ||
  fail "--devices cuda:99 should be refused with CUDA's error: $(cat "$dir/bad.log")"
"$braid_train" --model resnet99 >/dev/null 2>&1
[[ $? -ne 0 ]] || fail "an unknown model should fail"
"$braid_train" --executor threaded >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "--executor threaded should exit 2"
"$braid_train" --no_such_flag >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "an unknown flag should exit 2"
for flags in "--recompute-budget 1.2Q" "--recompute-budget 1G --memory-plan off"; do
  # shellcheck disable=SC2086
  "$braid_train" $flags >"$dir/bad.log" 2>&1
  [[ $? -eq 2 ]] || fail "$flags should exit 2"
  grep -q "^braid_train: .*--recompute-budget" "$dir/bad.log" || fail "$flags: $(cat "$dir/bad.log")"
done

# A budget below the plain arena: some convolutions recomputed, said on the first line, on two
# devices too (each device's arena).
for devices in cpu:0 cpu:0,cpu:1; do
  "$braid_train" "${common[@]}" --iters 2 --eval=false --devices "$devices" \
    --recompute-budget 400K >"$dir/budget.log" 2>&1 || fail "--recompute-budget: $(cat "$dir/budget.log")"
  expect_line "$dir/budget.log" "recompute budget 0\.4 MiB: [0-9]+ of 21 convolutions recomputed, planned train arena [0-9.]+ MiB per device \([0-9.]+ MiB without\)"
done

[[ $failures -eq 0 ]] && echo "braid_train smoke test ok"
[[ $failures -eq 0 ]]
