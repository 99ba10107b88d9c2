#!/usr/bin/env python
"""Times each signature's first request to an exported SavedModel, without
and with the export's warm-up requests replayed first.

A signature's first request in a server process instantiates its graph,
which TensorFlow's graph optimizer (Grappler) rewrites before it runs; the
requests after it only run. TF Serving replays
``assets.extra/tf_serving_warmup_requests`` when it loads a version, before
it serves it. In two fresh TensorFlow-only processes (one thread per op
pool, as a server with ``--tensorflow_intra_op_parallelism=1``), each
loading the SavedModel as TF Serving does (``tf.saved_model.load``):

* ``cold``: each signature's first and second request (the warm-up file's
  own request for that signature, three sentences);
* ``warmed``: the warm-up file replayed (its time), then each signature's
  first request.

CPU seconds (user + system of the process) and wall seconds per request.

    python benchmarks/warmup_time.py --saved-model EXPORT/1 --tag multi30k_small_c

Writes ``benchmarks/results/warmup_time_<tag>.{md,json}``.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys

from _workers import cpu_name, recorded_command

HERE = os.path.dirname(os.path.abspath(__file__))

SERVE = """
import json, os, sys, time
import tensorflow as tf
import tensorflow_text  # the SentencePiece ops of the graph
from tensorflow_serving.apis import prediction_log_pb2

def clock():
    times = os.times()
    return times.user + times.system, time.perf_counter()

loaded = tf.saved_model.load(sys.argv[1])
requests = []
path = os.path.join(sys.argv[1], "assets.extra", "tf_serving_warmup_requests")
for record in tf.data.TFRecordDataset(path):
    request = prediction_log_pb2.PredictionLog.FromString(record.numpy()).predict_log.request
    inputs = {key: tf.constant(tf.make_ndarray(value)) for key, value in request.inputs.items()}
    requests.append((request.model_spec.signature_name, inputs))
# The last request of each signature (all the warm-up sentences).
last = dict(requests)

def timed(name):
    (cpu, wall) = clock()
    loaded.signatures[name](**last[name])
    (cpu_after, wall_after) = clock()
    return [cpu_after - cpu, wall_after - wall]

out = {"signatures": {}}
if sys.argv[2] == "warmed":
    (cpu, wall) = clock()
    for name, inputs in requests:
        loaded.signatures[name](**inputs)
    (cpu_after, wall_after) = clock()
    out["replay"] = [cpu_after - cpu, wall_after - wall]
    out["requests"] = len(requests)
for name in sorted(last):
    first = timed(name)
    out["signatures"][name] = {"first": first}
    if sys.argv[2] == "cold":
        out["signatures"][name]["second"] = timed(name)
print(json.dumps(out))
"""


def _serve(saved_model, mode):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_NUM_INTRAOP_THREADS="1",
               TF_NUM_INTEROP_THREADS="1")
    env.pop("KERAS_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", SERVE, saved_model, mode], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saved-model", required=True,
                        help="a version directory written by the export (EXPORT/1)")
    parser.add_argument("--tag", required=True)
    parser.add_argument("--note", default="", help="a line for the result file")
    args = parser.parse_args()
    warmup = os.path.join(args.saved_model, "assets.extra", "tf_serving_warmup_requests")
    if not os.path.isfile(warmup):
        raise SystemExit(f"--saved-model: {warmup} not found (exported with --no-warmup?)")

    cold = _serve(args.saved_model, "cold")
    warmed = _serve(args.saved_model, "warmed")
    config_path = os.path.join(args.saved_model, "assets.extra", "export_config.json")
    with open(config_path) as f:
        config = json.load(f)
    result = {
        "command": recorded_command(__file__),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "saved_model": os.path.abspath(args.saved_model),
        "model_dir": config.get("model_dir"),
        "quantize": config.get("quantize"),
        "note": args.note,
        "cold": cold,
        "warmed": warmed,
    }
    out = os.path.join(HERE, "results", f"warmup_time_{args.tag}")
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [
        f"# SavedModel first requests, without and with the warm-up: {args.tag}",
        "",
        f"`{result['command']}`",
        "",
        f"{result['date']}, {result['cpu']} ({result['cpu_count']} cores), model "
        f"{result['model_dir']}, one thread per op pool. {args.note}",
        "",
        "CPU seconds (wall seconds) per request of the warm-up sentences.",
        "",
        "| signature | first request, cold | second request | first request after the warm-up |",
        "|---|---:|---:|---:|",
    ]
    total = [0.0, 0.0]
    for name, times in cold["signatures"].items():
        first, second = times["first"], times["second"]
        after = warmed["signatures"][name]["first"]
        total[0] += first[0]
        total[1] += after[0]
        lines.append(f"| {name} | {first[0]:.2f} ({first[1]:.2f}) | {second[0]:.2f} "
                     f"({second[1]:.2f}) | {after[0]:.2f} ({after[1]:.2f}) |")
    lines += [
        f"| all | {total[0]:.1f} | | {total[1]:.1f} |",
        "",
        f"The warm-up replay ({warmed['requests']} requests) at load: "
        f"{warmed['replay'][0]:.1f} CPU-s ({warmed['replay'][1]:.1f} s wall).",
    ]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
