#!/usr/bin/env python
"""Decoding steps spent on finished sentences, from a serving benchmark's outputs.

A request's sentences end at different steps. A search whose shapes are
fixed (JAX's, XLA's) decodes every row until the request's last sentence
ends; compiled PyTorch halves its batch as sentences finish
(`keras_transformer.decoding.search_loop.halves_finished_rows`); the
SavedModel and CTranslate2 drop each sentence as it ends. This counts the
sentence-steps (one sentence's beams through one decoding step) that each
policy runs over the requests of a `serving_speed.py` result, taking each
translation's length in pieces (+1 for EOS) as the step at which its
sentence ends: the beam search's stopping rule can keep a sentence a few
steps longer, so the counts are an estimate of the work's shape, not a
timing.

    python benchmarks/finished_rows.py \
        --result benchmarks/results/serving_speed_multi30k_small_0ee68e1.json \
        --engine translator_torch_compiled --model-dir RUN --tag multi30k_small

Writes ``benchmarks/results/finished_rows_<tag>.{md,json}``.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _workers import recorded_command  # noqa: E402


def sentence_steps(lengths, batch_size, halved_size):
    """``{policy: sentence-steps}`` over requests of ``batch_size`` sentences
    in order, a sentence ending after ``lengths[i]`` steps."""
    totals = {"fixed batch": 0, "halved batch": 0, "each sentence dropped": 0}
    for start in range(0, len(lengths), batch_size):
        request = lengths[start:start + batch_size]
        size = len(request)
        totals["fixed batch"] += size * max(request)
        totals["each sentence dropped"] += sum(request)
        for step in range(1, max(request) + 1):
            searching = sum(length >= step for length in request)
            # The compiled loop stops once half the batch holds the
            # searching sentences and continues on `halved_size` rows.
            size = halved_size(size, searching)
            totals["halved batch"] += size
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--result", required=True, help="a serving_speed_*.json file")
    parser.add_argument("--engine", required=True, help="the row whose translations to read")
    parser.add_argument("--model-dir", required=True, help="the run (its vocab.spm)")
    parser.add_argument("--tag", required=True)
    args = parser.parse_args()

    import sentencepiece

    from keras_transformer.decoding.search_loop import (
        FEWEST_HALVED_SENTENCES,
        halved_size,
    )

    with open(args.result) as f:
        result = json.load(f)
    rows = {row["engine"]: row for row in result["results"]}
    if args.engine not in rows:
        parser.error(f"--engine {args.engine!r} is not in {args.result}: {sorted(rows)}")
    vocabulary = os.path.join(args.model_dir, "vocab.spm")
    if not os.path.exists(vocabulary):
        parser.error(f"--model-dir {args.model_dir!r} has no vocab.spm")
    pieces = sentencepiece.SentencePieceProcessor(model_file=vocabulary)
    lengths = [len(pieces.encode(text)) + 1 for text in rows[args.engine]["translations"]]
    batch_size = result["settings"]["batch_size"]
    totals = sentence_steps(lengths, batch_size, halved_size)
    fixed = totals["fixed batch"]
    report = {
        "command": recorded_command(__file__),
        "result": os.path.basename(args.result),
        "engine": args.engine,
        "sentences": len(lengths),
        "batch_size": batch_size,
        "fewest_halved_sentences": FEWEST_HALVED_SENTENCES,
        "sentence_steps": totals,
        "share_of_fixed": {k: round(v / fixed, 3) for k, v in totals.items()},
    }
    out = os.path.join(HERE, "results", f"finished_rows_{args.tag}")
    with open(out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    lines = [
        "# Sentence-steps per search policy",
        "",
        f"`{report['command']}`",
        "",
        f"{len(lengths)} translations of `{args.engine}` in `{report['result']}`, requests of "
        f"{batch_size} in file order; a sentence ends after its length in pieces + 1 "
        "(an estimate: beam search may keep it a few steps longer).",
        "",
        "| policy | sentence-steps | share of the fixed batch's |",
        "| --- | ---: | ---: |",
    ]
    for name, steps in totals.items():
        lines.append(f"| {name} | {steps:,} | {steps / fixed:.3f} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
