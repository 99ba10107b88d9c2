"""Writes tests/data/numbers_preset/: a small trained number-words translator.

The tests that need a *trained* model (int8 keeps the translations, the
cross-attention alignments are monotone, the README's fine-tuning story) load
this committed keras-hub preset instead of training one per backend, which
would cost minutes of suite time. It is small on purpose (d_model 64, two
layers each side, 128 pieces: about 1 MB of weights).

Regenerate (about 2 minutes on 2 CPU cores; any backend):

    KERAS_BACKEND=tensorflow python tests/data/make_numbers_preset.py

It prints the exact-match rate on the 1,000 held-out test numbers and writes
it to ``numbers_preset/training.json``; the preset is only written when that
rate is at least 0.95.
"""

import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import keras  # noqa: E402

import keras_transformer as kt  # noqa: E402
from keras_transformer.data import SubwordTokenizer, default_task_splits  # noqa: E402

ARCHITECTURE = dict(
    vocabulary_size=128, num_layers=2, d_model=64, num_heads=4, d_ff=256, dropout_rate=0.1
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(HERE, "numbers_preset"))
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()

    start = time.time()
    keras.utils.set_random_seed(0)
    splits = default_task_splits(seed=0)
    src, tgt = splits["train"]
    subword = SubwordTokenizer.train(src + tgt, ARCHITECTURE["vocabulary_size"])
    tokenizer = kt.TransformerTokenizer(proto=subword.proto)
    preprocessor = kt.TransformerSeq2SeqLMPreprocessor(
        tokenizer, encoder_sequence_length=24, decoder_sequence_length=24
    )
    backbone = kt.Transformer(**ARCHITECTURE)
    lm = kt.TransformerSeq2SeqLM(backbone, preprocessor, beam_size=4, max_extra_length=16)
    lm.compile(warmup_steps=400)
    lm.fit(
        {"encoder_text": src, "decoder_text": tgt},
        validation_data={"encoder_text": splits["valid"][0], "decoder_text": splits["valid"][1]},
        batch_size=64,
        epochs=args.epochs,
        verbose=2,
    )
    test_src, test_tgt = splits["test"]
    hypotheses = lm.generate(test_src, batch_size=100)
    exact = sum(h == t for h, t in zip(hypotheses, test_tgt)) / len(test_tgt)
    report = {
        "what": "tests/data/numbers_preset: trained by this script",
        "command": "KERAS_BACKEND=tensorflow python tests/data/make_numbers_preset.py",
        "backend": keras.config.backend(),
        "architecture": ARCHITECTURE,
        "epochs": args.epochs,
        "test_exact_match_beam4": exact,
        "seconds": round(time.time() - start, 1),
    }
    print(json.dumps(report, indent=1))
    if exact < 0.95:
        raise SystemExit(f"exact match {exact:.3f} < 0.95: preset not written")
    if os.path.exists(args.output):
        shutil.rmtree(args.output)
    lm.save_to_preset(args.output)
    with open(os.path.join(args.output, "training.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
