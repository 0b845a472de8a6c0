#!/usr/bin/python3
"""Data-parallel training: images/s and peak memory for 1 vs 2 CPU devices, dag vs simple.

Runs braid_train on synthetic data once per row, each in its own process (so peak RSS is the row's
own), and prints one table: images/s (training steps only, braid_train's summary), peak resident
memory, the planned arena per device, and both ratios against the row "1 device, simple" of the
same model. The global batch is the same on every row of a model, so 2 devices each get half.

  /usr/bin/python3 tools/bench/data_parallel.py --braid-train build/release/tools/braid_train
  ... --models resnet20 --iters 30
  cmake --build build/release --target bench_data_parallel

Rows: resnet20 (1x28x28, batch 64) and resnet50 (3x224x224, batch 16) x {1, 2} devices x {simple,
dag}; dag runs with 2 workers (one per core here), each op's OpenMP team sized to cores / workers.
"""

import argparse
import re
import subprocess
import sys

MODELS = {
    "resnet20": ["--image-size", "28", "--channels", "1", "--classes", "10", "--batch-size", "64"],
    "resnet50": ["--image-size", "224", "--channels", "3", "--classes", "1000", "--batch-size", "16"],
}


def run_row(braid_train, model, devices, executor, iters):
    cmd = [braid_train, "--model", model, "--data", "synthetic", "--devices", devices,
           "--executor", executor, "--threads", "2", "--iters", str(iters), "--eval=false",
           "--log-every", str(iters), "--synthetic-examples", "256"] + MODELS[model]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    images = float(re.search(r"training images/s\s+([\d.]+)", out.stdout).group(1))
    peak = re.search(r"peak resident\s+(.+)", out.stdout).group(1).strip()
    arenas = re.findall(r"^\s+cpu:\d+\s+\S+ \S+\s+(\S+ \S+)", out.stdout, re.M)
    return images, peak, arenas


def to_mib(text):
    value, unit = text.split()
    return float(value) * {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--braid-train", required=True)
    parser.add_argument("--models", default="resnet20,resnet50")
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    print(f"{'model':10} {'devices':12} {'executor':8} {'images/s':>9} {'x base':>7} "
          f"{'peak RSS':>11} {'x base':>7}  arena per device")
    for model in args.models.split(","):
        base = None
        for devices in ["cpu:0", "cpu:0,cpu:1"]:
            for executor in ["simple", "dag"]:
                images, peak, arenas = run_row(args.braid_train, model, devices, executor, args.iters)
                if base is None:
                    base = (images, to_mib(peak))
                print(f"{model:10} {devices:12} {executor:8} {images:9.1f} {images / base[0]:7.2f} "
                      f"{peak:>11} {to_mib(peak) / base[1]:7.2f}  {', '.join(arenas)}", flush=True)


if __name__ == "__main__":
    main()
