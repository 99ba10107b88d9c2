#!/usr/bin/env python
"""The cost of ensemble decoding: one model against an ensemble of two.

Per Keras backend (each in its own subprocess, since ``KERAS_BACKEND`` is
fixed per process), two randomly initialised ``--preset`` models (default
"small": 3+3 layers, d_model 256, d_ff 1024; different seeds) with a
``--vocabulary-size`` vocabulary (default 8000, as the Multi30k recipe's)
translate one fixed batch of ``--num-sentences`` synthetic sources whose
lengths are drawn like Multi30k's English test set (``decode_speed.py
--synthetic``'s sources: mean 14, s.d. 4.5 subword tokens) with
`Translator.generate`: beam 4, alpha 0.6, batches of ``--batch-size``,
outputs capped at 1.1 x the source length + 1 (a random model rarely ends
a sentence, so the cap sets the output lengths, the same for both sides).

Two translators: *one model* is ``Translator(model_a)``; *ensemble* is
``Translator(Ensemble([model_a, model_b]))``, one compiled search whose step
runs both models (each with its own key/value cache) and mixes their
probabilities. Each translator's first call (compilations included) is
reported apart; then the two are timed ``--repeats`` times, alternating, so
that a change of load on a shared machine affects both alike, and the
medians are reported as seconds per sentence, with the process CPU time
(all threads) per sentence, a cost measure that other load disturbs less.

Examples::

    python benchmarks/ensemble_decode.py                       # tensorflow, jax
    python benchmarks/ensemble_decode.py --backends jax --num-sentences 64

Writes ``decode_ensemble_<tag>.{md,json}`` to ``--output-dir``.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

from _workers import recorded_command, run_worker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RESULT_PREFIX = "@@ENSEMBLE_DECODE_RESULT@@ "


def log(message):
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def cpu_description():
    """``(model name, flags of interest)`` from /proc/cpuinfo."""
    name, flags = platform.processor() or "cpu", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    flags = [f for f in ("avx2", "avx512f", "amx_tile") if f in present]
                    break
    except OSError:
        pass
    return name, flags


# --------------------------------------------------------------------------
# Worker: one backend.


class _SyntheticVocabulary:
    """What `Translator` needs of a tokenizer for `Translator.generate`."""

    def __init__(self, vocabulary_size):
        self.vocabulary_size = vocabulary_size


def run_worker_process(args):
    sys.path.insert(0, REPO)
    load_start = os.getloadavg()[0]
    import keras
    from decode_speed import synthetic_sources

    from keras_transformer.decoding import Ensemble
    from keras_transformer.models.transformer.transformer import Transformer
    from keras_transformer.models.transformer.translator import Translator

    models = []
    for seed in (args.seed, args.seed + 1):
        keras.utils.set_random_seed(seed)
        models.append(Transformer.from_preset(
            args.preset, vocabulary_size=args.vocabulary_size, dropout_rate=0.0))
    vocabulary = _SyntheticVocabulary(args.vocabulary_size)
    translators = {
        "one model": Translator(models[0], vocabulary, batch_size=args.batch_size),
        "ensemble of two": Translator(
            Ensemble(models), vocabulary, batch_size=args.batch_size),
    }
    sources = [s[:-1] for s in synthetic_sources(args, args.vocabulary_size)]  # no EOS
    caps = [int(round(1.1 * len(ids))) + 1 for ids in sources]

    def run(translator):
        wall, cpu = time.perf_counter(), time.process_time()
        hypotheses, _ = translator.generate(
            sources, beam_size=args.beam_size, alpha=args.alpha,
            batch_size=args.batch_size, max_output_lengths=caps)
        return (time.perf_counter() - wall, time.process_time() - cpu,
                sum(len(h[0]) for h in hypotheses))

    first, walls, cpus, tokens = {}, {}, {}, {}
    for name, translator in translators.items():
        first[name], _, tokens[name] = run(translator)
        walls[name], cpus[name] = [], []
        log(f"{name}: first call (compiles) {first[name]:.1f} s")
    for _ in range(args.repeats):
        for name, translator in translators.items():
            wall, cpu, _ = run(translator)
            walls[name].append(wall)
            cpus[name].append(cpu)
    n = len(sources)
    rows = {
        name: {
            "first_call_seconds": first[name],
            "seconds_per_sentence": statistics.median(walls[name]) / n,
            "cpu_seconds_per_sentence": statistics.median(cpus[name]) / n,
            "runs_seconds": walls[name],
            "runs_cpu_seconds": cpus[name],
            "output_tokens": tokens[name],
        }
        for name in translators
    }
    one, two = rows["one model"], rows["ensemble of two"]
    result = {
        "backend": keras.config.backend(),
        "keras": keras.__version__,
        "model": (f"random {args.preset!r} preset, V={args.vocabulary_size}, "
                  f"{models[0].count_params():,} parameters each"),
        "num_sentences": n,
        "source_tokens_mean": sum(map(len, sources)) / n,
        "rows": rows,
        "ensemble_over_one": two["seconds_per_sentence"] / one["seconds_per_sentence"],
        "ensemble_over_one_cpu": (two["cpu_seconds_per_sentence"]
                                  / one["cpu_seconds_per_sentence"]),
        "load_average": [load_start, os.getloadavg()[0]],
    }
    log(f"ensemble / one model: {result['ensemble_over_one']:.2f}x wall, "
        f"{result['ensemble_over_one_cpu']:.2f}x CPU")
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# --------------------------------------------------------------------------
# Parent: one subprocess per backend, then a table.


def write_results(args, results):
    name, flags = cpu_description()
    cpu = f"{name} ({', '.join(flags) or 'no AVX2'}), {os.cpu_count()} CPU(s)"
    summary = {
        "command": recorded_command(__file__),
        "date": datetime.date.today().isoformat(),
        "cpu": cpu,
        "beam_size": args.beam_size,
        "alpha": args.alpha,
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "results": results,
    }
    os.makedirs(args.output_dir, exist_ok=True)
    base = os.path.join(args.output_dir, f"decode_ensemble_{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump(summary, f, indent=2)
    lines = [
        f"# Ensemble decoding cost ({args.tag})",
        "",
        f"Command: `{summary['command']}`",
        "",
        f"Date: {summary['date']}; CPU: {cpu}.",
        "",
        f"{results[0]['num_sentences']} synthetic Multi30k-like sources "
        f"({results[0]['source_tokens_mean']:.1f} tokens on average), "
        f"{results[0]['model']}; beam {args.beam_size}, alpha {args.alpha}, "
        f"batches of {args.batch_size}, outputs capped at 1.1 x the source length + 1; "
        f"medians of {args.repeats} warm runs (the first call, compilations included, "
        "apart).",
        "",
        "| backend | models | ms / sentence | CPU ms / sentence | first call (s) "
        "| ensemble / one (wall) | ensemble / one (CPU) | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        for name, row in result["rows"].items():
            ratio = ratio_cpu = ""
            if name != "one model":
                ratio = f"{result['ensemble_over_one']:.2f}x"
                ratio_cpu = f"{result['ensemble_over_one_cpu']:.2f}x"
            lines.append(
                f"| {result['backend']} | {name} | {1000 * row['seconds_per_sentence']:.1f} "
                f"| {1000 * row['cpu_seconds_per_sentence']:.1f} "
                f"| {row['first_call_seconds']:.1f} | {ratio} | {ratio_cpu} "
                f"| {result['load_average'][0]:.1f}-{result['load_average'][1]:.1f} |")
    lines += [
        "",
        "load = 1-minute load average when the backend's worker started and ended (above "
        "the number of cores means other work competed for them; the CPU time per "
        "sentence is the steadier figure then).",
    ]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    log(f"wrote {base}.json and {base}.md")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--backends", default="tensorflow,jax")
    p.add_argument("--preset", default="small")
    p.add_argument("--vocabulary-size", type=int, default=8000)
    p.add_argument("--num-sentences", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--beam-size", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--tag", default="cpu", help="suffix of the output files")
    return p.parse_args(argv)


def main():
    args = parse_args()
    if args.worker:
        run_worker_process(args)
        return
    worker_args = []
    for name in ("preset", "vocabulary_size", "num_sentences", "batch_size", "beam_size",
                 "alpha", "repeats", "seed"):
        worker_args += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    results = []
    for backend in args.backends.split(","):
        log(f"{backend} worker")
        out = run_worker(__file__, backend, worker_args)
        line = [x for x in out.splitlines() if x.startswith(RESULT_PREFIX)][-1]
        results.append(json.loads(line[len(RESULT_PREFIX):]))
    write_results(args, results)


if __name__ == "__main__":
    main()
