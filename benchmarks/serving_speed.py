#!/usr/bin/env python
"""Serving speed on a CPU: the SavedModel, CTranslate2 and `Translator` on one model.

Every engine translates the same sentences (the first ``--num-sentences``
lines of Multi30k's ``test_2016_flickr.en.gz``) from the same weights with
the same search (beam ``--beam-size``, length penalty ``--alpha``, output
limit source length + ``--max-extra-length``), each in a fresh process:

- ``saved_model``: the export's ``serving_default`` signature, loaded with
  ``tf.saved_model.load`` as TF Serving loads it (TensorFlow's default
  thread pools, as TF Serving's ``--tensorflow_intra_op_parallelism=0``);
  ``saved_model_1thread`` the same with one intra-op and one inter-op
  thread (TF Serving's ``--tensorflow_intra_op_parallelism=1
  --tensorflow_inter_op_parallelism=1``), exported with ``--parallel-searches
  1`` as docs/serving.md advises for that setting; ``saved_model_intra1``
  the default export with one intra-op thread and the default inter-op
  pool (``--tensorflow_intra_op_parallelism=1``); ``saved_model_int8`` the
  export of ``export --quantize int8``. A SavedModel written by another checkout is
  measured with ``--saved-model DIR``; the package that the workers and the
  exports import is recorded per row (run the script with ``PYTHONPATH=
  OTHER_CHECKOUT`` to measure another version's `Translator` and exports).
- ``ctranslate2_float32`` and ``ctranslate2_int8``: ``export --format
  ctranslate2`` read by `CTranslate2Translator` (int8 quantizes the float32
  weights at load, CTranslate2's ``compute_type``); a ``_1thread`` suffix
  (``ctranslate2_float32_1thread``) gives it one intra-op thread, for the
  comparison with ``saved_model_1thread`` core for core.
- ``translator_<backend>``: `keras_transformer.Translator` under that Keras
  backend (``translator_torch_compiled``: ``jit_compile=True``).
  ``translator_<backend>:float32`` rebuilds the model in float32 (same
  weights), the precision of CTranslate2's float32 rows. A ``_1thread``
  suffix (``translator_torch_compiled_1thread``, ``translator_jax_1thread``)
  runs the backend's operations on one thread (PyTorch's intra-op threads;
  XLA's CPU runtime without its Eigen thread pool), for the comparison with
  CTranslate2 on one thread.

Per engine: the load time; a **cold** pass (the first: compilation and
warm-up included) and a **warm** pass (the second; with ``--warm-passes N``
the last of N after the cold one) over the sentences in requests of
``--batch-size`` in file order, as a client sends them; then the
**latency** of ``--latency-requests`` one-sentence requests (the first
sentences, one call each: median and 95th percentile), timed on the second
of two passes over them; the first pass's median and 95th percentile
(compilation for a new shape included) are recorded beside it. Each engine's
translations of the warm pass are compared with the reference engine of the
same precision (``identical`` column) and scored with sacreBLEU.

    python benchmarks/serving_speed.py --model-dir runs/m30k --tag multi30k_small

Writes ``benchmarks/results/serving_speed_<tag>.{md,json}``. Threads:
``--threads`` (default 2) for CTranslate2's ``intra_threads``; the Keras
backends and the SavedModel use their defaults (all cores).
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from _workers import batches, cpu_name, read_first_lines, recorded_command  # noqa: E402

DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")
DEFAULT_ENGINES = (
    "saved_model,saved_model_int8,ctranslate2_float32,ctranslate2_int8,"
    "translator_tensorflow,translator_jax,translator_torch_compiled"
)


def log(message):
    print(f"[serving_speed {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def timed_passes(translate_batch, sentences, args):
    """Cold pass, warm pass (requests of ``--batch-size`` in file order),
    then one-sentence latencies. Returns the result's timing fields and the
    warm pass's translations."""
    requests = batches(sentences, args.batch_size)
    result = {"warm_passes_seconds": []}
    outputs = None
    # With --warm-passes N, the warm pass is the last of N passes after the
    # cold one: compiled PyTorch compiles a loop of a shape on its second
    # meeting when its first was a single (eager) step, so a second pass
    # can still compile shapes that the first met once.
    for name in ["cold"] + ["warm"] * args.warm_passes:
        start = time.perf_counter()
        outputs = [t for request in requests for t in translate_batch(request)]
        seconds = round(time.perf_counter() - start, 3)
        result[f"{name}_seconds"] = seconds
        if name == "warm":
            result["warm_passes_seconds"].append(seconds)
        log(f"  {name} pass: {seconds} s")
    # Two passes over the one-sentence requests, as over the batches: the
    # first meets a request of one sentence for the first time (a
    # compilation per source length under JAX and compiled PyTorch, kernel
    # setup for new shapes in TensorFlow), the second is the steady state
    # a server sees. Both are recorded; the second is the latency.
    for prefix in ("latency_first_pass_", "latency_"):
        latencies = []
        for sentence in sentences[: args.latency_requests]:
            start = time.perf_counter()
            translate_batch([sentence])
            latencies.append(time.perf_counter() - start)
        latencies.sort()
        if latencies:
            result[prefix + "median_ms"] = round(1000 * statistics.median(latencies), 2)
            p95 = latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))]
            result[prefix + "p95_ms"] = round(1000 * p95, 2)
            result["latency_requests"] = len(latencies)
    return result, outputs


def saved_model_worker(directory, args, threads=None):
    """``threads``: None (TensorFlow's defaults), "intra1" (one intra-op
    thread, the default inter-op pool) or "1thread" (one of each)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    if threads in ("intra1", "1thread"):
        # TF Serving's --tensorflow_intra_op_parallelism=1: each op on one
        # thread; the searches of a request (--parallel-searches) and
        # concurrent requests spread over the inter-op pool's cores.
        tf.config.threading.set_intra_op_parallelism_threads(1)
    if threads == "1thread":
        # and --tensorflow_inter_op_parallelism=1: one request per core.
        tf.config.threading.set_inter_op_parallelism_threads(1)

    start = time.perf_counter()
    loaded = tf.saved_model.load(directory)
    serve = loaded.signatures["serving_default"]
    load_seconds = time.perf_counter() - start

    def translate_batch(request):
        out = serve(sentences=tf.constant(request))
        return [t.decode("utf-8") for t in out["translations"].numpy()]

    return load_seconds, translate_batch, {"tensorflow": tf.__version__}


def ctranslate2_worker(directory, compute_type, args, threads):
    import ctranslate2

    from keras_transformer.export.ctranslate2_translator import CTranslate2Translator

    start = time.perf_counter()
    translator = CTranslate2Translator(
        directory, compute_type=compute_type, intra_threads=threads,
        batch_size=args.batch_size,
    )
    load_seconds = time.perf_counter() - start

    def translate_batch(request):
        return translator.translate(
            request, beam_size=args.beam_size, alpha=args.alpha,
            max_extra_length=args.max_extra_length,
        )

    return load_seconds, translate_batch, {"ctranslate2": ctranslate2.__version__}


def translator_worker(args, jit_compile, dtype):
    import keras

    from keras_transformer import Translator

    start = time.perf_counter()
    translator = Translator.from_directory(
        args.model_dir, batch_size=args.batch_size, jit_compile=jit_compile
    )
    if dtype is not None:
        # The same weights in another dtype policy (the precision of
        # CTranslate2's float32 rows).
        model = translator.model
        weights = model.get_weights()
        model = model.__class__.from_config(dict(model.get_config(), dtype=dtype))
        model.set_weights(weights)
        translator = Translator(
            model, translator.tokenizer, batch_size=args.batch_size,
            jit_compile=jit_compile, language_tag=translator.language_tag,
        )
    load_seconds = time.perf_counter() - start

    def translate_batch(request):
        return translator.translate(
            request, beam_size=args.beam_size, alpha=args.alpha,
            max_extra_length=args.max_extra_length, verbose=False,
        )

    return load_seconds, translate_batch, {"keras": keras.__version__,
                                           "backend": keras.config.backend()}


def package_version():
    """Where the measured `keras_transformer` was imported from, and its
    commit (a checkout's, with "+changes" when it has uncommitted ones)."""
    import keras_transformer

    directory = os.path.dirname(os.path.dirname(os.path.abspath(keras_transformer.__file__)))
    try:
        commit = subprocess.run(["git", "-C", directory, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", directory, "status", "--porcelain",
                                "keras_transformer"], capture_output=True, text=True).stdout
        commit += "+changes" if dirty.strip() else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"path": directory, "commit": commit, "version": keras_transformer.__version__}


def run_policy(model_dir):
    """The dtype policy that the run's model computes in (its preset
    ``config.json``), e.g. "mixed_bfloat16"."""
    try:
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            dtype = json.load(f)["config"]["dtype"]
        return dtype["config"]["name"] if isinstance(dtype, dict) else str(dtype)
    except (OSError, KeyError, TypeError, ValueError):
        return "the run's dtype policy"


def engine_precision(engine, model_dir):
    kind, _, dtype = engine.partition(":")
    if kind.startswith("ctranslate2_"):
        return kind[len("ctranslate2_"):].removesuffix("_1thread")
    policy = dtype or run_policy(model_dir)
    if kind == "saved_model_int8":
        return f"int8 kernels, float inputs, {policy}"
    return policy


def run_worker(args):
    engine = args.worker
    kind, _, dtype = engine.partition(":")
    sources = read_first_lines(os.path.join(args.data_dir, "test_2016_flickr.en.gz"),
                         args.num_sentences)
    if kind.startswith("saved_model"):
        threads = kind.rpartition("_")[2] if kind.endswith(("_intra1", "_1thread")) else None
        load_seconds, translate_batch, versions = saved_model_worker(
            args.engine_dir, args, threads)
    elif kind.startswith("ctranslate2_"):
        compute_type = kind[len("ctranslate2_"):]
        threads = 1 if compute_type.endswith("_1thread") else args.threads
        load_seconds, translate_batch, versions = ctranslate2_worker(
            args.engine_dir, compute_type.removesuffix("_1thread"), args, threads)
    else:
        load_seconds, translate_batch, versions = translator_worker(
            args, jit_compile=translator_backend(kind)[1], dtype=dtype or None)
    log(f"{engine}: loaded in {load_seconds:.1f} s")
    result, outputs = timed_passes(translate_batch, sources, args)
    versions["keras_transformer"] = package_version()
    result.update(engine=engine, load_seconds=round(load_seconds, 3), versions=versions,
                  precision=engine_precision(engine, args.model_dir), translations=outputs)
    print(json.dumps(result))


def cli(*arguments):
    # ``python -m keras_transformer``: the package on PYTHONPATH (another
    # checkout's, for an A/B), whatever the console script points at.
    return [sys.executable, "-m", "keras_transformer", *arguments]


def export(args, engine):
    """The directory an engine reads (exported into ``--work-dir`` once)."""
    if engine == "saved_model_intra1":
        engine = "saved_model"
    if engine == "saved_model" and args.saved_model:
        return args.saved_model
    names = {"saved_model": ("saved_model", []),
             "saved_model_1thread": ("saved_model_1group", ["--parallel-searches", "1"]),
             "saved_model_int8": ("saved_model_int8", ["--quantize", "int8"])}
    if engine in names:
        name, extra = names[engine]
        fmt = ["--no-warmup"]
    elif engine.startswith("ctranslate2_"):
        name, extra, fmt = "ctranslate2", [], ["--format", "ctranslate2"]
    else:
        return None
    base = os.path.join(args.work_dir, name)
    directory = os.path.join(base, "1")
    if not os.path.isdir(directory):
        log(f"exporting {name} ...")
        subprocess.run(
            cli("export", "--backend", "tensorflow", "--model-dir", args.model_dir,
                "--export-dir", base, "--beam-size", str(args.beam_size),
                "--alpha", str(args.alpha), "--max-extra-length", str(args.max_extra_length),
                *fmt, *extra),
            check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        )
    return directory


def translator_backend(kind):
    """``translator_<backend>[_compiled][_1thread]`` -> (backend, compiled)."""
    name = kind[len("translator_"):].removesuffix("_1thread")
    return name.removesuffix("_compiled"), name.endswith("_compiled")


def run_engine(args, engine):
    kind = engine.partition(":")[0]
    backend = "tensorflow"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    if kind.startswith("translator_"):
        backend = translator_backend(kind)[0]
        if kind.endswith("_1thread"):
            # Set before the worker imports its backend.
            env["OMP_NUM_THREADS"] = "1"
            if backend == "jax":
                env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                    " intra_op_parallelism_threads=1").strip()
    command = [sys.executable, os.path.abspath(__file__), "--worker", engine,
               "--model-dir", args.model_dir, "--data-dir", args.data_dir,
               "--num-sentences", str(args.num_sentences), "--batch-size", str(args.batch_size),
               "--latency-requests", str(args.latency_requests),
               "--warm-passes", str(args.warm_passes),
               "--beam-size", str(args.beam_size), "--alpha", str(args.alpha),
               "--max-extra-length", str(args.max_extra_length), "--threads", str(args.threads)]
    directory = export(args, kind)
    if directory:
        command += ["--engine-dir", directory]
    env["KERAS_BACKEND"] = backend
    log(f"{engine} ...")
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{engine} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def reference_of(engine, engines, model_dir):
    """The engine whose outputs ``engine``'s are compared with: the
    `Translator` under TensorFlow of the same precision (the SavedModel's
    own code), else the first Translator row of that precision."""
    precision = engine_precision(engine, model_dir)
    if engine.startswith("saved_model_int8"):
        return None
    candidates = [e for e in engines if e.startswith("translator_") and e != engine
                  and engine_precision(e, model_dir) == precision]
    candidates.sort(key=lambda e: not e.startswith("translator_tensorflow"))
    if engine.startswith("translator_") and not engine.startswith("translator_tensorflow"):
        candidates = [e for e in candidates if e.startswith("translator_tensorflow")]
    return candidates[0] if candidates else None


def format_table(results, args, ct2_float32, ct2_one_thread=None):
    """The result table; a ``_1thread`` engine's ratios are against
    CTranslate2 float32 on one thread where that row was measured (marked
    "1 thread")."""
    lines = [
        "| engine | precision | load s | cold s | **warm s** | warm ÷ CTranslate2 float32 "
        "| latency median ms | p95 ms | median ÷ CTranslate2 | first pass: median, p95 ms "
        "| BLEU | identical to (reference) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        ratio = latency_ratio = "–"
        base, note = ct2_float32, ""
        if ct2_one_thread and r["engine"].endswith("_1thread"):
            base, note = ct2_one_thread, " (1 thread)"
        if base:
            ratio = f"{r['warm_seconds'] / base['warm_seconds']:.2f}×{note}"
            if "latency_median_ms" in r and "latency_median_ms" in base:
                latency_ratio = f"{r['latency_median_ms'] / base['latency_median_ms']:.2f}×{note}"
        first_pass = "–"
        if "latency_first_pass_median_ms" in r:
            first_pass = (f"{r['latency_first_pass_median_ms']}, "
                          f"{r['latency_first_pass_p95_ms']}")
        same = "–"
        if r.get("reference"):
            same = f"{r['identical']}/{len(r['translations'])} ({r['reference']})"
        lines.append(
            f"| {r['engine']} | {r['precision']} | {r['load_seconds']:.1f} | "
            f"{r['cold_seconds']:.1f} | **{r['warm_seconds']:.1f}** | {ratio} | "
            f"{r.get('latency_median_ms', '–')} | {r.get('latency_p95_ms', '–')} | "
            f"{latency_ratio} | {first_pass} | {r.get('bleu', '–')} | {same} |"
        )
    return "\n".join(lines)


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-dir", required=True, help="a trained run directory")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--engines", default=DEFAULT_ENGINES,
                   help=f"comma-separated (default: {DEFAULT_ENGINES})")
    p.add_argument("--num-sentences", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=32, help="sentences per request")
    p.add_argument("--latency-requests", type=int, default=200,
                   help="one-sentence requests timed for the latency")
    p.add_argument("--warm-passes", type=positive_int, default=1,
                   help="passes over the sentences after the cold one; the warm "
                        "figure is the last")
    p.add_argument("--beam-size", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--max-extra-length", type=int, default=50)
    p.add_argument("--threads", type=int, default=2, help="CTranslate2's intra_threads")
    p.add_argument("--saved-model", default=None,
                   help="measure this SavedModel version directory as saved_model "
                        "(e.g. one exported by another checkout) instead of exporting")
    p.add_argument("--work-dir", default=None,
                   help="where the exports go and are reused (default: a folder "
                        "beside --model-dir)")
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--tag", default="cpu")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--engine-dir", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not os.path.isdir(args.model_dir):
        raise SystemExit(f"--model-dir {args.model_dir}: no such directory")
    source = os.path.join(args.data_dir, "test_2016_flickr.en.gz")
    if not os.path.isfile(source):
        raise SystemExit(f"--data-dir {args.data_dir}: no test_2016_flickr.en.gz there")
    if args.worker:
        return run_worker(args)
    args.model_dir = os.path.abspath(args.model_dir)
    if args.work_dir is None:
        args.work_dir = args.model_dir.rstrip("/") + "_serving_exports"
    engines = [e for e in args.engines.split(",") if e]
    references = read_first_lines(os.path.join(args.data_dir, "test_2016_flickr.de.gz"),
                            args.num_sentences)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    load_before = os.getloadavg()
    results = [run_engine(args, engine) for engine in engines]
    load_after = os.getloadavg()

    sys.path.insert(0, REPO)
    from keras_transformer.training.bleu import corpus_bleu

    by_engine = {r["engine"]: r for r in results}
    for r in results:
        r["bleu"] = round(corpus_bleu(r["translations"], references).score, 2)
        reference = reference_of(r["engine"], engines, args.model_dir)
        if reference in by_engine:
            other = by_engine[reference]["translations"]
            r["reference"] = reference
            r["identical"] = sum(a == b for a, b in zip(r["translations"], other))
    ct2_float32 = by_engine.get("ctranslate2_float32")
    command = recorded_command(__file__, argv)
    cpu = cpu_name()
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = " ".join(sorted(x for x in line.split(":", 1)[1].split()
                                            if x.startswith(("avx512", "amx", "avx_vnni"))
                                            or x in ("avx2", "fma")))
                    break
    except OSError:
        pass
    record = {
        "command": command, "date": started, "cpu": cpu, "cpu_flags": flags,
        "cpu_count": os.cpu_count(), "load_average_before": load_before,
        "load_average_after": load_after, "model_dir": args.model_dir,
        "settings": {k: getattr(args, k) for k in (
            "num_sentences", "batch_size", "latency_requests", "beam_size", "alpha",
            "max_extra_length", "threads", "saved_model")},
        "results": results,
    }
    os.makedirs(args.output_dir, exist_ok=True)
    base = os.path.join(args.output_dir, f"serving_speed_{args.tag}")
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, ensure_ascii=False)
    table = format_table(
        results, args, ct2_float32, by_engine.get("ctranslate2_float32_1thread")
    )
    with open(base + ".md", "w", encoding="utf-8") as f:
        f.write(
            f"# Serving speed ({args.tag})\n\nCommand: `{command}`\n\n"
            f"Date: {started}; CPU: {cpu} ({os.cpu_count()} cores; {flags}); load average "
            f"{load_before[0]:.2f} before, {load_after[0]:.2f} after.\n\n"
            f"{args.num_sentences} sentences of test_2016_flickr, requests of "
            f"{args.batch_size} in file order, beam {args.beam_size}, alpha {args.alpha}, "
            f"output limit source + {args.max_extra_length}; each engine in a fresh "
            f"process; warm = "
            + ("its second pass" if args.warm_passes == 1
               else f"the last of {args.warm_passes} passes after the cold one "
                    "(the rows' warm_passes_seconds in the .json give each)")
            + f"; latency over {args.latency_requests} "
            f"one-sentence requests, the second of two passes over them.\n\n{table}\n"
        )
    print(table)


if __name__ == "__main__":
    main()
