"""Runs a benchmark's child process and says how busy the rest of the machine was meanwhile.

Shared by the comparison scripts (compare_pytorch.py, inference_torchvision.py), which run each
measurement in a fresh process so its peak RSS is its own. "others" is the CPU time every other
process used while the child ran (from /proc/stat, less the child's own), in cores: 0 on a quiet
machine; OpenMP teams slow down several-fold when another process holds a core, so the scripts
re-run measurements taken under load.

    out, code, others = run_child([binary, "--json"], env=dict(os.environ, OMP_NUM_THREADS="2"))
"""
import os
import subprocess
import sys
import tempfile
import time


def machine_busy_seconds():
    with open("/proc/stat") as stat:
        fields = [float(v) for v in stat.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run_child(argv, env=None):
    """Runs argv; returns (stdout, exit status, cores used by others). Its stderr is shown only
    when it fails."""
    busy_start, wall_start = machine_busy_seconds(), time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as err:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env, text=True)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            err.seek(0)
            sys.stderr.write(err.read())
    wall = time.monotonic() - wall_start
    others = (machine_busy_seconds() - busy_start - usage.ru_utime - usage.ru_stime) / wall
    return out, child.returncode, max(0.0, others)
