"""One backend per process: a benchmark runs itself with ``--worker``."""

import os
import subprocess
import sys


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
