"""One backend per process: a benchmark runs itself with ``--worker``."""

import gzip
import os
import platform
import shlex
import subprocess
import sys

# Environment variables that change a backend's speed (or its kernels); the
# recorded command names those that are set, so that it reproduces the figure.
SPEED_ENV = ("XLA_FLAGS", "TF_NUM_INTEROP_THREADS", "TF_NUM_INTRAOP_THREADS",
             "TF_ENABLE_ONEDNN_OPTS", "JAX_DEFAULT_PRNG_IMPL")


def recorded_command(script, argv=None):
    """``[ENV=value ...] python benchmarks/<script> <args>`` for a result file."""
    env_prefix = "".join(
        f"{name}={shlex.quote(os.environ[name])} " for name in SPEED_ENV
        if name in os.environ)
    args = sys.argv[1:] if argv is None else argv
    return (f"{env_prefix}python benchmarks/{os.path.basename(script)} "
            + " ".join(args))


def run_worker(script, backend, worker_args, log_level="2"):
    """Runs ``script --worker *worker_args`` under ``KERAS_BACKEND=backend``.

    Keras picks its backend once per process, so each backend gets its own.
    Returns the worker's stdout; exits with the tail of its stderr when it
    fails.
    """
    command = [sys.executable, os.path.abspath(script), "--worker", *worker_args]
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL=log_level)
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{backend} worker failed:\n{out.stderr[-3000:]}")
    return out.stdout


def cpu_name():
    """The CPU's model name (``/proc/cpuinfo``), for the result files."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_description():
    """``(model name, flags of interest)`` from /proc/cpuinfo."""
    model, flags = platform.processor() or "cpu", []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
                    flags = [f for f in line.split(":", 1)[1].split() if f in wanted]
                    break
    except OSError:
        pass
    return model, flags


def lscpu_flags(prefixes):
    """The sorted flags of ``lscpu`` that start with one of ``prefixes``."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return []
    for line in text.splitlines():
        if line.startswith("Flags:"):
            return sorted(f for f in line.split(":", 1)[1].split() if f.startswith(prefixes))
    return []


def read_first_lines(path, limit):
    """The first ``limit`` lines of the gzip text file ``path``."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(limit), f)]


def batches(items, size):
    """``items`` in consecutive lists of ``size`` (the last may be shorter)."""
    return [items[i:i + size] for i in range(0, len(items), size)]
