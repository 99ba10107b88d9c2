"""How long ``keras-transformer [SUBCOMMAND] --help`` takes, and what it prints on stderr.

Each run starts a fresh interpreter as the console script does (the tree's
entry point: ``keras_transformer.cli.startup:main`` where the tree has it,
``keras_transformer_cli:main`` in the trees that had that launcher, else
``keras_transformer.cli.main:main``), with the source tree of a variant
first on ``PYTHONPATH`` (``--variant LABEL=PATH``: a checkout of an older
commit against a newer one), and records the wall time, the lines written
on stderr, and whether Keras, TensorFlow, JAX or PyTorch were imported.
Variants and subcommands are interleaved (A, B, A, B, ...) so that each sees
the same load; the load average before and after, the CPU and its flags are
recorded.

```bash
git archive 2500de0 | tar -x -C /tmp/kt_before   # before the launcher
git archive 9465498 | tar -x -C /tmp/kt_after
python benchmarks/help_startup.py --runs 3 --variant before=/tmp/kt_before \\
    --variant after=/tmp/kt_after --output benchmarks/results/startup_help_cpu_amd_epyc_avx512.json
```
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from _workers import cpu_name, lscpu_flags

COMMANDS = ("", "train", "translate", "evaluate", "score", "export",
            "average-checkpoints", "convert", "preprocess", "info")  # fmt: skip
FRAMEWORKS = ("keras", "tensorflow", "jax", "torch")

# The console script of the tree on PYTHONPATH; reports on stdout's last line
# which frameworks the process imported.
_RUNNER = """
import json, sys
entry = sys.argv.pop(1)
sys.argv = ["keras-transformer", *sys.argv[1:]]
if entry == "startup":
    from keras_transformer.cli.startup import main
elif entry == "launcher":
    from keras_transformer_cli import main
else:
    from keras_transformer.cli.main import main
try:
    main()
except SystemExit:
    pass
print("\\nIMPORTED " + json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(%r))))
""" % (FRAMEWORKS,)


def _run_once(tree, command):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    # The tree's own entry point (an installed package may provide the other).
    entry = "main"
    if os.path.isdir(os.path.join(tree, "keras_transformer_cli")):
        entry = "launcher"
    elif os.path.isfile(os.path.join(tree, "keras_transformer", "cli", "startup.py")):
        entry = "startup"
    argv = [sys.executable, "-c", _RUNNER, entry, *command.split(), "--help"]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd="/", capture_output=True, text=True)
    seconds = time.perf_counter() - start
    marker = done.stdout.rsplit("IMPORTED ", 1)
    return {
        "seconds": round(seconds, 3),
        "stderr_lines": len(done.stderr.splitlines()),
        "imported": json.loads(marker[1]) if len(marker) == 2 else None,
        "help_printed": "usage: keras-transformer" in done.stdout,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", action="append", required=True, metavar="LABEL=PATH")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    variants = dict(item.split("=", 1) for item in args.variant)
    load_before = os.getloadavg()
    runs = {label: {command or "(none)": [] for command in COMMANDS} for label in variants}
    for _ in range(args.runs):
        for command in COMMANDS:
            for label, tree in variants.items():
                runs[label][command or "(none)"].append(_run_once(tree, command))
    summary = {
        label: {
            command: {
                "median_seconds": statistics.median(r["seconds"] for r in results),
                "max_seconds": max(r["seconds"] for r in results),
                "stderr_lines": max(r["stderr_lines"] for r in results),
                "imported": results[-1]["imported"],
                "help_printed": all(r["help_printed"] for r in results),
            }
            for command, results in by_command.items()
        }
        for label, by_command in runs.items()
    }
    result = {
        "command": "python benchmarks/help_startup.py " + " ".join(sys.argv[1:]),
        "machine": {"cpu": cpu_name(), "cpu_flags": lscpu_flags(("avx", "amx", "fma")),
                    "cores": os.cpu_count(), "python": platform.python_version()},
        "environment": {name: os.environ.get(name) for name in
                        ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL")},
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "variants": variants,
        "summary": summary,
        "runs": runs,
    }
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    for label, by_command in summary.items():
        for command, row in by_command.items():
            print(f"{label:8} {command:20} {row['median_seconds']:6.2f} s  "
                  f"stderr {row['stderr_lines']:2} lines  imported {row['imported']}")


if __name__ == "__main__":
    main()
