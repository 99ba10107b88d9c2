#!/usr/bin/env python
"""Padding of the training batches: joint vs separate bucketing vs packing (issue #15).

Builds the training pipeline exactly as `keras-transformer train --config
benchmarks/multi30k.yaml` does (a SentencePiece vocabulary trained on the
training text with the config's ``vocabulary_size`` and ``seed``, the
config's ``max_length``, ``tokens_per_batch`` and bucket lengths) for each
``bucketing`` and bucket step (and once with ``bucketing="packed"``: several
pairs per row of ``max_length`` tokens), then:

- takes the `DatasetReport` of the training dataset (``repeat=True``, as in
  training: batches straddle epochs, no partial batches), and
- iterates one pass of the same batching (``repeat=False``, so the last
  partial batch of each bucket is there too) and measures the padding and
  the distinct ``(batch, S, T)`` shapes (each a compilation of the train step
  under JAX) from the batches themselves.

Optionally (``--time-epochs N``) trains the config's model for one epoch
(``report.num_batches`` steps of the repeated dataset, as in training) of
joint and of (default) separate bucketing under the current Keras backend,
compilations included, N times each, alternating; the JSON keeps the
timings of each backend run so far.

Example::

    python benchmarks/padding.py --data-dir ../shared/data/multi30k
"""

import argparse
import itertools
import json
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# (bucketing, min_shape_saving): before, the default, every shape that fills a batch.
VARIANTS = (("joint", None), ("separate", 0.005), ("separate", 0.0))


def load_config(path):
    import yaml

    with open(path) as f:
        config = yaml.safe_load(f)
    return {
        "vocabulary_size": int(config["vocabulary_size"]),
        "max_length": int(config["max_length"]),
        "tokens_per_batch": int(config["tokens_per_batch"]),
        "bucket_step": int(config.get("bucket_step", 8)),  # TrainConfig's default
        "seed": int(config.get("seed", 0)),  # TrainConfig's default
        "preset": config.get("preset", "small"),
        "dtype_policy": config.get("dtype_policy"),
    }


def measure_one_pass(dataset):
    """Padding fractions and distinct shapes of the batches themselves."""
    import numpy as np

    from keras_transformer.special_tokens import PAD_ID

    real = {"source": 0, "target": 0}
    padded = {"source": 0, "target": 0}
    shapes, rows, batches = set(), 0, 0
    for inputs, labels in dataset:
        encoder = inputs["encoder_token_ids"].numpy()
        decoder = inputs["decoder_token_ids"].numpy()
        real["source"] += int(np.sum(encoder != PAD_ID))
        real["target"] += int(np.sum(decoder != PAD_ID))
        padded["source"] += encoder.size
        padded["target"] += decoder.size
        shapes.add((encoder.shape[0], encoder.shape[1], decoder.shape[1]))
        rows += encoder.shape[0]
        batches += 1
    total_real = real["source"] + real["target"]
    total_padded = padded["source"] + padded["target"]
    return {
        "padding_fraction": round(1 - total_real / total_padded, 4),
        "source_padding_fraction": round(1 - real["source"] / padded["source"], 4),
        "target_padding_fraction": round(1 - real["target"] / padded["target"], 4),
        "padded_tokens": total_padded,
        "real_tokens": total_real,
        "num_batches": batches,
        "num_rows": rows,
        "num_batch_shapes": len(shapes),
    }


def time_one_epoch(src, tgt, tokenizer, settings, batching):
    """Seconds to build and to train one epoch of the config's model (its
    preset and dtype policy; Adam and the label-smoothed loss), compilations
    included, and the seconds of the first step of each new shape.

    The epoch's batches are taken from the pipeline first (``pipeline_seconds``),
    so the training time is not mixed with tf.data's."""
    import keras

    import keras_transformer as kt
    from keras_transformer.data import make_dataset

    dataset, report = make_dataset(
        src, tgt, tokenizer, seed=settings["seed"], repeat=True, **batching
    )
    start = time.perf_counter()
    # As in training: the repeated dataset, one epoch of report.num_batches.
    batches = [
        ({name: ids.numpy() for name, ids in inputs.items()}, labels.numpy())
        for inputs, labels in dataset.take(report.num_batches)
    ]
    pipeline_seconds = time.perf_counter() - start
    keras.utils.set_random_seed(settings["seed"])
    model = kt.Transformer.from_preset(
        settings["preset"], vocabulary_size=tokenizer.vocabulary_size,
        dtype=settings["dtype_policy"],
    )  # fmt: skip
    model.compile(optimizer="adam", loss=kt.LabelSmoothedCrossEntropy())
    seen, first_step_seconds, step_seconds = set(), 0.0, []
    start = time.perf_counter()
    for inputs, labels in batches:
        shape = labels.shape[:1] + inputs["encoder_token_ids"].shape[1:] + labels.shape[1:]
        step_start = time.perf_counter()
        model.train_on_batch(inputs, labels)
        seconds = time.perf_counter() - step_start
        if shape in seen:
            step_seconds.append(seconds)
        else:
            seen.add(shape)
            first_step_seconds += seconds
    train_seconds = time.perf_counter() - start
    return {
        "pipeline_seconds": round(pipeline_seconds, 1),
        "train_seconds": round(train_seconds, 1),
        "first_step_of_each_shape_seconds": round(first_step_seconds, 1),
        "num_batches": report.num_batches,
        "num_batch_shapes": len(seen),
        "seconds_per_step_after_compilation": round(float(np.median(step_seconds)), 3),
        "target_tokens_per_second": round(report.num_target_tokens / train_seconds),
    }


def summarize(runs):
    """Medians over repeated runs of one variant."""
    keys = ("train_seconds", "first_step_of_each_shape_seconds",
            "seconds_per_step_after_compilation", "target_tokens_per_second")  # fmt: skip
    return {
        **{f"median_{key}": round(float(np.median([r[key] for r in runs])), 3) for key in keys},
        "runs": runs,
    }


def previous_timings(path, settings):
    try:
        with open(path) as f:
            previous = json.load(f)
    except (OSError, ValueError):
        return {}
    keys = ("vocabulary_size", "max_length", "tokens_per_batch", "seed")
    if any(previous.get("settings", {}).get(k) != settings[k] for k in keys):
        return {}
    return previous.get("one_epoch_training") or {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", default=os.path.join(HERE, "..", "..", "shared", "data", "multi30k")
    )
    parser.add_argument("--config", default=os.path.join(HERE, "multi30k.yaml"))
    parser.add_argument(
        "--bucket-steps", default=None,
        help="comma-separated bucket steps to compare (default: the config's, and 4)",
    )  # fmt: skip
    parser.add_argument("--time-epochs", type=int, default=0, metavar="N",
                        help="also train N epochs per bucketing, alternating (slow: minutes each)")
    parser.add_argument("--output", default=os.path.join(HERE, "results", "padding_multi30k.json"))
    args = parser.parse_args()

    import keras

    from keras_transformer.data import SubwordTokenizer
    from keras_transformer.data import default_bucket_lengths
    from keras_transformer.data import make_dataset
    from keras_transformer.data import read_parallel

    settings = load_config(args.config)
    steps = [settings["bucket_step"]] + ([4] if settings["bucket_step"] != 4 else [])
    if args.bucket_steps:
        steps = [int(step) for step in args.bucket_steps.split(",")]
    src, tgt, _ = read_parallel(
        os.path.join(args.data_dir, "train.en.gz"), os.path.join(args.data_dir, "train.de.gz")
    )
    start = time.perf_counter()
    tokenizer = SubwordTokenizer.train(
        itertools.chain(src, tgt), settings["vocabulary_size"], seed=settings["seed"]
    )
    print(f"Vocabulary: {tokenizer.vocabulary_size} pieces in {time.perf_counter() - start:.1f} s")

    runs, timed, timings = [], {}, {}
    for step in steps + ["packed"]:
        variants = VARIANTS
        if step == "packed":
            step, variants = settings["bucket_step"], (("packed", None),)
        bucket_lengths = default_bucket_lengths(settings["max_length"], step=step)
        batching = dict(
            tokens_per_batch=settings["tokens_per_batch"],
            max_length=settings["max_length"],
            bucket_boundaries=bucket_lengths,
        )
        for bucketing, min_shape_saving in variants:
            if min_shape_saving is not None:
                batching["min_shape_saving"] = min_shape_saving
            _, report = make_dataset(
                src, tgt, tokenizer, seed=settings["seed"], repeat=True,
                bucketing=bucketing, **batching,
            )  # fmt: skip
            one_pass, _ = make_dataset(
                src, tgt, tokenizer, shuffle=False, bucketing=bucketing, **batching
            )
            run = {
                "bucketing": bucketing,
                "min_shape_saving": min_shape_saving,
                "bucket_step": step,
                "bucket_lengths": list(bucket_lengths),
                "training_report": {
                    "padding_fraction": round(report.padding_fraction, 4),
                    "source_padding_fraction": round(report.source_padding_fraction, 4),
                    "target_padding_fraction": round(report.target_padding_fraction, 4),
                    "num_batches": report.num_batches,
                    "num_batch_shapes": report.num_batch_shapes,
                    "batch_shapes": [list(shape) for shape in report.batch_shapes],
                    "num_pairs_per_row": round(report.num_pairs_per_row, 3),
                    "summary": report.summary(),
                },
                "measured_one_pass": measure_one_pass(one_pass),
            }
            if step == settings["bucket_step"] and min_shape_saving != 0:
                timed[f"{bucketing} (min_shape_saving={min_shape_saving})"] = dict(
                    batching, bucketing=bucketing
                )
            runs.append(run)
            print(
                f"bucket_step={step} {bucketing:>8} (min_shape_saving={min_shape_saving}): padding "
                f"{report.padding_fraction:.1%} (source {report.source_padding_fraction:.1%}, "
                f"target {report.target_padding_fraction:.1%}); "
                f"{report.num_batch_shapes} batch shapes in training, "
                f"{run['measured_one_pass']['num_batch_shapes']} in one pass with its "
                f"partial batches; {report.num_batches} batches per epoch",
                flush=True,
            )

    # Alternating A B, B A, ... so that other load hits both alike.
    for repeat in range(args.time_epochs):
        names = list(timed) if repeat % 2 == 0 else list(timed)[::-1]
        for name in names:
            timing = time_one_epoch(src, tgt, tokenizer, settings, timed[name])
            timings.setdefault(name, []).append(timing)
            print(f"{name}: {timing}", flush=True)
    timings = {name: summarize(runs) for name, runs in timings.items()}

    command = "python benchmarks/padding.py " + " ".join(
        arg if not arg.startswith("/") else os.path.relpath(arg) for arg in sys.argv[1:]
    )
    result = {
        # The padding figures do not depend on --time-epochs (nor on the backend).
        "command": re.sub(r" --time-epochs[ =]\d+", "", command).strip(),
        "data": "Multi30k train (train.en.gz -> train.de.gz), 29,000 pairs",
        "settings": {
            k: settings[k] for k in ("vocabulary_size", "max_length", "tokens_per_batch", "seed")
        },
        "config": os.path.relpath(args.config),
        "training_bucket_step": settings["bucket_step"],
        "runs": runs,
        # Per backend: the results of the other backends stay in the file.
        "one_epoch_training": previous_timings(args.output, settings),
    }
    if timings:
        result["one_epoch_training"][keras.config.backend()] = {
            "command": f"KERAS_BACKEND={keras.config.backend()} {command.strip()}",
            "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
            "cpu_count": os.cpu_count(),
            **timings,
        }
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
