#!/usr/bin/env python
"""Per-component training-step time: keras_transformer layers vs keras-hub's.

Where `train_throughput.py` says *whether* our model is slower, this says
*where*: it trains one component at a time (an encoder layer, a decoder layer,
the tied embedding + output projection + loss) as a small functional model
under ``model.fit`` (SGD; MSE on the layer output, the real loss for the
head), and prints the median wall time and process CPU time per step.

CPU time of a process pinned to one core (``--cpu-threads 1``, the default)
hardly moves when other processes load the machine, so it compares variants
reliably on a shared 2-core box; wall time does not.

Runs under the current ``KERAS_BACKEND`` (one backend per process):

    KERAS_BACKEND=tensorflow python benchmarks/train_components.py
    KERAS_BACKEND=jax python benchmarks/train_components.py --components enc,dec

Models: ``ours``; ``keras_hub`` (its layers with ``dropout``, which also drops
attention weights; the head with Keras' sparse CE without smoothing);
``keras_hub_noattndrop`` (attention-weight dropout 0, residual dropout kept:
`_peers._set_keras_attention_dropout`); ``keras_hub_same_loss`` (the head
with ours' label-smoothed loss). Each variant changes one thing, so a
difference between two rows has one cause.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
COMPONENTS = ("enc", "dec", "head")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--components", default=",".join(COMPONENTS),
                   help="comma-separated subset of " + ",".join(COMPONENTS))
    p.add_argument("--models", default="ours,keras_hub",
                   help="comma-separated: ours, keras_hub, keras_hub_noattndrop, "
                   "keras_hub_same_loss")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--num-heads", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--vocabulary-size", type=int, default=8000)
    p.add_argument("--dropout-rate", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--warmup-steps", type=int, default=3)
    p.add_argument("--dtype-policy", default=None, help="e.g. mixed_bfloat16")
    p.add_argument("--cpu-threads", type=int, default=1,
                   help="pin to this many CPUs (0: no pinning)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.cpu_threads:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpu_threads])
        os.environ["OMP_NUM_THREADS"] = str(args.cpu_threads)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, REPO)
    sys.path.insert(0, HERE)

    import keras
    import keras_hub
    import numpy as np
    from keras import ops

    import keras_transformer as kt
    from _peers import _set_keras_attention_dropout
    from keras_transformer.layers.decoder import TransformerDecoderLayer
    from keras_transformer.layers.embedding import TokenEmbedding
    from keras_transformer.layers.encoder import TransformerEncoderLayer

    if args.dtype_policy:
        keras.config.set_dtype_policy(args.dtype_policy)
    b, t, d = args.batch_size, args.seq_len, args.d_model
    h, f, v, p = args.num_heads, args.d_ff, args.vocabulary_size, args.dropout_rate
    rng = np.random.default_rng(0)
    ids = rng.integers(4, v, size=(b, t)).astype("int32")
    hidden = rng.standard_normal((b, t, d)).astype("float32")

    def build(component, model_name):
        if component == "enc":
            x = keras.Input((None, d))
            i = keras.Input((None,), dtype="int32")
            m = ops.not_equal(i, 0)
            if model_name == "ours":
                y = TransformerEncoderLayer(
                    d_model=d, num_heads=h, d_ff=f, dropout_rate=p
                )(x, encoder_padding_mask=m)
            else:
                layer = keras_hub.layers.TransformerEncoder(f, h, dropout=p)
                y = layer(x, padding_mask=m)
                if model_name == "keras_hub_noattndrop":
                    _set_keras_attention_dropout([layer], 0.0)
            return keras.Model([x, i], y), (hidden, ids), hidden, "mse"
        if component == "dec":
            x = keras.Input((None, d))
            mem = keras.Input((None, d))
            i = keras.Input((None,), dtype="int32")
            m = ops.not_equal(i, 0)
            if model_name == "ours":
                y = TransformerDecoderLayer(
                    d_model=d, num_heads=h, d_ff=f, dropout_rate=p
                )(x, mem, decoder_padding_mask=m, encoder_padding_mask=m)
            else:
                layer = keras_hub.layers.TransformerDecoder(f, h, dropout=p)
                y = layer(x, mem, decoder_padding_mask=m, encoder_padding_mask=m)
                if model_name == "keras_hub_noattndrop":
                    _set_keras_attention_dropout([layer], 0.0)
            return keras.Model([x, mem, i], y), (hidden, hidden, ids), hidden, "mse"
        # head: tied embedding lookup -> output projection -> loss
        i = keras.Input((None,), dtype="int32")
        if model_name == "ours":
            e = TokenEmbedding(v, d)
            loss = kt.LabelSmoothedCrossEntropy(0.1)
        else:
            e = keras_hub.layers.ReversibleEmbedding(v, d)
            loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=0
            )
            if model_name == "keras_hub_same_loss":
                loss = kt.LabelSmoothedCrossEntropy(0.1)
        return keras.Model(i, e(e(i), reverse=True)), ids, ids, loss

    print(f"backend={keras.backend.backend()} batch={b}x{t} d_model={d} "
          f"heads={h} d_ff={f} V={v} policy={keras.config.dtype_policy().name}; ms per training step (median, min)")
    for component in args.components.split(","):
        for model_name in args.models.split(","):
            keras.utils.set_random_seed(0)
            model, x, y, loss = build(component, model_name)
            model.compile(optimizer=keras.optimizers.SGD(1e-3), loss=loss)

            def gen():
                while True:
                    yield x, y

            walls, cpus = [], []

            class Timer(keras.callbacks.Callback):
                def on_train_batch_end(self, batch, logs=None):
                    walls.append(time.perf_counter())
                    cpus.append(time.process_time())

            w = args.warmup_steps
            model.fit(gen(), steps_per_epoch=w + args.steps, epochs=1, shuffle=False,
                      verbose=0, callbacks=[Timer()])
            wall = np.diff(walls[w - 1:]) * 1000
            cpu = np.diff(cpus[w - 1:]) * 1000
            print(f"{component:5s} {model_name:21s} wall {np.median(wall):7.1f} "
                  f"({wall.min():6.1f})  cpu {np.median(cpu):7.1f} "
                  f"({cpu.min():6.1f})", flush=True)


if __name__ == "__main__":
    main()
