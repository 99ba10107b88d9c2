#!/usr/bin/env python
"""Times the label-smoothed loss's three formulations on each Keras backend.

`keras_transformer.losses.label_smoothed_token_losses` picks one formulation
per backend (`losses._FORMULATIONS`); this script is the measurement behind
that choice. For each backend (one subprocess each, as ``KERAS_BACKEND`` is
fixed per process) it times a compiled forward + gradient of the summed loss
over float32 logits ``(batch, length, V)`` and prints a markdown table (median
ms of ``--repeats`` calls, after one warm-up call) plus the keras sparse
cross-entropy without smoothing as a floor.

    python benchmarks/loss_formulations.py
    python benchmarks/loss_formulations.py --backends jax --vocabulary-size 37000
"""

import argparse
import json
import os
import sys
import time

from _workers import run_worker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PREFIX = "@@LOSS_RESULT@@ "


def worker(args):
    sys.path.insert(0, REPO)
    import keras
    import numpy as np
    from keras import ops

    from keras_transformer.objectives import losses

    backend = keras.config.backend()
    rng = np.random.default_rng(0)
    shape = (args.batch_size, args.seq_len, args.vocabulary_size)
    logits_np = rng.standard_normal(shape).astype("float32")
    labels_np = rng.integers(1, args.vocabulary_size, shape[:2]).astype("int32")
    eps = args.label_smoothing

    variants = {
        form.__name__: (lambda form: lambda y, z: form(y, z, eps))(form)
        for form in (
            losses._logsumexp_form,
            losses._fused_softmax_form,
            losses._log_softmax_form,
            losses._custom_gradient_form,
        )
    }
    variants["sparse_ce_no_smoothing"] = lambda y, z: ops.sparse_categorical_crossentropy(
        y, z, from_logits=True
    )

    def make_step(function):
        if backend == "tensorflow":
            import tensorflow as tf

            @tf.function
            def step(z, y):
                with tf.GradientTape() as tape:
                    tape.watch(z)
                    total = tf.reduce_sum(function(y, z))
                return total, tape.gradient(total, z)

            return step, tf.constant(logits_np), tf.constant(labels_np)
        if backend == "jax":
            import jax
            import jax.numpy as jnp

            step = jax.jit(jax.value_and_grad(lambda z, y: jnp.sum(function(y, z))))
            return step, jnp.asarray(logits_np), jnp.asarray(labels_np)
        import torch

        def step(z, y):
            z = z.detach().requires_grad_(True)
            total = function(y, z).sum()
            total.backward()
            return total, z.grad

        return step, torch.tensor(logits_np), torch.tensor(labels_np)

    chosen = losses._FORMULATIONS[backend].__name__
    for name, function in variants.items():
        step, z, y = make_step(function)
        np.asarray(ops.convert_to_numpy(step(z, y)[1]))  # warm-up / compile
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            total, grad = step(z, y)
            np.asarray(ops.convert_to_numpy(grad))
            times.append(time.perf_counter() - start)
        print(PREFIX + json.dumps({
            "backend": backend, "formulation": name, "chosen": name == chosen,
            "ms": 1000 * float(np.median(times)),
        }), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", default="tensorflow,jax,torch")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)

    rows = []
    for backend in args.backends.split(","):
        stdout = run_worker(__file__, backend, argv if argv is not None else sys.argv[1:])
        rows += [json.loads(line[len(PREFIX):]) for line in stdout.splitlines()
                 if line.startswith(PREFIX)]
    print(f"\nLoss + gradient over ({args.batch_size}, {args.seq_len}, "
          f"{args.vocabulary_size}) float32 logits, eps={args.label_smoothing}; "
          f"median ms of {args.repeats} calls\n")
    print("| backend | formulation | ms | used |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['backend']} | {row['formulation']} | {row['ms']:.1f} | "
              f"{'yes' if row['chosen'] else ''} |")


if __name__ == "__main__":
    main()
