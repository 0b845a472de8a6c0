#!/usr/bin/env python3
"""Writes tests/data/onnx/dynamo_*: fixtures exported by PyTorch 2.x's default (dynamo) exporter.

The sibling of tools/onnx/make_fixtures.py, whose fixtures PyTorch 1.13's TorchScript exporter
wrote at opset 13. These are written by torch.onnx.export's torch.export-based exporter, the
default since PyTorch 2.9, at its default opset (18 or newer; PyTorch 2.15 writes 20), so braid's
tests see what a current exporter writes: the opset-18 forms of ReduceMean (axes as an input),
Split (num_outputs), Pad and Resize among them, and the weights in model.onnx.data beside
model.onnx (external data, the exporter's default). Each folder holds model.onnx (input "data",
output "prob"), model.onnx.data, input.npy and output.npy (PyTorch's output, float32); the
script also runs each model in onnxruntime, when it is importable, and prints its difference from
PyTorch. It needs PyTorch 2.x with onnxscript (and onnx, numpy), e.g. a venv:

    /work/venv-torch2/bin/python tools/onnx/make_dynamo_fixtures.py [--out tests/data/onnx]

  dynamo_small_cnn   make_fixtures.py's small_cnn, at the exporter's default opset
  dynamo_opset18_ops at opset 18: torch.chunk into equal parts (Split with num_outputs) and
                     into unequal ones (PyTorch 2.15 writes that as Split with a `split` sizes
                     input, not num_outputs), F.pad before average pooling (Pad with pads for
                     every axis, no axes input), nearest upsampling (Resize with scales), means
                     and a sum over several axes (ReduceMean and ReduceSum with axes inputs).
                     An uneven num_outputs and Pad's axes input are covered only by the
                     hand-built graphs of tests/runtime/onnx/onnx_import_opset18_test.cc.
"""
import argparse
import collections
import importlib.util
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import SmallCnn, randomize_batch_norms  # noqa: E402


class Opset18Ops(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.side = nn.Conv2d(4, 5, 1)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1)
        self.fc = nn.Linear(6 + 6 + 2, 5)

    def forward(self, x):  # [N, 3, 8, 8]
        x = F.relu(self.conv(x))  # [N, 8, 8, 8]
        a, b = torch.chunk(x, 2, dim=1)  # equal parts: [N, 4, 8, 8] twice
        c, d = torch.chunk(self.side(b), 2, dim=1)  # a dim of 5: [N, 3, 8, 8], [N, 2, 8, 8]
        x = F.relu(self.conv2(a * F.relu(b)))  # [N, 6, 8, 8]
        x = F.avg_pool2d(F.pad(x, (1, 1, 1, 0)), 2)  # padded to [N, 6, 9, 10], pooled [.., 4, 5]
        x = F.interpolate(x, scale_factor=2, mode="nearest")  # [N, 6, 8, 10]
        mean = x.mean(dim=(2, 3))  # [N, 6]
        total = x.sum(dim=(-1, -2), keepdim=True).flatten(1) * 0.01  # [N, 6]
        extra = torch.cat([c.mean(dim=(1, 2, 3), keepdim=True).flatten(1),
                           d.mean(dim=(1, 2, 3), keepdim=True).flatten(1)], dim=1)  # [N, 2]
        return F.softmax(self.fc(torch.cat([mean, total, extra], dim=1)), dim=1)


MODELS = {  # name: (model, input shape, opset; None: the exporter's default)
    "dynamo_small_cnn": (SmallCnn, (2, 3, 16, 16), None),
    "dynamo_opset18_ops": (Opset18Ops, (2, 3, 8, 8), 18),
}


def onnxruntime_difference(path, data, expected):
    if importlib.util.find_spec("onnxruntime") is None:
        return "onnxruntime missing"
    import onnxruntime
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {"data": data})[0]
    return "onnxruntime max |diff| %.2e" % float(np.max(np.abs(got - expected)))


def write_fixture(name, make_model, input_shape, opset, out_dir, seed):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = make_model()
    randomize_batch_norms(model, generator)
    model.eval()
    data = np.random.RandomState(seed).uniform(-1, 1, input_shape).astype(np.float32)
    with torch.no_grad():
        prob = model(torch.from_numpy(data)).numpy().astype(np.float32)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, (torch.from_numpy(data),), path, dynamo=True, opset_version=opset,
                      input_names=["data"], output_names=["prob"], verbose=False)
    np.save(os.path.join(folder, "input.npy"), data)
    np.save(os.path.join(folder, "output.npy"), prob)
    proto = onnx.load(path)
    opset = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    ops = collections.Counter(n.op_type for n in proto.graph.node)
    sizes = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{name}: opset {opset}, input {list(input_shape)} -> prob {list(prob.shape)}, "
          f"{sizes} bytes, {onnxruntime_difference(path, data, prob)}")
    print("  ops: " + ", ".join(f"{op} x{n}" for op, n in sorted(ops.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "onnx")
    parser.add_argument("--out", default=os.path.normpath(default_out))
    args = parser.parse_args()
    print(f"PyTorch {torch.__version__}, onnx {onnx.__version__}, writing {args.out}")
    for seed, (name, (make_model, shape, opset)) in enumerate(sorted(MODELS.items()), start=11):
        write_fixture(name, make_model, shape, opset, args.out, seed)


if __name__ == "__main__":
    main()
