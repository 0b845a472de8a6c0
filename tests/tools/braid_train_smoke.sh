#!/usr/bin/env bash
# braid_train end to end on synthetic data: trains, evaluates, checkpoints, resumes from the
# checkpoint, dumps readable nets; bad flags exit 2.
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

"$braid_train" --executor threaded >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "--executor threaded should exit 2"
"$braid_train" --no_such_flag >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "an unknown flag should exit 2"

[[ $failures -eq 0 ]] && echo "braid_train smoke test ok"
[[ $failures -eq 0 ]]
