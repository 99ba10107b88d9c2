#!/usr/bin/env python
"""Time the README's first command: `keras-transformer train` on the default task.

Runs ``keras-transformer train --backend B --output-dir DIR`` (the embedded
number-words task: English number words -> German, held-out test of 1,000
numbers) once per requested backend, in a fresh process, and records the
wall-clock time of the whole command (vocabulary, training, evaluation) and
the exact-match score it reports in ``DIR/results.json``.

Writes ``benchmarks/results/default_task_<backend>.json`` (one per backend)
so that the README's figure has a file behind it.

Example::

    python benchmarks/default_task.py --backends tensorflow,jax,torch
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def run(backend, output_dir, extra):
    command = [sys.executable, "-m", "keras_transformer", "train", "--backend", backend,
               "--output-dir", output_dir, *extra]
    load_before = load_average()
    start = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(
            f"`{' '.join(command)}` failed (exit {completed.returncode}):\n"
            + completed.stderr[-3000:]
        )
    with open(os.path.join(output_dir, "results.json")) as f:
        results = json.load(f)
    return {
        "what": "keras-transformer train on the default number-words task",
        "command": "keras-transformer train --backend " + " ".join([backend, *extra]),
        "backend": backend,
        "wall_seconds": round(seconds, 1),
        "results": results,
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="tensorflow,jax,torch")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    parser.add_argument("extra", nargs="*", help="more `train` arguments (after --)")
    args = parser.parse_args(argv)
    for backend in args.backends.split(","):
        work = tempfile.mkdtemp(prefix=f"default_task_{backend}_")
        try:
            result = run(backend, os.path.join(work, "run"), args.extra)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        path = os.path.join(args.output_dir, f"default_task_{backend}.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        evaluation = result["results"].get("evaluation", result["results"])
        print(f"{backend}: {result['wall_seconds']} s, {json.dumps(evaluation)[:200]} -> {path}")


if __name__ == "__main__":
    main()
