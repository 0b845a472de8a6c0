#!/usr/bin/python3
"""braid vs PyTorch vs onnxruntime: inference latency, images/s and peak memory of torchvision models.

For each model (tools/onnx/torchvision_models.py: ResNet-18/50, DenseNet-121, GoogLeNet,
Inception-v3, MobileNet-V2, SqueezeNet 1.1 with random, BN-calibrated weights) and each batch,
the model is exported to ONNX with that batch's fixed input shape (--exporter: dynamo, PyTorch
2.x's default at opset 18 or newer, or torchscript, the legacy one at opset 13) and saved as a
PyTorch module, then measured by each framework in a fresh process of its own, in turns:
  braid        braid_bench_inference MODEL.onnx --json (import, init net, blocked layouts, the
               planned arena; tools/bench/bench_inference.cc);
  PyTorch      torch.load of the saved module, eval mode under torch.inference_mode;
  onnxruntime  an InferenceSession of the same .onnx (all graph optimizations, sequential
               execution, intra-op threads = --threads), when the Python running this script can
               import onnxruntime; otherwise its column says "missing".
Each child warms up (--warmup iterations), then times iterations until --min-iters and
--min-seconds are both reached, on one fixed uniform [-1, 1) input, and reports the median and
90th-percentile latency and batch / median as images/s.

Threads: --threads (default 2) is OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS in
every child, torch.set_num_threads in PyTorch's, intra_op_num_threads (inter-op 1) in
onnxruntime's; braid_bench_inference runs the simple executor, one op at a time with --threads
OpenMP threads per op (faster than the dag executor on these chain-like nets on 2 cores).

Peak memory. Each child reads its resident set size once its framework's libraries are imported
but before the model is loaded ("before"), and its peak resident size (VmHWM) at the end
("total"). The memory ratio and its target use total: the process's peak memory, what a server
running the model needs (a Python interpreter with torch starts at ~245 MB; braid's binary, which
loads cuBLAS only when a GPU kernel needs it, at ~18 MB). "model MB" = total - before, what loading
and running the model added (parameters, activations, caches, primitives, allocator slack), is
shown beside it with its own ratio. braid's arena (all planned
activations) is shown beside the planner's lower bound for it.

Load: the "load" column is the cores' worth of CPU other processes used during the row's
measurements (0 = quiet). A row measured under more than --max-others cores is measured again (up
to --attempts times, --retry-wait seconds apart) and each framework keeps its fastest run and its
largest peak; rows that stayed loaded are marked LOADED.

Targets (braid vs PyTorch, every row): images/s >= 1.3x and peak memory (total) <= 0.5x. The summary lists
the rows that miss them and those where onnxruntime is ahead of braid, by how much.

A manual tool, not part of ctest; a full run takes ~10 minutes on 2 cores. Needs PyTorch and
torchvision (Debian's python3-torch, python3-torchvision); onnxruntime optional:

  /usr/bin/python3 tools/bench/inference_torchvision.py
  /work/venv-bench/bin/python tools/bench/inference_torchvision.py   # a venv with onnxruntime
  ... --models resnet18,mobilenet_v2 --batches 1 --min-seconds 3 --braid-bench PATH
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "onnx"))

from child_process import run_child  # noqa: E402

SPEED_TARGET = 1.3  # braid images/s / PyTorch images/s
MEMORY_TARGET = 0.5  # braid peak RSS / PyTorch peak RSS
FRAMEWORKS = ("braid", "torch", "onnxruntime")
MB = 1024.0 * 1024.0


# ----------------------------------------------------------------------------------------------
# The children: one framework, one model, one batch, in a fresh process.

def proc_status_bytes(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def time_iterations(step, opts):
    for _ in range(opts["warmup"]):
        step()
    ms = []
    while len(ms) < opts["max_iters"] and (
            len(ms) < opts["min_iters"] or sum(ms) < opts["min_seconds"] * 1e3):
        start = time.perf_counter()
        step()
        ms.append((time.perf_counter() - start) * 1e3)
    return ms


def report(ms, batch, rss_before, extra):
    ordered = sorted(ms)
    median = statistics.median(ordered)
    result = {"iterations": len(ms), "median_ms": median,
              "p90_ms": ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))],
              "images_per_second": batch / (median / 1e3), "rss_before_load": rss_before,
              "peak_rss": proc_status_bytes("VmHWM:")}
    result.update(extra)
    print("result " + json.dumps(result), flush=True)


def run_torch_child(request):
    import numpy as np
    import torch
    import torchvision  # noqa: F401  (the saved module's classes)
    torch.set_num_threads(request["opts"]["threads"])
    data = np.random.RandomState(0).uniform(-1, 1, request["shape"]).astype(np.float32)
    rss_before = proc_status_bytes("VmRSS:")
    # A whole saved module (PyTorch 2.x loads weights only unless told otherwise).
    model = torch.load(request["module"], weights_only=False).eval()
    x = torch.from_numpy(data)

    def step():
        with torch.inference_mode():
            model(x)
    ms = time_iterations(step, request["opts"])
    report(ms, request["shape"][0], rss_before,
           {"version": torch.__version__, "threads": torch.get_num_threads()})


def run_onnxruntime_child(request):
    import numpy as np
    import onnxruntime
    data = np.random.RandomState(0).uniform(-1, 1, request["shape"]).astype(np.float32)
    rss_before = proc_status_bytes("VmRSS:")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = request["opts"]["threads"]
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(request["onnx"], options,
                                           providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: data}
    ms = time_iterations(lambda: session.run(None, feed), request["opts"])
    report(ms, request["shape"][0], rss_before, {"version": onnxruntime.__version__})


# ----------------------------------------------------------------------------------------------
# The parent: exports the models, runs the children, prints the table.

def child_env(threads):
    value = str(threads)
    return dict(os.environ, OMP_NUM_THREADS=value, MKL_NUM_THREADS=value,
                OPENBLAS_NUM_THREADS=value)


def parse_result(out, code, others, who):
    lines = [line for line in out.splitlines() if line.startswith("result ")]
    if code != 0 or not lines:
        return {"error": "%s exited with %d" % (who, code)}
    result = json.loads(lines[-1][len("result "):])
    result["others_cores"] = others
    return result


def measure(framework, case, args):
    opts = {"threads": args.threads, "warmup": args.warmup, "min_iters": args.min_iters,
            "max_iters": args.max_iters, "min_seconds": args.min_seconds}
    if framework == "braid":
        argv = [args.braid_bench, case["onnx"], "--json", "--threads=%d" % args.threads,
                "--warmup=%d" % args.warmup, "--min_iters=%d" % args.min_iters,
                "--max_iters=%d" % args.max_iters, "--min_seconds=%g" % args.min_seconds]
        return parse_result(*run_child(argv, child_env(args.threads)), "braid_bench_inference")
    request = dict(case, opts=opts)
    argv = [sys.executable, os.path.abspath(__file__), "--child", framework, json.dumps(request)]
    return parse_result(*run_child(argv, child_env(args.threads)), framework + " child")


def best_of(results):
    """The fastest run, with the largest peak and model memory among the runs."""
    ok = [r for r in results if "images_per_second" in r]
    if not ok:
        return results[-1]
    best = dict(max(ok, key=lambda r: r["images_per_second"]))
    best["peak_rss"] = max(r["peak_rss"] for r in ok)
    best["model_bytes"] = max(r["peak_rss"] - r["rss_before_load"] for r in ok)
    best["others_cores"] = min(r["others_cores"] for r in ok)
    return best


def measure_row(case, frameworks, args):
    """Each framework's best of the row's runs (braid, PyTorch, onnxruntime in turns)."""
    runs = {f: [] for f in frameworks}
    for attempt in range(args.attempts + 1):
        load = 0.0
        for framework in frameworks:
            result = measure(framework, case, args)
            runs[framework].append(result)
            load = max(load, result.get("others_cores", 0.0))
            print("  %-14s b%-3d %-12s %s" % (case["model"], case["shape"][0], framework,
                                                summary(result)), file=sys.stderr, flush=True)
        if load <= args.max_others or attempt == args.attempts:
            break
        print("  background load %.2f cores > %.2f: again in %d s" % (
            load, args.max_others, args.retry_wait), file=sys.stderr, flush=True)
        time.sleep(args.retry_wait)
    return {f: best_of(runs[f]) for f in frameworks}


def summary(result):
    if "error" in result:
        return result["error"]
    return "%.2f ms %.1f img/s %.0f MB (+%.0f) others %.2f" % (
        result["median_ms"], result["images_per_second"], result["peak_rss"] / MB,
        (result["peak_rss"] - result["rss_before_load"]) / MB, result["others_cores"])


def export_cases(name, batches, work, seed, exporter):
    """Per batch: the .onnx, the saved module and the input shape."""
    import torch
    from torchvision_models import build_model, export_onnx
    model, size = build_model(name, seed)
    module = os.path.join(work, name + ".pt")
    torch.save(model, module)
    cases = []
    for batch in batches:
        shape = [batch, 3, size, size]
        onnx_path = os.path.join(work, "%s_b%d.onnx" % (name, batch))
        export_onnx(model, torch.zeros(shape), onnx_path, exporter)
        cases.append({"model": name, "shape": shape, "onnx": onnx_path, "module": module})
    return cases


def ratio(a, b):
    return a / b if b else float("nan")


def print_row(case, results, max_others):
    braid = results["braid"]
    head = "%-13s %5d" % (case["model"], case["shape"][0])
    load = max(r.get("others_cores", 0.0) for r in results.values())
    for framework in FRAMEWORKS:
        r = results.get(framework, {"error": "missing"})
        if "error" in r:
            print("%s %-11s %s" % (head, framework, r["error"]))
            head = " " * len(head)
            continue
        line = "%s %-11s %8.2f %8.2f %8.1f %8.0f %8.0f" % (
            head, framework, r["median_ms"], r["p90_ms"], r["images_per_second"],
            r["model_bytes"] / MB, r["peak_rss"] / MB)
        if framework != "braid" and "error" not in braid:
            line += "   braid/this: speed %5.2f  memory %5.2f  model MB %5.2f" % (
                ratio(braid["images_per_second"], r["images_per_second"]),
                ratio(braid["peak_rss"], r["peak_rss"]),
                ratio(braid["model_bytes"], r["model_bytes"]))
        elif framework == "braid" and "error" not in braid:
            line += "   arena %.1f MB, bound %.1f MB (x%.3f), params %.1f MB" % (
                braid["arena_bytes"] / MB, braid["lower_bound_bytes"] / MB,
                ratio(braid["arena_bytes"], braid["lower_bound_bytes"]),
                braid["param_bytes"] / MB)
        print(line)
        head = " " * len(head)
    print("%s load %.2f cores%s" % (" " * len(head), load, "  LOADED" if load > max_others else ""))


def print_summary(rows):
    misses, ort_ahead, met = [], [], 0
    for case, results in rows:
        braid, torch_r = results["braid"], results["torch"]
        ort = results.get("onnxruntime", {"error": "missing"})
        label = "%s b%d" % (case["model"], case["shape"][0])
        if "error" in braid or "error" in torch_r:
            misses.append("%s: not measured (%s)" % (label, braid.get("error") or torch_r["error"]))
            continue
        speed = ratio(braid["images_per_second"], torch_r["images_per_second"])
        memory = ratio(braid["peak_rss"], torch_r["peak_rss"])
        failed = []
        if speed < SPEED_TARGET:
            failed.append("images/s %.2fx PyTorch's (target >= %.1fx)" % (speed, SPEED_TARGET))
        if memory > MEMORY_TARGET:
            failed.append("peak memory %.2fx PyTorch's (target <= %.1fx)" % (memory, MEMORY_TARGET))
        if failed:
            misses.append("%s: %s" % (label, "; ".join(failed)))
        else:
            met += 1
        if "error" not in ort:
            faster = ratio(ort["images_per_second"], braid["images_per_second"])
            smaller = ratio(braid["peak_rss"], ort["peak_rss"])
            ahead = []
            if faster > 1:
                ahead.append("%.2fx braid's images/s" % faster)
            if smaller > 1:
                ahead.append("%.2fx less peak memory" % smaller)
            if ahead:
                ort_ahead.append("%s: %s" % (label, ", ".join(ahead)))
    print("\nTargets (vs PyTorch: images/s >= %.1fx, peak memory <= %.1fx): met on %d of %d rows" % (
        SPEED_TARGET, MEMORY_TARGET, met, len(rows)))
    for line in misses:
        print("  missed  " + line)
    if any("onnxruntime" in results for _, results in rows):
        print("onnxruntime ahead of braid on %d rows" % len(ort_ahead))
        for line in ort_ahead:
            print("  " + line)


def print_table(rows, args, versions):
    print("\nbraid_bench_inference (simple executor) | PyTorch %s (%s exporter) | onnxruntime %s | "
          "threads %d | min %d iterations and %g s after %d warm-up | %d hardware threads, load "
          "average %s" % (
              versions.get("torch", "?"), args.exporter, versions.get("onnxruntime", "missing"),
              args.threads,
              args.min_iters, args.min_seconds, args.warmup, os.cpu_count(),
              " ".join("%.2f" % v for v in os.getloadavg())))
    print("%-13s %5s %-11s %8s %8s %8s %8s %8s" % ("model", "batch", "framework", "med ms",
                                                   "p90 ms", "img/s", "model MB", "total MB"))
    for case, results in rows:
        print_row(case, results, args.max_others)
    print("model MB: peak RSS - RSS before the model was loaded; total MB: peak RSS. speed: braid "
          "images/s / this one's; memory: braid total MB / this one's; model MB: braid's / this "
          "one's.")
    print_summary(rows)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_bench = os.path.normpath(os.path.join(HERE, "..", "..", "build", "release", "tools",
                                                  "bench", "braid_bench_inference"))
    parser.add_argument("--braid-bench", default=default_bench,
                        help="the braid_bench_inference binary (default: %(default)s)")
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--batches", default="1,8", help="comma-separated batch sizes")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--min-iters", type=int, default=10)
    parser.add_argument("--max-iters", type=int, default=1000)
    parser.add_argument("--min-seconds", type=float, default=4.0)
    parser.add_argument("--max-others", type=float, default=0.3,
                        help="measure a row again when other processes used more cores than this")
    parser.add_argument("--attempts", type=int, default=2, help="extra runs of a loaded row")
    parser.add_argument("--retry-wait", type=int, default=15, help="seconds before a re-run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exporter", choices=("dynamo", "torchscript"), default=None,
                        help="torch.onnx's exporter (tools/onnx/torchvision_models.py; default: "
                        "dynamo where PyTorch has it)")
    parser.add_argument("--work", default="", help="keep the .onnx and .pt files here")
    parser.add_argument("--json-out", default="", help="also write the results to this file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    return parser.parse_args()


def run_all(args, names, batches, frameworks, work):
    rows, versions = [], {}
    for name in names:
        for case in export_cases(name, batches, work, args.seed, args.exporter):
            results = measure_row(case, frameworks, args)
            for framework in ("torch", "onnxruntime"):
                if "version" in results.get(framework, {}):
                    versions[framework] = results[framework]["version"]
            rows.append((case, results))
    return rows, versions


def main():
    args = parse_args()
    if args.child:
        request = json.loads(args.child[1])
        {"torch": run_torch_child, "onnxruntime": run_onnxruntime_child}[args.child[0]](request)
        return 0
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("torchvision") is None:
        print("inference_torchvision.py: %s cannot import torch and torchvision (Debian: "
              "python3-torch, python3-torchvision); nothing was measured." % sys.executable,
              file=sys.stderr)
        return 2
    if not os.access(args.braid_bench, os.X_OK):
        print("inference_torchvision.py: no braid_bench_inference at %s (build it, or pass "
              "--braid-bench)" % args.braid_bench, file=sys.stderr)
        return 2
    from torchvision_models import MODELS, default_exporter, parse_model_names
    args.exporter = args.exporter or default_exporter()
    try:
        names = parse_model_names(args.models or ",".join(MODELS))
        batches = [int(b) for b in args.batches.split(",") if b]
    except ValueError as error:
        print("inference_torchvision.py: %s" % error, file=sys.stderr)
        return 2
    frameworks = ["braid", "torch"]
    if importlib.util.find_spec("onnxruntime") is not None:
        frameworks.append("onnxruntime")
    else:
        print("onnxruntime: missing (not importable by %s; e.g. pip install onnxruntime in a venv "
              "with --system-site-packages and run this script with its python)" % sys.executable)
    with tempfile.TemporaryDirectory() as temp:
        work = args.work or temp
        os.makedirs(work, exist_ok=True)
        rows, versions = run_all(args, names, batches, frameworks, work)
    print_table(rows, args, versions)
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump([{"case": c, "results": r} for c, r in rows], out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
