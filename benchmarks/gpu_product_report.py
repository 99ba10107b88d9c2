"""The product's training step rate against the throughput benchmark's.

Reads what the ``gpu`` section of ``benchmarks/gpu_suite.sh`` wrote: the
logs of ``keras-transformer train`` (Keras' ``verbose=2`` epoch lines,
``N/N - 12s - 40ms/step - ...``, and the trainer's ``Input pipeline:``
line) and ``keras-transformer evaluate`` under each backend, and
``train_throughput.py``'s result for the same preset and batch shape
(synthetic batches in device memory: the pure step rate). For each backend
it writes the product's steady step time (the median over the epochs after
the first, which compiles), the benchmark's, their ratio (the share of the
benchmark's rate the product reaches: 1 - the cost of everything the
product does beyond the step, its data path included), the time ``fit``
waited for batches, and the test BLEU.

Usage::

    python benchmarks/gpu_product_report.py --files OUT/files --tag h100
"""

import argparse
import glob
import json
import os
import re
import statistics

EPOCH_LINE = re.compile(r"^\s*(\d+)/(\d+) - (\d+)s - ([\d.]+)(ms|s)/step")
INPUT_LINE = re.compile(r"waited ([\d.]+) s for them \(([\d.]+)% of (\d+) s in fit\)")
BLEU_LINE = re.compile(r"cased detokenized sacreBLEU:\s+([\d.]+)")


def train_log(path):
    steps_ms, input_wait = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = EPOCH_LINE.match(line)
            if match:
                value = float(match.group(4))
                steps_ms.append(value if match.group(5) == "ms" else 1000 * value)
            match = INPUT_LINE.search(line)
            if match:
                input_wait = {
                    "wait_seconds": float(match.group(1)),
                    "wait_share": float(match.group(2)) / 100,
                    "fit_seconds": float(match.group(3)),
                }
    steady = steps_ms[1:] or steps_ms
    return {
        "epoch_step_ms": steps_ms,
        "step_ms": statistics.median(steady) if steady else None,
        "input_wait": input_wait,
    }


def first_bleu(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = BLEU_LINE.search(line)
            if match:
                return {"line": line.strip(), "bleu": float(match.group(1))}
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    bench = {}
    for path in glob.glob(os.path.join(args.files, f"train_throughput_{args.tag}_gpu_product_shape*.json")):
        with open(path, encoding="utf-8") as f:
            for result in json.load(f).get("results", []):
                if result.get("model") == "ours" and "step_ms" in result:
                    bench[result["backend"]] = result
    report = {"tag": args.tag, "backends": {}}
    for backend in ("jax", "torch"):
        log = os.path.join(args.files, f"gpu_train_{backend}.log")
        if not os.path.exists(log):
            continue
        product = train_log(log)
        entry = dict(product)
        reference = bench.get(backend)
        if reference is not None:
            entry["benchmark_step_ms"] = reference["step_ms"]
            entry["benchmark_device"] = reference.get("device")
            if product["step_ms"]:
                entry["product_rate_over_benchmark"] = round(
                    reference["step_ms"] / product["step_ms"], 4
                )
        entry["evaluate"] = first_bleu(os.path.join(args.files, f"gpu_evaluate_{backend}.log"))
        report["backends"][backend] = entry
    output = args.output or os.path.join(args.files, f"gpu_product_{args.tag}.json")
    with open(output, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
