#!/usr/bin/env python
"""Decoding speed: cached vs uncached beam search, and translating a test set.

Two measurements per Keras backend (each backend in its own subprocess of
this script, since ``KERAS_BACKEND`` is fixed per process):

1. **Cached vs uncached.** Beam search (beam 4, alpha 0.6) over the first
   ``--speed-batch`` test sentences (default 32, the `Translator`'s batch),
   forced to produce exactly ``--speed-steps`` tokens (EOS forbidden before,
   forced at the end). *Cached* is `keras_transformer.decoding.Generator`:
   encoder once, key/value caches, the whole search compiled (``jax.jit`` /
   one ``tf.function`` / eager torch under ``no_grad``). *Uncached* is the
   same beam search re-running `Transformer.decode` on the whole prefix at
   every step: the prefix padded to a multiple of 8, the decoder compiled per
   prefix shape on JAX, one ``tf.function`` on TensorFlow, eager on torch;
   the search around it runs as a Python loop. Both are timed after warm-ups
   that compile everything: the median of ``--repeats`` runs for cached, one
   run for uncached. "same tokens" says whether both found the same
   hypotheses.
2. **Translating a test set.** `keras_transformer.Translator.translate` on the
   first ``--num-sentences`` lines of ``test_2016_flickr.en.gz`` with beam 4,
   alpha 0.6, batch ``--batch-size``, including every compilation (a cold
   start, what a user waits for). Without ``--model-dir`` the model is a
   randomly initialised "small" preset (3+3 layers, d_model 256, d_ff 1024)
   with an 8000-piece vocabulary trained on the Multi30k train files (both
   are kept in ``--work-dir`` and reused); since a random model rarely ends a
   sentence, each output is capped at a realistic length: the tokenized
   German reference length + 1 (EOS), or 1.1 x the source length without
   references. With a trained model (``--model-dir`` holding ``model.keras``
   and ``vocab.spm``) decoding is the paper's (input length + 50, early
   stopping) and BLEU (sacreBLEU, cased) against the references is reported.

Workers get ``OMP_WAIT_POLICY=PASSIVE`` (``--omp-wait-policy``): torch's
OpenMP threads otherwise busy-wait, and on 2 cores shared with other work
every small kernel then stalls (10x slower decoding in our runs).

Examples::

    python benchmarks/decode_speed.py                      # all backends
    python benchmarks/decode_speed.py --backends jax --num-sentences 200
    python benchmarks/decode_speed.py --model-dir runs/multi30k --skip-speed

Writes ``decode_speed_<tag>.{md,json}`` to ``--output-dir``. A full run on
2 busy CPU cores takes about 8-10 minutes.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RESULT_PREFIX = "@@DECODE_SPEED_RESULT@@ "
ALL_BACKENDS = ("tensorflow", "jax", "torch")
DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")


def log(message):
    now = datetime.datetime.now()
    print(f"[{now:%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


# --------------------------------------------------------------------------
# Preparation: a random "small" model and a tokenizer trained on Multi30k.


def prepare_random_model(args):
    sys.path.insert(0, REPO)
    import itertools

    import keras

    from keras_transformer import Transformer
    from keras_transformer.data import SubwordTokenizer, read_lines

    os.makedirs(args.work_dir, exist_ok=True)
    train_en = read_lines(os.path.join(args.data_dir, "train.en.gz"))
    train_de = read_lines(os.path.join(args.data_dir, "train.de.gz"))
    log(f"training an {args.vocabulary_size}-piece tokenizer on {len(train_en)} pairs")
    tokenizer = SubwordTokenizer.train(
        itertools.chain(train_en, train_de), vocabulary_size=args.vocabulary_size
    )
    tokenizer.save(args.work_dir)
    keras.utils.set_random_seed(args.seed)
    model = Transformer.from_preset(
        args.preset, vocabulary_size=tokenizer.vocabulary_size, dropout_rate=0.0
    )
    model.save(os.path.join(args.work_dir, "model.keras"))
    log(f"saved a random {args.preset!r} model to {args.work_dir}")


# --------------------------------------------------------------------------
# Worker: one backend.


def _no_grad():
    import contextlib

    import keras

    if keras.config.backend() == "torch":
        import torch

        return torch.no_grad()
    return contextlib.nullcontext()


def measure_cached_vs_uncached(translator, sentences, args):
    import keras
    import numpy as np

    from keras_transformer.decoding import Generator, compiled_decode, generate
    from keras_transformer.special_tokens import PAD_ID

    model = translator.model
    sources, _ = translator._source_ids(translator.tokenizer.encode(sentences))
    length = max(len(s) for s in sources)
    length = -(-length // 16) * 16
    ids = np.full((len(sources), length), PAD_ID, np.int32)
    for row, source in enumerate(sources):
        ids[row, : len(source)] = source
    steps = args.speed_steps
    max_lengths = np.full((len(sources),), steps, np.int32)
    search = dict(beam_size=args.beam_size, alpha=args.alpha)

    generator = Generator(model)
    start = time.perf_counter()
    search.update(max_length=steps, min_length=steps)
    cached, _ = generator(ids, max_lengths, **search)
    warmup = time.perf_counter() - start
    times = []

    def time_cached(repeats):
        for _ in range(repeats):
            start = time.perf_counter()
            generator(ids, max_lengths, **search)
            times.append(time.perf_counter() - start)

    # Cached runs before and after the (long) uncached one, so that a change
    # of load on a shared machine affects both sides alike.
    time_cached(args.repeats // 2)

    decode_fn = compiled_decode(model)

    def uncached_run():
        with _no_grad():
            sequences, _ = generate(
                model, ids, max_lengths, args.alpha, steps, max_length=steps,
                beam_size=args.beam_size, use_cache=False, python_loop=True,
                decode_fn=decode_fn, prefix_multiple=8,
            )
        return np.asarray(sequences)

    # Warm-up, so that no compilation is timed: JAX compiles each eager op
    # of the search (at the run's shapes: a 2-step run with the same buffer)
    # and the decoder once per prefix shape; TensorFlow traces the decoder
    # once; torch compiles nothing.
    start = time.perf_counter()
    backend = keras.config.backend()
    if backend in ("jax", "tensorflow"):
        with _no_grad():
            generate(
                model, ids, np.full_like(max_lengths, 2), args.alpha, 0,
                max_length=steps, beam_size=args.beam_size, use_cache=False,
                python_loop=True, decode_fn=decode_fn, prefix_multiple=8,
            )
            rows = len(sources) * args.beam_size
            encoder_output, mask = model.encode(np.repeat(ids, args.beam_size, axis=0))
            for prefix in range(16, steps + 8, 8) if backend == "jax" else ():
                tokens = np.full((rows, min(prefix, steps)), 4, np.int32)
                decode_fn(tokens, encoder_output, mask)
    uncached_warmup = time.perf_counter() - start
    start = time.perf_counter()
    uncached = uncached_run()
    uncached_seconds = time.perf_counter() - start
    log(f"uncached: {uncached_seconds:.3f} s (warm-up {uncached_warmup:.1f} s)")
    time_cached(args.repeats - args.repeats // 2)
    cached_seconds = statistics.median(times)
    log(f"cached: {cached_seconds:.3f} s (first call incl. compile {warmup:.1f} s)")
    generated = int((cached[:, 0] != PAD_ID).sum(-1).mean())
    return {
        "speed_batch": len(sources),
        "speed_source_length": length,
        "speed_steps": steps,
        "tokens_per_hypothesis": generated,
        "cached_seconds": cached_seconds,
        "cached_runs_seconds": times,
        "cached_first_call_seconds": warmup,
        "uncached_seconds": uncached_seconds,
        "speedup": uncached_seconds / cached_seconds,
        "same_output": bool(np.array_equal(cached, uncached)),
    }


def realistic_lengths(translator, sentences, references):
    if references is not None:
        return [len(ids) + 1 for ids in translator.tokenizer.encode(references)]
    return [
        int(round(1.1 * len(ids))) + 1 for ids in translator.tokenizer.encode(sentences)
    ]


def measure_translation(translator, sentences, references, args):
    caps = None
    if args.random_model:
        caps = realistic_lengths(translator, sentences, references)
    start = time.perf_counter()
    translations = translator.translate(
        sentences,
        beam_size=args.beam_size,
        alpha=args.alpha,
        batch_size=args.batch_size,
        max_output_lengths=caps,
        verbose=False,
    )
    seconds = time.perf_counter() - start
    output_tokens = sum(
        len(ids) + 1 for ids in translator.tokenizer.encode(translations)
    )
    result = {
        "num_sentences": len(sentences),
        "translate_seconds": seconds,
        "sentences_per_second": len(sentences) / seconds,
        "output_tokens_approx": output_tokens,
        "compiled_functions": translator.generator.trace_count,
    }
    log(f"translated {len(sentences)} sentences in {seconds:.1f} s")
    if args.warm:
        start = time.perf_counter()
        translator.translate(
            sentences, beam_size=args.beam_size, alpha=args.alpha,
            batch_size=args.batch_size, max_output_lengths=caps, verbose=False,
        )
        result["translate_warm_seconds"] = time.perf_counter() - start
    if references is not None and not args.random_model:
        from keras_transformer.bleu import corpus_bleu

        bleu = corpus_bleu(translations, references)
        result["bleu"] = bleu.score
        result["bleu_signature"] = bleu.signature
    result["examples"] = list(zip(sentences[:2], translations[:2]))
    return result


def run_worker(args):
    if args.cpu_threads:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpu_threads])
    sys.path.insert(0, REPO)
    import keras

    from keras_transformer import Translator
    from keras_transformer.data import read_lines

    backend = keras.config.backend()
    translator = Translator.from_directory(args.model_dir, batch_size=args.batch_size)
    sentences = read_lines(args.source_file)[: args.num_sentences]
    references = None
    if args.reference_file and os.path.exists(args.reference_file):
        references = read_lines(args.reference_file)[: args.num_sentences]
    result = {
        "backend": backend,
        "keras": keras.__version__,
        "load_average_start": load_average(),
    }
    if not args.skip_speed:
        result.update(
            measure_cached_vs_uncached(translator, sentences[: args.speed_batch], args)
        )
    if not args.skip_translate:
        result.update(measure_translation(translator, sentences, references, args))
    result["load_average_end"] = load_average()
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# --------------------------------------------------------------------------
# Parent: one subprocess per backend, then a table.


def worker_command(args, backend):
    command = [sys.executable, os.path.abspath(__file__), "--worker"]
    for name in (
        "model_dir", "source_file", "reference_file", "num_sentences", "batch_size",
        "beam_size", "alpha", "speed_batch", "speed_steps", "repeats", "cpu_threads",
    ):
        value = getattr(args, name)
        if value is not None:
            command += [f"--{name.replace('_', '-')}", str(value)]
    for flag in ("random_model", "skip_speed", "skip_translate", "warm"):
        if getattr(args, flag):
            command.append(f"--{flag.replace('_', '-')}")
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    if args.omp_wait_policy:
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy
    if args.cpu_threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(args.cpu_threads)
    return command, env


def run_backend(args, backend):
    command, env = worker_command(args, backend)
    log(f"{backend}: starting worker")
    process = subprocess.run(
        command, env=env, stdout=subprocess.PIPE, text=True, timeout=args.worker_timeout
    )
    for line in process.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    return {"backend": backend, "error": f"worker exited with {process.returncode}"}


def format_table(results, args):
    def cell(result, key, fmt):
        value = result.get(key)
        return "-" if value is None else fmt.format(value)

    lines = [
        f"Decoding on {os.cpu_count()} CPU(s)"
        + (f", workers pinned to {args.cpu_threads}" if args.cpu_threads else "")
        + f"; beam {args.beam_size}, alpha {args.alpha}; model: "
        + ("random 'small' preset (outputs capped at realistic lengths)"
           if args.random_model else args.model_dir),
        "",
        f"| backend | cached, {args.speed_steps} tokens (s) | uncached (s) | speedup "
        f"| same tokens | {args.num_sentences} sentences (s) | sentences/s "
        "| compiled functions | BLEU | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['backend']} | {r['error']} |||||||||")
            continue
        lines.append(
            "| " + " | ".join([
                r["backend"],
                cell(r, "cached_seconds", "{:.2f}"),
                cell(r, "uncached_seconds", "{:.2f}"),
                cell(r, "speedup", "{:.1f}x"),
                cell(r, "same_output", "{}"),
                cell(r, "translate_seconds", "{:.1f}"),
                cell(r, "sentences_per_second", "{:.1f}"),
                cell(r, "compiled_functions", "{}") if r["backend"] != "torch"
                else "eager",
                cell(r, "bleu", "{:.1f}"),
                f"{r['load_average_start']:.1f}-{r['load_average_end']:.1f}",
            ]) + " |"
        )
    speed = [r for r in results if "speed_batch" in r]
    if speed:
        r = speed[0]
        lines += [
            "",
            f"Cached vs uncached: {r['speed_batch']} sentences (source padded to "
            f"{r['speed_source_length']}), beam {args.beam_size}, exactly "
            f"{r['speed_steps']} output tokens; cached = median of {args.repeats} "
            "runs after a compiling warm-up (before and after the uncached run), "
            "uncached = one run after a warm-up.",
        ]
    lines.append(
        "Translation time includes compilation. load = 1-minute load average when "
        "the backend's worker started and ended (2 cores: above 2 means other "
        "work competed for them)."
    )
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--model-dir", default=None,
                   help="trained model directory (model.keras + vocab.spm); "
                   "default: a random 'small' model prepared in --work-dir")
    p.add_argument("--backends", default=",".join(ALL_BACKENDS),
                   help="comma-separated Keras backends, one subprocess each")
    p.add_argument("--num-sentences", type=int, default=1000,
                   help="test sentences to translate (first lines of the file)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                   help="Multi30k directory (train.*.gz, test_2016_flickr.*.gz)")
    p.add_argument("--source-file", default=None,
                   help="source sentences; none: <data-dir>/test_2016_flickr.en.gz")
    p.add_argument("--reference-file", default=None,
                   help="references; none: <data-dir>/test_2016_flickr.de.gz "
                   "(when the source is *.en.gz)")
    p.add_argument("--batch-size", type=int, default=32, help="sentences per batch")
    p.add_argument("--beam-size", type=int, default=4,
                   help="beam size (the paper's: 4)")
    p.add_argument("--alpha", type=float, default=0.6,
                   help="length-penalty exponent (the paper's: 0.6)")
    p.add_argument("--speed-batch", type=int, default=32,
                   help="sentences in the cached-vs-uncached measurement (the "
                   "Translator's default batch)")
    p.add_argument("--speed-steps", type=int, default=64,
                   help="output tokens forced in the cached-vs-uncached measurement")
    p.add_argument("--repeats", type=int, default=3,
                   help="timed runs of cached decoding (the median is reported)")
    p.add_argument("--warm", action="store_true",
                   help="also time a second (compiled, warm) translation pass")
    p.add_argument("--skip-speed", action="store_true",
                   help="skip the cached-vs-uncached measurement")
    p.add_argument("--skip-translate", action="store_true",
                   help="skip translating the test set")
    p.add_argument("--cpu-threads", type=int, default=None,
                   help="pin each worker to this many CPUs; none: all")
    p.add_argument("--omp-wait-policy", default="PASSIVE",
                   help="OMP_WAIT_POLICY of the workers (torch uses OpenMP, whose "
                   "busy-waiting threads stall by an order of magnitude on shared "
                   "cores); '' keeps the environment's")
    p.add_argument("--preset", default="small", help="preset of the random model")
    p.add_argument("--vocabulary-size", type=int, default=8000,
                   help="tokenizer size for the random model")
    p.add_argument("--seed", type=int, default=0, help="seed of the random model")
    p.add_argument("--work-dir",
                   default=os.path.join(
                       tempfile.gettempdir(), "keras_transformer_decode_speed"
                   ),
                   help="where the random model and tokenizer are kept (reused)")
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"),
                   help="where decode_speed_<tag>.{md,json} are written")
    p.add_argument("--tag", default="cpu", help="suffix of the output files")
    p.add_argument("--worker-timeout", type=int, default=3600,
                   help="seconds before a backend's worker is abandoned")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--random-model", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.source_file = args.source_file or os.path.join(
        args.data_dir, "test_2016_flickr.en.gz"
    )
    if args.reference_file is None and args.source_file.endswith(".en.gz"):
        args.reference_file = args.source_file[: -len(".en.gz")] + ".de.gz"
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.prepare:
        return prepare_random_model(args)
    if args.worker:
        return run_worker(args)

    args.load_before = load_average()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - set(ALL_BACKENDS))
    if unknown:
        raise SystemExit(f"Unknown backends {unknown}; choose from {ALL_BACKENDS}")
    if not os.path.exists(args.source_file):
        raise SystemExit(f"Source file not found: {args.source_file} (see --data-dir)")
    if args.model_dir is None:
        args.random_model = True
        args.model_dir = args.work_dir
        ready = all(
            os.path.exists(os.path.join(args.work_dir, name))
            for name in ("model.keras", "vocab.spm")
        )
        if not ready:
            env = dict(os.environ, KERAS_BACKEND=backends[0], TF_CPP_MIN_LOG_LEVEL="2")
            command = [sys.executable, os.path.abspath(__file__), "--prepare"] + [
                f"--data-dir={args.data_dir}", f"--work-dir={args.work_dir}",
                f"--preset={args.preset}", f"--seed={args.seed}",
                f"--vocabulary-size={args.vocabulary_size}",
            ]
            subprocess.run(command, env=env, check=True)

    results = [run_backend(args, backend) for backend in backends]
    table = format_table(results, args)
    print(table)
    os.makedirs(args.output_dir, exist_ok=True)
    stem = os.path.join(args.output_dir, f"decode_speed_{args.tag}")
    with open(stem + ".md", "w") as f:
        f.write(table + "\n")
    with open(stem + ".json", "w") as f:
        json.dump({"arguments": vars(args), "results": results}, f, indent=2)
    log(f"wrote {stem}.md and {stem}.json")


if __name__ == "__main__":
    main()
