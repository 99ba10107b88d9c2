"""Quickstart: build, fit, translate, save, and reload under another backend.

    python examples/quickstart.py                      # JAX unless KERAS_BACKEND says otherwise
    KERAS_BACKEND=torch python examples/quickstart.py --reload-backend tensorflow
    python examples/quickstart.py --data ../shared/data/multi30k   # real parallel text

Trains a "tiny" Transformer on the embedded number-words task (English number
words -> German number words) for --epochs epochs, translates a few held-out
numbers with beam search, saves model.keras + vocab.spm, then reloads the
saved model in a fresh process under another backend and checks that it
gives the same translations.
"""

import argparse
import itertools
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402

import keras_transformer as kt  # noqa: E402
from keras_transformer.data import (  # noqa: E402
    SubwordTokenizer,
    default_task_splits,
    make_dataset,
    read_parallel,
)
from keras_transformer import Translator

RELOAD = """
import sys
from keras_transformer import Translator
translator = Translator.from_directory(sys.argv[1])
for line in translator.translate(sys.argv[2:], beam_size=4):
    print(line)
"""


def load_pairs(data_dir):
    if data_dir is None:
        splits = default_task_splits(seed=0)
        return splits["train"], splits["test"]
    train = read_parallel(os.path.join(data_dir, "train.en.gz"), os.path.join(data_dir, "train.de.gz"))
    test = read_parallel(
        os.path.join(data_dir, "test_2016_flickr.en.gz"), os.path.join(data_dir, "test_2016_flickr.de.gz")
    )
    return train[:2], test[:2]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="directory with train.{en,de}.gz and test_2016_flickr.{en,de}.gz")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--output-dir", default="runs/quickstart")
    parser.add_argument("--reload-backend", default=None, help="defaults to a backend other than this one")
    args = parser.parse_args(argv)

    (train_src, train_tgt), (test_src, test_tgt) = load_pairs(args.data)
    tokenizer = SubwordTokenizer.train(
        itertools.chain(train_src, train_tgt), vocabulary_size=300 if args.data is None else 8000
    )
    dataset, report = make_dataset(train_src, train_tgt, tokenizer, tokens_per_batch=2048, max_length=64)
    print(report.summary())

    model = kt.Transformer.from_preset("tiny", vocabulary_size=tokenizer.vocabulary_size)
    model.compile(
        optimizer=kt.transformer_optimizer(model.d_model, warmup_steps=200, scale=2.0),
        loss=kt.LabelSmoothedCrossEntropy(0.1),
        metrics=[kt.MaskedTokenAccuracy()],
    )
    model.fit(dataset, epochs=args.epochs)

    translator = Translator(model, tokenizer)
    samples = list(test_src[:5])
    translations = translator.translate(samples, beam_size=4, alpha=0.6)
    for source, reference, hypothesis in zip(samples, test_tgt[:5], translations):
        print(f"{source!r} -> {hypothesis!r} (reference {reference!r})")

    os.makedirs(args.output_dir, exist_ok=True)
    model.save(os.path.join(args.output_dir, "model.keras"))
    tokenizer.save(args.output_dir)

    other = args.reload_backend or next(b for b in ("tensorflow", "jax", "torch") if b != keras.backend.backend())
    result = subprocess.run(
        [sys.executable, "-c", RELOAD, args.output_dir, *samples],
        env=dict(os.environ, KERAS_BACKEND=other),
        capture_output=True,
        text=True,
        check=True,
    )
    reloaded = result.stdout.strip().splitlines()[-len(samples):]
    same = reloaded == translations
    print(f"reloaded under {other}: {'same translations' if same else 'DIFFERENT translations'}")
    if not same:
        raise SystemExit(f"{reloaded} != {translations}")
    return translations


if __name__ == "__main__":
    main()
