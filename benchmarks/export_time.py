#!/usr/bin/env python
"""Times the SavedModel export and measures what it writes.

Each repeat runs ``export_saved_model`` in a fresh process under the
TensorFlow backend (so every repeat traces every signature, as a user's
export does), then loads the SavedModel in a fresh TensorFlow-only process
and times the load and the first ``serving_default`` request (what TF
Serving pays when it loads a version). Reported: the export's wall time,
the size of ``saved_model.pb`` (the graphs) and of ``variables/``, the load
and first-request times; minimum and median over the repeats.

    python benchmarks/export_time.py --model-dir tests/fixtures/numbers_preset \\
        --repeats 3 --tag numbers_preset

``--repo`` points at another checkout of the package (its code is
imported instead of this one's), to compare two versions with the same
script on the same machine.

Writes ``benchmarks/results/export_time_<tag>.{md,json}``.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _workers import cpu_name, recorded_command

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

EXPORT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from keras_transformer import export_saved_model
start = time.perf_counter()
export_saved_model(sys.argv[2], sys.argv[3], version=1, beam_size=int(sys.argv[4]))
print(time.perf_counter() - start)
"""

SERVE = """
import sys, time
import tensorflow as tf
import tensorflow_text  # the SentencePiece ops of the graph
start = time.perf_counter()
loaded = tf.saved_model.load(sys.argv[1])
loaded_at = time.perf_counter()
loaded.signatures["serving_default"](sentences=tf.constant(["twenty-one", "seven"]))
print(loaded_at - start, time.perf_counter() - loaded_at)
"""


def _run(code, *args, backend=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("KERAS_BACKEND", None)
    if backend:
        env["KERAS_BACKEND"] = backend
    out = subprocess.run([sys.executable, "-c", code, *args], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return [float(x) for x in out.stdout.split()[-2:]] if code is SERVE else float(
        out.stdout.split()[-1])


def _size(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=os.path.join(REPO, "tests", "fixtures",
                                                            "numbers_preset"))
    parser.add_argument("--repo", default=REPO, help="the checkout whose package is timed")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--note", default="", help="a line for the result file (load, ...)")
    args = parser.parse_args()

    rows = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            seconds = _run(EXPORT, os.path.abspath(args.repo), args.model_dir, tmp,
                           str(args.beam_size), backend="tensorflow")
            version = os.path.join(tmp, "1")
            load, first = _run(SERVE, version)
            rows.append({
                "export_s": seconds,
                "saved_model_pb_bytes": _size(os.path.join(version, "saved_model.pb")),
                "variables_bytes": _size(os.path.join(version, "variables")),
                "load_s": load,
                "first_request_s": first,
            })
    commit = subprocess.run(["git", "-C", args.repo, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    summary = {key: {"min": min(r[key] for r in rows),
                     "median": statistics.median(r[key] for r in rows)}
               for key in rows[0]}
    result = {
        "command": recorded_command(__file__),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "load_average_before_last_repeat": os.getloadavg(),
        "commit": commit,
        "model_dir": args.model_dir,
        "beam_size": args.beam_size,
        "note": args.note,
        "repeats": rows,
        "summary": summary,
    }
    out = os.path.join(HERE, "results", f"export_time_{args.tag}")
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [
        f"# SavedModel export: {args.tag}",
        "",
        f"`{result['command']}`",
        "",
        f"{result['date']}, {result['cpu']} ({result['cpu_count']} cores), commit "
        f"{commit}, model {os.path.relpath(args.model_dir, REPO)}, beam {args.beam_size}. "
        f"{args.note}",
        "",
        "| | min | median |",
        "|---|---:|---:|",
    ]
    for key, value in summary.items():
        fmt = "{:,.0f}" if key.endswith("bytes") else "{:.1f}"
        lines.append(f"| {key} | {fmt.format(value['min'])} | {fmt.format(value['median'])} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
