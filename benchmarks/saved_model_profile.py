#!/usr/bin/env python
"""Where the SavedModel's ``serving_default`` spends its time, by TensorFlow op.

Loads an exported version directory with ``tf.saved_model.load`` (the
TensorFlow 2 function runtime that TF Serving runs), times ``--requests``
requests of ``--batch-size`` Multi30k test sentences without the profiler
(the second of two passes: the first warms up their shapes), then runs the same requests under
TensorFlow's profiler and sums the ops' self time (TensorFlow's
``framework_op_stats``) by op type and by where the op sits in the graph:
inside the search loop's body (per decoder layer and sublayer, the
search's own bookkeeping at the top of the body) or outside it. "IDLE" is
the time the op threads waited: on a graph of many small ops, the
executor's own cost. The profiler slows every op down; the shares, not the
milliseconds, are what it measures.

    python benchmarks/saved_model_profile.py --saved-model exported/m30k/1 --tag multi30k

``--one-thread``: one intra-op and one inter-op thread (TF Serving's
``--tensorflow_intra_op_parallelism=1 --tensorflow_inter_op_parallelism=1``).

Writes ``benchmarks/results/saved_model_profile_<tag>.{md,json}``. Reads
the profile with ``tensorflow.python.profiler``'s converter (TensorFlow's
own; this is a benchmark, not package code).
"""

import argparse
import collections
import datetime
import glob
import gzip
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from _workers import cpu_name, recorded_command  # noqa: E402

DEFAULT_SOURCE = os.path.join(REPO, "..", "shared", "data", "multi30k", "test_2016_flickr.en.gz")


def op_rows(path):
    """The rows of TensorFlow's framework_op_stats of an ``.xplane.pb``."""
    from tensorflow.python.profiler.internal import _pywrap_profiler_plugin

    data, ok = _pywrap_profiler_plugin.xspace_to_tools_data([path], "framework_op_stats")
    if not ok:
        raise SystemExit(f"TensorFlow could not read the profile {path}")
    table = json.loads(data)
    table = table[0] if isinstance(table, list) else table
    columns = [column["id"] for column in table["cols"]]
    return [
        {columns[i]: (cell or {}).get("v") for i, cell in enumerate(row["c"])}
        for row in table["rows"]
    ]


def place(operation):
    """Where an op sits: "loop: decoder_layer/self_attention", "loop: top
    level" (the search's bookkeeping), or "outside the loop"."""
    match = re.search(r"/while/body/_\d+/(?:cond/)?while/(.*)$", operation)
    if not match:
        return "outside the loop (tokenizer, encoder, cache setup, outputs)"
    parts = [re.sub(r"_\d+$", "", part) for part in match.group(1).split("/")]
    if parts[0].startswith("decoder_layer") and len(parts) > 2:
        return f"loop: decoder_layer/{parts[1]}"
    if len(parts) == 1:
        return "loop: the search's own ops (top level of the body)"
    return f"loop: {parts[0]}"


def table(title, counter, counts, requests, total, top):
    lines = [f"| {title} | ms per request | share | runs per request |",
             "| --- | --- | --- | --- |"]
    for key, micros in counter.most_common(top):
        lines.append(f"| {key} | {micros / 1000 / requests:.2f} | "
                     f"{100 * micros / total:.1f}% | {counts[key] // requests} |")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--saved-model", required=True, help="a SavedModel version directory")
    p.add_argument("--source-file", default=DEFAULT_SOURCE)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--requests", type=int, default=4, help="profiled requests")
    p.add_argument("--one-thread", action="store_true",
                   help="one intra-op and one inter-op thread")
    p.add_argument("--top", type=int, default=25, help="op types listed")
    p.add_argument("--tag", required=True)
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    if not os.path.isfile(os.path.join(args.saved_model, "saved_model.pb")):
        raise SystemExit(f"--saved-model {args.saved_model}: no saved_model.pb there")
    if not os.path.isfile(args.source_file):
        raise SystemExit(f"--source-file {args.source_file}: no such file")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    if args.one_thread:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    with gzip.open(args.source_file, "rt", encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f]
    serve = tf.saved_model.load(args.saved_model).signatures["serving_default"]
    requests = [tf.constant(sentences[i * args.batch_size:(i + 1) * args.batch_size])
                for i in range(args.requests)]
    for _ in range(2):  # the first pass warms up every request's shapes
        start = time.perf_counter()
        for request in requests:
            serve(sentences=request)
        wall = (time.perf_counter() - start) / args.requests
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        start = time.perf_counter()
        for request in requests:
            serve(sentences=request)
        profiled_wall = (time.perf_counter() - start) / args.requests
        tf.profiler.experimental.stop()
        rows = op_rows(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)[0])
    by_type, type_runs = collections.Counter(), collections.Counter()
    by_place, place_runs = collections.Counter(), collections.Counter()
    for row in rows:
        micros, runs = row["total_self_time"], int(row["occurrences"])
        by_type[row["type"]] += micros
        type_runs[row["type"]] += runs
        if row["type"] != "IDLE":
            by_place[place(row["operation"])] += micros
            place_runs[place(row["operation"])] += runs
    by_place["IDLE (threads waiting)"] = by_type["IDLE"]
    total = sum(by_type.values())
    n = args.requests
    record = {
        "command": recorded_command(__file__, argv),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "cpu": cpu_name(), "tensorflow": tf.__version__, "saved_model": args.saved_model,
        "batch_size": args.batch_size, "requests": n, "one_thread": args.one_thread,
        "wall_ms_per_request": round(1000 * wall, 1),
        "profiled_wall_ms_per_request": round(1000 * profiled_wall, 1),
        "self_ms_per_request": round(total / 1000 / n, 1),
        "by_type": {k: {"ms_per_request": round(v / 1000 / n, 3), "runs": type_runs[k] // n}
                    for k, v in by_type.most_common()},
        "by_place": {k: {"ms_per_request": round(v / 1000 / n, 3), "runs": place_runs[k] // n}
                     for k, v in by_place.most_common()},
    }
    os.makedirs(args.output_dir, exist_ok=True)
    base = os.path.join(args.output_dir, f"saved_model_profile_{args.tag}")
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    threads = "one intra-op and one inter-op thread" if args.one_thread else "TensorFlow's default threads"
    lines = [
        f"# SavedModel profile ({args.tag})", "", f"Command: `{record['command']}`", "",
        f"Date: {record['date']}; CPU: {record['cpu']}; TensorFlow {tf.__version__}; "
        f"{threads}; requests of {args.batch_size} sentences: "
        f"{record['wall_ms_per_request']} ms each without the profiler, "
        f"{record['profiled_wall_ms_per_request']} ms with it "
        f"({record['self_ms_per_request']} ms of op and idle time over the threads).", "",
    ]
    lines += table("op type", by_type, type_runs, n, total, args.top) + [""]
    lines += table("where", by_place, place_runs, n, total, args.top)
    with open(base + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
