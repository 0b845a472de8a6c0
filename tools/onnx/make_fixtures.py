#!/usr/bin/env python3
"""Regenerates tests/data/onnx: small PyTorch models exported to ONNX with PyTorch's outputs.

Each model gets a folder NAME/ with model.onnx, input.npy (float32, the input "data") and
output.npy (float32, PyTorch's output "prob" for that input). braid's tests import each model,
run it on input.npy and compare with output.npy; they need only braid. This script needs PyTorch
and numpy (Debian: apt-get install python3-torch python3-numpy) and is never run by the build:

    python3 tools/onnx/make_fixtures.py [--out tests/data/onnx]

Seeds are fixed, so a rerun with the same PyTorch writes the same weights and inputs (the exported
bytes may differ between PyTorch versions). The models cover what torchvision's classifiers are
made of:

  small_cnn      conv/batch-norm/relu, max and average pooling, batch norm after pooling (kept as
                 a BatchNormalization node), flatten, gemm, softmax; batch 2
  mobile_block   MobileNet-V2's inverted residual: 1x1 expansion, ReLU6 (Clip), depthwise 3x3
                 stride 1 and 2, linear 1x1 projection, residual Add, concat, global average pool
  ceil_pool      SqueezeNet/GoogLeNet pieces: max pooling with ceil_mode, a fire module (squeeze,
                 two expands, concat), padded 3x3 average pooling (count_include_pad as PyTorch's
                 default, and excluded), dropout (eval), adaptive average pooling to 1x1
"""
import argparse
import os

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

OPSET = 13


def randomize_batch_norms(model, generator):
    """Gives every batch norm random statistics and affine terms, so that none is the identity."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.num_features
            module.running_mean.copy_(torch.randn(n, generator=generator) * 0.5)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            module.bias.data.copy_(torch.randn(n, generator=generator) * 0.2)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)  # [N, 8, 8, 8]
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)  # [N, 16, 2, 2]
        x = self.bn2(x)  # after pooling: exported as BatchNormalization, not folded into a conv
        return F.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class InvertedResidual(nn.Module):
    def __init__(self, channels, expand, stride):
        super().__init__()
        hidden = channels * expand
        self.use_residual = stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x):
        return x + self.layers(x) if self.use_residual else self.layers(x)


class MobileBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU6())
        self.block1 = InvertedResidual(8, 4, 1)
        self.block2 = InvertedResidual(8, 3, 2)
        self.side = nn.Conv2d(8, 4, 1)
        self.fc = nn.Linear(12, 7)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))  # [N, 8, 4, 4]
        x = torch.cat([x, F.relu6(self.side(x))], dim=1)  # [N, 12, 4, 4]
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return F.softmax(self.fc(x), dim=1)


class CeilPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2)
        self.squeeze = nn.Conv2d(8, 4, 1)
        self.expand1 = nn.Conv2d(4, 6, 1)
        self.expand3 = nn.Conv2d(4, 6, 3, padding=1)
        self.classifier = nn.Conv2d(12, 9, 1)

    def forward(self, x):
        x = F.relu(self.conv(x))  # [N, 8, 9, 9]
        x = F.max_pool2d(x, 3, stride=2, ceil_mode=True)  # [N, 8, 4, 4]: ceil((9-3)/2)+1
        s = F.relu(self.squeeze(x))
        x = torch.cat([F.relu(self.expand1(s)), F.relu(self.expand3(s))], dim=1)
        x = F.avg_pool2d(x, 3, stride=1, padding=1)  # counts the padding, as GoogLeNet's
        x = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
        x = F.dropout(x, 0.5, training=self.training)
        x = F.relu(self.classifier(x))
        x = F.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
        return F.softmax(x, dim=1)


MODELS = {
    "small_cnn": (SmallCnn, (2, 3, 16, 16)),
    "mobile_block": (MobileBlock, (1, 3, 16, 16)),
    "ceil_pool": (CeilPool, (1, 3, 19, 19)),
}


def write_fixture(name, make_model, input_shape, out_dir, seed):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = make_model()
    randomize_batch_norms(model, generator)
    model.eval()
    data = torch.from_numpy(
        np.random.RandomState(seed).uniform(-1, 1, input_shape).astype(np.float32))
    with torch.no_grad():
        prob = model(data)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    torch.onnx.export(model, (data,), os.path.join(folder, "model.onnx"), opset_version=OPSET,
                      input_names=["data"], output_names=["prob"], do_constant_folding=True)
    np.save(os.path.join(folder, "input.npy"), data.numpy())
    np.save(os.path.join(folder, "output.npy"), prob.numpy().astype(np.float32))
    sizes = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{name}: input {list(input_shape)} -> prob {list(prob.shape)}, {sizes} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "onnx")
    parser.add_argument("--out", default=os.path.normpath(default_out))
    args = parser.parse_args()
    print(f"PyTorch {torch.__version__}, opset {OPSET}, writing {args.out}")
    for seed, (name, (make_model, shape)) in enumerate(sorted(MODELS.items()), start=1):
        write_fixture(name, make_model, shape, args.out, seed)


if __name__ == "__main__":
    main()
