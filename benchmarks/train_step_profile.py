#!/usr/bin/env python
"""Where a TensorFlow training step spends its time, by TensorFlow op type.

Builds the model of the throughput benchmark's default size (3+3 layers,
d_model 256, 4 heads, d_ff 1024, V 8,000) under a dtype policy, trains a few
steps with `train_on_batch` (Adam with the warmup schedule, the label-smoothed
loss), then traces ``--steps`` more with TensorFlow's profiler and sums the
executor's op events by op type (`_MklMatMul`, `SoftmaxCrossEntropyWithLogits`,
`StatelessRandomUniformV2`...), in CPU-thread milliseconds per step (two
threads run ops at once, so the column sums to about twice the wall time).

    KERAS_BACKEND=tensorflow python benchmarks/train_step_profile.py \\
        --dtype-policy mixed_bfloat16 --tag cpu_bf16

Writes ``benchmarks/results/train_step_profile_<tag>.{md,json}``. Beside the
profile it times TensorFlow's own matmul at the step's shapes, so the matmul
row can be read against what the matmul kernel reaches alone.
"""

import argparse
import collections
import datetime
import glob
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def matmul_rate(tf, dtype, m, k, n, seconds=0.5):
    """GFLOP/s of one ``(m, k) @ (k, n)`` matmul in ``dtype`` (a tf.function)."""
    a = tf.cast(tf.random.normal((m, k)), dtype)
    b = tf.cast(tf.random.normal((k, n)), dtype)
    matmul = tf.function(tf.matmul)
    matmul(a, b).numpy()
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        result = matmul(a, b)
        reps += 1
    result.numpy()
    return 2 * m * k * n * reps / (time.perf_counter() - start) / 1e9


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dtype-policy", default="mixed_bfloat16")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--dropout-rate", type=float, default=0.3)
    p.add_argument("--logits-dtype", default="none",
                   help="'none' (compute dtype, as benchmarks/multi30k.yaml) or 'float32'")
    p.add_argument("--steps", type=int, default=3, help="traced steps")
    p.add_argument("--tag", required=True)
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    sys.path.insert(0, REPO)
    import keras
    if keras.config.backend() != "tensorflow":
        raise SystemExit("train_step_profile.py needs KERAS_BACKEND=tensorflow")
    import numpy as np
    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
    from keras_transformer.models.transformer.transformer import Transformer
    from keras_transformer.objectives.schedules import transformer_optimizer

    keras.utils.set_random_seed(0)
    keras.config.set_dtype_policy(args.dtype_policy)
    vocabulary_size, d_model = 8000, 256
    model = Transformer(
        vocabulary_size=vocabulary_size, num_layers=3, d_model=d_model, num_heads=4,
        d_ff=1024, dropout_rate=args.dropout_rate,
        logits_dtype=None if args.logits_dtype == "none" else args.logits_dtype,
    )  # fmt: skip
    model.compile(optimizer=transformer_optimizer(d_model=d_model),
                  loss=LabelSmoothedCrossEntropy(label_smoothing=0.1))
    rng = np.random.default_rng(0)
    shape = (args.batch_size, args.seq_len)
    inputs = {"encoder_token_ids": rng.integers(4, vocabulary_size, shape).astype("int32"),
              "decoder_token_ids": rng.integers(4, vocabulary_size, shape).astype("int32")}
    labels = rng.integers(4, vocabulary_size, shape).astype("int32")
    for _ in range(3):
        model.train_on_batch(inputs, labels)
    start = time.perf_counter()
    for _ in range(args.steps):
        model.train_on_batch(inputs, labels)
    step_ms = (time.perf_counter() - start) / args.steps * 1000

    trace_dir = tempfile.mkdtemp(prefix="train_step_profile_")
    tf.profiler.experimental.start(trace_dir)
    for _ in range(args.steps):
        model.train_on_batch(inputs, labels)
    tf.profiler.experimental.stop()
    path = sorted(glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True))[-1]
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    kinds = collections.Counter()
    for plane in space.planes:
        names = {key: value.name for key, value in plane.event_metadata.items()}
        for line in plane.lines:
            if not line.name.startswith("tf_Compute"):
                continue  # the executor's threads: one event per op run
            for event in line.events:
                kind = names.get(event.metadata_id, "?").split(":")[-1]
                # "Process" encloses a whole step and "ParallelFor" runs
                # inside an op's kernel: both would count time twice.
                if kind not in ("Process", "ParallelFor"):
                    kinds[kind] += event.duration_ps / 1e9 / args.steps
    total = sum(kinds.values())
    rows = [{"op": kind, "thread_ms_per_step": ms, "share": ms / total}
            for kind, ms in kinds.most_common()]

    dtype = tf.bfloat16 if "bfloat16" in args.dtype_policy else tf.float32
    tokens = args.batch_size * args.seq_len
    shapes = [(tokens, d_model, 3 * d_model), (tokens, d_model, 1024), (tokens, 1024, d_model),
              (tokens, d_model, vocabulary_size)]
    rates = {f"{m}x{k}x{n}": matmul_rate(tf, dtype, m, k, n) for m, k, n in shapes}

    command = "KERAS_BACKEND=tensorflow python benchmarks/train_step_profile.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    result = {"command": command, "date": datetime.date.today().isoformat(),
              "tensorflow": tf.__version__, "keras": keras.__version__,
              "dtype_policy": args.dtype_policy, "batch": list(shape),
              "dropout_rate": args.dropout_rate, "logits_dtype": args.logits_dtype,
              "step_ms_untraced": step_ms, "thread_ms_per_step": total,
              "matmul_gflops_alone": rates, "ops": rows}
    os.makedirs(args.output_dir, exist_ok=True)
    stem = os.path.join(args.output_dir, f"train_step_profile_{args.tag}")
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [f"# TensorFlow training-step profile ({args.tag})", "",
             f"Command: `{command}`", "",
             f"Date: {result['date']}; tensorflow {tf.__version__}; {args.dtype_policy}; "
             f"batch {shape[0]} x {shape[1]} tokens; dropout {args.dropout_rate}; "
             f"{step_ms:.0f} ms per step (untraced); {total:.0f} CPU-thread ms per "
             "traced step.", "",
             "TensorFlow's matmul alone at the step's shapes ("
             + ", ".join(f"{k}: {v:.0f}" for k, v in rates.items()) + " GFLOP/s).", "",
             "| op type | CPU-thread ms per step | share |", "|---|---|---|"]
    lines += [f"| {r['op']} | {r['thread_ms_per_step']:.1f} | {100 * r['share']:.1f}% |"
              for r in rows[:20]]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
