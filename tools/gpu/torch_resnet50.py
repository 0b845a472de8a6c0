#!/usr/bin/env python3
"""PyTorch's side of the acceptance run's throughput step: ResNet-50 on one CUDA GPU.

Trains (SGD with momentum 0.9, weight decay 1e-4, cross-entropy) or runs inference (eval mode,
torch.inference_mode) on random images of 3x224x224 and 1000 classes, the shapes braid's
`resnet50` rows use, and prints one JSON line:

  {"framework": "pytorch", "mode": "train", "batch": 32, "tf32": false, "images_per_second": ...,
   "median_ms": ..., "peak_allocated_bytes": ..., "peak_reserved_bytes": ..., "torch": "2.11.0"}

cudnn.benchmark is on (braid searches its convolution algorithms too); TF32 is set explicitly for
both cuDNN convolutions and matrix products (--tf32 0 or 1). The peaks are the caching allocator's
over the timed iterations (reset after the warm-up), as braid_bench_training reports its device
allocator's; warmup_peak_reserved_bytes covers the warm-up (cudnn.benchmark's trials included).

  python3 tools/gpu/torch_resnet50.py --mode train --batch 32 --tf32 0
"""
import argparse
import json
import statistics
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["train", "infer"], required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--tf32", type=int, choices=[0, 1], default=0)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()

    import torch
    import torchvision

    if not torch.cuda.is_available():
        print("torch sees no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = bool(args.tf32)
    torch.backends.cuda.matmul.allow_tf32 = bool(args.tf32)
    device = torch.device("cuda:0")
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).to(device)
    images = torch.rand(args.batch, 3, 224, 224, device=device)
    labels = torch.randint(0, 1000, (args.batch,), device=device)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()

    if args.mode == "train":
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
    else:
        model.eval()

        def step():
            with torch.inference_mode():
                model(images)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    warmup_peak_reserved = torch.cuda.max_memory_reserved()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.iters):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(json.dumps({
        "framework": "pytorch", "mode": args.mode, "batch": args.batch, "tf32": bool(args.tf32),
        "images_per_second": args.batch / median, "median_ms": median * 1e3,
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        "warmup_peak_reserved_bytes": warmup_peak_reserved,
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
