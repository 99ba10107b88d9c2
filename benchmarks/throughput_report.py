#!/usr/bin/env python
"""Puts several `train_throughput.py` runs side by side (e.g. float32 | bf16 |
padded) as one markdown table of tokens/s and utilisation per row, and one
table of the ratios each run gives, so that no figure is quoted without its
neighbours.

    python benchmarks/throughput_report.py \\
        benchmarks/results/train_throughput_cpu.json \\
        benchmarks/results/train_throughput_cpu_bf16.json \\
        benchmarks/results/train_throughput_cpu_pad.json

``--merge`` first joins runs of one configuration made in parts (e.g. one
call per backend on a GPU machine with a per-call time limit) into one run,
so that the ratios span all of them.

Reads only the JSON files (no framework is imported); prints markdown.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from train_throughput import headline_ratios  # noqa: E402
from train_throughput import reference_rate  # noqa: E402


def run_label(run):
    cfg = run["config"]
    label = cfg.get("dtype_policy") or "float32"
    if cfg.get("pad_fraction"):
        label += f", pad {cfg['pad_fraction']:g}"
    return label


SAME_CONFIG_IGNORES = ("load_average_before_after",)


def merge(runs):
    """One run from parts with the same configuration (results joined)."""
    def config(run):
        return {k: v for k, v in run["config"].items() if k not in SAME_CONFIG_IGNORES}

    for run in runs[1:]:
        if config(run) != config(runs[0]):
            diff = sorted(k for k in config(run)
                          if config(run).get(k) != config(runs[0]).get(k))
            raise SystemExit(f"cannot merge runs with different configs: {diff}")
    merged = dict(runs[0])
    merged["results"] = [r for run in runs for r in run["results"]]
    merged["matmul_reference"] = [m for run in runs
                                  for m in run.get("matmul_reference", [])]
    merged["command"] = " ; ".join(run["command"] for run in runs)
    return merged


def report(paths, merge_runs=False):
    runs = [json.load(open(path)) for path in paths]
    if merge_runs:
        runs = [merge(runs)]
    labels = [run_label(run) for run in runs]
    rows = {}
    for i, run in enumerate(runs):
        ok = [r for r in run["results"] if "error" not in r]
        on_gpu = any(not r.get("device", "cpu").startswith("cpu") for r in ok)
        ref = reference_rate(run.get("matmul_reference", []),
                             run["config"].get("dtype_policy"), on_gpu)
        flops = run["flops_per_target_token"]
        for r in ok:
            util = (f"{100 * r['tokens_per_second'] * flops / 1e9 / ref[0]:.0f}%"
                    if ref else "-")
            rows.setdefault((r["model"], r["backend"]), {})[i] = (
                f"{r['tokens_per_second']:,.0f}", util)
    head = ["model", "backend"]
    for label in labels:
        head += [f"{label} tokens/s", "util."]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (model, backend), cells in rows.items():
        line = [model, backend]
        for i in range(len(runs)):
            line += list(cells.get(i, ("-", "-")))
        lines.append("| " + " | ".join(line) + " |")

    ratios = [dict(headline_ratios(run["results"])) for run in runs]
    names = list(dict.fromkeys(name for r in ratios for name in r))
    lines += ["", "| ratio (tokens/s) | " + " | ".join(labels) + " |",
              "|" + "---|" * (len(labels) + 1)]
    for name in names:
        values = [f"{r[name]:.2f}x" if name in r else "-" for r in ratios]
        lines.append(f"| {name} | " + " | ".join(values) + " |")
    lines += ["", "Runs: " + "; ".join(
        f"{label}: `{run['command']}`" for label, run in zip(labels, runs))]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="train_throughput_<tag>.json files")
    p.add_argument("--merge", action="store_true",
                   help="join the runs (same config, e.g. one per backend) first")
    args = p.parse_args(argv)
    print(report(args.runs, merge_runs=args.merge))


if __name__ == "__main__":
    main()
