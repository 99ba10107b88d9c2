#!/usr/bin/env python
"""Decoding speed: cached vs uncached beam search, and translating a test set.

Two measurements per Keras backend (each backend in its own subprocess of
this script, since ``KERAS_BACKEND`` is fixed per process):

1. **Cached vs uncached.** Beam search (beam 4, alpha 0.6) over the first
   ``--speed-batch`` test sentences (default 32, the `Translator`'s batch),
   forced to produce exactly ``--speed-steps`` tokens (EOS forbidden before,
   forced at the end). Both sides are the same compiled
   `keras_transformer.decoding.Generator` (one ``jax.jit`` of the whole
   search / one ``tf.function`` / eager torch under ``no_grad``), so the
   speed-up measures the cache alone: *cached* is ``Generator(model)``
   (encoder once, key/value caches, one new position per step); *uncached*
   is ``Generator(model, use_cache=False)``, which re-runs
   `Transformer.decode` (decoder stack and output projection) on the whole
   ``--speed-steps``-token buffer at every step (positions after the current
   one are PAD and masked; a fixed shape is what a compiled loop needs, and
   it is about 2x the positions of re-running only the prefix). Each side
   is compiled by a first call, then timed ``--repeats`` times, alternating
   cached and uncached so that a change of load on a shared machine affects
   both alike; the medians are reported. "same tokens" says whether both
   found the same hypotheses.
2. **Translating a test set.** `keras_transformer.Translator` on the first
   ``--num-sentences`` lines of ``test_2016_flickr.en.gz`` with beam 4,
   alpha 0.6, batch ``--batch-size``, including every compilation (a cold
   start, what a user waits for). Without ``--model-dir`` the model is a
   randomly initialised ``--preset`` model (default "small": 3+3 layers,
   d_model 256, d_ff 1024) with an 8000-piece vocabulary trained on the
   Multi30k train files (both are kept in ``--work-dir`` and reused); since
   a random model rarely ends a sentence, each output is capped at a
   realistic length: the tokenized German reference length + 1 (EOS), or
   1.1 x the source length without references. With a trained model
   (``--model-dir``: a run directory of ``keras-transformer train``) decoding is
   the paper's (input length + 50, early stopping) and BLEU (sacreBLEU,
   cased) against the references is reported.

``--synthetic``: no data, tokenizer or TensorFlow (for a GPU machine with
only JAX or torch): a random ``--preset`` model and ``--num-sentences``
random sources whose lengths are drawn like Multi30k's English test set
(gamma distribution, mean 14 and s.d. 4.5 subword tokens, clipped to
4..40, plus EOS; the test set has 11.9 +- 3.8 words, 4..32), token ids
uniform over the vocabulary's non-special ids. Both measurements then run
on these ids (`Translator.generate`, the token-level half of `translate`,
with outputs capped at 1.1 x the source length + 1).

Workers keep the environment's ``OMP_WAIT_POLICY``; ``--omp-wait-policy
PASSIVE`` helps torch only when the cores are shared with other work (its
OpenMP threads busy-wait, and every small kernel then stalls). On idle
cores PASSIVE nearly doubles torch's decoding time (eager, 320 Multi30k
sentences: 14.0 s against 7.7 s), and the workers run one at a time.

``--torch-compile`` adds a torch row with ``Translator(...,
jit_compile=True)``: the search loop's body through ``torch.compile``
with static shapes per cache stage and the model step recorded as an ATen graph
(`keras_transformer.decoding.torch_steps`; compiled once per batch shape,
its "compiled functions" cell counts the graphs; the cold time includes
those compilations, so cold minus warm is the compilation time).

Examples::

    python benchmarks/decode_speed.py                      # all backends
    python benchmarks/decode_speed.py --backends jax --num-sentences 200
    python benchmarks/decode_speed.py --model-dir runs/multi30k --skip-speed
    python benchmarks/decode_speed.py --synthetic --backends jax,torch \\
        --preset base --tag gpu_base                       # GPU, no TF

Writes ``decode_speed_<tag>.{md,json}`` to ``--output-dir``. A full run on
2 busy CPU cores takes about 10-15 minutes.
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

from _workers import recorded_command

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
    log(f"training an {args.vocabulary_size or 8000}-piece tokenizer on {len(train_en)} pairs")
    tokenizer = SubwordTokenizer.train(
        itertools.chain(train_en, train_de),
        vocabulary_size=args.vocabulary_size or 8000,
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


def synthetic_sources(args, vocabulary_size):
    """Random source ids (EOS appended) with Multi30k-like lengths.

    Lengths without EOS: gamma with mean 14 and s.d. 4.5, rounded, clipped to
    4..40 (Multi30k test_2016_flickr.en has 11.9 +- 3.8 words, 4..32; subword
    tokens run ~15% above words). Ids uniform in [4, V) (0-3 are special).
    """
    import numpy as np

    from keras_transformer.special_tokens import EOS_ID

    rng = np.random.default_rng(args.seed)
    mean, sd = 14.0, 4.5
    shape = (mean / sd) ** 2
    lengths = np.clip(np.rint(rng.gamma(shape, mean / shape, args.num_sentences)), 4, 40)
    return [
        rng.integers(4, vocabulary_size, int(n)).tolist() + [EOS_ID]
        for n in lengths.astype(int)
    ]


def measure_cached_vs_uncached(model, sources, args):
    """Cached vs uncached beam search, both through a compiled `Generator`."""
    import numpy as np

    from keras_transformer.decoding import DecodeOptions, Generator, SearchInputs
    from keras_transformer.special_tokens import EOS_ID, PAD_ID

    length = max(len(s) for s in sources)
    length = -(-length // 16) * 16
    ids = np.full((len(sources), length), PAD_ID, np.int32)
    for row, source in enumerate(sources):
        ids[row, : len(source)] = source
    steps = args.speed_steps
    max_lengths = np.full((len(sources),), steps, np.int32)
    # Generator.decode takes the ids without EOS (it appends EOS itself).
    raw_ids = np.where(ids == EOS_ID, PAD_ID, ids)[:, :-1]
    options = DecodeOptions(beam_size=args.beam_size, alpha=args.alpha, min_length=steps,
                            max_extra_length=steps, max_source_length=length)

    generators = {
        "cached": Generator(model),
        "uncached": Generator(model, use_cache=False),
    }
    outputs, first_call, times = {}, {}, {name: [] for name in generators}
    for name, generator in generators.items():
        start = time.perf_counter()
        outputs[name], _ = generator.decode(raw_ids, options, steps, SearchInputs(max_lengths=max_lengths))
        first_call[name] = time.perf_counter() - start
        log(f"{name}: first call (compiles) {first_call[name]:.1f} s")
    # Alternate, so that a change of load on a shared machine hits both.
    for _ in range(args.repeats):
        for name, generator in generators.items():
            start = time.perf_counter()
            generator.decode(raw_ids, options, steps, SearchInputs(max_lengths=max_lengths))
            times[name].append(time.perf_counter() - start)
    cached_seconds = statistics.median(times["cached"])
    uncached_seconds = statistics.median(times["uncached"])
    log(f"cached {cached_seconds:.3f} s, uncached {uncached_seconds:.3f} s "
        f"(medians of {args.repeats})")
    cached = outputs["cached"]
    generated = int((cached[:, 0] != PAD_ID).sum(-1).mean())
    return {
        "speed_batch": len(sources),
        "speed_source_length": length,
        "speed_steps": steps,
        "tokens_per_hypothesis": generated,
        "cached_seconds": cached_seconds,
        "cached_runs_seconds": times["cached"],
        "cached_first_call_seconds": first_call["cached"],
        "uncached_seconds": uncached_seconds,
        "uncached_runs_seconds": times["uncached"],
        "uncached_first_call_seconds": first_call["uncached"],
        "speedup": uncached_seconds / cached_seconds,
        "same_output": bool(np.array_equal(cached, outputs["uncached"])),
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
    if translator.generator.backend == "torch" and translator.generator.jit_compile:
        from keras_transformer.utils.private_apis import torch_compile_counts

        result["compiled_functions"] = torch_compile_counts()["graphs"]
    log(f"translated {len(sentences)} sentences in {seconds:.1f} s")
    if args.warm:
        start = time.perf_counter()
        translator.translate(
            sentences, beam_size=args.beam_size, alpha=args.alpha,
            batch_size=args.batch_size, max_output_lengths=caps, verbose=False,
        )
        result["translate_warm_seconds"] = time.perf_counter() - start
    if references is not None and not args.random_model:
        from keras_transformer.training.bleu import corpus_bleu

        bleu = corpus_bleu(translations, references)
        result["bleu"] = bleu.score
        result["bleu_signature"] = bleu.signature
    result["examples"] = list(zip(sentences[:2], translations[:2]))
    return result


class _SyntheticVocabulary:
    """What `Translator` needs of a tokenizer for `Translator.generate`."""

    def __init__(self, vocabulary_size):
        self.vocabulary_size = vocabulary_size


def measure_synthetic_translation(translator, sources, args):
    """`Translator.generate` on the synthetic ids (cold: compiles included)."""
    token_ids = [source[:-1] for source in sources]  # generate appends EOS
    caps = [int(round(1.1 * len(ids))) + 1 for ids in token_ids]

    def run():
        start = time.perf_counter()
        hypotheses, _ = translator.generate(
            token_ids, beam_size=args.beam_size, alpha=args.alpha,
            batch_size=args.batch_size, max_output_lengths=caps,
        )
        return hypotheses, time.perf_counter() - start

    hypotheses, seconds = run()
    result = {
        "num_sentences": len(sources),
        "source_tokens_mean": sum(map(len, token_ids)) / len(token_ids),
        "source_tokens_range": [min(map(len, token_ids)), max(map(len, token_ids))],
        "translate_seconds": seconds,
        "sentences_per_second": len(sources) / seconds,
        "output_tokens_approx": sum(len(h[0]) for h in hypotheses),
        "compiled_functions": translator.generator.trace_count,
    }
    log(f"translated {len(sources)} synthetic sentences in {seconds:.1f} s")
    if args.warm:
        result["translate_warm_seconds"] = run()[1]
    return result


def device_name(backend):
    """The accelerator the backend runs on, or "cpu"; never imports TF
    unless the backend is TensorFlow."""
    try:
        if backend == "jax":
            import jax

            device = jax.devices()[0]
            return "cpu" if device.platform == "cpu" else device.device_kind
        if backend == "torch":
            import torch

            return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
        if backend == "tensorflow":
            import tensorflow as tf

            gpus = tf.config.list_physical_devices("GPU")
            if gpus:
                details = tf.config.experimental.get_device_details(gpus[0])
                return details.get("device_name", "GPU")
    except Exception as e:  # best effort
        return f"unknown ({e!r})"
    return "cpu"


def run_worker(args):
    if args.cpu_threads:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpu_threads])
    sys.path.insert(0, REPO)
    import keras

    backend = keras.config.backend()
    result = {
        "backend": backend,
        "keras": keras.__version__,
        "device": device_name(backend),
        "load_average_start": load_average(),
    }
    if args.synthetic:
        from keras_transformer.models.transformer.transformer import Transformer
        from keras_transformer.models.transformer.translator import Translator

        keras.utils.set_random_seed(args.seed)
        overrides = {"dropout_rate": 0.0}
        if args.vocabulary_size:
            overrides["vocabulary_size"] = args.vocabulary_size
        model = Transformer.from_preset(args.preset, **overrides)
        translator = Translator(
            model, _SyntheticVocabulary(model.vocabulary_size),
            batch_size=args.batch_size, jit_compile=args.jit_compile or "auto",
        )
        result["jit_compile"] = args.jit_compile
        sources = synthetic_sources(args, model.vocabulary_size)
        result["model"] = (f"random {args.preset!r} preset, V={model.vocabulary_size}, "
                           f"{model.count_params():,} parameters")
        if not args.skip_speed:
            result.update(
                measure_cached_vs_uncached(model, sources[: args.speed_batch], args))
        if not args.skip_translate:
            result.update(measure_synthetic_translation(translator, sources, args))
    else:
        from keras_transformer import Translator
        from keras_transformer.data import read_lines

        translator = Translator.from_directory(
            args.model_dir, batch_size=args.batch_size, quantize=args.quantize,
            jit_compile=args.jit_compile or "auto")
        result["quantize"] = args.quantize
        result["jit_compile"] = args.jit_compile
        sentences = read_lines(args.source_file)[: args.num_sentences]
        references = None
        if args.reference_file and os.path.exists(args.reference_file):
            references = read_lines(args.reference_file)[: args.num_sentences]
        if not args.skip_speed:
            speed_sentences = sentences[: args.speed_batch]
            sources, _ = translator._source_ids(
                translator.tokenizer.encode(speed_sentences))
            result.update(measure_cached_vs_uncached(translator.model, sources, args))
        if not args.skip_translate:
            result.update(measure_translation(translator, sentences, references, args))
    result["tensorflow_imported"] = "tensorflow" in sys.modules
    result["load_average_end"] = load_average()
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# --------------------------------------------------------------------------
# Parent: one subprocess per backend, then a table.


def worker_command(args, backend):
    command = [sys.executable, os.path.abspath(__file__), "--worker"]
    for name in (
        "model_dir", "source_file", "reference_file", "num_sentences", "batch_size",
        "beam_size", "alpha", "speed_batch", "speed_steps", "repeats", "cpu_threads",
        "preset", "vocabulary_size", "seed", "quantize",
    ):
        value = getattr(args, name)
        if value is not None:
            command += [f"--{name.replace('_', '-')}", str(value)]
    for flag in ("random_model", "skip_speed", "skip_translate", "warm", "synthetic",
                 "jit_compile"):
        if getattr(args, flag):
            command.append(f"--{flag.replace('_', '-')}")
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    if args.omp_wait_policy:
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy
    if args.cpu_threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(args.cpu_threads)
    return command, env


def run_backend(args, backend, quantize=None, jit_compile=False):
    args = argparse.Namespace(**vars(args))
    args.quantize = quantize
    args.jit_compile = jit_compile
    command, env = worker_command(args, backend)
    log(f"{backend}: starting worker" + (f" ({quantize})" if quantize else "")
        + (" (torch.compile)" if jit_compile else ""))
    process = subprocess.run(
        command, env=env, stdout=subprocess.PIPE, text=True, timeout=args.worker_timeout
    )
    for line in process.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    return {"backend": backend, "quantize": quantize,
            "error": f"worker exited with {process.returncode}"}


def run_ctranslate2(args, compute_types):
    """CTranslate2 rows on the same weights: `ctranslate2_decode.py` in a
    subprocess (its export needs Keras; its decoding does not)."""
    with tempfile.TemporaryDirectory() as work:
        command = [
            sys.executable, os.path.join(HERE, "ctranslate2_decode.py"),
            "--model-dir", args.model_dir, "--data-dir", args.data_dir,
            "--num-sentences", str(args.num_sentences), "--compute-types", compute_types,
            "--beam-size", str(args.beam_size), "--alpha", str(args.alpha),
            "--batch-size", str(args.batch_size),
            "--threads", str(args.cpu_threads or os.cpu_count()),
            "--output-dir", work, "--tag", "row",
        ]
        env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
        log(f"ctranslate2: {compute_types}")
        process = subprocess.run(command, env=env, timeout=args.worker_timeout)
        path = os.path.join(work, "ctranslate2_decode_row.json")
        if process.returncode or not os.path.exists(path):
            return [{"backend": "ctranslate2", "error": f"exited with {process.returncode}"}]
        with open(path) as f:
            report = json.load(f)
    rows = []
    for row in report["rows"]:
        rows.append({
            "backend": "ctranslate2",
            "quantize": None if row["compute_type"] == "float32" else row["compute_type"],
            "device": f"CTranslate2 {report['ctranslate2_version']}, {row['compute_type']}, "
                      f"{report['settings']['intra_threads']} threads",
            "translate_seconds": row["translate_seconds"],
            "translate_warm_seconds": row["translate_seconds"],
            "translate_load_seconds": row["load_seconds"],
            "sentences_per_second": row["sentences_per_second"],
            "bleu": row["bleu"],
            "bleu_signature": row.get("bleu_signature"),
            "load_average_start": row["load_average_1min"][0],
            "load_average_end": load_average(),
            "ctranslate2": row,
        })
    return rows


def model_description(results, args):
    if args.synthetic:
        described = [r["model"] for r in results if "model" in r]
        return (described[0] if described else f"random {args.preset!r} preset") + (
            f"; synthetic sources (lengths like Multi30k's, outputs capped at "
            "1.1 x source + 1)")
    if args.random_model:
        return (f"random {args.preset!r} preset (outputs capped at realistic "
                "lengths)")
    return args.model_dir


def format_table(results, args, command):
    def cell(result, key, fmt):
        value = result.get(key)
        return "-" if value is None else fmt.format(value)

    devices = sorted({r.get("device", "?") for r in results
                      if "error" not in r and r["backend"] != "ctranslate2"})
    lines = [
        f"Command: `{command}`",
        "",
        f"Date: {datetime.date.today().isoformat()}; device: {', '.join(devices)}; "
        f"{os.cpu_count()} CPU(s)"
        + (f", workers pinned to {args.cpu_threads}" if args.cpu_threads else "")
        + f"; beam {args.beam_size}, alpha {args.alpha}, batch {args.batch_size}; "
        + "model: " + model_description(results, args),
        "",
        f"| backend | cached, {args.speed_steps} tokens (s) | uncached (s) | speedup "
        f"| same tokens | {args.num_sentences} sentences (s) | again, compiled (s) | sentences/s "
        "| compiled functions | BLEU | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['backend']} | {r['error']} ||||||||||")
            continue
        label = r["backend"] + (f" ({r['quantize']})" if r.get("quantize") else "")
        label += " (torch.compile)" if r.get("jit_compile") else ""
        lines.append(
            "| " + " | ".join([
                label,
                cell(r, "cached_seconds", "{:.2f}"),
                cell(r, "uncached_seconds", "{:.2f}"),
                cell(r, "speedup", "{:.1f}x"),
                cell(r, "same_output", "{}"),
                cell(r, "translate_seconds", "{:.1f}"),
                cell(r, "translate_warm_seconds", "{:.1f}"),
                cell(r, "sentences_per_second", "{:.1f}"),
                cell(r, "compiled_functions", "{}") if r["backend"] not in ("torch", "ctranslate2")
                else ("-" if r["backend"] == "ctranslate2"
                      else f"{r['compiled_functions']} loop bodies" if r.get("jit_compile")
                      else "eager"),
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
            f"{r['speed_steps']} output tokens, both through the same compiled "
            "`Generator` (jax.jit / tf.function / eager torch): cached = "
            "`Generator(model)`, one new position per step with key/value "
            "caches; uncached = `Generator(model, use_cache=False)`, decoder "
            "and output projection over the whole "
            f"{r['speed_steps']}-token buffer every step (about 2x the "
            "positions of re-running only the prefix). Medians of "
            f"{args.repeats} runs each, alternating, after a compiling first "
            "call of each.",
        ]
    if any(r["backend"] == "ctranslate2" for r in results):
        lines += [
            "",
            "ctranslate2 rows: `benchmarks/ctranslate2_decode.py` on the same weights "
            "(exported with `keras-transformer export --format ctranslate2`; int8 "
            "quantizes them when loading), same sentences, beam, alpha (GNMT re-ranking "
            "of its n-best), batch and thread count; its time excludes loading the model "
            "(load time in the JSON), ours includes compilation.",
        ]
    if any(r.get("quantize") and r["backend"] != "ctranslate2" for r in results):
        lines += [
            "",
            "(int8) rows: `Translator.from_directory(..., quantize=\"int8\")`: "
            "int8 kernels of the same model's dense layers, their inputs in the "
            "compute dtype.",
        ]
    lines.append(
        "Translation time includes compilation. load = 1-minute load average when "
        "the backend's worker started and ended (above the number of cores "
        "means other work competed for them)."
    )
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--model-dir", default=None,
                   help="trained model directory (a train --output-dir); "
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
                   help="timed runs of cached and of uncached decoding, "
                   "alternating (the medians are reported)")
    p.add_argument("--warm", action="store_true",
                   help="also time a second (compiled, warm) translation pass")
    p.add_argument("--skip-speed", action="store_true",
                   help="skip the cached-vs-uncached measurement")
    p.add_argument("--skip-translate", action="store_true",
                   help="skip translating the test set")
    p.add_argument("--cpu-threads", type=int, default=None,
                   help="pin each worker to this many CPUs; none: all")
    p.add_argument("--omp-wait-policy", default="",
                   help="OMP_WAIT_POLICY of the workers; '' (default) keeps the "
                   "environment's. PASSIVE helps torch on cores shared with other "
                   "work and slows it on idle ones")
    p.add_argument("--torch-compile", action="store_true",
                   help="also a torch row with Translator(jit_compile=True): the "
                   "search loop's body through torch.compile")
    p.add_argument("--no-torch-eager", action="store_true",
                   help="with --torch-compile: only the compiled torch row (the eager "
                   "row of 1,000 sentences takes minutes on 2 cores)")
    p.add_argument("--preset", default="small",
                   help="preset of the random model (keras_transformer.PRESETS)")
    p.add_argument("--vocabulary-size", type=int, default=None,
                   help="tokenizer size for the random model (default 8000); "
                   "with --synthetic the preset's vocabulary by default")
    p.add_argument("--synthetic", action="store_true",
                   help="random model and random source ids drawn like "
                   "Multi30k's lengths; needs no data, tokenizer or TensorFlow")
    p.add_argument("--seed", type=int, default=0, help="seed of the random model")
    p.add_argument("--quantize", default=None,
                   help="comma-separated variants of each backend's translation run: "
                        "'none' (float weights) and/or 'int8' (int8 kernels, float inputs); "
                        "e.g. none,int8 (needs a trained --model-dir)")
    p.add_argument("--ctranslate2", default=None, metavar="COMPUTE_TYPES",
                   help="also decode with CTranslate2 on the same weights, e.g. "
                        "float32,int8 (needs a trained --model-dir and the ctranslate2 extra)")
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
    p.add_argument("--jit-compile", action="store_true", help=argparse.SUPPRESS)
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
    if args.synthetic:
        if args.model_dir:
            raise SystemExit("--synthetic uses a random model; drop --model-dir")
    elif not os.path.exists(args.source_file):
        raise SystemExit(f"Source file not found: {args.source_file} (see --data-dir)")
    variants = [None]
    if args.quantize:
        variants = [None if v.strip() == "none" else v.strip() for v in args.quantize.split(",")]
        unknown = sorted({v for v in variants if v not in (None, "int8")})
        if unknown:
            raise SystemExit(f"--quantize: unknown variants {unknown}; choose from none, int8")
    if (args.quantize or args.ctranslate2) and (args.synthetic or args.model_dir is None):
        raise SystemExit("--quantize and --ctranslate2 need a trained --model-dir")
    if args.model_dir is None and not args.synthetic:
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
                f"--vocabulary-size={args.vocabulary_size or 8000}",
            ]
            subprocess.run(command, env=env, check=True)

    command = recorded_command(__file__, argv)
    results = [run_backend(args, backend, variant)
               for backend in backends for variant in variants
               if not (backend == "torch" and args.no_torch_eager and args.torch_compile)]
    if args.torch_compile and "torch" in backends:
        results.append(run_backend(args, "torch", None, jit_compile=True))
    if args.ctranslate2:
        results += run_ctranslate2(args, args.ctranslate2)
    table = format_table(results, args, command)
    print(table)
    os.makedirs(args.output_dir, exist_ok=True)
    stem = os.path.join(args.output_dir, f"decode_speed_{args.tag}")
    with open(stem + ".md", "w") as f:
        f.write(f"# Decoding speed ({args.tag})\n\n" + table + "\n")
    with open(stem + ".json", "w") as f:
        json.dump({"command": command, "arguments": vars(args), "results": results},
                  f, indent=2)
    log(f"wrote {stem}.md and {stem}.json")


if __name__ == "__main__":
    main()
