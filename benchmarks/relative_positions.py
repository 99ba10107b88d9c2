"""Multi30k EN->DE: sinusoidal against relative positions at equal updates.

    python benchmarks/relative_positions.py --max-steps 500 --backend tensorflow

Trains the ``small`` preset of ``benchmarks/multi30k.yaml`` twice with the
same seed and the same number of optimizer updates (``max_steps``; no time
budget: on a shared machine time says nothing), once with the paper's
sinusoidal positions and once with relative position representations
(``model_overrides: {positional_encoding: relative, max_relative_position:
16}``, Shaw et al., 2018), one run after the other, with the user-facing
commands:

    keras-transformer train --config benchmarks/multi30k.yaml --set max_steps=N \\
        --set model_overrides.positional_encoding=relative ...
    keras-transformer evaluate --model-dir DIR --src val.en.gz --ref val.de.gz

and reports cased detokenized sacreBLEU on the validation set (val, 1,014
sentences; the config's beam 4 and alpha) of each run's last weights
(``final_model=last``: no checkpoint selection). Writes
``benchmarks/results/relative_positions_<backend>_<steps>.{json,md}``.

A variant whose run directory already holds a run finished at
``--max-steps`` updates (``results.json``) is not trained again: the same
command resumes after an interruption, and the training seconds are the
run's own (``results.json``'s ``train_seconds``).
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

from _workers import cpu_description, recorded_command

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "data", "multi30k")
RESULTS = os.path.join(HERE, "results")

VARIANTS = {
    "sinusoidal": [],
    "relative": [
        "model_overrides.positional_encoding=relative",
        "model_overrides.max_relative_position=16",
    ],
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max-steps", type=int, default=500, help="optimizer updates per run")
    p.add_argument("--warmup-steps", type=int, default=200,
                   help="learning-rate warmup (updates), the same for both runs")
    p.add_argument("--backend", default="tensorflow", choices=("tensorflow", "jax", "torch"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="comma-separated, from " + ", ".join(VARIANTS))
    p.add_argument("--data-dir", default=os.environ.get("MULTI30K_DIR", DEFAULT_DATA_DIR))
    p.add_argument("--output-dir", default=os.path.join(REPO, "runs", "relative_positions"))
    p.add_argument("--config", default=os.path.join(HERE, "multi30k.yaml"))
    return p.parse_args(argv)


def run(command, env):
    print("$", " ".join(command), flush=True)
    start = time.time()
    result = subprocess.run(command, env=env, text=True, capture_output=True)
    if result.returncode:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"command failed ({result.returncode}): {' '.join(command[:4])}")
    return result.stdout + result.stderr, time.time() - start


def finished_run(directory, max_steps):
    """The run's ``results.json`` when it finished at ``max_steps`` updates."""
    try:
        with open(os.path.join(directory, "results.json")) as f:
            results = json.load(f)
    except FileNotFoundError:
        return None
    if results.get("steps") == max_steps and results.get("stop_reason") == "max_steps":
        return results
    return None


def train_and_evaluate(args, variant, env):
    data = lambda name: os.path.join(args.data_dir, name)  # noqa: E731
    directory = os.path.join(args.output_dir, variant)
    cli = [sys.executable, "-m", "keras_transformer"]
    sets = [
        f"train_src={data('train.en.gz')}", f"train_tgt={data('train.de.gz')}",
        f"valid_src={data('val.en.gz')}", f"valid_tgt={data('val.de.gz')}",
        "time_budget_minutes=null", f"max_steps={args.max_steps}",
        f"warmup_steps={args.warmup_steps}", f"seed={args.seed}",
        "eval_sentences=0", "final_model=last", "average_last_n=1",
        f"backend={args.backend}",
    ] + VARIANTS[variant]
    command = cli + ["train", "--backend", args.backend, "--config", args.config,
                     "--output-dir", directory, "--overwrite"]
    command += [a for s in sets for a in ("--set", s)]
    run_results = finished_run(directory, args.max_steps)
    if run_results is None:
        run(command, env)
        run_results = finished_run(directory, args.max_steps)
        if run_results is None:
            raise SystemExit(f"{directory}: the run did not reach {args.max_steps} updates")
    output, evaluate_seconds = run(
        cli + ["evaluate", "--backend", args.backend, "--model-dir", directory,
               "--src", data("val.en.gz"), "--ref", data("val.de.gz")],
        env,
    )
    scores = re.findall(r"BLEU:\s+([0-9.]+)", output)
    if not scores:
        raise SystemExit(f"no BLEU in the evaluate output of {variant}:\n{output[-2000:]}")
    return {
        "overrides": VARIANTS[variant],
        "val_bleu_cased_detokenized": float(scores[0]),
        "bleu_scores_found": scores,
        "updates": run_results["steps"],
        "train_seconds": round(run_results["train_seconds"], 1),
        "evaluate_seconds": round(evaluate_seconds, 1),
        "run_results": run_results,
    }


def write_results(args, result):
    name = f"relative_positions_{args.backend}_{args.max_steps}"
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, name + ".json"), "w") as f:
        json.dump(result, f, indent=2, default=str)
    lines = [
        f"# Multi30k EN->DE validation BLEU at {args.max_steps} updates: positions",
        "",
        f"Command: `{result['command']}`",
        "",
        f"Machine: {result['cpu']} ({', '.join(result['cpu_flags'])}), "
        f"{result['cpu_count']} cores; backend {args.backend}; seed {args.seed}; "
        f"`small` preset of benchmarks/multi30k.yaml, warmup {args.warmup_steps} updates, "
        "last weights, beam 4.",
        "",
        "| positions | updates | val BLEU (cased, detokenized) | train s | evaluate s |",
        "|---|---|---|---|---|",
    ]
    for variant, row in result["variants"].items():
        lines.append(
            f"| {variant} | {row['updates']} | {row['val_bleu_cased_detokenized']:.2f} | "
            f"{row['train_seconds']} | {row['evaluate_seconds']} |"
        )
    lines += ["", "Train and evaluate seconds ran on a shared machine: not a speed measurement."]
    with open(os.path.join(RESULTS, name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return name


def main(argv=None):
    args = parse_args(argv)
    if not os.path.isfile(os.path.join(args.data_dir, "train.en.gz")):
        raise SystemExit(f"Multi30k not found in {args.data_dir} (--data-dir or MULTI30K_DIR)")
    variants = args.variants.split(",")
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"--variants: unknown {unknown}; choose from {list(VARIANTS)}")
    env = dict(os.environ, KERAS_BACKEND=args.backend, TF_CPP_MIN_LOG_LEVEL="2")
    cpu, flags = cpu_description()
    result = {
        "command": recorded_command(__file__, argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu, "cpu_flags": flags, "cpu_count": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "max_steps": args.max_steps, "warmup_steps": args.warmup_steps,
        "seed": args.seed, "backend": args.backend, "variants": {},
    }
    for variant in variants:
        result["variants"][variant] = train_and_evaluate(args, variant, env)
        print(variant, result["variants"][variant]["val_bleu_cased_detokenized"], flush=True)
    name = write_results(args, result)
    print(f"wrote benchmarks/results/{name}.{{json,md}}")


if __name__ == "__main__":
    main()
