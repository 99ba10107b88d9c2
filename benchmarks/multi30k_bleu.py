"""Multi30k EN->DE: train for a time budget on the machine it runs on, then sacreBLEU.

    python benchmarks/multi30k_bleu.py                       # 25 minutes, TensorFlow backend
    python benchmarks/multi30k_bleu.py --minutes 5 --backend jax --output-dir runs/m30k_jax
    python benchmarks/multi30k_bleu.py --skip-train --output-dir runs/multi30k   # evaluate only

Runs exactly the user-facing commands:
  keras-transformer train --config benchmarks/multi30k.yaml --train-src ... --set time_budget_minutes=N
  keras-transformer evaluate --model-dir DIR --src test_2016_flickr.en.gz --ref test_2016_flickr.de.gz
and, with --curve, a BLEU-vs-training-time curve from the epoch checkpoints
(greedy decoding on --curve-sentences validation sentences; not counted in the
training time). Writes DIR/benchmark.json and DIR/bleu_curve.png.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data", "multi30k")


def run(command, env):
    print("$", " ".join(command), flush=True)
    start = time.time()
    process = subprocess.Popen(command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    for line in process.stdout:  # stream progress, keep the output
        print(line, end="", flush=True)
        lines.append(line)
    if process.wait():
        raise SystemExit(f"command failed ({process.returncode})")
    return "".join(lines), time.time() - start


def report_lines(output):
    """The lines of a command's output without Keras' progress-bar frames."""
    return [l for l in output.splitlines() if "\b" not in l and "/step" not in l]


def bleu_curve(output_dir, data_dir, sentences, env):
    """(seconds since training start, BLEU on val) for each epoch checkpoint."""
    script = f"""
import glob, json, os, sys, itertools
from keras_transformer import Transformer, Translator
from keras_transformer.data import SubwordTokenizer, read_parallel
from keras_transformer.training.bleu import corpus_bleu
out = {output_dir!r}
src, ref, _ = read_parallel(os.path.join({data_dir!r}, "val.en.gz"), os.path.join({data_dir!r}, "val.de.gz"))
src, ref = src[:{sentences}], ref[:{sentences}]
tokenizer = SubwordTokenizer.load(out)
# The run's final model (its preset files, or model.keras of earlier versions).
model = Transformer.from_preset(out)
points = []
for path in sorted(glob.glob(os.path.join(out, "checkpoints", "*.weights.h5"))):
    model.load_weights(path)
    hyps = Translator(model, tokenizer).translate(src, beam_size=1)
    points.append((os.path.getmtime(path), os.path.basename(path), corpus_bleu(hyps, ref).score))
print("CURVE", json.dumps(points))
"""
    stdout, _ = run([sys.executable, "-c", script], env)
    line = [l for l in stdout.splitlines() if l.startswith("CURVE ")][-1]
    return json.loads(line[len("CURVE "):])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=os.environ.get("MULTI30K_DIR", DEFAULT_DATA))
    parser.add_argument("--config", default=os.path.join(HERE, "multi30k.yaml"))
    parser.add_argument("--backend", default="tensorflow")
    parser.add_argument("--minutes", type=float, default=25.0)
    parser.add_argument("--output-dir", default="runs/multi30k")
    parser.add_argument("--skip-train", action="store_true")
    parser.add_argument("--curve", action="store_true", help="BLEU-vs-time from the checkpoints")
    parser.add_argument("--curve-sentences", type=int, default=300)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="extra config override passed to `train --set` (repeatable); recorded in the result")
    parser.add_argument("--results-dir", default=None,
                        help="also copy the result JSON, curve and test hypotheses here as "
                             "multi30k_<backend>.json, multi30k_<backend>_bleu_curve.png and "
                             "multi30k_<backend>_test_2016_flickr.hyp.de (e.g. benchmarks/results)")
    args = parser.parse_args(argv)

    data = lambda name: os.path.join(args.data_dir, name)  # noqa: E731
    if not os.path.exists(data("train.en.gz")):
        raise SystemExit(f"Multi30k not found in {args.data_dir} (use --data-dir or MULTI30K_DIR)")
    env = dict(os.environ, KERAS_BACKEND=args.backend, TF_CPP_MIN_LOG_LEVEL="2")
    cli = [sys.executable, "-m", "keras_transformer"]
    with open(args.config) as f:
        config_text = f.read()
    result = {"command": "python " + " ".join([os.path.relpath(__file__)] + sys.argv[1:]),
              "backend": args.backend, "minutes": args.minutes, "config": os.path.relpath(args.config),
              "config_text": config_text, "overrides": args.overrides,
              "cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg()}
    if not args.skip_train:
        result["train_command_started"] = time.time()
        train_output, seconds = run(
            cli + [
                "train", "--backend", args.backend, "--config", args.config,
                "--output-dir", args.output_dir,
                "--set", f"train_src={data('train.en.gz')}", "--set", f"train_tgt={data('train.de.gz')}",
                "--set", f"valid_src={data('val.en.gz')}", "--set", f"valid_tgt={data('val.de.gz')}",
                "--set", f"time_budget_minutes={args.minutes}", "--set", "eval_sentences=0",
                "--set", f"backend={args.backend}",
            ] + [a for o in args.overrides for a in ("--set", o)],
            env,
        )
        result["train_command_seconds"] = round(seconds, 1)
        result["train_log_summary"] = [
            l for l in report_lines(train_output)
            if re.search(r"padding|steps|stopp|budget|average|parameters|chose|dtype_policy", l, re.I)
        ][-40:]
        # The run's own record: updates, stop reason, the averaged
        # checkpoints and, with a list average_last_n, every candidate's
        # validation score and the selection's time (after the budget).
        with open(os.path.join(args.output_dir, "results.json")) as f:
            result["run_results"] = json.load(f)
    stdout, seconds = run(
        cli + [
            "evaluate", "--backend", args.backend, "--model-dir", args.output_dir,
            "--src", data("test_2016_flickr.en.gz"), "--ref", data("test_2016_flickr.de.gz"),
            "--output", os.path.join(args.output_dir, "test_2016_flickr.hyp.de"),
        ],
        env,
    )
    result["evaluate_seconds"] = round(seconds, 1)
    # Keep the report, not the progress bar's carriage-return frames.
    result["evaluate_output"] = "\n".join(report_lines(stdout))[-2000:]
    scores = re.findall(r"BLEU:\s+([0-9.]+)", stdout)
    result["bleu_scores_found"] = scores
    if args.curve:
        points = bleu_curve(args.output_dir, args.data_dir, args.curve_sentences, env)
        result["curve"] = points
        if points:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            # Minutes since the train command started (vocabulary and data
            # preparation included), or since the first checkpoint when only
            # evaluating.
            start = result.get("train_command_started", points[0][0])
            fig, ax = plt.subplots(figsize=(6, 4))
            ax.plot([(t - start) / 60 for t, _, _ in points], [b for _, _, b in points], marker="o")
            ax.set(xlabel="minutes since the train command started" if "train_command_started" in result else "minutes since first checkpoint", ylabel="sacreBLEU (val, greedy)",
                   title=f"Multi30k EN-DE, {args.backend}, 2 CPU cores")
            fig.tight_layout()
            fig.savefig(os.path.join(args.output_dir, "bleu_curve.png"), dpi=100)
    with open(os.path.join(args.output_dir, "benchmark.json"), "w") as f:
        json.dump(result, f, indent=2)
    if args.results_dir:
        import shutil

        os.makedirs(args.results_dir, exist_ok=True)
        stem = os.path.join(args.results_dir, f"multi30k_{args.backend}")
        shutil.copyfile(os.path.join(args.output_dir, "benchmark.json"), stem + ".json")
        shutil.copyfile(os.path.join(args.output_dir, "test_2016_flickr.hyp.de"), stem + "_test_2016_flickr.hyp.de")
        if os.path.exists(os.path.join(args.output_dir, "bleu_curve.png")):
            shutil.copyfile(os.path.join(args.output_dir, "bleu_curve.png"), stem + "_bleu_curve.png")
    print(json.dumps({k: v for k, v in result.items() if k not in ("evaluate_output", "config_text")}, indent=2))


if __name__ == "__main__":
    main()
