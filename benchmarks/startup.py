"""Start-up of ``keras-transformer translate``: from the command to its answer.

Times ``echo SENTENCE | keras-transformer translate --model-dir DIR`` (the
whole process: interpreter, imports, model load, compilation, one
translation) several times for each variant, interleaved (A, B, A, B, ...)
so that every variant sees the same load, and records each run's wall time,
whether the process imported TensorFlow, the load average before and after,
and the machine.

A variant (``--variant LABEL=PATH,tensorflow|no-tensorflow,cache|no-cache``)
is a source tree of the package (put first on ``PYTHONPATH``: a checkout of
an older commit against the working tree), run with TensorFlow installed or
in a process where ``tensorflow`` and ``tensorflow_text`` cannot be imported
(as on a machine that has only JAX or PyTorch), with the on-disk compilation
cache of ``keras-transformer`` (``KERAS_TRANSFORMER_COMPILATION_CACHE``: an
empty directory per variant, so its first run compiles and the next ones
read the cache; older trees ignore it), with the cache that ``keras-transformer train``
filled (``after-train``, ``--train-cache DIR``: used in place, since a copy
is not read back as the same entries; each run records whether it added an
entry, and when none does, every run is the first ``translate`` after
``train``), or without it.

```bash
KERAS_BACKEND=jax KERAS_TRANSFORMER_COMPILATION_CACHE=/tmp/train_cache \\
    keras-transformer train   # writes runs/numbers, the default model
python benchmarks/startup.py --model-dir runs/numbers --runs 5 \\
    --variant before=/path/to/old/checkout,tensorflow,no-cache \\
    --variant after=.,tensorflow,after-train --variant after=.,no-tensorflow,after-train \\
    --train-cache /tmp/train_cache --output benchmarks/results/startup_translate_jax.json
```
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from _workers import cpu_name

# The command line as `keras-transformer` runs it, in a process that can
# hide TensorFlow first; reports on stderr whether TensorFlow was imported.
_RUNNER = """
import json, sys
if sys.argv[1] == "1":
    for name in ("tensorflow", "tensorflow_text"):
        sys.modules[name] = None  # as if not installed
sys.argv = ["keras-transformer", *sys.argv[2:]]
from keras_transformer.cli.main import main
try:
    code = main()
finally:
    imported = sys.modules.get("tensorflow") is not None
    sys.stderr.write("\\nSTARTUP " + json.dumps({"tensorflow_imported": imported}) + "\\n")
sys.exit(code)
"""


def _commit(path):
    done = subprocess.run(
        ["git", "-C", path, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or None


def _run_once(variant, args):
    entries_before = len(os.listdir(variant["cache_dir"])) if variant["cache_dir"] and os.path.isdir(variant["cache_dir"]) else None
    env = dict(
        os.environ, KERAS_BACKEND=args.backend, PYTHONPATH=os.path.abspath(variant["tree"]),
        KERAS_TRANSFORMER_COMPILATION_CACHE=variant["cache_dir"] or "0",
    )
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    command = [
        sys.executable, "-c", _RUNNER, "1" if variant["without_tensorflow"] else "0",
        "translate", "--model-dir", args.model_dir,
    ]
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        command, input=args.sentence + "\n", env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    report = {}
    for line in done.stderr.splitlines():
        if line.startswith("STARTUP "):
            report = json.loads(line[len("STARTUP "):])
    if done.returncode != 0:
        raise SystemExit(f"translate failed in {variant['variant']}:\n{done.stderr[-3000:]}")
    return {
        "seconds": round(seconds, 3),
        "translation": done.stdout.strip().splitlines()[-1],
        "tensorflow_imported": report.get("tensorflow_imported"),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "cache_entries_added": (
            None if entries_before is None else len(os.listdir(variant["cache_dir"])) - entries_before
        ),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default="runs/numbers")
    parser.add_argument("--sentence", default="three hundred forty-five")
    parser.add_argument("--backend", default="jax")
    parser.add_argument("--runs", type=int, default=5, help="runs per variant")
    parser.add_argument(
        "--variant", action="append", default=[],
        metavar="LABEL=PATH,tensorflow|no-tensorflow,cache|no-cache|after-train",
        help="a variant (repeatable); default: this tree, tensorflow, no-cache",
    )
    parser.add_argument(
        "--train-cache", default=None,
        help="for after-train variants: the compilation cache that train filled",
    )
    parser.add_argument("--note", default="", help="free text stored with the result")
    parser.add_argument("--output", default=None, help="JSON result file")
    args = parser.parse_args()
    if not os.path.isdir(args.model_dir):
        parser.error(f"--model-dir {args.model_dir!r} is not a directory "
                     "(run `keras-transformer train` first)")
    cache_root = tempfile.mkdtemp(prefix="startup_cache_")
    variants = []
    for spec in args.variant or ["this=.,tensorflow,no-cache"]:
        label_path, tensorflow, cache = spec.split(",")
        label, path = label_path.split("=", 1)
        if tensorflow not in ("tensorflow", "no-tensorflow") or cache not in (
            "cache", "no-cache", "after-train"
        ):
            parser.error(f"--variant {spec!r}: expected LABEL=PATH,tensorflow|no-tensorflow,"
                         "cache|no-cache|after-train")
        if cache == "after-train" and not (args.train_cache and os.path.isdir(args.train_cache)):
            parser.error(f"--variant {spec!r} needs --train-cache DIR (a directory)")
        name = f"{label}/{tensorflow}/{cache}"
        variants.append({
            "variant": name, "tree": path, "commit": _commit(path),
            "without_tensorflow": tensorflow == "no-tensorflow",
            "cache_mode": cache,
            "cache_dir": (
                None if cache == "no-cache" else args.train_cache if cache == "after-train"
                else os.path.join(cache_root, str(len(variants)))
            ),
            "runs": [],
        })
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = os.getloadavg()
    for _ in range(args.runs):
        for variant in variants:
            run = _run_once(variant, args)
            variant["runs"].append(run)
            print(f"{variant['variant']:34s} {run['seconds']:7.2f} s  "
                  f"load {run['load_before']:.2f}  tensorflow imported: "
                  f"{run['tensorflow_imported']}", flush=True)
    for variant in variants:
        seconds = [run["seconds"] for run in variant["runs"]]
        if variant["cache_mode"] == "after-train":
            variant["cache_dir"] = "(--train-cache, filled by keras-transformer train)"
        elif variant["cache_dir"]:  # the first run filled the cache
            variant["first_run_seconds"] = seconds[0]
            seconds = seconds[1:] or seconds
            variant["median_of"] = "runs 2 to N (the cache filled by run 1)"
            variant["cache_dir"] = "(an empty temporary directory at the start)"
        variant["median_seconds"] = round(statistics.median(seconds), 3)
        variant["min_seconds"] = round(min(seconds), 3)
        variant["max_seconds"] = round(max(seconds), 3)
    result = {
        "command": "echo '{}' | keras-transformer translate --model-dir {}  "
                   "(KERAS_BACKEND={})".format(args.sentence, args.model_dir, args.backend),
        "benchmark": "python " + " ".join([os.path.relpath(__file__)] + sys.argv[1:]),
        "started_utc": started,
        "machine": {
            "cpu": cpu_name(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
        },
        "load_average_1_5_15_before": [round(x, 2) for x in load_start],
        "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        "note": args.note,
        "variants": variants,
    }
    print()
    for variant in variants:
        first = variant.get("first_run_seconds")
        print(f"{variant['variant']:34s} median {variant['median_seconds']:.2f} s "
              f"(min {variant['min_seconds']:.2f}, max {variant['max_seconds']:.2f})"
              + (f"; first run, empty cache: {first:.2f} s" if first is not None else ""))
    if args.output:
        with open(args.output, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"-> {args.output}")


if __name__ == "__main__":
    main()
