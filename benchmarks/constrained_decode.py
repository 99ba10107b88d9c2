#!/usr/bin/env python
"""Lexically constrained decoding on Multi30k: its cost and what it does.

A trained Multi30k run directory (``--model-dir``) translates the English
test set (``--split``, default test_2016_flickr) with beam search (beam 4,
alpha 0.6) three times: with 0, 1 and 3 constraints per sentence. The
constraints are words taken from each sentence's reference: distinct words
of at least ``--min-letters`` letters, drawn at random (``--seed``); a
reference with fewer such words gives what it has. For each condition:

* decode time: wall-clock and process CPU seconds per sentence of one
  `Translator.translate` call over the whole set, after a first call on a
  few sentences that compiles the search (reported apart);
* the constraint rate: the share of constraints that appear in their
  output, each as a word start (the phrase's text after a space or at the
  start; the search guarantees its tokens, so 100% is expected);
* corpus BLEU (sacreBLEU defaults, cased, detokenized) against the
  references, and its change from the unconstrained translations.

Runs under the current ``KERAS_BACKEND`` (TensorFlow is the steadiest for
timing: one trace serves every batch shape).

Example::

    KERAS_BACKEND=tensorflow python benchmarks/constrained_decode.py \\
        --model-dir runs/multi30k

Writes ``decode_constrained_<tag>.{md,json}`` to ``--output-dir``.
"""

import argparse
import datetime
import gzip
import json
import os
import random
import re
import sys
import time

from _workers import recorded_command
from ensemble_decode import cpu_description

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(os.path.dirname(REPO), "shared", "data", "multi30k")


def log(message):
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def reference_constraints(references, count, min_letters, seed):
    """Per reference, up to ``count`` distinct words of at least
    ``min_letters`` letters, in random order."""
    rng = random.Random(seed)
    rows = []
    for reference in references:
        words = []
        for word in re.findall(r"\w+", reference):
            if len(word) >= min_letters and word.isalpha() and word not in words:
                words.append(word)
        rng.shuffle(words)
        rows.append(words[:count])
    return rows


def appears(phrase, text):
    """Whether ``phrase`` occurs in ``text`` at a word start."""
    return re.search(r"(?<!\S)" + re.escape(phrase), text) is not None


def run(args):
    import keras  # noqa: F401  (the backend is chosen by KERAS_BACKEND)

    from keras_transformer.models.transformer.translator import Translator
    from keras_transformer.training.bleu import corpus_bleu

    sources = read_lines(os.path.join(args.data_dir, f"{args.split}.en.gz"))
    references = read_lines(os.path.join(args.data_dir, f"{args.split}.de.gz"))
    if args.num_sentences:
        sources, references = sources[: args.num_sentences], references[: args.num_sentences]
    translator = Translator.from_directory(args.model_dir, batch_size=args.batch_size)
    options = dict(beam_size=args.beam_size, alpha=args.alpha)
    rows = []
    baseline_bleu = None
    for count in (0, 1, 3):
        constraints = reference_constraints(references, count, args.min_letters, args.seed)
        given = None if count == 0 else constraints
        warm_rows = slice(0, args.batch_size)
        start = time.perf_counter()
        translator.translate(
            sources[warm_rows], constraints=None if given is None else given[warm_rows],
            verbose=False, **options,
        )
        first_call = time.perf_counter() - start
        start, cpu_start = time.perf_counter(), time.process_time()
        outputs = translator.translate(sources, constraints=given, verbose=False, **options)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
        total = sum(len(c) for c in constraints) if count else 0
        met = sum(appears(p, o) for c, o in zip(constraints, outputs) for p in c) if count else 0
        bleu = corpus_bleu(outputs, references).score
        if baseline_bleu is None:
            baseline_bleu = bleu
        row = {
            "constraints_per_sentence": count,
            "constraints": total,
            "constraints_met": met,
            "constraint_rate": (met / total) if total else None,
            "seconds_per_sentence": seconds / len(sources),
            "cpu_seconds_per_sentence": cpu_seconds / len(sources),
            "first_call_seconds": first_call,
            "bleu": bleu,
            "bleu_change": bleu - baseline_bleu,
        }
        log(json.dumps(row))
        rows.append(row)
    return rows, len(sources)


def write_results(args, rows, num_sentences):
    import keras

    name, flags = cpu_description()
    cpu = f"{name} ({', '.join(flags) or 'no AVX2'}), {os.cpu_count()} CPU(s)"
    summary = {
        "command": recorded_command(__file__),
        "date": datetime.date.today().isoformat(),
        "cpu": cpu,
        "backend": keras.config.backend(),
        "model_dir": os.path.abspath(args.model_dir),
        "split": args.split,
        "num_sentences": num_sentences,
        "beam_size": args.beam_size,
        "alpha": args.alpha,
        "batch_size": args.batch_size,
        "load_average_end": list(os.getloadavg()),
        "results": rows,
    }
    os.makedirs(args.output_dir, exist_ok=True)
    base = os.path.join(args.output_dir, f"decode_constrained_{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump(summary, f, indent=2)
    lines = [
        f"# Lexically constrained decoding on Multi30k {args.split} ({args.tag})",
        "",
        f"Command: `{summary['command']}`",
        "",
        f"Date: {summary['date']}; CPU: {cpu}; backend {summary['backend']}; "
        f"model {summary['model_dir']}; {num_sentences} sentences, beam {args.beam_size}, "
        f"alpha {args.alpha}, batches of {args.batch_size}. Constraints: distinct reference "
        f"words of at least {args.min_letters} letters, drawn at random (seed {args.seed}). "
        f"1-minute load average at the end: {summary['load_average_end'][0]:.1f}.",
        "",
        "| constraints / sentence | constraints | met | rate | ms / sentence "
        "| CPU ms / sentence | first call (s) | BLEU | BLEU change |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        rate = "" if row["constraint_rate"] is None else f"{100 * row['constraint_rate']:.1f}%"
        lines.append(
            f"| {row['constraints_per_sentence']} | {row['constraints']} "
            f"| {row['constraints_met']} | {rate} "
            f"| {1000 * row['seconds_per_sentence']:.1f} "
            f"| {1000 * row['cpu_seconds_per_sentence']:.1f} "
            f"| {row['first_call_seconds']:.1f} | {row['bleu']:.2f} "
            f"| {row['bleu_change']:+.2f} |"
        )
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    log(f"wrote {base}.json and {base}.md")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True, help="a trained Multi30k run directory")
    parser.add_argument("--data-dir", default=DATA)
    parser.add_argument("--split", default="test_2016_flickr")
    parser.add_argument("--num-sentences", type=int, default=0, help="0: all")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--min-letters", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tag", default="cpu")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    return parser.parse_args(argv)


def main():
    args = parse_args()
    sys.path.insert(0, REPO)
    rows, num_sentences = run(args)
    write_results(args, rows, num_sentences)
    return 0


if __name__ == "__main__":
    sys.exit(main())
