"""Training data at the paper's corpus sizes: preparation time, peak memory,
time to the first update and the input pipeline's speed, for N pairs.

For each N the script writes a synthetic corpus of N sentence pairs made
from the Multi30k training files (each line joins two random sentences of
one side with the same two of the other, seeded, so that lengths are
WMT-like: about 27 words a side), then measures, each command in a process
of its own:

- ``preprocess``: ``keras-transformer preprocess`` (a shared BPE
  vocabulary of 8,000 pieces learned from a streamed 2M-sentence sample,
  then the binary shards): wall time and peak memory;
- ``train_from_text``: ``keras-transformer train`` on the text files for 5
  updates, the preparation included (into the run directory), the `tiny`
  preset, packed rows of 128 tokens: wall time and peak memory;
- ``first_update``: ``keras-transformer train --train-corpus`` on the
  prepared shards for one update: the wall time from the process start to
  its exit (an upper bound of the time to the first update: it includes
  the import, the model's compilation and saving the final model);
- ``pipeline``: the training stream of the shards alone (packed, 128
  tokens, 4,096 tokens per batch) in a process pinned to one core: target
  tokens (labels that are not padding) per second over 300 batches, after
  20 batches of warmup, and the process's peak memory, for each input path
  (``--pipeline-paths``, a process each): ``stream`` (`CorpusStream.batches`
  in the loop), ``numpy_path`` (what ``fit`` reads under JAX and PyTorch:
  the batches built in a background thread, `make_batches_from_corpus`)
  and ``tf_data`` (what ``fit`` reads under TensorFlow,
  `make_dataset_from_corpus`).

Peak memory is read two ways: ``max_rss_mib``, the largest resident set of
any one process of the command (``wait4``'s ``ru_maxrss``: the
SentencePiece child that learns the vocabulary is a process of its own),
and ``peak_tree_rss_mib``, the largest sum over the command's processes,
sampled every 0.1 s from ``/proc``.

Usage::

    python benchmarks/data_scale.py --pairs 1000000 4500000
    python benchmarks/data_scale.py --pairs 36000000 --skip preprocess first_update

Results: ``benchmarks/results/data_scale_<N>.json`` (one file per N), with
the machine (CPU model and flags) and the command.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _workers import cpu_description, recorded_command  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
STEPS = ("preprocess", "train_from_text", "first_update", "pipeline")
TRAIN_SETTINGS = [
    "--preset", "tiny", "--vocabulary-size", "8000",
    "--set", "bucketing=packed", "--set", "max_length=128",
    "--set", "tokens_per_batch=4096", "--set", "eval_sentences=0",
    "--set", "verbose=2",
]  # fmt: skip


def read_sentences(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.strip() for line in f]


def write_corpus(multi30k, directory, num_pairs, seed=0):
    """Writes ``train.en``/``train.de`` of ``num_pairs`` joined pairs (kept
    when present); returns their paths."""
    paths = [os.path.join(directory, f"train.{side}") for side in ("en", "de")]
    done = os.path.join(directory, "written")
    if os.path.exists(done):
        return paths
    os.makedirs(directory, exist_ok=True)
    english = read_sentences(os.path.join(multi30k, "train.en.gz"))
    german = read_sentences(os.path.join(multi30k, "train.de.gz"))
    rng = np.random.default_rng(seed)
    chunk = 500_000
    with (
        open(paths[0], "w", encoding="utf-8") as en,
        open(paths[1], "w", encoding="utf-8") as de,
    ):
        for start in range(0, num_pairs, chunk):
            count = min(chunk, num_pairs - start)
            first = rng.integers(0, len(english), count)
            second = rng.integers(0, len(english), count)
            en.write("".join(f"{english[a]} {english[b]}\n" for a, b in zip(first, second)))
            de.write("".join(f"{german[a]} {german[b]}\n" for a, b in zip(first, second)))
    open(done, "w").close()
    return paths


def _tree_rss_kib(pid):
    """Resident KiB of ``pid`` and its descendants (0 once gone)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status", encoding="utf-8") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="utf-8") as f:
                    stack.extend(int(child) for child in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def measure(command, log_path, env=None):
    """Runs ``command``; ``{"seconds", "max_rss_mib", "peak_tree_rss_mib",
    "returncode", "log"}``."""
    load = os.getloadavg()
    with open(log_path, "w", encoding="utf-8") as log:
        start = time.monotonic()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        peak = [0]
        finished = threading.Event()

        def sample():
            while not finished.is_set():
                peak[0] = max(peak[0], _tree_rss_kib(process.pid))
                finished.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - start
        finished.set()
        sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
    with open(log_path, encoding="utf-8") as f:
        tail = f.read()[-1500:]
    return {
        "seconds": round(seconds, 1),
        "max_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "peak_tree_rss_mib": round(peak[0] / 1024, 1),
        "returncode": process.returncode,
        "load_average_at_start": load,
        "command": " ".join(command),
        "log_tail": tail,
    }


def cli(*args):
    return [sys.executable, "-m", "keras_transformer", *args]


PIPELINE_PATHS = ("stream", "numpy_path", "tf_data")


def pipeline_rate(corpus, path, batches=300, warmup=20):
    """Runs in a worker process pinned to one core; prints JSON.

    ``path``: ``"stream"`` iterates `CorpusStream.batches` in the loop
    itself; ``"numpy_path"`` is what ``fit`` reads under JAX and PyTorch
    (`make_batches_from_corpus`'s generator: the batches built in a
    background thread, on the same core here); ``"tf_data"`` is what ``fit``
    reads under TensorFlow (`make_dataset_from_corpus`, iterated as NumPy).
    The same batches on all three (same seed)."""
    import resource

    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from keras_transformer.data.corpus_batches import make_batches_from_corpus
    from keras_transformer.data.corpus_stream import CorpusStream
    from keras_transformer.data.options import DatasetOptions

    options = DatasetOptions(
        tokens_per_batch=4096, max_length=128, bucketing="packed", seed=0, repeat=True
    )
    if path == "stream":
        iterator = CorpusStream(corpus, options).batches()
    elif path == "numpy_path":
        feed, _ = make_batches_from_corpus(corpus, options)
        iterator = feed.generator()
    else:
        from keras_transformer.data.stream import make_dataset_from_corpus

        dataset, _ = make_dataset_from_corpus(corpus, options)
        iterator = dataset.as_numpy_iterator()
    for _ in range(warmup):
        next(iterator)
    start = time.perf_counter()
    tokens = 0
    for _ in range(batches):
        _, labels = next(iterator)
        tokens += int(np.count_nonzero(labels))
    seconds = time.perf_counter() - start
    print(json.dumps({
        "path": path, "batches": batches, "target_tokens": tokens,
        "seconds": round(seconds, 3), "target_tokens_per_second": round(tokens / seconds),
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_average": os.getloadavg(),
    }))  # fmt: skip


def run(num_pairs, args):
    work = os.path.join(args.work, str(num_pairs))
    src, tgt = write_corpus(args.multi30k, work, num_pairs)
    corpus = os.path.join(work, "corpus")
    env = dict(os.environ, KERAS_BACKEND=args.backend, TF_CPP_MIN_LOG_LEVEL="3")
    model, flags = cpu_description()
    result = {
        "num_pairs": num_pairs,
        "load_average_at_start": os.getloadavg(),
        "backend": args.backend,
        "cpu": model,
        "cpu_flags": flags,
        "cores": os.cpu_count(),
        "command": recorded_command(__file__),
    }
    if "preprocess" in args.steps:
        subprocess.run(["rm", "-rf", corpus], check=True)
        result["preprocess"] = measure(
            cli("preprocess", "--train-src", src, "--train-tgt", tgt, "--output", corpus,
                "--vocabulary-size", "8000"),
            os.path.join(work, "preprocess.log"), env,
        )  # fmt: skip
    if "train_from_text" in args.steps:
        run_dir = os.path.join(work, "run_text")
        subprocess.run(["rm", "-rf", run_dir], check=True)
        result["train_from_text"] = measure(
            cli("train", "--train-src", src, "--train-tgt", tgt, "--output-dir", run_dir,
                *TRAIN_SETTINGS, "--set", "max_steps=5", "--set", "steps_per_epoch=5",
                "--set", "epochs=1"),
            os.path.join(work, "train_from_text.log"), env,
        )  # fmt: skip
    if not os.path.isdir(corpus):  # Without the preprocess step: the run's own.
        corpus = os.path.join(work, "run_text", "corpus")
    result["corpus"] = corpus
    if "first_update" in args.steps:
        run_dir = os.path.join(work, "run_corpus")
        subprocess.run(["rm", "-rf", run_dir], check=True)
        result["first_update"] = measure(
            cli("train", "--train-corpus", corpus, "--output-dir", run_dir,
                *TRAIN_SETTINGS, "--set", "max_steps=1", "--set", "steps_per_epoch=1",
                "--set", "epochs=1"),
            os.path.join(work, "first_update.log"), env,
        )  # fmt: skip
    if "pipeline" in args.steps:
        # Each input path in a process of its own (its own peak memory).
        paths = {}
        for path in args.pipeline_paths:
            out = subprocess.run(
                [sys.executable, __file__, "--pipeline-worker", corpus, "--path", path],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            paths[path] = json.loads(out.stdout.strip().splitlines()[-1])
        result["pipeline"] = dict(
            paths.get("stream", {}), paths=paths, command=result["command"],
            load_average_at_start=result["load_average_at_start"],
        )  # fmt: skip
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, f"data_scale_{num_pairs}.json")
    if os.path.exists(path):  # The steps not run keep their earlier results.
        with open(path, encoding="utf-8") as f:
            result = dict(json.load(f), **{k: v for k, v in result.items() if k in STEPS})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(json.dumps({k: v for k, v in result.items()}, indent=2)[:4000])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[1_000_000, 4_500_000])
    parser.add_argument(
        "--multi30k", default=os.path.join(ROOT, "..", "shared", "data", "multi30k")
    )
    parser.add_argument("--work", default="/tmp/keras_transformer_data_scale")
    parser.add_argument("--backend", default="tensorflow")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument("--skip", nargs="+", choices=STEPS, default=[])
    parser.add_argument(
        "--pipeline-paths", nargs="+", choices=PIPELINE_PATHS, default=list(PIPELINE_PATHS),
        help="the input paths the pipeline step measures",
    )
    parser.add_argument("--pipeline-worker", metavar="CORPUS", help=argparse.SUPPRESS)
    parser.add_argument("--path", choices=PIPELINE_PATHS, default="stream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pipeline_worker:
        pipeline_rate(args.pipeline_worker, args.path)
        return
    args.steps = [step for step in args.steps if step not in args.skip]
    if not os.path.isfile(os.path.join(args.multi30k, "train.en.gz")):
        raise SystemExit(f"--multi30k {args.multi30k!r} has no train.en.gz")
    for num_pairs in args.pairs:
        run(num_pairs, args)


if __name__ == "__main__":
    main()
