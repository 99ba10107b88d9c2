#!/usr/bin/env python
"""Operator launches per training step under PyTorch: the package's model
(Keras' eager step and the package's compiled step) against
``torch.nn.Transformer`` in a plain eager loop, on the same shapes.

A training step on a GPU that runs thousands of small operators is bound by
the host dispatching them, whatever the GPU; the count is a property of the
program, not of the machine, so it is measured on the CPU. Each model trains
``--warmup`` steps, then ``--steps`` steps run under ``torch.profiler``;
the table gives, per step,

* ATen operator calls made from Python (profiler events ``aten::*`` with no
  ATen parent: what eager PyTorch dispatches one by one), and all ATen
  events (nested ones included);
* for the compiled step, also the kernels Inductor generated for the graph
  (``torch._inductor.metrics.generated_kernel_count``; on the CPU the
  profiler does not see generated kernels, so they are counted at
  generation, with the graph cache off so that they are generated) and the
  compiled-graph calls.

Models (the throughput benchmark's ``default`` preset unless overridden:
3+3 layers, d_model 256, 4 heads, d_ff 1,024, V 8,000, batch 64 x 32):

* ``ours eager``: ``keras_transformer.Transformer`` under ``KERAS_BACKEND=
  torch``, ``model.compile(jit_compile=False)``, Keras' ``train_on_batch``;
* ``ours compiled``: the same with ``jit_compile=True``
  (models/transformer/torch_train_step.py);
* ``torch.nn.Transformer eager``: benchmarks/_peers.py's model, Adam and
  ``nn.CrossEntropyLoss(label_smoothing=0.1)`` (``zero_grad``, forward,
  loss, backward, ``step``).

    KERAS_BACKEND=torch python benchmarks/train_op_launches.py

Writes ``benchmarks/results/train_op_launches_<tag>.{md,json}``.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "torch")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)


def count_events(profiler, steps):
    """(top-level ATen calls, all ATen events, compiled-graph calls) per step."""
    events = [e for e in profiler.events() if e.device_type.name == "CPU"]
    aten = [e for e in events if e.name.startswith("aten::")]

    def has_aten_parent(event):
        parent = event.cpu_parent
        while parent is not None:
            if parent.name.startswith("aten::"):
                return True
            parent = parent.cpu_parent
        return False

    top = [e for e in aten if not has_aten_parent(e)]
    graphs = [e for e in events if "Compiled" in e.name or "CompiledFunction" in e.name]
    return len(top) / steps, len(aten) / steps, len(graphs) / steps


def profile(step, warmup, steps):
    import torch

    for _ in range(warmup):
        step()
    start = time.perf_counter()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    seconds = (time.perf_counter() - start) / steps
    top, total, graphs = count_events(prof, steps)
    return {"aten_calls_from_python": top, "aten_events": total,
            "compiled_graph_calls": graphs, "profiled_seconds_per_step": seconds}


def batch(cfg):
    import numpy as np

    rng = np.random.default_rng(0)
    b, s, v = cfg["batch_size"], cfg["seq_len"], cfg["vocabulary_size"]
    src = rng.integers(4, v, (b, s), dtype=np.int32)
    dec = rng.integers(4, v, (b, s), dtype=np.int32)
    lab = rng.integers(4, v, (b, s), dtype=np.int32)
    return src, dec, lab


def ours(cfg, jit_compile, warmup, steps):
    import keras
    import torch

    from keras_transformer.models.transformer.transformer import Transformer
    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
    from keras_transformer.objectives.schedules import transformer_optimizer

    keras.utils.set_random_seed(0)
    arch = {k: cfg[k] for k in ("vocabulary_size", "num_layers", "d_model",
                                "num_heads", "d_ff")}
    model = Transformer(**arch, dropout_rate=0.1)
    model.compile(optimizer=transformer_optimizer(cfg["d_model"]),
                  loss=LabelSmoothedCrossEntropy(), jit_compile=jit_compile)
    src, dec, lab = batch(cfg)
    x = {"encoder_token_ids": torch.from_numpy(src), "decoder_token_ids": torch.from_numpy(dec)}
    y = torch.from_numpy(lab)
    kernels = None
    if jit_compile:
        import torch._inductor.config
        import torch._inductor.metrics

        # Generate the kernels (the graph cache would load them whole).
        torch._inductor.config.fx_graph_cache = False
        torch._inductor.metrics.reset()
    start = time.perf_counter()
    model.train_on_batch(x, y)
    first = time.perf_counter() - start
    if jit_compile:
        kernels = torch._inductor.metrics.generated_kernel_count
    result = profile(lambda: model.train_on_batch(x, y), warmup, steps)
    result.update(first_step_seconds=first)
    if kernels is not None:
        result["generated_kernels_per_step"] = kernels
    return result


def torch_nn(cfg, warmup, steps):
    import torch
    from torch import nn

    from _peers import build_torch_model, noam_learning_rate

    torch.manual_seed(0)
    model = build_torch_model(
        cfg["vocabulary_size"], cfg["num_layers"], cfg["d_model"], cfg["num_heads"],
        cfg["d_ff"], 0.1, max_length=cfg["seq_len"], attention_dropout=0.0,
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: noam_learning_rate(step + 1, cfg["d_model"]))
    criterion = nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    src, dec, lab = (torch.from_numpy(a.astype("int64")) for a in batch(cfg))
    model.train()

    def step():
        optimizer.zero_grad(set_to_none=True)
        logits = model(src, dec)
        loss = criterion(logits.reshape(-1, cfg["vocabulary_size"]), lab.reshape(-1))
        loss.backward()
        optimizer.step()
        scheduler.step()
        loss.item()

    return profile(step, warmup, steps)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--num-layers", type=int, default=3)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--num-heads", type=int, default=4)
    parser.add_argument("--d-ff", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--tag", default="cpu")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    cfg = {k: getattr(args, k) for k in ("vocabulary_size", "num_layers", "d_model",
                                         "num_heads", "d_ff", "batch_size", "seq_len")}
    import torch

    rows = {
        "ours eager (Keras' train step)": ours(cfg, False, args.warmup, args.steps),
        "ours compiled (jit_compile=True)": ours(cfg, True, args.warmup, args.steps),
        "torch.nn.Transformer eager": torch_nn(cfg, args.warmup, args.steps),
    }
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python"] + sys.argv),
        "config": cfg, "rows": rows, "torch": torch.__version__,
        "machine": platform.processor() or platform.machine(),
        "load_average": os.getloadavg(),
    }
    os.makedirs(args.output_dir, exist_ok=True)
    base = os.path.join(args.output_dir, f"train_op_launches_{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump(record, f, indent=2)
    lines = [
        "# Operator launches per training step under PyTorch",
        "",
        f"`{record['command']}` ({record['date']}, torch {torch.__version__}). Shapes: "
        f"{cfg['num_layers']}+{cfg['num_layers']} layers, d_model {cfg['d_model']}, "
        f"{cfg['num_heads']} heads, d_ff {cfg['d_ff']}, V {cfg['vocabulary_size']:,}, "
        f"batch {cfg['batch_size']} x {cfg['seq_len']}; counts are per step, "
        f"over {args.steps} profiled steps after {args.warmup} warm-up steps.",
        "",
        "| model | ATen calls from Python | all ATen events | compiled-graph calls "
        "| generated kernels | s/step under the profiler |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in rows.items():
        kernels = row.get("generated_kernels_per_step")
        lines.append(
            f"| {name} | {row['aten_calls_from_python']:,.0f} | {row['aten_events']:,.0f} "
            f"| {row['compiled_graph_calls']:,.0f} | "
            f"{'' if kernels is None else f'{kernels:,}'} | "
            f"{row['profiled_seconds_per_step']:.3f} |"
        )
    lines += [
        "",
        "Operator counts do not depend on the machine; the seconds do (they are "
        "measured under the profiler, which slows eager steps most, and with "
        f"other work sharing the cores: load average {record['load_average'][0]:.1f} "
        "at the end of the run).",
    ]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
