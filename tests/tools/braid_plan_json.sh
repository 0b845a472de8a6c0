#!/usr/bin/env bash
# braid_plan end to end: plans the example MLP with its backward pass (--gradients-of), the MLP for
# the simple executor, ResNet-20 training written by braid_model, and a small net whose name needs
# JSON escaping (blob shapes from --input); checks every --json file with check_plan_json.py (the
# exact key set, lower bound <= planned <= naive, every blob inside the arena), that --out writes a
# net braid_run accepts, the footprint --model predicts (its parts add up; ResNet-50 at batch 32
# on sim within 3,000 MiB), and the error contract (bad flags exit 2, bad nets exit 1 on one line).
#
#   braid_plan_json.sh BRAID_PLAN BRAID_MODEL CHECK_PLAN_JSON_PY MLP MLP_INIT
set -uo pipefail

readonly braid_plan=$1 braid_model=$2 checker=$3 mlp=$4 mlp_init=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# plan JSON_NAME CHECKER_ARGS -- BRAID_PLAN_ARGS...: plans, then checks $work/JSON_NAME.
plan() {
  local json=$work/$1 checks=()
  shift
  while [[ $1 != -- ]]; do checks+=("$1"); shift; done
  shift
  if ! "$braid_plan" "$@" --json "$json" >"$work/out" 2>&1; then
    cat "$work/out" >&2
    fail "braid_plan $*"
    return
  fi
  grep -E '^(net|  planned/bound|verification)' "$work/out"
  grep -q '^verification: OK' "$work/out" || fail "braid_plan $*: verification not OK"
  python3 "$checker" "$json" "${checks[@]}" || fail "braid_plan $*: bad JSON"
}

# expect_exit CODE STDERR_REGEX ARGS...: braid_plan ARGS exits CODE with one matching stderr line.
expect_exit() {
  local want=$1 pattern=$2 err code
  shift 2
  err=$("$braid_plan" "$@" 2>&1 >/dev/null)
  code=$?
  if [[ $code -ne $want ]] || ! grep -Eq -- "$pattern" <<<"$err" ||
    [[ $(wc -l <<<"$err") -ne 1 ]]; then
    fail "braid_plan $*: exit $code (want $want), stderr: $err (want one line matching $pattern)"
  else
    echo "ok: braid_plan $* -> exit $code: $err"
  fi
}

plan mlp-train.json --mode training --executor dag --min-ops 14 -- \
  "$mlp" --init "$mlp_init" --gradients-of out --share-activations --out "$work/mlp-renamed.pbtxt"
plan mlp-simple.json --mode inference --executor simple --min-ops 13 -- \
  "$mlp" --init "$mlp_init" --executor simple
grep -q '^op' "$work/mlp-renamed.pbtxt" || fail "--out wrote no text net"

"$braid_model" --model resnet20 --batch-size 64 --out-dir "$work/resnet20" || fail "braid_model"
plan resnet20-train.json --mode training --executor dag --min-ops 200 -- \
  "$work/resnet20/train.pbtxt" --init "$work/resnet20/init.pbtxt" --mode training \
  --share-activations --out "$work/resnet20-renamed.pb"
[[ -s $work/resnet20-renamed.pb ]] || fail "--out wrote no binary net"

cat >"$work/escape.pbtxt" <<'NET'
name: "quote\" back\\ tab\t"
external_input: "x"
op { type: "Relu" input: "x" output: "y" }
op { type: "Relu" input: "y" output: "z" }
op { type: "Relu" input: "z" output: "w" }
external_output: "w"
NET
plan escape.json --mode inference -- "$work/escape.pbtxt" --input x=4,1000 --input=unused=2:int32
python3 -c 'import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["net"] == "quote\" back\\ tab\t", repr(plan["net"])
assert plan["blobs"], "nothing recycled although --input sized x"' "$work/escape.json" ||
  fail "escaped net name or --input shapes"

# The footprint of a training net before running it (--model): the parts add up to the total, the
# total is whole 2 MiB segments, and ResNet-50 at batch 32 on sim stays within 3,000 MiB.
for model in resnet20:8 resnet50:32; do
  if ! "$braid_plan" --model "${model%%:*}" --device sim --batch-size "${model##*:}" \
      --json "$work/footprint.json" >"$work/out" 2>&1; then
    cat "$work/out" >&2
    fail "braid_plan --model $model"
    continue
  fi
  grep -E '^  total' "$work/out"
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
parts = ["parameters", "gradients", "momentum", "other", "arena", "cached", "rounding"]
total = sum(d[p] for p in parts) + (d["workspace"] if d["workspace_on_device"] else 0)
assert total == d["total"], (total, d)
assert d["total"] % (2 << 20) == 0, d["total"]
assert d["arena"] > 0 and d["parameters"] > 0, d
if sys.argv[2] == "resnet50:32":
    assert d["total"] <= 3000 << 20, d["total"] / 2**20' "$work/footprint.json" "$model" ||
    fail "braid_plan --model $model: footprint JSON"
done

# --recompute-budget: the arena with and without, and the budget met on the device's arena.
"$braid_plan" --model resnet50 --device sim --batch-size 32 --recompute-budget 1.2G \
  >"$work/budget.out" 2>&1 || fail "braid_plan --recompute-budget: $(cat "$work/budget.out")"
grep -Eq '^recompute budget 1228\.80 MiB: planned train arena 1[6-9][0-9]{2}\.[0-9]{2} MiB without recomputed convolutions, 12[0-2][0-9]\.[0-9]{2} MiB with [1-9][0-9]? of 53 recomputed$' \
  "$work/budget.out" || fail "braid_plan --recompute-budget report: $(head -3 "$work/budget.out")"

expect_exit 2 "--mode must be" "$mlp" --mode bogus
expect_exit 2 "--executor must be" "$mlp" --executor threaded
expect_exit 2 "--input 'x=2,a': bad dimension" "$mlp" --input x=2,a
expect_exit 2 "missing its value" "$mlp" --input
expect_exit 2 "unknown command line flag" "$mlp" --no_such_flag
expect_exit 2 "exactly one NET"
expect_exit 2 "--recompute-budget '1.2Q' is not a size" --model resnet20 --recompute-budget 1.2Q
expect_exit 2 "--recompute-budget is for --model" "$mlp" --recompute-budget 1G
expect_exit 1 "^NotFound: .*no_such_net\.pbtxt" /nonexistent/no_such_net.pbtxt
expect_exit 1 "^NotFound: .*loss 'nosuch'" "$mlp" --init "$mlp_init" --gradients-of nosuch
expect_exit 1 "^IoError: .*x\.json" "$mlp" --json /nonexistent/dir/x.json
[[ $failures -eq 0 ]]
