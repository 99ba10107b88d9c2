#!/usr/bin/env python
"""Cost of the token-id checks (issue #12) on training throughput.

Trains two identical `Transformer`s in one process under the current Keras
backend: one with the checks (the shipped code: ids and labels checked in
every train step: in the graph under TensorFlow, eagerly under PyTorch, on
the host before the jitted step under JAX) and one built and run with those
checks replaced by no-ops. Timed windows of ``--steps`` ``fit`` steps alternate between the
two (A B A B ..., so that load from other processes hits both alike); the
result is the median over ``--repeats`` of the per-pair ratio
``checked_time / unchecked_time - 1``. On a shared machine that ratio is
noisy, so the script also times the three checks of one step alone (best of
200 calls: a tf.function under TensorFlow, eager under PyTorch, the NumPy
batch check under JAX; the first two include a call's dispatch and a copy
of the labels to NumPy) and reports them as a fraction of the median
unchecked step.

Example::

    KERAS_BACKEND=jax python benchmarks/token_check_cost.py --preset default \\
        --steps 5 --repeats 5
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PRESETS = {  # the sizes of benchmarks/train_throughput.py
    "tiny": dict(vocabulary_size=1000, num_layers=1, d_model=64, num_heads=2, d_ff=128,
                 batch_size=8, seq_len=16),
    "default": dict(vocabulary_size=8000, num_layers=3, d_model=256, num_heads=4, d_ff=1024,
                    batch_size=64, seq_len=32),
}


@contextlib.contextmanager
def checks_disabled():
    """Every in-graph (or eager) id check becomes the identity."""
    from keras_transformer.objectives import losses
    from keras_transformer.layers import token_checks
    from keras_transformer.models import token_id_checked_model

    saved = (
        token_checks.check_token_ids,
        losses.check_token_ids,
        token_id_checked_model.check_model_arrays,
    )

    def identity(token_ids, *args, **kwargs):
        return token_ids

    token_checks.check_token_ids = losses.check_token_ids = identity
    # The host-side batch check before each compiled JAX step.
    token_id_checked_model.check_model_arrays = lambda *args, **kwargs: None
    try:
        yield
    finally:
        (
            token_checks.check_token_ids,
            losses.check_token_ids,
            token_id_checked_model.check_model_arrays,
        ) = saved


def time_checks_alone(batch, vocabulary_size, calls=200):
    """Best time of the three checks of one step, compiled as fit compiles them."""
    import keras

    from keras_transformer.layers.token_checks import check_token_ids

    x, y = batch

    def checks(encoder, decoder, labels):
        return (
            check_token_ids(encoder, vocabulary_size, "encoder_token_ids"),
            check_token_ids(decoder, vocabulary_size, "decoder_token_ids"),
            check_token_ids(labels, vocabulary_size, "labels", ignore_id=0),
        )

    backend = keras.config.backend()
    if backend == "jax":
        # JAX checks each batch on the host (NumPy) before the jitted step.
        import types

        from keras_transformer.models.token_id_checked_model import check_model_arrays

        model = types.SimpleNamespace(
            vocabulary_size=vocabulary_size, source_vocabulary_size=vocabulary_size
        )
        best = float("inf")
        for _ in range(calls):
            start = time.perf_counter()
            check_model_arrays(model, x, y, label_ignore_id=0)
            best = min(best, time.perf_counter() - start)
        return best
    if backend == "tensorflow":
        import tensorflow as tf

        checks = tf.function(checks)
    tensors = [keras.ops.convert_to_tensor(v) for v in (x["encoder_token_ids"], x["decoder_token_ids"], y)]
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        keras.ops.convert_to_numpy(checks(*tensors)[2])
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="default", choices=sorted(PRESETS))
    parser.add_argument("--steps", type=int, default=5, help="steps per timed window")
    parser.add_argument("--repeats", type=int, default=5, help="A/B window pairs")
    args = parser.parse_args()

    import keras
    import numpy as np

    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
    from keras_transformer.models.transformer.transformer import Transformer

    cfg = PRESETS[args.preset]
    arch = {k: v for k, v in cfg.items() if k not in ("batch_size", "seq_len")}
    rng = np.random.default_rng(0)
    shape = (cfg["batch_size"], cfg["seq_len"])
    batch = (
        {
            "encoder_token_ids": rng.integers(4, cfg["vocabulary_size"], shape).astype("int32"),
            "decoder_token_ids": rng.integers(4, cfg["vocabulary_size"], shape).astype("int32"),
        },
        rng.integers(4, cfg["vocabulary_size"], shape).astype("int32"),
    )

    def generator():
        while True:
            yield batch

    def build():
        keras.utils.set_random_seed(0)
        model = Transformer(**arch)
        model.compile(optimizer="adam", loss=LabelSmoothedCrossEntropy())
        return model

    def window(model, steps):
        start = time.perf_counter()
        model.fit(generator(), steps_per_epoch=steps, epochs=1, verbose=0)
        return time.perf_counter() - start

    checked = build()
    with checks_disabled():
        unchecked = build()
    # Warm-up: tracing / compilation (the unchecked model is traced with the
    # checks replaced, so its compiled step has none).
    window(checked, 2)
    with checks_disabled():
        window(unchecked, 2)

    ratios, times = [], {"checked": [], "unchecked": []}
    for repeat in range(args.repeats):
        # Alternate which goes first, so that neither always follows the other.
        order = ("checked", "unchecked") if repeat % 2 == 0 else ("unchecked", "checked")
        pair = {}
        for name in order:
            if name == "checked":
                pair[name] = window(checked, args.steps)
            else:
                with checks_disabled():
                    pair[name] = window(unchecked, args.steps)
            times[name].append(pair[name] / args.steps)
        ratios.append(pair["checked"] / pair["unchecked"] - 1.0)
    check_s = time_checks_alone(batch, cfg["vocabulary_size"])
    result = {
        "backend": keras.config.backend(),
        "preset": args.preset,
        "steps": args.steps,
        "repeats": args.repeats,
        "median_step_s_checked": statistics.median(times["checked"]),
        "median_step_s_unchecked": statistics.median(times["unchecked"]),
        "median_overhead": statistics.median(ratios),
        "checks_alone_s": check_s,
        "checks_alone_over_step": check_s / statistics.median(times["unchecked"]),
        "overheads": [round(r, 4) for r in ratios],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
