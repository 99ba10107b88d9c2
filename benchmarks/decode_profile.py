"""Where a compiled JAX beam search spends its time, by XLA operation kind.

Traces one `generate` call (beam 4, compiled with `jax_stateless_jit`, as
`Translator` runs it) on a batch of Multi30k test sentences with the JAX
profiler, then sums the traced XLA:CPU operations by kind (the fusion name
without its number): matmul fusions, dots, transposes, cache updates, top-k...

    KERAS_BACKEND=jax python benchmarks/decode_profile.py --model-dir runs/m30k_tf2 --tag multi30k

Writes ``benchmarks/results/decode_profile_<tag>.{md,json}``. JAX only: the
other backends' profilers report other units.
"""

import argparse
import collections
import datetime
import glob
import gzip
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_SOURCE = os.path.join(REPO, "..", "shared", "data", "multi30k",
                              "test_2016_flickr.en.gz")
SKIP = ("ThunkExecutor", "$", "SlinkyThreadPool", "PjitFunction", "DevicePut",
        "CommonPjRtLoadedExecutable")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-dir", required=True)
    p.add_argument("--source-file", default=DEFAULT_SOURCE)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--source-length", type=int, default=32,
                   help="sources padded (or cut) to this many tokens")
    p.add_argument("--buffer", type=int, default=64, help="output buffer length")
    p.add_argument("--repeats", type=int, default=3, help="traced calls")
    p.add_argument("--dtype", default=None,
                   help="rebuild the model under this dtype policy (e.g. float32) "
                        "with the same weights; default: the saved model's policy")
    p.add_argument("--tag", required=True)
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    sys.path.insert(0, REPO)
    import keras
    if keras.config.backend() != "jax":
        raise SystemExit("decode_profile.py needs KERAS_BACKEND=jax")
    import jax
    import numpy as np

    from keras_transformer.data import read_lines
    from keras_transformer.decoding.generate import SearchInputs, generate
    from keras_transformer.decoding.backends import jax_stateless_jit
    from keras_transformer.models.transformer.transformer_loader import find_trained_model
    from keras_transformer.models.transformer.transformer_tokenizer import TransformerTokenizer
    from keras_transformer.special_tokens import EOS_ID

    run = find_trained_model(args.model_dir)
    model = run.load_model(compile=False)
    if args.dtype:
        config = dict(model.get_config(), dtype=args.dtype)
        weights = model.get_weights()
        model = model.__class__.from_config(config)
        model.set_weights(weights)
    tokenizer = TransformerTokenizer.load(run.vocabulary_path)
    sentences = read_lines(args.source_file)[: args.batch_size]
    ids = np.zeros((len(sentences), args.source_length), np.int32)
    for row, pieces in enumerate(tokenizer.encode(sentences)):
        pieces = list(pieces)[: args.source_length - 1] + [EOS_ID]
        ids[row, : len(pieces)] = pieces
    limits = np.full((len(sentences),), args.buffer, np.int32)
    search = jax_stateless_jit(
        model,
        lambda x: generate(
            model, x, args.buffer, inputs=SearchInputs(alpha=0.6, max_lengths=limits)
        ),
    )
    sequences, scores = search(ids)  # compile
    scores.block_until_ready()
    start = time.perf_counter()
    for _ in range(args.repeats):
        sequences, scores = search(ids)
    scores.block_until_ready()
    seconds = (time.perf_counter() - start) / args.repeats

    trace_dir = tempfile.mkdtemp(prefix="decode_profile_")
    with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
        for _ in range(args.repeats):
            sequences, scores = search(ids)
        scores.block_until_ready()
    trace = sorted(glob.glob(os.path.join(trace_dir, "**", "*.json.gz"), recursive=True))
    if not trace:
        raise SystemExit(f"the profiler wrote no perfetto trace under {trace_dir}")
    events = json.load(gzip.open(trace[-1]))
    events = events["traceEvents"] if isinstance(events, dict) else events
    kinds = collections.Counter()
    for event in events:
        if event.get("ph") == "X" and not event["name"].startswith(SKIP):
            kinds[re.sub(r"\.\d+$", "", event["name"])] += event.get("dur", 0)
    total = sum(kinds.values())
    rows = [{"kind": kind, "ms_per_call": us / args.repeats / 1000,
             "share": us / total} for kind, us in kinds.most_common()]
    steps = int(np.max(np.sum(np.asarray(sequences)[:, 0] != 0, axis=1)))

    command = "KERAS_BACKEND=jax python benchmarks/decode_profile.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    result = {"command": command, "date": datetime.date.today().isoformat(),
              "jax": jax.__version__, "keras": keras.__version__,
              "batch": len(sentences), "beam": 4, "buffer": args.buffer,
              "source_length": args.source_length, "seconds_per_call": seconds,
              "longest_output": steps, "traced_ms_per_call": total / args.repeats / 1000,
              "kinds": rows}
    os.makedirs(args.output_dir, exist_ok=True)
    stem = os.path.join(args.output_dir, f"decode_profile_{args.tag}")
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [f"# JAX decoding profile ({args.tag})", "", f"Command: `{command}`", "",
             f"Date: {result['date']}; jax {jax.__version__}; batch {len(sentences)} x "
             f"beam 4, source {args.source_length} tokens, buffer {args.buffer}; "
             f"{seconds:.3f} s per search (untraced), longest output {steps} tokens.", "",
             "| XLA operation kind | ms per search | share |", "|---|---|---|"]
    lines += [f"| {r['kind']} | {r['ms_per_call']:.1f} | {100 * r['share']:.1f}% |"
              for r in rows[:15]]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
