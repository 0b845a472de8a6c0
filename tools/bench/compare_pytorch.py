#!/usr/bin/python3
"""braid vs PyTorch: ResNet training and inference throughput and peak memory, in one run.

For every row of braid_bench_training (resnet20 1x28x28 batch 64; resnet18 and resnet50
3x224x224 batch 8 and 32; train and infer), this script runs braid's row (braid_bench_training
--json --rows=NAME, which runs the row in its own child process) and then the same model, batch,
data shape and thread count in PyTorch, also in a child process of its own, and prints one table:
images/s and peak RSS of each, their ratios and whether braid meets its targets (training images/s
>= 1.3x PyTorch's; peak RSS <= 0.6x PyTorch's on every row). Each row runs --rounds times,
alternating braid, PyTorch, braid, PyTorch, ..., and keeps each framework's fastest round (the one
least disturbed, as timeit does; this machine's speed drifts by 10-30% over minutes with no other
process running) and its largest peak RSS. The "others" columns show how many cores other
processes used. Both frameworks' OpenMP teams slow down several-fold when another process holds a
core, so rounds run under more than --max-others cores of background load do not count, and the
row runs again (up to --attempts more times, --retry-wait seconds apart); if no round was quiet,
the least loaded one is kept.

The PyTorch models are written out here to match runtime/models/resnet.cc layer for layer (conv
without bias -> BatchNorm, ReLU; a projection shortcut of 1x1 conv + BatchNorm when a block changes
stride or channels; global average pooling; FC), and each row checks that both have the same number
of trainable parameters. Training: SGD lr 0.01, momentum 0.9, weight decay 1e-4 on conv and FC
weights only (as braid), cross entropy, plus the accuracy braid's train net computes. Inference:
eval mode under torch.inference_mode. Data: a batch of random uint8 images normalised to float
every iteration (braid's synthetic reader does the same on its own thread).

Threads: torch.set_num_threads(N) and OMP_NUM_THREADS=N in the PyTorch child; braid gets --threads N.

  /usr/bin/python3 tools/bench/compare_pytorch.py --braid build/release/tools/bench/braid_bench_training
  ... --rows resnet20,resnet18-b8     # rows whose name contains one of these
  cmake --build build/release --target bench_vs_pytorch   # the same, through CMake

Needs Debian's python3-torch (PyTorch 1.13 CPU); exits with status 2 and a message without it.
"""

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time

from child_process import run_child

TRAIN_SPEED_TARGET = 1.3  # braid images/s / PyTorch images/s, training rows
MEMORY_TARGET = 0.6  # braid peak RSS / PyTorch peak RSS, every row


# ----------------------------------------------------------------------------------------------
# The PyTorch side (imported only in the child processes).

def build_resnet(torch, model, channels, classes):
    """The ResNet of runtime/models/resnet.cc: CIFAR style for depth 6n+2, ImageNet for 18/50."""
    nn = torch.nn
    depth = int(model[len("resnet"):])
    imagenet_blocks = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3]}

    def conv_bn(dim_in, dim_out, kernel, stride):
        return [nn.Conv2d(dim_in, dim_out, kernel, stride, kernel // 2, bias=False),
                nn.BatchNorm2d(dim_out, eps=1e-5, momentum=0.1)]

    class Block(nn.Module):
        def __init__(self, dim_in, width, dim_out, stride, bottleneck):
            super().__init__()
            if bottleneck:
                layers = (conv_bn(dim_in, width, 1, 1) + [nn.ReLU(inplace=True)] +
                          conv_bn(width, width, 3, stride) + [nn.ReLU(inplace=True)] +
                          conv_bn(width, dim_out, 1, 1))
            else:
                layers = (conv_bn(dim_in, width, 3, stride) + [nn.ReLU(inplace=True)] +
                          conv_bn(width, dim_out, 3, 1))
            self.branch = nn.Sequential(*layers)
            self.shortcut = None
            if stride != 1 or dim_in != dim_out:
                self.shortcut = nn.Sequential(*conv_bn(dim_in, dim_out, 1, stride))
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            shortcut = x if self.shortcut is None else self.shortcut(x)
            return self.relu(self.branch(x) + shortcut)

    if depth in imagenet_blocks:
        blocks, widths = imagenet_blocks[depth], [64, 128, 256, 512]
        bottleneck = depth >= 50
        layers = conv_bn(channels, 64, 7, 2) + [nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
        dim = 64
    else:
        n = (depth - 2) // 6
        blocks, widths, bottleneck = [n, n, n], [16, 32, 64], False
        layers = conv_bn(channels, 16, 3, 1) + [nn.ReLU(inplace=True)]
        dim = 16
    expansion = 4 if bottleneck else 1
    for stage, count in enumerate(blocks):
        for block in range(count):
            stride = 2 if block == 0 and stage > 0 else 1
            width = widths[stage]
            layers.append(Block(dim, width, width * expansion, stride, bottleneck))
            dim = width * expansion
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, classes)]
    return nn.Sequential(*layers)


def torch_step_fn(torch, model, row, images, labels):
    """One iteration: normalise the batch, then forward (+ backward and SGD when training)."""
    loss_fn = torch.nn.CrossEntropyLoss()

    def batch():
        return images.float().div_(255).sub_(0.5).div_(0.25)

    if row["mode"] == "infer":
        model.eval()

        def infer():
            with torch.inference_mode():
                out = model(batch())
                loss = loss_fn(out, labels)
                (out.argmax(1) == labels).float().mean()
            return loss.item()
        return infer

    model.train()
    decay = [m.weight for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    decay_ids = {id(p) for p in decay}
    no_decay = [p for p in model.parameters() if id(p) not in decay_ids]
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 1e-4},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=0.01, momentum=0.9)

    def train():
        optimizer.zero_grad(set_to_none=True)
        out = model(batch())
        loss = loss_fn(out, labels)
        with torch.no_grad():
            (out.argmax(1) == labels).float().mean()
        loss.backward()
        optimizer.step()
        return loss.item()
    return train


def run_torch_row(row, opts):
    """The child's side: times one row and prints one 'result {json}' line."""
    import torch
    torch.set_num_threads(opts["threads"])
    torch.manual_seed(1)
    model = build_resnet(torch, row["model"], row["channels"], row["classes"])
    params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    size = row["image_size"]
    images = torch.randint(0, 256, (row["batch"], row["channels"], size, size), dtype=torch.uint8)
    labels = torch.randint(0, row["classes"], (row["batch"],))
    step = torch_step_fn(torch, model, row, images, labels)
    setup_start = time.monotonic()
    for _ in range(opts["warmup"]):
        step()
    setup = time.monotonic() - setup_start
    seconds = []
    while len(seconds) < opts["max_iters"] and (
            len(seconds) < opts["min_iters"] or sum(seconds) < opts["min_seconds"]):
        start = time.monotonic()
        loss = step()
        seconds.append(time.monotonic() - start)
    median = sorted(seconds)[len(seconds) // 2] if len(seconds) % 2 else \
        sum(sorted(seconds)[len(seconds) // 2 - 1:len(seconds) // 2 + 1]) / 2
    result = {"images_per_second": row["batch"] / median, "iterations": len(seconds),
              "median_seconds": median, "setup_seconds": setup, "loss": loss,
              "trainable_params": params, "torch": torch.__version__,
              "torch_threads": torch.get_num_threads(),
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    print("result " + json.dumps(result), flush=True)


# ----------------------------------------------------------------------------------------------
# The parent: runs both sides row by row and prints the comparison.

def braid_argv(args, extra):
    argv = [args.braid, "--json", "--threads=%d" % args.threads, "--warmup=%d" % args.warmup,
            "--min_iters=%d" % args.min_iters, "--max_iters=%d" % args.max_iters,
            "--min_seconds=%g" % args.min_seconds, "--rounds=1"]  # this script takes turns
    argv.append("--executor=" + (args.executor or "simple"))
    return argv + extra


def run_braid_row(args, name):
    out, code, _ = run_child(braid_argv(args, ["--rows=" + name]))
    if code != 0 and "{" not in out:
        return {"error": "braid_bench_training exited with %d" % code}, {}
    report = json.loads(out)
    row = next(r for r in report["rows"] if r["name"] == name)
    return row, report


def run_torch_row_in_child(args, row):
    opts = {"threads": args.threads, "warmup": args.warmup, "min_iters": args.min_iters,
            "max_iters": args.max_iters, "min_seconds": args.min_seconds}
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    argv = [sys.executable, os.path.abspath(__file__), "--torch-row",
            json.dumps({"row": row, "opts": opts})]
    out, code, others = run_child(argv, env)
    lines = [line for line in out.splitlines() if line.startswith("result ")]
    if code != 0 or not lines:
        return {"error": "PyTorch child exited with %d" % code}
    result = json.loads(lines[-1][len("result "):])
    result["others_cores"] = others
    return result


def background_load(braid, torch_result):
    return max(braid.get("others_cores", 0.0), torch_result.get("others_cores", 0.0))


def run_row_pair(args, row):
    """Runs the row in braid, then in PyTorch, --rounds times, plus up to --attempts more while
    fewer than --rounds rounds ran under --max-others cores of background load. Returns (braid,
    torch, braid's report): each framework's fastest kept round, with its largest peak RSS."""
    rounds = []  # (braid, torch, report, load)
    for attempt in range(1, args.rounds + args.attempts + 1):
        braid, report = run_braid_row(args, row["name"])
        torch_result = run_torch_row_in_child(args, row)
        load = background_load(braid, torch_result)
        print("  %-20s braid %s | torch %s | others %.2f cores" % (
            row["name"], summary(braid), summary(torch_result), load), file=sys.stderr, flush=True)
        rounds.append((braid, torch_result, report, load))
        quiet = [r for r in rounds if r[3] <= args.max_others]
        if len(quiet) >= args.rounds or attempt == args.rounds + args.attempts:
            break
        if load > args.max_others:
            print("  background load above %.2f cores: again in %d s" % (
                args.max_others, args.retry_wait), file=sys.stderr, flush=True)
            time.sleep(args.retry_wait)
    kept = quiet or [min(rounds, key=lambda r: r[3])]
    return best_of([r[0] for r in kept]), best_of([r[1] for r in kept]), kept[0][2]


def best_of(results):
    """The fastest of one framework's results, with the largest peak RSS among them."""
    ok = [r for r in results if "images_per_second" in r]
    if not ok:
        return results[0]
    best = dict(max(ok, key=lambda r: r["images_per_second"]))
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in ok)
    return best


def verdict(value, target, at_least):
    if target is None:
        return "-"
    met = value >= target if at_least else value <= target
    return "yes" if met else "NO"


def print_table(results, header, max_others):
    cols = ("%-9s %-9s %5s %-5s | %8s %8s %6s %5s %4s | %7s %7s %6s %5s %4s | %6s %6s")
    print()
    print(header)
    print(cols % ("model", "input", "batch", "mode", "braid/s", "torch/s", "ratio", "goal", "met",
                  "braidMB", "torchMB", "ratio", "goal", "met", "others", "others"))
    print(cols % ("", "", "", "", "img", "img", "", "", "", "", "", "", "", "", "braid", "torch"))
    for row, braid, torch_result in results:
        head = (row["model"], "%dx%dx%d" % (row["channels"], row["image_size"], row["image_size"]),
                row["batch"], row["mode"])
        failed = braid.get("error") or torch_result.get("error")
        if failed or "images_per_second" not in braid:
            print("%-9s %-9s %5d %-5s | failed: %s" % (head + (failed or "no braid result",)))
            continue
        speed = braid["images_per_second"] / torch_result["images_per_second"]
        memory = braid["peak_rss_mb"] / torch_result["peak_rss_mb"]
        speed_goal = TRAIN_SPEED_TARGET if row["mode"] == "train" else None
        print(cols % (head + (
            "%.1f" % braid["images_per_second"], "%.1f" % torch_result["images_per_second"],
            "%.2f" % speed, ">=%.1f" % speed_goal if speed_goal else "-",
            verdict(speed, speed_goal, True),
            "%.0f" % braid["peak_rss_mb"], "%.0f" % torch_result["peak_rss_mb"], "%.2f" % memory,
            "<=%.1f" % MEMORY_TARGET, verdict(memory, MEMORY_TARGET, False),
            "%.2f" % braid["others_cores"], "%.2f" % torch_result["others_cores"])) +
            ("  LOADED" if background_load(braid, torch_result) > max_others else ""))
        if braid.get("trainable_params") != torch_result["trainable_params"]:
            print("  WARNING: trainable parameters differ: braid %s, PyTorch %s" %
                  (braid.get("trainable_params"), torch_result["trainable_params"]))
    print("\nimages/s: batch / median timed iteration, the fastest of the row's rounds; MB: peak "
          "RSS of the row's own process (ru_maxrss), the largest of its rounds.\nothers: cores' worth of CPU used by other processes while the row ran "
          "(background load; 0 = quiet machine).\nLOADED: every round ran under more than %.2f "
          "cores of background load; its numbers may be off several-fold." % max_others)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_braid = os.path.join(here, "..", "..", "build", "release", "tools", "bench",
                                 "braid_bench_training")
    parser.add_argument("--braid", default=os.path.normpath(default_braid),
                        help="the braid_bench_training binary (default: %(default)s)")
    parser.add_argument("--rows", default="", help="comma-separated substrings of row names")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--executor", default="", help="braid's executor (default: simple)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--min-iters", type=int, default=2)
    parser.add_argument("--max-iters", type=int, default=200)
    parser.add_argument("--min-seconds", type=float, default=5.0)
    parser.add_argument("--max-others", type=float, default=0.25,
                        help="re-run a row when other processes used more cores than this")
    parser.add_argument("--rounds", type=int, default=2,
                        help="quiet braid + PyTorch rounds per row; the fastest of each counts")
    parser.add_argument("--attempts", type=int, default=2,
                        help="extra rounds per row, at most, while rounds were loaded")
    parser.add_argument("--retry-wait", type=int, default=20, help="seconds before a re-run")
    parser.add_argument("--json-out", default="", help="also write the results to this file")
    parser.add_argument("--torch-row", default="", help=argparse.SUPPRESS)
    return parser.parse_args()


def main():
    args = parse_args()
    if args.torch_row:
        request = json.loads(args.torch_row)
        run_torch_row(request["row"], request["opts"])
        return 0
    if importlib.util.find_spec("torch") is None:
        print("compare_pytorch.py: PyTorch is not importable by %s; install Debian's "
              "python3-torch (apt-get install python3-torch) or run with a Python that has it. "
              "Nothing was compared." % sys.executable, file=sys.stderr)
        return 2
    if not os.access(args.braid, os.X_OK):
        print("compare_pytorch.py: no braid_bench_training at %s (build it, or pass --braid)"
              % args.braid, file=sys.stderr)
        return 2
    listed = subprocess.run(braid_argv(args, ["--list", "--rows=" + args.rows]),
                            stdout=subprocess.PIPE, text=True)
    if listed.returncode != 0:
        print("compare_pytorch.py: %s --list failed" % args.braid, file=sys.stderr)
        return 1
    listing = json.loads(listed.stdout)
    if not listing["rows"]:
        print("compare_pytorch.py: no row matches --rows %s" % args.rows, file=sys.stderr)
        return 1
    results, settings = [], {}
    for row in listing["rows"]:
        braid, torch_result, report = run_row_pair(args, row)
        settings = report or settings
        results.append((row, braid, torch_result))
    torch_version = next((t.get("torch") for _, _, t in results if t.get("torch")), "?")
    header = ("braid executor=%s threads=%d | PyTorch %s threads=%d | warmup=%d min_iters=%d "
              "min_seconds=%g | hardware threads %d" % (
                  settings.get("executor", "?"), args.threads, torch_version, args.threads,
                  args.warmup, args.min_iters, args.min_seconds, os.cpu_count()))
    print_table(results, header, args.max_others)
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({"header": header, "rows": [
                {"row": r, "braid": b, "torch": t} for r, b, t in results]}, out, indent=1)
    return 0


def summary(result):
    if "error" in result:
        return result["error"]
    return "%.1f img/s %.0f MB" % (result["images_per_second"], result["peak_rss_mb"])


if __name__ == "__main__":
    sys.exit(main())
