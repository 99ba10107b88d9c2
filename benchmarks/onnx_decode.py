#!/usr/bin/env python
"""ONNX Runtime decoding beside CTranslate2 on one trained model (CPU).

The run directory ``--model-dir`` is exported three ways: ``export
--format transformers`` (a Hugging Face ``MarianMTModel``), that directory
through Optimum's ONNX exporter (``optimum-cli export onnx --task
text2text-generation-with-past``), and ``export --format ctranslate2``.
Each engine translates the first ``--num-sentences`` lines of Multi30k's
``test_2016_flickr.en.gz`` in requests of ``--batch-size`` in file order
(as `benchmarks/serving_speed.py`), greedy and with beam ``--beam-size``:

- ``onnx_greedy`` / ``onnx_beam``: Optimum's ``ORTModelForSeq2SeqLM``
  (``generate``; encoder, decoder and decoder-with-past ONNX graphs in ONNX
  Runtime, the search loop in Transformers' Python) with
  ``MarianTokenizer``; ONNX Runtime's intra-op threads ``--threads``.
- ``ctranslate2_greedy`` / ``ctranslate2_beam``: `CTranslate2Translator`
  (float32, ``intra_threads=--threads``).
- ``saved_model_greedy`` / ``saved_model_beam``: the SavedModel's
  ``serving_default`` (two exports, beam 1 and ``--beam-size``; the search is
  fixed at export), loaded as TF Serving loads it, in the run's dtype
  policy, TensorFlow's default threads; left out (and said so) where
  TensorFlow is not installed.

The length penalty is off on both (``--alpha 0``; their penalties differ in
formula otherwise) and Hugging Face's length limit is absolute: the
request's longest source + ``--max-extra-length`` (CTranslate2's is per
sentence). Per engine: the load time, a cold and a warm pass, and the
number of warm-pass translations identical to CTranslate2's of the same
search. The load average before and after is recorded: the figures are
those of a machine shared with other work unless it says otherwise.

Needs the ``onnx`` and ``ctranslate2`` extras (both in ``all``):

    python benchmarks/onnx_decode.py --model-dir runs/m30k_small --tag multi30k_small

Writes ``benchmarks/results/onnx_decode_<tag>.{md,json}``.
"""

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from _workers import (  # noqa: E402
    batches,
    cpu_name,
    lscpu_flags,
    read_first_lines,
    recorded_command,
)

DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")


def log(message):
    print(f"[onnx_decode {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def timed(translate_batch, sentences, batch_size):
    result, outputs = {}, None
    for name in ("cold", "warm"):
        start = time.perf_counter()
        outputs = [t for request in batches(sentences, batch_size) for t in translate_batch(request)]
        result[f"{name}_seconds"] = round(time.perf_counter() - start, 3)
        log(f"  {name} pass: {result[f'{name}_seconds']} s")
    result["sentences_per_second_warm"] = round(len(sentences) / result["warm_seconds"], 1)
    return result, outputs


def onnx_engine(marian_dir, onnx_dir, args):
    import onnxruntime
    import torch
    from optimum.onnxruntime import ORTModelForSeq2SeqLM
    from transformers import MarianTokenizer

    start = time.perf_counter()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    model = ORTModelForSeq2SeqLM.from_pretrained(onnx_dir, session_options=options)
    tokenizer = MarianTokenizer.from_pretrained(marian_dir)
    load_seconds = time.perf_counter() - start

    def translate(beam_size):
        def translate_batch(request):
            inputs = tokenizer(request, return_tensors="pt", padding=True)
            longest = int(inputs["attention_mask"].sum(-1).max()) - 1  # without </s>
            with torch.no_grad():
                generated = model.generate(
                    **inputs, num_beams=beam_size, do_sample=False, length_penalty=args.alpha,
                    early_stopping=False, max_length=longest + args.max_extra_length + 1,
                )
            return tokenizer.batch_decode(generated, skip_special_tokens=True)
        return translate_batch

    versions = {"onnxruntime": onnxruntime.__version__}
    return load_seconds, translate, versions


def ctranslate2_engine(ct2_dir, args):
    import ctranslate2

    from keras_transformer.export.ctranslate2_translator import CTranslate2Translator

    start = time.perf_counter()
    translator = CTranslate2Translator(
        ct2_dir, intra_threads=args.threads, batch_size=args.batch_size
    )
    load_seconds = time.perf_counter() - start

    def translate(beam_size):
        def translate_batch(request):
            return translator.translate(
                request, beam_size=beam_size, alpha=args.alpha,
                max_extra_length=args.max_extra_length,
            )
        return translate_batch

    return load_seconds, translate, {"ctranslate2": ctranslate2.__version__}


def saved_model_engine(root, args):
    """The SavedModel rows, or None without TensorFlow and TensorFlow Text."""
    try:
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)
    except ImportError:
        log("no TensorFlow: the SavedModel rows are left out")
        return None
    from keras_transformer.export import export_saved_model

    directories = {}
    for search, beam_size in (("greedy", 1), ("beam", args.beam_size)):
        log(f"export --format saved_model --beam-size {beam_size}")
        directories[beam_size] = export_saved_model(
            args.model_dir, os.path.join(root, f"saved_model_{search}"), warmup=False,
            beam_size=beam_size, alpha=args.alpha, max_extra_length=args.max_extra_length,
        )
    start = time.perf_counter()
    signatures = {
        beam_size: tf.saved_model.load(directory).signatures["serving_default"]
        for beam_size, directory in directories.items()
    }
    load_seconds = (time.perf_counter() - start) / len(signatures)

    def translate(beam_size):
        serve = signatures[beam_size]

        def translate_batch(request):
            out = serve(sentences=tf.constant(request))
            return [t.decode("utf-8") for t in out["translations"].numpy()]
        return translate_batch

    return load_seconds, translate, {"tensorflow": tf.__version__}


def export_all(args, root):
    from optimum.exporters.onnx import main_export

    from keras_transformer.export import (
        export_run_directory_to_ctranslate2,
        export_to_transformers,
    )

    marian_dir = os.path.join(root, "marian")
    onnx_dir = os.path.join(root, "onnx")
    ct2_dir = os.path.join(root, "ct2")
    log("export --format transformers")
    export_to_transformers(args.model_dir, marian_dir)
    log("optimum: export onnx --task text2text-generation-with-past")
    start = time.perf_counter()
    main_export(marian_dir, onnx_dir, task="text2text-generation-with-past")
    onnx_seconds = time.perf_counter() - start
    log("export --format ctranslate2")
    export_run_directory_to_ctranslate2(args.model_dir, ct2_dir)
    return marian_dir, onnx_dir, ct2_dir, onnx_seconds


def format_table(results, args):
    lines = [
        f"ONNX Runtime, CTranslate2 and the SavedModel on {args.num_sentences} sentences of "
        f"test_2016_flickr (EN->DE), requests of {args.batch_size}, alpha {args.alpha}, "
        f"{args.threads} threads.",
        "",
        "| engine | load (s) | cold (s) | warm (s) | sentences/s (warm) | identical to CTranslate2 |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in results.items():
        lines.append(
            f"| {name} | {row['load_seconds']} | {row['cold_seconds']} | {row['warm_seconds']} "
            f"| {row['sentences_per_second_warm']} | {row.get('identical', '-')} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    parser.add_argument("--num-sentences", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.0)
    parser.add_argument("--max-extra-length", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tag", default="multi30k_small")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)

    source = os.path.join(args.data_dir, "test_2016_flickr.en.gz")
    if not os.path.isfile(source):
        raise SystemExit(f"--data-dir: {source!r} not found (Multi30k's test_2016_flickr).")
    if not os.path.isdir(args.model_dir):
        raise SystemExit(f"--model-dir: {args.model_dir!r} is not a directory.")
    sentences = read_first_lines(source, args.num_sentences)
    load_before = os.getloadavg()
    results, versions = {}, {}
    with tempfile.TemporaryDirectory() as root:
        marian_dir, onnx_dir, ct2_dir, onnx_seconds = export_all(args, root)
        engines = {
            "ctranslate2": ctranslate2_engine(ct2_dir, args),
            "onnx": onnx_engine(marian_dir, onnx_dir, args),
            "saved_model": saved_model_engine(root, args),
        }
        engines = {name: engine for name, engine in engines.items() if engine is not None}
        outputs = {}
        for engine, (load_seconds, translate, engine_versions) in engines.items():
            versions.update(engine_versions)
            for search, beam_size in (("greedy", 1), ("beam", args.beam_size)):
                name = f"{engine}_{search}"
                log(name)
                row, outputs[name] = timed(translate(beam_size), sentences, args.batch_size)
                row["load_seconds"] = round(load_seconds, 3)
                results[name] = row
        for engine in engines:
            for search in ("greedy", "beam") if engine != "ctranslate2" else ():
                same = sum(a == b for a, b in zip(
                    outputs[f"{engine}_{search}"], outputs[f"ctranslate2_{search}"]))
                results[f"{engine}_{search}"]["identical"] = f"{same}/{len(sentences)}"
    load_after = os.getloadavg()
    import transformers

    record = {
        "command": recorded_command(__file__, argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_name(),
        "cpu_flags": lscpu_flags(("avx", "fma", "amx", "sse4")),
        "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "settings": vars(args),
        "optimum_onnx_export_seconds": round(onnx_seconds, 1),
        "versions": dict(versions, transformers=transformers.__version__),
        "results": results,
    }
    os.makedirs(args.output_dir, exist_ok=True)
    base = os.path.join(args.output_dir, f"onnx_decode_{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump(record, f, indent=2)
    table = format_table(results, args)
    with open(base + ".md", "w") as f:
        f.write(
            f"# ONNX Runtime decoding ({args.tag})\n\n`{record['command']}`\n\n"
            f"CPU: {record['cpu']} ({record['cpu_count']} cores; "
            f"{' '.join(record['cpu_flags'])}). Load average (1, 5, 15 min) before "
            f"{record['load_average_before']}, after {record['load_average_after']}: "
            "a machine shared with other work.\n\n" + table + "\n"
        )
    print(table)


if __name__ == "__main__":
    main()
