#!/usr/bin/env python
"""One multilingual model against bilingual ones on Multi30k, on a GPU, without TensorFlow.

What it measures: English -> German, French and Czech (Multi30k), either as
three bilingual models (one per direction, each with its own shared
English+X vocabulary of ``--vocabulary-size`` pieces) or as one multilingual
model (one shared vocabulary of ``--multilingual-vocabulary-size`` pieces over
English and the three targets). The multilingual model reads the target
language from a tag at the start of the source (``language_tag="source"``,
as Marian / OPUS-MT's ``>>fr<<``): the vocabulary reserves one control piece
per target language (``<2de>``, `keras_transformer.special_tokens`), its
training pairs are ``[<2xx>] + English -> X`` for the three corpora
concatenated (3 x 29,000 pairs) and shuffled into the same length buckets,
and `Translator.translate(..., target_language="fr")` puts the tag there.

Equal total training work: the same preset, batch size (tokens per batch),
dtype policy, warmup, label smoothing and snapshot averaging for all four
models, with a fixed number of updates: ``--updates`` for each bilingual
model and (number of target languages) x that for the multilingual one (fixed
counts, so the comparison does not depend on the machine's load; the wall
time of each training is recorded too). Every model translates test_2016_flickr of its direction(s)
with beam 4 (alpha 0.6), scored by sacreBLEU.

Compiled programs are kept in a JAX compilation cache (``--compilation-cache``,
default a temporary folder): the bilingual models share their shapes, so the
second and third reuse the first one's compiled steps. On one H200 the
defaults take about 5 minutes (the multilingual model ~2 min with its
compilation, each bilingual one under 1 min, decoding ~40 s in all).

Why without TensorFlow: the GPU machines this project borrows carry JAX and
PyTorch but no TensorFlow, so the text side (sentencepiece tokenizer, NumPy
length buckets) is that of ``multi30k_gpu.py``, whose functions this script
imports; the model side (``Transformer``, optimizer, loss, ``model.fit``,
``Translator`` with cached beam search) is the package's.

Command (on the GPU machine)::

    KERAS_BACKEND=jax python benchmarks/multi30k_multilingual_gpu.py \\
        --data .gpudata --output $OUT/multi30k_multilingual_gpu_jax_h200.json

CPU smoke run (tiny preset, 20 updates, 30 test sentences)::

    KERAS_BACKEND=jax python benchmarks/multi30k_multilingual_gpu.py \\
        --data DIR --quick --dtype-policy float32
"""

import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from multi30k_gpu import (  # noqa: E402
    add_recipe_arguments,
    device_name,
    read_lines,
    train_model,
    train_tokenizer,
)

LANGUAGE_TAG = "source"

# --quick: a CPU smoke run; explicit arguments still win.
QUICK = dict(preset="tiny", updates=20, test_sentences=30, steps_per_snapshot=10,
             tokens_per_batch=2048, vocabulary_size=2000,
             multilingual_vocabulary_size=4000, warmup_steps=100)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="folder with Multi30k *.gz "
                   "(train.{en,X}.gz, test_2016_flickr.{en,X}.gz)")
    p.add_argument("--languages", nargs="+", default=["de", "fr", "cs"],
                   help="target languages (source: English)")
    p.add_argument("--preset", default="small")
    p.add_argument("--updates", type=int, default=1500,
                   help="optimizer updates of each bilingual model")
    p.add_argument("--multilingual-updates", type=int, default=None,
                   help="updates of the multilingual model (default: "
                        "--updates x the number of languages: equal total work)")
    p.add_argument("--tokens-per-batch", type=int, default=8192)
    p.add_argument("--max-length", type=int, default=64)
    p.add_argument("--vocabulary-size", type=int, default=8000,
                   help="pieces of each bilingual (English+X) vocabulary")
    p.add_argument("--multilingual-vocabulary-size", type=int, default=16000,
                   help="pieces of the multilingual vocabulary (English and "
                        "every target language, language tags included)")
    add_recipe_arguments(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="CPU smoke run: " + ", ".join(
                       f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items()))
    p.add_argument("--compilation-cache", default="auto", metavar="DIR",
                   help="JAX backend: keep compiled XLA programs in DIR, so "
                        "that models of the same shapes (the bilingual ones, "
                        "whose vocabularies have the same size) reuse the "
                        "first one's compiled training and decoding steps "
                        "(about 40 s saved per later model on an H200). "
                        "'auto' (default): a new temporary folder, removed "
                        "at the end; 'off': none")
    p.add_argument("--output", help="result JSON path (rewritten after each "
                                    "model, so a cut-off run keeps what it did)")
    p.add_argument("--hypotheses-dir", help="folder for each model's test "
                   "translations (multi30k_multilingual_gpu_<bilingual|"
                   "multilingual>_en-<xx>.hyp.<xx>)")
    known, _ = p.parse_known_args(argv)
    if known.quick:
        p.set_defaults(**QUICK)
    args = p.parse_args(argv)
    if args.multilingual_updates is None:
        args.multilingual_updates = args.updates * len(args.languages)
    return args


def main(argv=None):
    sys.stdout.reconfigure(line_buffering=True)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)

    import keras
    import sacrebleu

    from keras_transformer.special_tokens import language_tag_ids
    # Imported from its module: the package exports Translator only where
    # TensorFlow is installed, and this script runs where it is not.
    from keras_transformer.models.transformer.translator import Translator

    backend = keras.config.backend()
    cache_dir = None
    if args.compilation_cache != "off" and backend == "jax":
        import jax

        cache_dir = args.compilation_cache
        if cache_dir == "auto":
            cache_dir = tempfile.mkdtemp(prefix="multi30k_multilingual_xla_")
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    t_start = time.perf_counter()
    languages = list(args.languages)

    def load(name):
        return read_lines(os.path.join(args.data, name + ".gz"))

    corpus = {lang: load(f"train.{lang}") for lang in ["en"] + languages}
    test = {lang: load(f"test_2016_flickr.{lang}")[:args.test_sentences]
            for lang in ["en"] + languages}
    if args.hypotheses_dir:
        os.makedirs(args.hypotheses_dir, exist_ok=True)

    metric = sacrebleu.BLEU()
    result = {
        "what": "Multi30k EN->{%s}: one multilingual model (target-language "
                "tag on the source) against one bilingual model per "
                "direction, equal total training work "
                "(benchmarks/multi30k_multilingual_gpu.py)" % ",".join(languages),
        "command": "KERAS_BACKEND=%s python benchmarks/multi30k_multilingual_gpu.py %s"
                   % (backend, " ".join(argv)),
        "backend": backend,
        "device": device_name(backend),
        "settings": vars(args),
        "language_tag": LANGUAGE_TAG,
        "language_tag_note": "the multilingual model reads the target language "
                             "from a reserved tag piece <2xx> put before the "
                             "English source (Marian/OPUS-MT style); the "
                             "decoder starts from BOS as usual",
        "training_work": "every update takes one batch of at most "
                         f"{args.tokens_per_batch} (padded) tokens per side; "
                         f"bilingual: {args.updates} updates each "
                         f"({args.updates * len(languages)} in all), "
                         f"multilingual: {args.multilingual_updates}",
        "compilation_cache": "each model's compiled programs are kept (JAX "
                             "persistent compilation cache): the bilingual "
                             "models after the first reuse its compiled "
                             "training and decoding steps, so their wall "
                             "times hold less compilation"
                             if cache_dir else None,
        "test_set": "test_2016_flickr",
        "test_sentences": len(test["en"]),
        "beam_size": args.beam_size,
        "alpha": args.alpha,
        "sacrebleu_signature": None,
        "directions": {},
        "trainings": {},
        "complete": False,
        "total_seconds": None,
    }

    def save():
        result["total_seconds"] = time.perf_counter() - t_start
        if args.output:
            os.makedirs(os.path.dirname(os.path.abspath(args.output)),
                        exist_ok=True)
            with open(args.output, "w") as f:
                json.dump(result, f, indent=1)

    def evaluate(translator, lang, kind, target_language=None):
        t_dec = time.perf_counter()
        hyps = translator.translate(
            test["en"], beam_size=args.beam_size, alpha=args.alpha,
            verbose=False, target_language=target_language)
        seconds = time.perf_counter() - t_dec
        bleu = metric.corpus_score(hyps, [test[lang]])
        result["sacrebleu_signature"] = str(metric.get_signature())
        if args.hypotheses_dir:
            path = os.path.join(args.hypotheses_dir,
                                f"multi30k_multilingual_gpu_{kind}_en-{lang}.hyp.{lang}")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(hyps) + "\n")
        direction = result["directions"].setdefault(f"en-{lang}", {})
        direction[f"{kind}_bleu"] = round(bleu.score, 2)
        direction[f"{kind}_decode_seconds"] = round(seconds, 2)
        if "bilingual_bleu" in direction and "multilingual_bleu" in direction:
            direction["delta"] = round(
                direction["multilingual_bleu"] - direction["bilingual_bleu"], 2)
        print(f"{kind} en-{lang}: BLEU {bleu.score:.2f} ({seconds:.1f} s decoding)")

    def train_one(name, src_ids, tgt_ids, tokenizer, updates, tokenizer_seconds):
        print(f"training {name}: {updates} updates, "
              f"{len(src_ids)} pairs, {tokenizer.vocabulary_size} pieces")
        model, stats = train_model(args, args.seed, src_ids, tgt_ids,
                                   tokenizer.vocabulary_size, max_updates=updates)
        stats = {
            "updates": stats.pop("optimizer_steps"),
            "train_seconds": round(stats.pop("fit_seconds"), 2),
            "training_pairs": len(src_ids),
            "vocabulary_size": tokenizer.vocabulary_size,
            "tokenizer_seconds": round(tokenizer_seconds, 2),
            "parameters": int(model.count_params()),
            **stats,
        }
        result["trainings"][name] = stats
        print(json.dumps({k: v for k, v in stats.items() if k != "history"}))
        return model

    # The multilingual model first: the longest training, and the one every
    # direction's comparison needs.
    t0 = time.perf_counter()
    tokenizer = train_tokenizer(
        itertools.chain(corpus["en"], *(corpus[lang] for lang in languages)),
        args.multilingual_vocabulary_size, args.seed, languages=languages)
    tags = language_tag_ids(tokenizer.proto)
    assert sorted(tags) == sorted(languages), tags
    en_ids = tokenizer.encode(corpus["en"])
    src_ids, tgt_ids = [], []
    for lang in languages:
        src_ids += [[tags[lang]] + ids for ids in en_ids]
        tgt_ids += tokenizer.encode(corpus[lang])
    tokenizer_seconds = time.perf_counter() - t0
    print(f"multilingual tokenizer: {tokenizer.vocabulary_size} pieces, "
          f"tags {tags}, {tokenizer_seconds:.1f} s")
    model = train_one("multilingual", src_ids, tgt_ids, tokenizer,
                  args.multilingual_updates, tokenizer_seconds)
    result["trainings"]["multilingual"]["language_tag_ids"] = tags
    translator = Translator(model, tokenizer, batch_size=args.eval_batch_size,
                            language_tag=LANGUAGE_TAG)
    for lang in languages:
        evaluate(translator, lang, "multilingual", target_language=lang)
    save()
    del model, translator

    for lang in languages:
        t0 = time.perf_counter()
        tokenizer = train_tokenizer(
            itertools.chain(corpus["en"], corpus[lang]),
            args.vocabulary_size, args.seed)
        src_ids = tokenizer.encode(corpus["en"])
        tgt_ids = tokenizer.encode(corpus[lang])
        tokenizer_seconds = time.perf_counter() - t0
        model = train_one(f"bilingual_en-{lang}", src_ids, tgt_ids, tokenizer,
                      args.updates, tokenizer_seconds)
        evaluate(Translator(model, tokenizer, batch_size=args.eval_batch_size),
                 lang, "bilingual")
        save()
        del model

    result["complete"] = True
    save()
    if cache_dir and args.compilation_cache == "auto":
        shutil.rmtree(cache_dir, ignore_errors=True)
    summary = {k: v for k, v in result.items() if k != "trainings"}
    summary["trainings"] = {
        name: {k: v for k, v in stats.items() if k != "history"}
        for name, stats in result["trainings"].items()}
    print(json.dumps(summary, indent=1))

    print(f"\n{result['test_set']}, {result['test_sentences']} sentences, "
          f"beam {args.beam_size}, sacreBLEU; {result['device']}, {backend}\n")
    print("| direction | bilingual | multilingual | delta |")
    print("|---|---:|---:|---:|")
    for direction, scores in result["directions"].items():
        print(f"| {direction} | {scores['bilingual_bleu']:.2f} | "
              f"{scores['multilingual_bleu']:.2f} | {scores['delta']:+.2f} |")
    print("\n| training | updates | seconds | vocabulary |")
    print("|---|---:|---:|---:|")
    for name, stats in result["trainings"].items():
        print(f"| {name} | {stats['updates']} | {stats['train_seconds']:.1f} | "
              f"{stats['vocabulary_size']} |")
    print(f"\ntotal {result['total_seconds']:.1f} s")


if __name__ == "__main__":
    main()
