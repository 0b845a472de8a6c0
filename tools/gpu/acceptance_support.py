"""What the acceptance run's steps share (tools/gpu/acceptance.py): where the binaries are, running
a command under the step's time limit, GoogleTest reports, loss curves, and the reports."""
import json
import os
import platform
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ElementTree


class Failed(Exception):
    """A step's check failed; the message says which."""


class Skipped(Exception):
    """A step cannot run here; the message says why."""


class Braid:
    """Where the binaries are: an unpacked package (bin/, tests/, lib/) or a build tree."""

    def __init__(self, home, build):
        self.home = os.path.abspath(home)
        if build:
            build = os.path.abspath(build)
            tops = [os.path.join(build, "tools"), os.path.join(build, "tests")]
            self.lib = build
            self.env_script = None
        else:
            tops = [os.path.join(self.home, "bin"), os.path.join(self.home, "tests")]
            self.lib = os.path.join(self.home, "lib")
            env = os.path.join(self.home, "bin", "braid-env")
            self.env_script = env if os.path.isfile(env) else None
        self.dirs = []
        for top in tops:
            self.dirs.append(top)
            if os.path.isdir(top):
                self.dirs += [os.path.join(top, d) for d in sorted(os.listdir(top))
                              if os.path.isdir(os.path.join(top, d))]

    def find(self, name):
        for d in self.dirs:
            path = os.path.join(d, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
        raise Failed(f"{name} not found under {', '.join(self.dirs)}")

    def libbraid(self):
        names = sorted(os.listdir(self.lib)) if os.path.isdir(self.lib) else []
        for name in names:
            if name.startswith("libbraid.so"):
                return os.path.join(self.lib, name)
        raise Failed(f"libbraid.so not found in {self.lib}")


class Run:
    """One acceptance run: its options, its log, the running step's deadline, the results."""

    def __init__(self, args, braid):
        self.args = args
        self.braid = braid
        self.cuda = args.device == "cuda"
        self.out = os.path.abspath(args.out)
        os.makedirs(self.out, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="work.", dir=self.out)
        self.log = open(os.path.join(self.out, "log.txt"), "w", buffering=1)
        self.deadline = None
        self.results = []

    def device(self, index=0):
        return f"{self.args.device}:{index}"

    def note(self, text):
        self.log.write(text + "\n")

    def seconds_left(self):
        return self.deadline - time.monotonic()

    def command(self, argv, timeout=None, env=None, check=True, wrap=True):
        """Runs argv (through bin/braid-env when the package has one) and returns its output.
        Raises Failed on a non-zero exit (with check) or when the step's time runs out; the
        command's whole process group is killed then, so nothing it started stays on the GPU."""
        if wrap and self.braid.env_script:
            python = ["--python", self.args.python] if self.args.python else []
            argv = [self.braid.env_script, "--quiet"] + python + ["--"] + argv
        limit = self.seconds_left() if timeout is None else min(timeout, self.seconds_left())
        if limit <= 1:
            raise Failed("out of time before: " + " ".join(argv[-4:]))
        full_env = dict(os.environ)
        full_env.update(env or {})
        shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        self.note(f"\n$ {shown + ' ' if shown else ''}{' '.join(argv)}")
        start = time.monotonic()
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   env=full_env, text=True, errors="replace",
                                   start_new_session=True)
        try:
            output, _ = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            self.note(output + f"\n[killed after {limit:.0f} s]")
            raise Failed(f"timed out after {limit:.0f} s: " + " ".join(argv[-4:]))
        self.note(output + f"[exit {process.returncode}, {time.monotonic() - start:.1f} s]")
        if check and process.returncode != 0:
            tail = output.strip().splitlines()[-3:]
            raise Failed(f"exit {process.returncode}: {os.path.basename(argv[0])} ...: "
                         + " | ".join(tail))
        return output


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


NVIDIA_LIBRARIES = ("libcuda.", "libcudart", "libcublas", "libcurand", "libcudnn", "libnccl",
                    "libnvrtc", "libnvJitLink", "libcusparse", "libcufft")


def is_nvidia_library(name):
    return name.startswith(NVIDIA_LIBRARIES)


def gtest(run, binary, pattern, env, tag):
    """Runs a GoogleTest binary's tests matching `pattern`; their counts. On a GPU machine a
    skipped test is a failure (every CUDA test must run there) and so is a filter that matched
    nothing."""
    xml = os.path.join(run.work, f"{tag}.xml")
    run.command([run.braid.find(binary), f"--gtest_filter={pattern}",
                 f"--gtest_output=xml:{xml}"], env=env, check=False)
    counts = read_gtest_xml(xml)
    if run.cuda:
        counts["failures"] += [f"{name} (skipped on a GPU machine: {why})"
                               for name, why in counts["skipped_tests"]]
        if counts["tests"] == 0:
            counts["failures"].append(f"{binary} --gtest_filter={pattern} matched no test")
    return counts


def read_gtest_xml(path):
    counts = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "failures": [],
              "skipped_tests": []}
    if not os.path.exists(path):
        counts["failed"] = 1
        counts["failures"].append(f"no report {os.path.basename(path)} (the binary crashed?)")
        return counts
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        counts["tests"] += 1
        skipped = case.find("skipped")
        if case.find("failure") is not None:
            counts["failed"] += 1
            counts["failures"].append(name)
        elif case.get("result") == "skipped" or skipped is not None:
            counts["skipped"] += 1
            message = (skipped.get("message") or "") if skipped is not None else ""
            lines = message.strip().splitlines()
            counts["skipped_tests"].append((name, lines[-1] if lines else ""))
        else:
            counts["passed"] += 1
    return counts


def add_counts(*parts):
    total = {k: sum(p[k] for p in parts) for k in ("tests", "passed", "failed", "skipped")}
    total["failures"] = [f for p in parts for f in p["failures"]]
    total["skipped_tests"] = [s for p in parts for s in p["skipped_tests"]]
    return total


def losses(summary):
    """iteration -> loss of a braid_train --summary_json file's progress reports."""
    return {p["iteration"]: p["loss"] for p in summary["progress"]}


def rel_diff(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def json_in_text(text):
    """The JSON object from the first '{' to the last '}' of a command's output."""
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                pass
    return {"error": text.strip().splitlines()[-1] if text.strip() else "no output"}


def mib(n):
    return f"{n / 2**20:.1f} MiB" if isinstance(n, (int, float)) else "-"


def fmt(value, spec=".1f"):
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def write_reports(run, started):
    report = {"device": run.args.device, "started": started,
              "seconds": round(sum(r["seconds"] for r in run.results), 1),
              "braid": run.braid.home, "steps": run.results}
    with open(os.path.join(run.out, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    lines = [f"# braid GPU acceptance ({run.args.device}), {started}", "",
             f"Total {report['seconds']} s. Log: log.txt; every figure: report.json.", "",
             "| step | status | time (s) | limit (s) | result |", "|---|---|---|---|---|"]
    for r in run.results:
        lines.append(f"| {r['step']} | {r['status']} | {r['seconds']} | {r['limit_s']:.0f} | "
                     f"{r['summary'].replace('|', '/')} |")
    for r in run.results:
        if r["step"] == "throughput" and r.get("figures"):
            lines += throughput_table(r["figures"]["rows"])
    with open(os.path.join(run.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def throughput_table(rows):
    lines = ["", "## Throughput: ResNet-50, images/s and peak device memory (timed iterations)", "",
             "| mode | batch | TF32 | braid img/s | PyTorch img/s | speed ratio | braid MiB | "
             "PyTorch MiB | memory ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        b, p = row["braid"], row.get("pytorch") or {}
        lines.append(
            f"| {row['mode']} | {row['batch']} | {'on' if row['tf32'] else 'off'} | "
            f"{fmt(b.get('images_per_second'))} | {fmt(p.get('images_per_second'))} | "
            f"{fmt(row.get('speed_ratio'), '.2f')} | {mib(b.get('peak_reserved_bytes'))} | "
            f"{mib(p.get('peak_reserved_bytes'))} | {fmt(row.get('memory_ratio'), '.2f')} |")
    return lines
