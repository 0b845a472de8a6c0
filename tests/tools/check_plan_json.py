"""Checks a braid_plan --json file against the issue's schema and the plan's invariants.

    python3 check_plan_json.py PLAN.json [--mode training] [--executor dag] [--min-ops N]

Exactly the documented keys with the documented types; arena_bytes <= naive_bytes;
lower_bound_bytes <= arena_bytes; every blob's [offset, offset + bytes) inside arena_bytes, with
a positive size and a name used by some op; blob names unique. Exits 1 naming the first problem.
"""
import argparse
import json
import sys

TOP_KEYS = {"net": str, "mode": str, "executor": str, "ops": list, "external_inputs": list,
            "external_outputs": list, "blobs": list, "arena_bytes": int, "naive_bytes": int,
            "lower_bound_bytes": int, "plan_ms": float}
OP_KEYS = {"type": str, "inputs": list, "outputs": list, "control_inputs": list}
BLOB_KEYS = {"name": str, "bytes": int, "offset": int}


def check_keys(where, obj, keys):
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, got {type(obj).__name__}")
    if set(obj) != set(keys):
        raise ValueError(f"{where}: keys {sorted(obj)} != {sorted(keys)}")
    for key, kind in keys.items():
        value = obj[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise ValueError(f"{where}: '{key}' is {type(value).__name__}, want {kind.__name__}")
        if kind is list and key != "ops" and key != "blobs":
            if not all(isinstance(s, str) for s in value):
                raise ValueError(f"{where}: '{key}' must hold strings only")


def check(plan, args):
    check_keys("plan", plan, TOP_KEYS)
    for i, op in enumerate(plan["ops"]):
        check_keys(f"ops[{i}]", op, OP_KEYS)
    for i, blob in enumerate(plan["blobs"]):
        check_keys(f"blobs[{i}]", blob, BLOB_KEYS)
    if args.mode and plan["mode"] != args.mode:
        raise ValueError(f"mode {plan['mode']!r}, want {args.mode!r}")
    if args.executor and plan["executor"] != args.executor:
        raise ValueError(f"executor {plan['executor']!r}, want {args.executor!r}")
    if len(plan["ops"]) < args.min_ops:
        raise ValueError(f"{len(plan['ops'])} ops, want at least {args.min_ops}")
    arena, naive, bound = plan["arena_bytes"], plan["naive_bytes"], plan["lower_bound_bytes"]
    if not 0 <= bound <= arena <= naive:
        raise ValueError(f"want 0 <= lower_bound_bytes {bound} <= arena_bytes {arena} <= "
                         f"naive_bytes {naive}")
    used = {name for op in plan["ops"] for key in ("inputs", "outputs") for name in op[key]}
    names = set()
    for blob in plan["blobs"]:
        name, offset, size = blob["name"], blob["offset"], blob["bytes"]
        if name in names or name not in used:
            raise ValueError(f"blob {name!r} listed twice or used by no op")
        names.add(name)
        if size <= 0 or offset < 0 or offset + size > arena:
            raise ValueError(f"blob {name!r} [{offset}, {offset + size}) is outside the arena "
                             f"[0, {arena})")
    if sum(blob["bytes"] for blob in plan["blobs"]) != naive:
        raise ValueError("naive_bytes is not the sum of the recycled blobs' bytes")
    return len(plan["blobs"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--mode")
    parser.add_argument("--executor")
    parser.add_argument("--min-ops", type=int, default=1)
    args = parser.parse_args()
    try:
        with open(args.path, encoding="utf-8") as f:
            plan = json.load(f)
        blobs = check(plan, args)
    except (OSError, ValueError) as e:  # json.JSONDecodeError is a ValueError
        print(f"check_plan_json.py: {args.path}: {e}", file=sys.stderr)
        return 1
    print(f"{args.path}: ok ({len(plan['ops'])} ops, {blobs} recycled blobs, arena "
          f"{plan['arena_bytes']} <= naive {plan['naive_bytes']}, bound "
          f"{plan['lower_bound_bytes']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
