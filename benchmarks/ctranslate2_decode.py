#!/usr/bin/env python
"""CTranslate2 decoding speed (float32 and int8) on the same weights.

Exports a trained run directory (of ``keras-transformer train``) with
`keras_transformer.ctranslate2_export.export_ctranslate2` (or takes a
directory that export already wrote), then translates the first
``--num-sentences`` lines of Multi30k's ``test_2016_flickr.en.gz`` with
`CTranslate2Translator` (beam 4, alpha 0.6 with GNMT re-ranking, batch 32,
output limit = source length + 50, as `keras_transformer.Translator`) once
per ``--compute-types`` entry. "int8" quantizes the float32 weights when
the model is loaded (CTranslate2's ``compute_type``), so every row decodes
the same weights. Reported per row: load time, translation wall time
(median of ``--repeats``), sentences/s, output tokens/s, and BLEU (sacreBLEU,
cased) against the German references. The rows are comparable with the
``translate`` rows of ``benchmarks/decode_speed.py`` for the same trained
model and thread count.

Without a trained model (a random one never ends a sentence) every output
runs to the limit: pass ``--max-extra-length`` to keep such a run short; it
then measures speed only.

Examples::

    python benchmarks/ctranslate2_decode.py --model-dir runs/multi30k
    python benchmarks/ctranslate2_decode.py --model-dir runs/multi30k \\
        --compute-types float32,int8,int8_float32 --threads 2 --tag cpu2

Writes ``ctranslate2_decode_<tag>.json`` to ``--output-dir``.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")


# The same progress log and load reading as decode_speed.py (this folder is
# on sys.path when the script runs).
from decode_speed import load_average, log  # noqa: E402


def read_gzip_lines(path, limit):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    return lines[:limit]


def exported_directory(model_dir, work_dir):
    """The CTranslate2 directory for ``model_dir`` (exported if needed)."""
    from keras_transformer.export.ctranslate2_converter import METADATA_FILENAME
    from keras_transformer.export.ctranslate2_converter import export_run_directory_to_ctranslate2

    if os.path.isfile(os.path.join(model_dir, METADATA_FILENAME)):
        return model_dir, None
    output = os.path.join(work_dir, "ctranslate2")
    start = time.perf_counter()
    export_run_directory_to_ctranslate2(model_dir, output, force=True)
    return output, time.perf_counter() - start


def measure(directory, compute_type, sources, references, args):
    from keras_transformer.export.ctranslate2_translator import CTranslate2Translator

    start = time.perf_counter()
    translator = CTranslate2Translator(
        directory,
        device=args.device,
        compute_type=compute_type,
        intra_threads=args.threads,
        batch_size=args.batch_size,
    )
    load_seconds = time.perf_counter() - start
    token_ids = translator.processor.encode(sources, out_type=int)
    times, loads = [], []
    for _ in range(args.repeats):
        loads.append(load_average())
        start = time.perf_counter()
        hypotheses, _ = translator.generate(
            token_ids,
            beam_size=args.beam_size,
            alpha=args.alpha,
            max_extra_length=args.max_extra_length,
        )
        times.append(time.perf_counter() - start)
    translations = [translator.detokenize(h[0]) for h in hypotheses]
    output_tokens = sum(len(h[0]) for h in hypotheses)
    seconds = statistics.median(times)
    row = {
        "compute_type": compute_type,
        "load_seconds": round(load_seconds, 3),
        "translate_seconds": round(seconds, 3),
        "translate_seconds_all": [round(t, 3) for t in times],
        "sentences_per_second": round(len(sources) / seconds, 2),
        "output_tokens": output_tokens,
        "output_tokens_per_second": round(output_tokens / seconds, 1),
        "load_average_1min": [round(x, 2) for x in loads],
        "bleu": None,
    }
    if references:
        from keras_transformer.training.bleu import corpus_bleu

        bleu = corpus_bleu(translations, references)
        row["bleu"] = round(bleu.score, 2)
        row["bleu_signature"] = bleu.signature
    return row, translations


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--model-dir",
        required=True,
        help="run directory (a train --output-dir) or a CTranslate2 export",
    )
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    parser.add_argument("--num-sentences", type=int, default=1000)
    parser.add_argument("--compute-types", default="float32,int8")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-extra-length", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2, help="intra_threads")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--work-dir", default=None, help="for the export")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    parser.add_argument("--tag", default="cpu")
    args = parser.parse_args(argv)
    if args.num_sentences < 1 or args.repeats < 1:
        parser.error("--num-sentences and --repeats must be positive")

    sys.path.insert(0, REPO)
    import ctranslate2

    source_path = os.path.join(args.data_dir, "test_2016_flickr.en.gz")
    if not os.path.isfile(source_path):
        parser.error(f"no {source_path} (set --data-dir)")
    sources = read_gzip_lines(source_path, args.num_sentences)
    reference_path = os.path.join(args.data_dir, "test_2016_flickr.de.gz")
    references = None
    if os.path.isfile(reference_path):
        references = read_gzip_lines(reference_path, args.num_sentences)

    with tempfile.TemporaryDirectory() as temporary:
        work_dir = args.work_dir or temporary
        directory, export_seconds = exported_directory(args.model_dir, work_dir)
        log(f"CTranslate2 model: {directory}")
        rows = []
        for compute_type in args.compute_types.split(","):
            log(f"translating {len(sources)} sentences, compute_type={compute_type}")
            row, _ = measure(directory, compute_type, sources, references, args)
            log(json.dumps(row))
            rows.append(row)

    result = {
        "benchmark": "ctranslate2_decode",
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "model_dir": os.path.abspath(args.model_dir),
        "export_seconds": None if export_seconds is None else round(export_seconds, 3),
        "ctranslate2_version": ctranslate2.__version__,
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor(),
        },
        "settings": {
            "num_sentences": len(sources),
            "beam_size": args.beam_size,
            "alpha": args.alpha,
            "batch_size": args.batch_size,
            "max_extra_length": args.max_extra_length,
            "intra_threads": args.threads,
            "device": args.device,
            "repeats": args.repeats,
        },
        "rows": rows,
    }
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, f"ctranslate2_decode_{args.tag}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    log(f"wrote {path}")
    for row in rows:
        print(
            f"{row['compute_type']:>12}: {row['translate_seconds']:8.2f} s  "
            f"{row['sentences_per_second']:8.1f} sent/s  "
            f"{row['output_tokens_per_second']:9.1f} tok/s  BLEU {row['bleu']}"
        )


if __name__ == "__main__":
    main()
