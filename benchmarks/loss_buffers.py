#!/usr/bin/env python
"""Counts the float32 ``(batch, length, V)`` buffers of one training step.

The logits of a translation model are its largest activations: at the
paper's 37,000-piece vocabulary, one float32 ``(batch, length, V)`` tensor
is 148 KB per target token (about 3.7 GB at 25,000 tokens a step). This
script counts how many tensors of that size one training step of the
package's `Transformer` (Keras' ``train_step``: forward, the label-smoothed
loss, backward, Adam) makes, for each loss formulation of
`objectives/losses.py` given with ``--formulations``:

* JAX: the compiled train step's optimized HLO, as XLA compiles it for the
  CPU: every value of ``batch * length * V`` float32 elements outside a
  fusion (a fusion's inner values live in registers, not in memory), named
  by the operation it comes from, and ``memory_analysis()``'s temporary
  bytes (the step's peak of intermediate buffers). XLA's choices of fusion
  and layout are the CPU compiler's: the GPU compiler fuses and lays out
  differently (a GPU matmul takes a transposed operand without a copy).
* PyTorch (eager, Keras' train step): the allocations of that size that
  the profiler records (``profile_memory=True``) during one step after a
  warm-up step (the logits among them), and how many of them were alive
  at once at most. These are the allocator's events, the same on any CPU.

    python benchmarks/loss_buffers.py --backends jax,torch \\
        --formulations current,_custom_gradient_form --tag base_bf16

Writes ``benchmarks/results/loss_buffers_<tag>.{md,json}``.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

from _workers import cpu_name, recorded_command, run_worker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PREFIX = "@@LOSS_BUFFERS@@ "


def build(args):
    """The preset's model under the dtype policy, compiled as `train` does,
    with the loss formulation ``args.formulation``; and one batch."""
    sys.path.insert(0, REPO)
    import keras
    import numpy as np

    from keras_transformer.models.transformer.transformer import Transformer
    from keras_transformer.models.transformer.transformer_presets import PRESETS
    from keras_transformer.objectives import losses
    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
    from keras_transformer.objectives.schedules import transformer_optimizer

    backend = keras.config.backend()
    if args.formulation != "current":
        losses._FORMULATIONS[backend] = getattr(losses, args.formulation)
    used = losses._FORMULATIONS[backend].__name__
    keras.utils.set_random_seed(0)
    keras.config.set_dtype_policy(args.dtype_policy)
    config = dict(PRESETS[args.preset])
    vocabulary_size = config["vocabulary_size"]
    model = Transformer(**config)
    model.compile(
        optimizer=transformer_optimizer(d_model=config["d_model"]),
        loss=LabelSmoothedCrossEntropy(label_smoothing=0.1),
    )
    rng = np.random.default_rng(0)
    shape = (args.batch_size, args.seq_len)
    inputs = {
        "encoder_token_ids": rng.integers(4, vocabulary_size, shape).astype("int32"),
        "decoder_token_ids": rng.integers(4, vocabulary_size, shape).astype("int32"),
    }
    labels = rng.integers(4, vocabulary_size, shape).astype("int32")
    return backend, used, model, inputs, labels, vocabulary_size


def jax_buffers(model, inputs, labels, size):
    """Values of ``size`` float32 elements in the compiled step's HLO."""
    import jax

    model.train_on_batch(inputs, labels)  # builds the optimizer's variables
    state = (
        [v.value for v in model.trainable_variables],
        [v.value for v in model.non_trainable_variables],
        [v.value for v in model.optimizer.variables],
        [v.value for v in model.metrics_variables],
    )
    compiled = jax.jit(model.train_step).lower(state, (inputs, labels, None)).compile()
    computation, values = None, []
    for line in compiled.as_text().splitlines():
        header = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$", line)
        if header:
            computation = header.group(1)
            continue
        # ``%name = TYPE op(...)``; TYPE is one shape or a tuple of them
        # (a fusion with several outputs).
        value = re.match(r"\s+(?:ROOT )?%?([\w.\-]+) = (\(.*?\)|\S+) ([\w\-]+)\(", line)
        if not value or computation.startswith(("fused", "wrapped")):
            continue
        # A bitcast or a parameter of a called computation is no new buffer.
        if value.group(3) in ("bitcast", "parameter", "get-tuple-element", "tuple"):
            continue
        for dims in re.findall(r"f32\[([\d,]*)\]", value.group(2)):
            elements = 1
            for d in dims.split(","):
                elements *= int(d) if d else 1
            if elements == size:
                op_name = re.search(r'op_name="([^"]*)"', line)
                values.append({
                    "value": value.group(1),
                    "op_name": op_name.group(1) if op_name else "",
                })
    memory = compiled.memory_analysis()
    return {"values": values, "temp_bytes": int(memory.temp_size_in_bytes)}


def torch_buffers(model, inputs, labels, size):
    """Allocations of ``size`` float32 elements in one eager step."""
    import torch

    model.train_on_batch(inputs, labels)  # warm-up: builds everything
    nbytes = 4 * size
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True
    ) as profiler:
        model.train_on_batch(inputs, labels)
    # The allocator's events, in order (``events()`` folds allocations
    # into the operator events that made them).
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in profiler.profiler.kineto_results.events()
        if e.name() == "[memory]" and abs(e.nbytes()) == nbytes
    )
    live = peak = allocations = 0
    for _, change in events:
        if change > 0:
            allocations += 1
            live += 1
            peak = max(peak, live)
        else:
            live -= 1
    return {"allocations": allocations, "peak_alive": peak}


def worker(args):
    backend, used, model, inputs, labels, vocabulary_size = build(args)
    size = args.batch_size * args.seq_len * vocabulary_size
    if backend == "jax":
        result = jax_buffers(model, inputs, labels, size)
    elif backend == "torch":
        result = torch_buffers(model, inputs, labels, size)
    else:
        raise SystemExit("loss_buffers.py counts under jax or torch")
    result.update(backend=backend, formulation=used, buffer_bytes=4 * size)
    print(PREFIX + json.dumps(result), flush=True)


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def markdown(record):
    """The result file's table: one row per backend and formulation."""
    batch, length = record["batch"]
    mb = record["rows"][0]["buffer_bytes"] / 1e6 if record["rows"] else 0.0
    lines = [
        "# Float32 (batch, length, V) buffers of one training step",
        "",
        f"`{record['command']}` ({record['date']}); preset {record['preset']}, "
        f"{record['dtype_policy']}, batch {batch} x {length}: one buffer is "
        f"{mb:.1f} MB. CPU: {record['cpu']}. Load at start: "
        f"{record['load_at_start']}; at end: {record['load_at_end']}.",
        "",
        "| backend | formulation | buffers made | alive at once (torch) "
        "| XLA temporary MB (jax) | the buffers (jax) |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for row in record["rows"]:
        if row["backend"] == "jax":
            made = len(row["values"])
            names = "; ".join(
                v["op_name"].replace("jit(train_step)/", "") for v in row["values"]
            )
            lines.append(
                f"| jax | {row['formulation']} | {made} |  | "
                f"{row['temp_bytes'] / 1e6:.1f} | {names} |"
            )
        else:
            lines.append(
                f"| torch | {row['formulation']} | {row['allocations']} | "
                f"{row['peak_alive']} |  |  |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", default="jax,torch")
    parser.add_argument(
        "--formulations", default="current",
        help="comma-separated: 'current' (the backend's choice in "
        "losses._FORMULATIONS) or a formulation's function name in losses.py",
    )  # fmt: skip
    parser.add_argument("--formulation", default="current", help=argparse.SUPPRESS)
    parser.add_argument("--preset", default="base")
    parser.add_argument("--dtype-policy", default="mixed_bfloat16")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    parser.add_argument("--tag", default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)

    common = [
        "--preset", args.preset, "--dtype-policy", args.dtype_policy,
        "--batch-size", str(args.batch_size), "--seq-len", str(args.seq_len),
    ]  # fmt: skip
    rows = []
    start_load = uptime()
    for backend in args.backends.split(","):
        for formulation in args.formulations.split(","):
            started = time.perf_counter()
            stdout = run_worker(__file__, backend, common + ["--formulation", formulation])
            for line in stdout.splitlines():
                if line.startswith(PREFIX):
                    row = json.loads(line[len(PREFIX):])
                    row["seconds"] = round(time.perf_counter() - started, 1)
                    rows.append(row)
                    print(row, flush=True)
    record = {
        "command": recorded_command(__file__, argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_name(),
        "load_at_start": start_load,
        "load_at_end": uptime(),
        "preset": args.preset,
        "dtype_policy": args.dtype_policy,
        "batch": [args.batch_size, args.seq_len],
        "rows": rows,
    }
    if args.tag:
        os.makedirs(args.output_dir, exist_ok=True)
        path = os.path.join(args.output_dir, f"loss_buffers_{args.tag}")
        with open(path + ".json", "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)
        with open(path + ".md", "w", encoding="utf-8") as f:
            f.write(markdown(record))
        print("wrote", path + ".{json,md}")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
