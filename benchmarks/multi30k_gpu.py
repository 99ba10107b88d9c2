#!/usr/bin/env python
"""A short Multi30k EN->DE training on a GPU, without TensorFlow.

Why this script exists beside ``multi30k_bleu.py``: the package's own input
pipeline (``tf.data`` + tensorflow-text) needs TensorFlow, and the GPU machines
this project borrows carry JAX and PyTorch but no TensorFlow, with no network
to install it (its wheel is ~600 MB, more than can be carried there). So this
script keeps the *model side* of the package exactly as users get it
(``Transformer.from_preset``, ``transformer_optimizer``,
``LabelSmoothedCrossEntropy``, ``model.fit``, ``Translator`` with cached beam
search) and replaces only the text side:

* tokenization: the ``sentencepiece`` Python library with the options of
  ``SubwordTokenizer.train`` (BPE, shared vocabulary, nmt_nfkc, reserved ids
  pad 0, unk 1, <s> 2, </s> 3);
* batching: NumPy length buckets under a token budget, the rule of
  ``data/pipeline.py`` (pair length = max(source + EOS, BOS + target);
  buckets every 8 tokens up to ``--max-length``; batch = budget // length).

Then it translates test_2016_flickr with beam 4 (alpha 0.6) and scores it with
sacreBLEU. The final model is the mean of the last ``--average-last-n``
snapshots (one every ``--steps-per-snapshot`` steps), as the CPU recipe does.

Example (on the GPU machine)::

    KERAS_BACKEND=jax python benchmarks/multi30k_gpu.py --data DIR \\
        --minutes 4 --output benchmarks/results/multi30k_gpu_jax.json
"""

import argparse
import gzip
import io
import itertools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


class SentencePieceText:
    """What `Translator` needs from a tokenizer, on sentencepiece: encode,
    decode, and ``proto`` (the serialized model, where `Translator` finds the
    language tags of a multilingual vocabulary)."""

    def __init__(self, proto):
        import sentencepiece as spm

        self._proto = proto
        self._processor = spm.SentencePieceProcessor(model_proto=proto)

    @property
    def proto(self):
        return self._proto

    @property
    def vocabulary_size(self):
        return self._processor.get_piece_size()

    def encode(self, sentences):
        return self._processor.encode(list(sentences), out_type=int)

    def decode(self, ids):
        from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

        out = []
        for row in ids:
            row = [int(t) for t in row]
            if EOS_ID in row:
                row = row[: row.index(EOS_ID)]
            out.append(self._processor.decode(
                [t for t in row if t not in (PAD_ID, BOS_ID)]))
        return out


def train_tokenizer(sentences, vocabulary_size, seed, languages=()):
    """A shared BPE vocabulary; ``languages``: the target languages of a
    multilingual model, one reserved tag piece each (``<2de>``, a control
    symbol right after ids 0-3), as the package's
    ``sentencepiece_trainer_arguments(..., languages=...)`` reserves them."""
    import sentencepiece as spm

    from keras_transformer import special_tokens as st
    from keras_transformer.models.transformer.sentencepiece_vocabulary import (
        sentencepiece_trainer_arguments,
    )

    tags = {}
    if languages:
        tags["control_symbols"] = sentencepiece_trainer_arguments(
            vocabulary_size, languages=languages)["control_symbols"]
    spm.set_random_generator_seed(seed)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=(s for s in sentences if s),
        model_writer=model,
        vocab_size=vocabulary_size,
        model_type="bpe",
        character_coverage=1.0,
        normalization_rule_name="nmt_nfkc",
        pad_id=st.PAD_ID, unk_id=st.UNK_ID, bos_id=st.BOS_ID, eos_id=st.EOS_ID,
        pad_piece=st.PAD_PIECE, unk_piece=st.UNK_PIECE,
        bos_piece=st.BOS_PIECE, eos_piece=st.EOS_PIECE,
        num_threads=os.cpu_count() or 1,
        minloglevel=2,
        **tags,
    )
    return SentencePieceText(model.getvalue())


def make_batches(src_ids, tgt_ids, max_length, tokens_per_batch, rng):
    """One epoch of padded batches, shuffled; returns (batches, padding)."""
    import numpy as np

    from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

    buckets = list(range(8, max_length + 1, 8))
    by_bucket = {length: [] for length in buckets}
    for s, t in zip(src_ids, tgt_ids):
        if len(s) + 1 > max_length or len(t) + 1 > max_length:
            continue
        length = max(len(s) + 1, len(t) + 1)
        by_bucket[next(b for b in buckets if b >= length)].append((s, t))
    batches, real, padded = [], 0, 0
    for length, pairs in by_bucket.items():
        order = rng.permutation(len(pairs))
        size = tokens_per_batch // length
        for start in range(0, len(pairs) - size + 1, size):  # drop remainder
            chunk = [pairs[i] for i in order[start:start + size]]
            enc = np.full((size, length), PAD_ID, np.int32)
            dec = np.full((size, length), PAD_ID, np.int32)
            lab = np.full((size, length), PAD_ID, np.int32)
            for row, (s, t) in enumerate(chunk):
                enc[row, :len(s) + 1] = s + [EOS_ID]
                dec[row, :len(t) + 1] = [BOS_ID] + t
                lab[row, :len(t) + 1] = t + [EOS_ID]
                real += len(s) + len(t) + 2
            padded += 2 * size * length
            batches.append(({"encoder_token_ids": enc,
                             "decoder_token_ids": dec}, lab))
    order = rng.permutation(len(batches))
    return [batches[i] for i in order], 1.0 - real / max(padded, 1)


def device_name(backend):
    try:
        if backend == "jax":
            import jax

            return jax.devices()[0].device_kind
        if backend == "torch":
            import torch

            if torch.cuda.is_available():
                return torch.cuda.get_device_name()
    except Exception:  # best effort, for the report only
        pass
    return "cpu"


def train_model(args, seed, src_ids, tgt_ids, vocabulary_size, max_updates=None):
    """One training with ``seed``; returns (model, stats). It stops after
    ``max_updates`` optimizer updates when given, else after ``--minutes``."""
    import keras
    import numpy as np

    import keras_transformer as kt

    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    model = kt.Transformer.from_preset(
        args.preset, vocabulary_size=vocabulary_size, dtype=args.dtype_policy)
    model.compile(
        optimizer=kt.transformer_optimizer(
            model.d_model, warmup_steps=args.warmup_steps,
            scale=args.learning_rate_scale),
        loss=kt.LabelSmoothedCrossEntropy(label_smoothing=args.label_smoothing),
        metrics=[kt.MaskedTokenAccuracy()],
    )

    padding = []
    tokens_seen = [0]

    def batches():
        while True:
            epoch, pad = make_batches(src_ids, tgt_ids, args.max_length,
                                      args.tokens_per_batch, rng)
            padding.append(pad)
            for x, y in epoch:
                tokens_seen[0] += int(np.count_nonzero(y))
                yield x, y

    snapshots, history = [], []
    budget = None if max_updates else 60.0 * args.minutes
    updates = [0]

    class Budget(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            updates[0] += 1
            if max_updates and updates[0] >= max_updates:
                self.model.stop_training = True
            elif budget is not None and time.perf_counter() - self.start > budget:
                self.model.stop_training = True

        def on_epoch_end(self, epoch, logs=None):
            snapshots.append([w.copy() for w in self.model.get_weights()])
            del snapshots[:-args.average_last_n]
            history.append({"seed": seed,
                            "step": updates[0],
                            "seconds": time.perf_counter() - self.start,
                            **{k: float(v) for k, v in (logs or {}).items()}})
            print(json.dumps(history[-1]), flush=True)

    t_fit = time.perf_counter()
    epochs = (-(-max_updates // args.steps_per_snapshot) if max_updates
              else 10**6)
    model.fit(batches(), steps_per_epoch=args.steps_per_snapshot, epochs=epochs,
              callbacks=[Budget()], verbose=0)
    fit_seconds = time.perf_counter() - t_fit
    steps = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
    if len(snapshots) > 1:
        model.set_weights([np.mean(ws, axis=0) for ws in zip(*snapshots)])
    return model, {
        "seed": seed,
        "optimizer_steps": steps,
        "fit_seconds": fit_seconds,
        "target_tokens": tokens_seen[0],
        "target_tokens_per_second_incl_compile": tokens_seen[0] / fit_seconds,
        "padding_fraction": float(np.mean(padding)) if padding else None,
        "averaged_snapshots": len(snapshots),
        "history": history,
    }


def add_recipe_arguments(p):
    """The training and decoding settings of the recipe (shared with
    ``multi30k_multilingual_gpu.py``)."""
    p.add_argument("--dtype-policy", default="mixed_bfloat16")
    p.add_argument("--warmup-steps", type=int, default=1000)
    p.add_argument("--learning-rate-scale", type=float, default=1.0)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--steps-per-snapshot", type=int, default=200)
    p.add_argument("--average-last-n", type=int, default=3)
    p.add_argument("--beam-size", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--eval-batch-size", type=int, default=64)
    p.add_argument("--test-sentences", type=int, default=None,
                   help="translate only the first N test sentences (smoke runs)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="folder with Multi30k *.gz")
    p.add_argument("--preset", default="small")
    p.add_argument("--minutes", type=float, default=4.0,
                   help="training budget of each model")
    p.add_argument("--tokens-per-batch", type=int, default=8192)
    p.add_argument("--max-length", type=int, default=64)
    p.add_argument("--vocabulary-size", type=int, default=8000)
    add_recipe_arguments(p)
    p.add_argument("--seed", type=int, nargs="+", default=[0],
                   help="one training per seed; with two or more, the models "
                        "are also decoded as one ensemble (equal weights)")
    p.add_argument("--output", help="result JSON path")
    p.add_argument("--hypotheses", help="where to write the test translations "
                                        "(of the ensemble when there are several seeds)")
    args = p.parse_args(argv)

    import keras
    import sacrebleu

    from keras_transformer.decoding.ensemble import Ensemble
    # Imported from its module: the package exports Translator only where
    # TensorFlow is installed, and this script runs where it is not.
    from keras_transformer.models.transformer.translator import Translator

    backend = keras.config.backend()
    t_start = time.perf_counter()

    data = {name: read_lines(os.path.join(args.data, name + ".gz")) for name in (
        "train.en", "train.de", "test_2016_flickr.en", "test_2016_flickr.de")}
    tokenizer = train_tokenizer(
        itertools.chain(data["train.en"], data["train.de"]),
        args.vocabulary_size, args.seed[0])
    src_ids = tokenizer.encode(data["train.en"])
    tgt_ids = tokenizer.encode(data["train.de"])
    print(f"tokenizer: {tokenizer.vocabulary_size} pieces, "
          f"{time.perf_counter() - t_start:.1f} s", flush=True)

    test_src = data["test_2016_flickr.en"][:args.test_sentences]
    test_ref = data["test_2016_flickr.de"][:args.test_sentences]

    def evaluate(model):
        translator = Translator(model, tokenizer, batch_size=args.eval_batch_size)
        t_dec = time.perf_counter()
        hyps = translator.translate(test_src, beam_size=args.beam_size,
                                    alpha=args.alpha, verbose=False)
        decode_seconds = time.perf_counter() - t_dec
        metric = sacrebleu.BLEU()
        bleu = metric.corpus_score(hyps, [test_ref])
        return hyps, {"test_2016_flickr_sacrebleu": round(bleu.score, 2),
                      "sacrebleu_signature": str(metric.get_signature()),
                      "decode_seconds": decode_seconds}

    models, runs = [], []
    for seed in args.seed:
        model, stats = train_model(args, seed, src_ids, tgt_ids,
                                   tokenizer.vocabulary_size)
        hyps, scores = evaluate(model)
        stats.update(scores)
        print(json.dumps({k: v for k, v in stats.items() if k != "history"}),
              flush=True)
        models.append(model)
        runs.append(stats)
    ensemble = None
    if len(models) > 1:
        hyps, ensemble = evaluate(Ensemble(models))
        ensemble["seeds"] = args.seed
        print(json.dumps({"ensemble": ensemble}), flush=True)

    first = {k: v for k, v in runs[0].items() if k not in ("seed", "history")}
    result = {
        "what": "Multi30k EN->DE, short GPU training (benchmarks/multi30k_gpu.py)",
        "command": "KERAS_BACKEND=%s python benchmarks/multi30k_gpu.py %s" % (
            backend, " ".join(argv if argv is not None else sys.argv[1:])),
        "backend": backend,
        "device": device_name(backend),
        "settings": vars(args),
        "parameters": int(models[0].count_params()),
        # The first seed's figures at the top level, every seed's in "runs".
        **first,
        "test_sentences": len(test_src),
        "runs": runs,
        "ensemble": ensemble,
        "history": [h for run in runs for h in run["history"]],
        "total_seconds": time.perf_counter() - t_start,
    }
    print(json.dumps({k: v for k, v in result.items()
                      if k not in ("history", "runs")}, indent=1))
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(result, f, indent=1)
    if args.hypotheses:
        with open(args.hypotheses, "w", encoding="utf-8") as f:
            f.write("\n".join(hyps) + "\n")


if __name__ == "__main__":
    main()
