#!/usr/bin/env python3
"""Runs torchvision's classifiers in braid and in PyTorch on one random input and compares them.

For each model: torchvision builds it with random weights (seeded; nothing is downloaded), its
batch-norm statistics are calibrated on a few random batches so that every layer sees normalized
activations as in a trained net, it is exported to ONNX (--exporter: dynamo, PyTorch 2.x's
default exporter at its default opset, 18 or newer, or torchscript, the legacy one at opset 13;
tools/onnx/torchvision_models.py, shared with tools/bench/inference_torchvision.py), and
`braid_run MODEL.onnx --input data=input.npy --save-outputs DIR` runs it (the importer, braid's
ops and executor). The script prints per model the largest absolute difference of the logits,
PyTorch's largest magnitude, their ratio (the relative difference) and PASS when that is within
--tolerance (default 1e-4), or the error braid printed when it could not import or run the model.

A manual tool: it needs PyTorch, torchvision and numpy (Debian: python3-torch,
python3-torchvision, python3-numpy; the dynamo exporter also needs onnx and onnxscript, e.g. a venv
with PyTorch 2.x from PyPI), never runs in the build, and takes minutes on two cores.

    python3 tools/onnx/compare_torchvision.py --braid-run build/release/tools/braid_run
    python3 tools/onnx/compare_torchvision.py --braid-run ... --models resnet18,squeezenet1_1
    venv/bin/python tools/onnx/compare_torchvision.py --braid-run ... --exporter torchscript
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

from torchvision_models import (EXPORTERS, MODELS, build_model, default_exporter, export_onnx,
                                parse_model_names)


def run_braid(braid_run, onnx_path, input_path, out_dir):
    """Returns (output array or None, wall ms, error text)."""
    command = [braid_run, onnx_path, "--input", "data=" + input_path, "--save-outputs", out_dir]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        return None, None, lines[-1] if lines else f"exit code {result.returncode}"
    wall = re.search(r"([0-9.]+) ms wall", result.stdout)
    saved = re.search(r"^saved \S+ to (\S+)$", result.stdout, re.MULTILINE)
    if saved is None:
        return None, None, "braid_run saved no output"
    return np.load(saved.group(1)), float(wall.group(1)) if wall else None, ""


def compare(name, args, work):
    model, size = build_model(name, args.seed)
    data = np.random.RandomState(args.seed).uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    onnx_path = os.path.join(work, name + ".onnx")
    input_path = os.path.join(work, name + "_input.npy")
    np.save(input_path, data)
    with torch.no_grad():
        start = time.perf_counter()
        expected = model(torch.from_numpy(data)).numpy()
        torch_ms = (time.perf_counter() - start) * 1e3
        export_onnx(model, torch.from_numpy(data), onnx_path, args.exporter)
    got, braid_ms, error = run_braid(args.braid_run, onnx_path, input_path,
                                     os.path.join(work, name + "_out"))
    row = {"model": name, "input": f"1x3x{size}x{size}", "torch_ms": torch_ms,
           "braid_ms": braid_ms, "error": error}
    if got is not None:
        if got.shape != expected.shape:
            row["error"] = f"shape {list(got.shape)}, PyTorch's {list(expected.shape)}"
        else:
            row["max_abs"] = float(np.max(np.abs(got.astype(np.float64) - expected)))
            row["scale"] = float(np.max(np.abs(expected)))
            row["relative"] = row["max_abs"] / row["scale"] if row["scale"] > 0 else row["max_abs"]
    return row


def print_row(row, tolerance):
    ms = lambda v: f"{v:9.1f}" if v is not None else f"{'-':>9}"
    if "relative" in row:
        verdict = "PASS" if row["relative"] <= tolerance else "FAIL"
        numbers = f"{row['max_abs']:11.3e} {row['scale']:11.3e} {row['relative']:11.3e}  {verdict}"
    else:
        numbers = f"{'-':>11} {'-':>11} {'-':>11}  ERROR: {row['error']}"
    print(f"{row['model']:14} {row['input']:12} {ms(row['torch_ms'])} {ms(row['braid_ms'])} "
          f"{numbers}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--braid-run", required=True, help="the braid_run binary")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated names")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest relative difference that passes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exporter", choices=EXPORTERS, default=default_exporter(),
                        help="torch.onnx's exporter (default: %(default)s)")
    parser.add_argument("--work", default="", help="keep the .onnx and .npy files here")
    args = parser.parse_args()
    try:
        names = parse_model_names(args.models)
    except ValueError as error:
        sys.exit(str(error))
    torch.set_num_threads(os.cpu_count() or 1)
    print(f"PyTorch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"{args.exporter} exporter, random weights "
          f"(seed {args.seed}), batch 1; relative = max|braid - PyTorch| / max|PyTorch| of the "
          f"logits, tolerance {args.tolerance:g}")
    print(f"{'model':14} {'input':12} {'torch ms':>9} {'braid ms':>9} {'max abs':>11} "
          f"{'max |torch|':>11} {'relative':>11}  result")
    failures = 0
    with tempfile.TemporaryDirectory() as temp:
        work = args.work or temp
        os.makedirs(work, exist_ok=True)
        for name in names:
            row = compare(name, args, work)
            print_row(row, args.tolerance)
            failures += "relative" not in row or row["relative"] > args.tolerance
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
