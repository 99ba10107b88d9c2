"""Does the training loop wait for its batches? The NumPy input path of
JAX and PyTorch, with and without its prefetching thread.

Trains the ``tiny`` preset on the default task (English -> German number
words, encoded in memory: `corpus_from_pairs`) with `model.fit`, fed as the
trainer feeds JAX and PyTorch (`make_batches_from_corpus(...).generator()`),
packed rows, in one process. After a warmup ``fit`` (compilation), a timed
``fit`` of ``--steps`` updates runs twice on the same model: with the
batches built ahead in a background thread (``prefetch=8``, the trainer's
setting) and without (``prefetch=0``: each batch built in the loop when
``fit`` asks for it). For each, the step time and the time ``fit`` spent
waiting for ``next(batches)`` (with the thread: for the queue; without: the
building itself), per step and as a share of the ``fit`` time.

Usage::

    KERAS_BACKEND=jax python benchmarks/input_wait.py --steps 200

Result: ``benchmarks/results/input_wait_<backend>.json`` with the machine
(CPU model, cores), the load average and the command.
"""

import argparse
import json
import os
import sys
import time

import keras

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _workers import cpu_name, recorded_command  # noqa: E402

from keras_transformer.data import (  # noqa: E402
    SubwordTokenizer,
    corpus_from_pairs,
    default_task_splits,
    make_batches_from_corpus,
)
from keras_transformer.training.config import TrainConfig  # noqa: E402
from keras_transformer.training.run_model import build_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Timed:
    """A generator's batches, timing each ``next``."""

    def __init__(self, generator):
        self.generator = generator
        self.seconds = 0.0
        self.count = 0

    def __iter__(self):
        while True:
            start = time.perf_counter()
            try:
                batch = next(self.generator)
            except StopIteration:
                return
            self.seconds += time.perf_counter() - start
            self.count += 1
            yield batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup-steps", type=int, default=20)
    parser.add_argument("--tokens-per-batch", type=int, default=2048)
    parser.add_argument("--max-length", type=int, default=32)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    splits = default_task_splits(seed=0)
    sources, targets = splits["train"]
    config = TrainConfig(preset="tiny", vocabulary_size=256, jit_compile=True).resolved()
    tokenizer = SubwordTokenizer.train(
        list(sources) + list(targets), config.vocabulary_size, seed=0
    )
    corpus = corpus_from_pairs(sources, targets, tokenizer.proto)
    options = dict(
        tokens_per_batch=args.tokens_per_batch, max_length=args.max_length,
        bucketing="packed", seed=0, repeat=True, vocabulary_size=tokenizer.vocabulary_size,
    )  # fmt: skip
    model = build_model(config, tokenizer.vocabulary_size)
    warm, _ = make_batches_from_corpus(corpus, **options)
    model.fit(warm.generator(), steps_per_epoch=args.warmup_steps, epochs=1, verbose=0,
              shuffle=False)
    result = {
        "backend": keras.config.backend(),
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "preset": "tiny",
        "steps": args.steps,
        "batch_shape": [args.tokens_per_batch // args.max_length, args.max_length],
        "command": recorded_command(__file__),
        "runs": {},
    }
    output = args.output or os.path.join(
        ROOT, "benchmarks", "results", f"input_wait_{keras.config.backend()}.json"
    )
    for prefetch in (8, 0, 8):  # with, without, with again (drift)
        feed, _ = make_batches_from_corpus(corpus, prefetch=prefetch, **options)
        timed = _Timed(feed.generator())
        start = time.perf_counter()
        model.fit(iter(timed), steps_per_epoch=args.steps, epochs=1, verbose=0, shuffle=False)
        seconds = time.perf_counter() - start
        run = {
            "prefetch": prefetch,
            "fit_seconds": round(seconds, 3),
            "step_ms": round(1000 * seconds / args.steps, 3),
            "wait_ms_per_step": round(1000 * timed.seconds / max(1, timed.count), 3),
            "wait_share": round(timed.seconds / seconds, 4),
            "load_average": os.getloadavg(),
        }
        key = f"prefetch_{prefetch}" + ("_again" if f"prefetch_{prefetch}" in result["runs"] else "")
        result["runs"][key] = run
        print(json.dumps({key: run}), flush=True)
        # Written after each run, so that a run cut short keeps the others.
        with open(output, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    print(output)


if __name__ == "__main__":
    main()
