#!/usr/bin/env python3
"""PyTorch's ResNet-50 b32 under its profiler, CUDA time by op and kernel: the other side of
tools/gpu/window.sh --profile (braid_bench_training --profile). TF32 off, cudnn.benchmark on, as
tools/gpu/torch_resnet50.py; 5 warm-up steps, then 5 profiled.

  python3 tools/gpu/torch_profile.py train|infer
"""
import sys

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "train"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model = torchvision.models.resnet50().cuda()
    images = torch.rand(32, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (32,), device="cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step():
        if mode == "train":
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(images), labels).backward()
            optimizer.step()
        else:
            model.eval()
            with torch.inference_mode():
                model(images)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    print(p.key_averages().table(sort_by="cuda_time_total", row_limit=45,
                                 max_name_column_width=90))
    return 0


if __name__ == "__main__":
    sys.exit(main())
