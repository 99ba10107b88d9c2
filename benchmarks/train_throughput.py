#!/usr/bin/env python
"""Training throughput of keras_transformer vs keras-hub layers vs torch.nn.

Measures target tokens per second of a training step for models of the same
architecture and size (the paper's post-norm encoder-decoder). Each row is
one model *variant*, so that every ratio compares equal work or says where
the work differs (``MODEL_NOTES`` is printed under the table):

* ``ours``: ``keras_transformer.Transformer`` trained by ``model.fit`` with
  ``kt.transformer_optimizer`` and ``kt.LabelSmoothedCrossEntropy`` (eps 0.1;
  residual and embedding dropout, none on attention weights: the paper's).
* ``keras_hub``: the same model assembled from keras-hub's
  ``TokenAndPositionEmbedding``, ``TransformerEncoder`` and
  ``TransformerDecoder`` as a keras-hub user writes it (keras.io translation
  example): Adam with the same Noam schedule, Keras' sparse cross-entropy
  without label smoothing, and keras-hub's ``dropout``, which also drops
  attention weights (so ``MultiHeadAttention`` skips its fused
  ``dot_product_attention`` path).
* ``keras_hub_same_loss``: as ``keras_hub`` with ours' loss.
* ``keras_hub_same_loss_noattndrop``: as ``keras_hub_same_loss`` with the
  attention-weight dropout set to 0 (residual dropout kept): the same
  dropout placement as ours, i.e. equal work.
* ``torch_nn``: ``torch.nn.Transformer`` with embeddings and an output
  projection in a plain PyTorch loop (Adam, same Noam schedule,
  ``nn.CrossEntropyLoss(label_smoothing=0.1)``: the same loss; it adds final
  LayerNorms and attention-weight dropout); ``torch_nn_noattndrop`` without
  the attention dropout; ``+compile``: the same under ``torch.compile``.

Each Keras model runs under every requested Keras backend. Because
``KERAS_BACKEND`` is fixed per process, every (model, backend) pair runs in a
fresh subprocess of this script (``--worker``) that prints one JSON result
line; the parent collects them, prints a markdown table and the ratios, and
writes CSV/JSON/markdown/PNG files to ``--output-dir``.

Timing: the Keras models train with ``model.fit(generator, steps_per_epoch=
warmup + steps * repeats, epochs=1)`` and a callback that takes a timestamp in
every ``on_train_batch_end`` (Keras converts the logs to Python floats before
calling it, which waits for the step to finish on every backend). The first
``--warmup-steps`` steps (tracing/compilation) are dropped; the rest form
``--repeats`` windows of ``--steps`` steps each, and the median window gives
tokens/s. The PyTorch loop takes the same timestamps after ``loss.item()``.

Tokens and FLOPs: tokens/s counts target tokens whose label is not padding.
"Model FLOP/s" counts the useful work only: the FLOPs the model needs for
the real (unpadded) source and target lengths of each example
(`flops_per_example`), over the real target tokens; the work a model spends
on padded positions is not counted (it is shown separately as "FLOPs/token
incl. padding"). Without ``--pad-fraction`` the two are equal.

Utilisation: before and after the workers, a subprocess (pinned like the
workers) measures a plain matmul rate of the machine it runs on: numpy float32
2048x2048 and torch bfloat16 2048x2048 on CPU, and torch (or JAX) bfloat16 /
float32 8192x8192 on a GPU. "util." is model FLOP/s over the best such rate
for the run's dtype (the best of both measurements: the conservative
choice). ``--peak-tflops`` adds MFU against a datasheet peak.

Examples::

    python benchmarks/train_throughput.py                     # full CPU run
    python benchmarks/train_throughput.py --models keras_hub,torch_nn \\
        --steps 5 --repeats 2                                 # quick check
    python benchmarks/train_throughput.py --preset base \\
        --dtype-policy mixed_bfloat16 --peak-tflops 989       # H100 run
"""

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from _workers import cpu_name, recorded_command

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RESULT_PREFIX = "@@TRAIN_THROUGHPUT_RESULT@@ "

KERAS_MODELS = (
    "ours",
    "ours+compile",
    "ours_compute_logits",
    "keras_hub",
    "keras_hub_same_loss",
    "keras_hub_same_loss_noattndrop",
)
TORCH_MODELS = ("torch_nn", "torch_nn_noattndrop")
ALL_MODELS = KERAS_MODELS + TORCH_MODELS
ALL_BACKENDS = ("tensorflow", "jax", "torch")

# What each row does; printed under the table.
MODEL_NOTES = {
    "ours": "keras_transformer.Transformer; kt.LabelSmoothedCrossEntropy "
    "(eps 0.1; per-backend fused formulation); dropout on embeddings and "
    "sub-layer outputs only, none on attention weights (the paper's)",
    "ours_compute_logits": "ours with logits_dtype=None: the tied output "
    "projection in the compute dtype (bf16 under mixed_bfloat16), as the "
    "keras-hub peers' ReversibleEmbedding (reverse_dtype=None) does; ours "
    "defaults to float32 logits. Same as ours in float32 runs",
    "keras_hub": "keras-hub layers as a keras-hub user writes them: Keras' "
    "SparseCategoricalCrossentropy(from_logits, ignore_class=0), no label "
    "smoothing; keras-hub's `dropout` also drops attention weights, so its "
    "MultiHeadAttention skips the fused ops.dot_product_attention for "
    "einsum / masked softmax / dropout / einsum; learned positions "
    "(TokenAndPositionEmbedding: + max_length x d_model parameters; ours: "
    "sinusoidal)",
    "keras_hub_same_loss": "keras_hub with ours' loss "
    "(kt.LabelSmoothedCrossEntropy); attention-weight dropout kept",
    "keras_hub_same_loss_noattndrop": "keras_hub_same_loss with the "
    "attention-weight dropout set to 0 after building (residual dropout "
    "kept): MultiHeadAttention then calls ops.dot_product_attention (on CPU "
    "not necessarily faster than the einsum path); same dropout placement "
    "as ours: equal work (up to keras-hub's learned positions)",
    "torch_nn": "torch.nn.Transformer, plain PyTorch loop (Adam, Noam), "
    "nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0) (same loss); "
    "adds a final LayerNorm after each stack, and drops attention weights "
    "(dropout_p of scaled_dot_product_attention)",
    "torch_nn_noattndrop": "torch_nn with attention-weight dropout 0 (the "
    "final LayerNorms stay)",
    "ours+compile": "ours with jit_compile=True under the PyTorch backend: "
    "the package's compiled training step (Keras' train_step recorded with "
    "make_fx, one torch.compile graph per batch shape; "
    "models/transformer/torch_train_step.py); run only under torch (JAX "
    "already compiles ours, TensorFlow's XLA is off on CPU by default)",
    "+compile": "the same model under torch.compile (default mode)",
}

# Model sizes. "default" is the size measured on CPU; "base" is the
# paper's base model with a ~25,000 target-token batch (196 x 128 = 25,088),
# meant for a GPU with --dtype-policy mixed_bfloat16.
PRESETS = {
    "tiny": dict(
        vocabulary_size=1000, num_layers=1, d_model=64, num_heads=2,
        d_ff=128, batch_size=8, seq_len=16,
    ),
    "default": dict(
        vocabulary_size=8000, num_layers=3, d_model=256, num_heads=4,
        d_ff=1024, batch_size=64, seq_len=32,
    ),
    "base": dict(
        vocabulary_size=37000, num_layers=6, d_model=512, num_heads=8,
        d_ff=2048, batch_size=196, seq_len=128,
    ),
    # The paper's big model (Table 3) at the same batch; --batch-size 392
    # gives the ~50,000-token batch of either.
    "big": dict(
        vocabulary_size=37000, num_layers=6, d_model=1024, num_heads=16,
        d_ff=4096, batch_size=196, seq_len=128,
    ),
}


# --------------------------------------------------------------------------
# Shared helpers (parent and workers).
# --------------------------------------------------------------------------


def make_batches(cfg):
    """A pool of random batches, identical for every model (fixed seed).

    Ids are drawn from [4, V) so that no token is padding (ids 0-3 are
    reserved special tokens); ``--pad-fraction`` pads the tail of rows, the
    decoder inputs exactly where the labels are padding (as in real data:
    ``[BOS, y_1..y_n]`` against ``[y_1..y_n, EOS]``).
    Returns a list of ``(encoder_ids, decoder_ids, labels)`` int32 arrays.
    """
    import numpy as np

    rng = np.random.default_rng(cfg["seed"])
    b, s, v = cfg["batch_size"], cfg["seq_len"], cfg["vocabulary_size"]
    batches = []
    for _ in range(cfg["data_pool"]):
        src = rng.integers(4, v, size=(b, s), dtype=np.int32)
        tgt = rng.integers(4, v, size=(b, s + 1), dtype=np.int32)
        if cfg["pad_fraction"] > 0:
            # Row lengths uniform in [(1 - 2f) L, L]: on average a fraction f
            # of the positions are padding.
            lo = max(1, int(round(s * (1 - 2 * cfg["pad_fraction"]))))
            for row in range(b):
                src[row, rng.integers(lo, s + 1):] = 0
                tgt[row, rng.integers(lo, s + 1) + 1:] = 0
        labels = tgt[:, 1:].copy()
        decoder_ids = np.where(labels != 0, tgt[:, :-1], 0).astype(np.int32)
        batches.append((src, decoder_ids, labels))
    return batches


def flops_per_example(cfg, source_length, target_length):
    """Model FLOPs of one training step on one example of the given lengths.

    PaLM-style estimate (Chowdhery et al. 2022, appendix B): a matmul
    parameter costs 6 FLOPs per token it processes (2 per multiply-add,
    times 3 for forward + backward), and attention over K keys costs
    12 * d_model * K per query per layer (QK^T and AV, forward + backward;
    causal masking is not subtracted). With L layers per stack, S source and
    T target tokens, N_enc / N_dec the encoder / decoder layer parameters:

        FLOPs = 6 * N_dec * T                   decoder layers
              + 6 * N_enc * S                   encoder layers
              + 6 * d_model * V * T             output projection
              + 12 * L * d_model * T * T        decoder self-attention
              + 12 * L * d_model * T * S        cross-attention
              + 12 * L * d_model * S * S        encoder self-attention

    The output projection is a real (d_model x V) matmul even when its weight
    is tied to the embedding, so it is counted; the embedding lookups are
    gathers and count 0. Called with the real (unpadded) lengths this is the
    useful work; with the padded lengths, the work of a model that computes
    every padded position.
    """
    sys.path.insert(0, HERE)
    from _peers import analytic_parameter_counts

    counts = analytic_parameter_counts(
        cfg["vocabulary_size"], cfg["num_layers"], cfg["d_model"], cfg["d_ff"]
    )
    d, layers = cfg["d_model"], cfg["num_layers"]
    s, t = source_length, target_length
    return (
        6 * counts["decoder"] * t
        + 6 * counts["encoder"] * s
        + 6 * d * cfg["vocabulary_size"] * t
        + 12 * layers * d * t * t
        + 12 * layers * d * t * s
        + 12 * layers * d * s * s
    )


def flops_per_target_token(cfg):
    """Useful model FLOPs per real target token over the batch pool.

    Sums `flops_per_example` at each example's real source and target
    lengths (non-padding counts) over all batches of `make_batches`, and
    divides by the real target tokens. Without padding this is the formula
    per target token at S = T = seq_len.
    """
    return flops_accounting(cfg)["useful_per_token"]


def flops_accounting(cfg):
    """Useful FLOPs per real target token, and what padding adds.

    ``useful_per_token``: see `flops_per_target_token`;
    ``padded_per_token``: FLOPs of the full padded batches (every position
    computed) per real target token; ``source_padding`` /
    ``target_padding``: measured fraction of padded positions.
    """
    import numpy as np

    useful = padded = tokens = 0.0
    src_real = tgt_real = positions = 0
    for src, _, labels in make_batches(cfg):
        s_len = np.count_nonzero(src, axis=1)
        t_len = np.count_nonzero(labels, axis=1)
        for s_i, t_i in zip(s_len.tolist(), t_len.tolist()):
            useful += flops_per_example(cfg, s_i, t_i)
        padded += src.shape[0] * flops_per_example(cfg, src.shape[1], labels.shape[1])
        tokens += float(t_len.sum())
        src_real += int(s_len.sum())
        tgt_real += int(t_len.sum())
        positions += src.size
    return {
        "useful_per_token": useful / tokens,
        "padded_per_token": padded / tokens,
        "source_padding": 1 - src_real / positions,
        "target_padding": 1 - tgt_real / positions,
    }


def current_rss_mb():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def peak_rss_mb():
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    scale = 1.0 if sys.platform == "darwin" else 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def summarize_timestamps(ends, cfg, tokens_per_step, cpu_ends=None):
    """Windows of ``steps`` steps after ``warmup_steps``; see module doc.

    ``cpu_ends``: the process CPU time (all threads) at the same moments; its
    per-step median is a cost measure, and with one pinned thread
    (``--cpu-threads 1``) a speed measure that other load barely disturbs.
    """
    w, n, r = cfg["warmup_steps"], cfg["steps"], cfg["repeats"]
    assert len(ends) == w + n * r, (len(ends), w, n, r)
    windows, tokens = [], []
    for i in range(r):
        start, stop = w - 1 + i * n, w - 1 + (i + 1) * n
        windows.append(ends[stop] - ends[start])
        tokens.append(sum(tokens_per_step[start + 1 : stop + 1]))
    tps = [tok / sec for tok, sec in zip(tokens, windows)]
    cpu = {}
    if cpu_ends:
        cpu_windows = [cpu_ends[w - 1 + (i + 1) * n] - cpu_ends[w - 1 + i * n]
                       for i in range(r)]
        cpu = {
            "cpu_ms_per_step": 1000 * statistics.median(cpu_windows) / n,
            "tokens_per_cpu_second": statistics.median(
                [tok / sec for tok, sec in zip(tokens, cpu_windows)]),
        }
    return {
        **cpu,
        "window_seconds": windows,
        "tokens_per_second_windows": tps,
        "tokens_per_second": statistics.median(tps),
        "tokens_per_second_min": min(tps),
        "tokens_per_second_max": max(tps),
        "step_ms": 1000 * statistics.median(windows) / n,
        "tokens_per_step": statistics.mean(tokens_per_step[w:]),
    }


# --------------------------------------------------------------------------
# Workers (one process per model/backend).
# --------------------------------------------------------------------------


def architecture(cfg):
    """The size arguments every model builder takes, from the worker config."""
    keys = ("vocabulary_size", "num_layers", "d_model", "num_heads", "d_ff", "dropout_rate")
    return {key: cfg[key] for key in keys}


def worker_keras(model_name, cfg):
    import keras
    import numpy as np

    backend = keras.backend.backend()
    keras.utils.set_random_seed(cfg["seed"])
    if cfg["dtype_policy"]:
        keras.config.set_dtype_policy(cfg["dtype_policy"])

    arch = architecture(cfg)
    sys.path.insert(0, REPO)
    # Submodules only: the package's TensorFlow-dependent parts (data,
    # tokenizer, training) are not needed here.
    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy

    same_loss = LabelSmoothedCrossEntropy(label_smoothing=cfg["label_smoothing"])
    jit = {"auto": "auto", "true": True, "false": False}[cfg["jit_compile"]]
    if model_name == "ours+compile":
        model_name, jit = "ours", True
    if model_name in ("ours", "ours_compute_logits"):
        from keras_transformer.models.transformer.transformer import Transformer
        from keras_transformer.objectives.schedules import transformer_optimizer

        logits_dtype = None if model_name == "ours_compute_logits" else "float32"
        model = Transformer(**arch, logits_dtype=logits_dtype)
        optimizer = transformer_optimizer(d_model=cfg["d_model"])
        loss = same_loss
    elif model_name.startswith("keras_hub"):
        sys.path.insert(0, HERE)
        from _peers import build_keras_hub_model, make_keras_noam_schedule

        model = build_keras_hub_model(
            **arch,
            max_length=cfg["seq_len"],
            tie_embeddings=cfg["peer_embeddings"] == "tied",
            attention_dropout=0.0 if model_name.endswith("_noattndrop") else None,
        )
        optimizer = keras.optimizers.Adam(
            learning_rate=make_keras_noam_schedule(cfg["d_model"]),
            beta_1=0.9,
            beta_2=0.98,
            epsilon=1e-9,
        )
        if model_name == "keras_hub":
            # As a keras-hub user writes it: keras-hub has no label-smoothed
            # *sparse* CE; padding is ignored.
            loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=0
            )
        else:
            loss = same_loss
    else:
        raise ValueError(model_name)

    model.compile(optimizer=optimizer, loss=loss, jit_compile=jit)

    batches = make_batches(cfg)
    total = cfg["warmup_steps"] + cfg["steps"] * cfg["repeats"]
    tokens_per_step = [
        int(np.count_nonzero(batches[k % len(batches)][2])) for k in range(total)
    ]

    def generator():
        k = 0
        while True:
            src, dec, lab = batches[k % len(batches)]
            yield {"encoder_token_ids": src, "decoder_token_ids": dec}, lab
            k += 1

    ends, cpu_ends = [], []

    class Timer(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            # logs were pythonified by Keras (device sync); take the time.
            ends.append(time.perf_counter())
            cpu_ends.append(time.process_time())

    rss_before = current_rss_mb()
    t0 = time.perf_counter()
    model.fit(
        generator(),
        steps_per_epoch=total,
        epochs=1,
        shuffle=False,
        verbose=0,
        callbacks=[Timer()],
    )
    result = summarize_timestamps(ends, cfg, tokens_per_step, cpu_ends)
    result.update(
        model=model_name + ("+compile" if jit is True and backend == "torch" else ""),
        backend=backend,
        params=int(model.count_params()),
        first_step_seconds=ends[0] - t0,
        jit_compile=str(getattr(model, "jit_compile", cfg["jit_compile"])),
        rss_before_fit_mb=rss_before,
    )
    result.update(device_memory(backend))
    return result


def device_memory(backend):
    """Peak memory: device memory on GPU, else the worker's peak host RSS."""
    out = {"peak_rss_mb": peak_rss_mb(), "device": "cpu: " + cpu_name()}
    peak = None
    try:
        if backend == "tensorflow":
            import tensorflow as tf

            gpus = tf.config.list_physical_devices("GPU")
            if gpus:
                peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
                details = tf.config.experimental.get_device_details(gpus[0])
                out["device"] = details.get("device_name", "GPU")
        elif backend == "jax":
            import jax

            dev = jax.devices()[0]
            if dev.platform != "cpu":
                peak = (dev.memory_stats() or {}).get("peak_bytes_in_use")
                out["device"] = dev.device_kind
        elif backend in ("torch", "pytorch"):
            import torch

            if torch.cuda.is_available():
                peak = torch.cuda.max_memory_allocated()
                out["device"] = torch.cuda.get_device_name()
    except Exception as e:  # memory stats are best effort
        out["memory_error"] = repr(e)
    if peak is not None:
        out["peak_mem_mb"] = peak / 2**20
        out["mem_kind"] = "device"
    else:
        out["peak_mem_mb"] = out["peak_rss_mb"]
        out["mem_kind"] = "host RSS"
    return out


def worker_torch(model_name, cfg):
    import numpy as np
    import torch
    from torch import nn

    sys.path.insert(0, HERE)
    from _peers import build_torch_model, noam_learning_rate

    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build_torch_model(
        **architecture(cfg),
        max_length=cfg["seq_len"],
        tie_embeddings=cfg["peer_embeddings"] == "tied",
        attention_dropout=0.0 if "_noattndrop" in model_name else None,
    ).to(device)
    params = sum(p.numel() for p in model.parameters())
    forward = torch.compile(model) if model_name.endswith("+compile") else model

    optimizer = torch.optim.Adam(
        model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: noam_learning_rate(step + 1, cfg["d_model"])
    )
    criterion = nn.CrossEntropyLoss(
        ignore_index=0, label_smoothing=cfg["label_smoothing"]
    )
    autocast_dtype = None
    if cfg["dtype_policy"] in ("mixed_bfloat16", "bfloat16"):
        autocast_dtype = torch.bfloat16
    elif cfg["dtype_policy"] in ("mixed_float16", "float16"):
        autocast_dtype = torch.float16
    scaler = torch.amp.GradScaler(
        device.type, enabled=autocast_dtype == torch.float16
    )

    batches = [
        tuple(torch.from_numpy(a.astype(np.int64)) for a in b)
        for b in make_batches(cfg)
    ]
    total = cfg["warmup_steps"] + cfg["steps"] * cfg["repeats"]
    tokens_per_step = [
        int(torch.count_nonzero(batches[k % len(batches)][2]))
        for k in range(total)
    ]
    vocab = cfg["vocabulary_size"]

    model.train()
    ends, cpu_ends = [], []
    rss_before = current_rss_mb()
    t0 = time.perf_counter()
    for step in range(total):
        src, dec, lab = (
            t.to(device, non_blocking=True) for t in batches[step % len(batches)]
        )
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(
            device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None
        ):
            logits = forward(src, dec)
        loss = criterion(logits.float().reshape(-1, vocab), lab.reshape(-1))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        loss.item()  # what a logging loop does; also waits for the step
        ends.append(time.perf_counter())
        cpu_ends.append(time.process_time())

    result = summarize_timestamps(ends, cfg, tokens_per_step, cpu_ends)
    result.update(
        model=model_name,
        backend="pytorch",
        params=int(params),
        first_step_seconds=ends[0] - t0,
        jit_compile=str(model_name.endswith("+compile")),
        rss_before_fit_mb=rss_before,
    )
    result.update(device_memory("pytorch"))
    return result


def _time_matmul(fn, flops, min_reps=5, min_seconds=1.0):
    """GFLOP/s of ``fn()`` (one matmul, synchronised): median and best."""
    fn()  # warm-up: thread pools, kernels, allocation
    rates, start = [], time.perf_counter()
    while len(rates) < min_reps or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        rates.append(flops / (time.perf_counter() - t0) / 1e9)
        if len(rates) >= 200:
            break
    return {"gflops_median": statistics.median(rates), "gflops_max": max(rates),
            "reps": len(rates)}


def measure_matmul_rates(cfg):
    """Plain matmul rates of the machine running the benchmark, with the workers' threads.

    CPU: numpy float32 and torch float32 / bfloat16, n = 2048 (torch only if
    installed). GPU: torch (else JAX) float32 and bfloat16, n = 8192. Runs in
    its own subprocess, pinned and threaded like the workers (`run_job`).
    """
    import numpy as np

    out = {"threads": len(os.sched_getaffinity(0)), "rates": {}}
    n = 2048
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    out["rates"]["cpu_float32_numpy"] = _time_matmul(lambda: a @ b, 2 * n**3)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(out["threads"])
        for dtype in ("float32", "bfloat16"):
            ta = torch.from_numpy(a).to(getattr(torch, dtype))
            tb = torch.from_numpy(b).to(getattr(torch, dtype))
            out["rates"][f"cpu_{dtype}_torch"] = _time_matmul(
                lambda: torch.matmul(ta, tb), 2 * n**3)
        if torch.cuda.is_available():
            out["gpu"] = torch.cuda.get_device_name()
            n_gpu = 8192
            for dtype in ("float32", "bfloat16"):
                ga = torch.randn(n_gpu, n_gpu, device="cuda",
                                 dtype=getattr(torch, dtype))
                gb = torch.randn(n_gpu, n_gpu, device="cuda",
                                 dtype=getattr(torch, dtype))

                def run(ga=ga, gb=gb):
                    torch.matmul(ga, gb)
                    torch.cuda.synchronize()

                out["rates"][f"gpu_{dtype}_torch"] = _time_matmul(
                    run, 2 * n_gpu**3, min_reps=20)
            out["tf32_allowed"] = bool(torch.backends.cuda.matmul.allow_tf32)
            return out
    try:
        import jax
        import jax.numpy as jnp

        device = jax.devices()[0]
        if device.platform != "cpu":
            out["gpu"] = device.device_kind
            n_gpu = 8192
            matmul = jax.jit(jnp.matmul)
            for dtype in ("float32", "bfloat16"):
                ja = jnp.ones((n_gpu, n_gpu), dtype)
                jb = jnp.ones((n_gpu, n_gpu), dtype)
                out["rates"][f"gpu_{dtype}_jax"] = _time_matmul(
                    lambda: matmul(ja, jb).block_until_ready(), 2 * n_gpu**3,
                    min_reps=20)
    except ImportError:
        pass
    return out


def reference_rate(matmul_runs, dtype_policy, on_gpu):
    """The matmul rate (GFLOP/s) that "util." divides by, and its name.

    The best rate of the run's dtype (bfloat16 for mixed_bfloat16, float32
    otherwise) on the run's device, over every measurement (before and after
    the workers) and framework: the highest, hence the most conservative.
    """
    dtype = "bfloat16" if "bfloat16" in (dtype_policy or "") else "float32"
    prefix = f"{'gpu' if on_gpu else 'cpu'}_{dtype}_"
    best = None
    for run in matmul_runs:
        for name, rate in run.get("rates", {}).items():
            if name.startswith(prefix) and (best is None or rate["gflops_max"] > best[0]):
                best = (rate["gflops_max"], name)
    return best


def worker_main(args):
    cfg = json.loads(args.worker_config)
    if cfg.get("cpu_threads"):
        # Pin before any framework starts its thread pools: TF, XLA and
        # OpenMP size them from the affinity mask.
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: cfg["cpu_threads"]])
    model_name = args.worker
    if model_name == "matmul":
        result = measure_matmul_rates(cfg)
        sys.stdout.write(RESULT_PREFIX + json.dumps(result) + "\n")
        sys.stdout.flush()
        return
    if model_name.startswith("torch_nn"):
        result = worker_torch(model_name, cfg)
    else:
        result = worker_keras(model_name, cfg)
    result["versions"] = framework_versions(result["backend"])
    sys.stdout.write(RESULT_PREFIX + json.dumps(result) + "\n")
    sys.stdout.flush()


def framework_versions(backend):
    versions = {}
    import importlib

    names = ["torch"] if backend == "pytorch" else ["keras", backend]
    if backend != "pytorch":
        names.append("keras_hub")
    for name in names:
        try:
            versions[name] = importlib.import_module(name).__version__
        except Exception:
            pass
    return versions


# --------------------------------------------------------------------------
# Parent: run the workers, report.
# --------------------------------------------------------------------------


def build_config(args):
    cfg = dict(PRESETS[args.preset])
    if args.batch_size:
        cfg["batch_size"] = args.batch_size
    if args.seq_len:
        cfg["seq_len"] = args.seq_len
    cfg.update(
        dropout_rate=args.dropout_rate,
        label_smoothing=0.1,
        dtype_policy=args.dtype_policy,
        jit_compile=args.jit_compile,
        warmup_steps=args.warmup_steps,
        steps=args.steps,
        repeats=args.repeats,
        seed=args.seed,
        data_pool=args.data_pool,
        pad_fraction=args.pad_fraction,
        peer_embeddings=args.peer_embeddings,
        cpu_threads=args.cpu_threads,
    )
    return cfg


def jobs_for(args):
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for m in models:
        if m not in ALL_MODELS:
            raise SystemExit(f"unknown model {m!r}; choose from {ALL_MODELS}")
    for b in backends:
        if b not in ALL_BACKENDS:
            raise SystemExit(f"unknown backend {b!r}; choose from {ALL_BACKENDS}")
    jobs = []
    for m in models:
        if m == "ours+compile":
            jobs += [(m, b) for b in backends if b == "torch"]
        elif m in KERAS_MODELS:
            jobs += [(m, b) for b in backends]
        else:
            if args.torch_compile in ("off", "both"):
                jobs.append((m, "pytorch"))
            if args.torch_compile in ("on", "both"):
                jobs.append((m + "+compile", "pytorch"))
    return jobs


def run_job(model, backend, cfg, args):
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if cfg.get("cpu_threads"):
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(cfg["cpu_threads"])
    if model == "matmul":
        # Every CPU a worker may use (the frameworks' own pools, TF's and
        # XLA's, size themselves from the affinity mask, whatever
        # OMP_NUM_THREADS says).
        threads = str(cfg.get("cpu_threads") or len(os.sched_getaffinity(0)))
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = threads
    elif backend != "pytorch":
        env["KERAS_BACKEND"] = backend
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        model,
        "--worker-config",
        json.dumps(cfg),
    ]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=args.worker_timeout,
        )
    except subprocess.TimeoutExpired:
        return {"model": model, "backend": backend,
                "error": f"timed out after {args.worker_timeout}s"}
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
            result["wall_seconds"] = time.perf_counter() - t0
            return result
    tail = (proc.stderr or "")[-3000:] + (proc.stdout or "")[-1000:]
    return {"model": model, "backend": backend,
            "error": f"worker exited {proc.returncode}", "log_tail": tail}


def run_matmul(cfg, args):
    """The matmul reference (`measure_matmul_rates`) in a pinned subprocess."""
    if args.no_matmul_reference:
        return {"error": "skipped (--no-matmul-reference)"}
    r = run_job("matmul", "none", cfg, args)
    if "error" not in r:
        print("# matmul reference: " + ", ".join(
            f"{k} {v['gflops_max']:,.0f} GFLOP/s" for k, v in r["rates"].items()),
            flush=True)
    return r


def fmt_int(x):
    return f"{x:,.0f}"


def flops_unit(on_gpu):
    return ("TFLOP/s", 1e12) if on_gpu else ("GFLOP/s", 1e9)


def markdown_table(results, cfg, args, accounting, reference, on_gpu):
    flops_tok = accounting["useful_per_token"]
    unit, scale = flops_unit(on_gpu)
    head = ["model", "backend", "tokens/s (median)", "min-max", "step ms",
            "CPU ms/step", f"model {unit}"]
    if reference:
        head.append("util.")
    if args.peak_tflops:
        head.append("MFU")
    head += ["peak mem MB", "params", "jit", "1st step s"]
    rows = ["| " + " | ".join(head) + " |",
            "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        if "error" in r:
            cells = [r["model"], r["backend"], "FAILED: " + r["error"]]
            cells += [""] * (len(head) - len(cells))
        else:
            achieved = r["tokens_per_second"] * flops_tok
            cells = [
                r["model"], r["backend"], fmt_int(r["tokens_per_second"]),
                f"{fmt_int(r['tokens_per_second_min'])}-"
                f"{fmt_int(r['tokens_per_second_max'])}",
                f"{r['step_ms']:.1f}",
                f"{r['cpu_ms_per_step']:.1f}" if "cpu_ms_per_step" in r else "",
                f"{achieved / scale:,.3g}" if on_gpu else f"{achieved / scale:,.1f}",
            ]
            if reference:
                cells.append(f"{100 * achieved / 1e9 / reference[0]:.0f}%")
            if args.peak_tflops:
                cells.append(f"{100 * achieved / 1e12 / args.peak_tflops:.1f}%")
            cells += [
                f"{r['peak_mem_mb']:,.0f} ({r['mem_kind']})",
                fmt_int(r["params"]), r["jit_compile"],
                f"{r['first_step_seconds']:.1f}",
            ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def note_lines(results):
    """Footnotes: what each model row in the table does."""
    models = list(dict.fromkeys(r["model"] for r in results))
    lines = []
    for m in models:
        base = m.replace("+compile", "")
        note = MODEL_NOTES.get(base, "")
        if m.endswith("+compile"):
            note = f"{base} under torch.compile (default mode)"
        lines.append(f"- `{m}`: {note}")
    return lines


def _ratio(by, a, b):
    if a in by and b in by:
        return by[a] / by[b]
    return None


def ratio_lines(results, key="tokens_per_second"):
    """Ratios of ``key`` between rows, each saying what it compares."""
    ok = [r for r in results if "error" not in r and key in r]
    by = {(r["model"], r["backend"]): r[key] for r in ok}
    lines = []

    def add(label, value):
        if value is not None:
            lines.append(f"- {label}: **{value:.2f}x**")

    backends = [b for b in ALL_BACKENDS if ("ours", b) in by]
    for b in backends:
        add(f"{b}: ours / keras_hub_same_loss_noattndrop (equal work: same "
            "loss, same dropout placement)",
            _ratio(by, ("ours", b), ("keras_hub_same_loss_noattndrop", b)))
        add(f"{b}: ours / keras_hub_same_loss (same loss; keras-hub also "
            "drops attention weights)",
            _ratio(by, ("ours", b), ("keras_hub_same_loss", b)))
        add(f"{b}: ours / keras_hub (as a keras-hub user writes it: "
            "sparse CE without smoothing, attention dropout)",
            _ratio(by, ("ours", b), ("keras_hub", b)))
        add(f"{b}: ours_compute_logits / keras_hub_same_loss_noattndrop "
            "(equal work including the logits' dtype: both heads in the "
            "compute dtype)",
            _ratio(by, ("ours_compute_logits", b),
                   ("keras_hub_same_loss_noattndrop", b)))
        add(f"{b}: ours_compute_logits / ours (what float32 logits cost)",
            _ratio(by, ("ours_compute_logits", b), ("ours", b)))

    # ours / keras_hub = loss x attention dropout x layers.
    split = []
    for b in backends:
        whole = _ratio(by, ("ours", b), ("keras_hub", b))
        loss = _ratio(by, ("keras_hub_same_loss", b), ("keras_hub", b))
        attn = _ratio(by, ("keras_hub_same_loss_noattndrop", b),
                      ("keras_hub_same_loss", b))
        layers = _ratio(by, ("ours", b), ("keras_hub_same_loss_noattndrop", b))
        if None not in (whole, loss, attn, layers):
            split.append(f"| {b} | {whole:.2f}x | {loss:.2f}x | {attn:.2f}x "
                         f"| {layers:.2f}x |")
    if split:
        lines += [
            "",
            "Where ours / keras_hub (as written) comes from: the product of "
            "three ratios of keras-hub variants. *Loss*: keras_hub_same_loss "
            "/ keras_hub (below 1: ours' label-smoothed loss costs keras-hub "
            "more than its sparse CE, above 1: less); *attention dropout*: "
            "keras_hub_same_loss_noattndrop / keras_hub_same_loss (what "
            "keras-hub pays for dropping attention weights, ours does not "
            "drop them); *layers*: ours / keras_hub_same_loss_noattndrop "
            "(equal work).",
            "",
            "| backend | ours / keras_hub | = loss | x attention dropout "
            "| x layers |",
            "|---|---|---|---|---|",
            *split,
            "",
        ]

    torch_rows = {m: v for (m, b), v in by.items() if b == "pytorch"}
    for t_model in torch_rows:
        base = t_model.replace("+compile", "")
        what = ("same loss; torch.nn also drops attention weights and adds "
                "final LayerNorms" if base == "torch_nn" else
                "same loss, same dropout placement; torch.nn adds final "
                "LayerNorms")
        if t_model.endswith("+compile"):
            what += "; torch.compile"
        add(f"same framework: ours[torch backend] / {t_model} ({what})",
            _ratio(by, ("ours", "torch"), (t_model, "pytorch")))
    ours = {b: v for (m, b), v in by.items() if m == "ours"}
    if ours and torch_rows:
        best_ours = max(ours, key=ours.get)
        best_torch = max(torch_rows, key=torch_rows.get)
        add(f"best against best: ours[{best_ours}] / {best_torch} "
            "(fastest row of each)", ours[best_ours] / torch_rows[best_torch])
        for hub in ("keras_hub", "keras_hub_same_loss_noattndrop"):
            rows = {b: v for (m, b), v in by.items() if m == hub}
            if rows:
                best = max(rows, key=rows.get)
                add(f"best against best: {hub}[{best}] / {best_torch}",
                    rows[best] / torch_rows[best_torch])
    return lines


def headline_ratios(results, key="tokens_per_second"):
    """``[(label, ratio or None)]``: the ratios the README quotes, short labels."""
    ok = [r for r in results if "error" not in r and key in r]
    by = {(r["model"], r["backend"]): r[key] for r in ok}
    out = []
    for b in ALL_BACKENDS:
        out += [
            (f"{b}: ours / keras_hub_same_loss_noattndrop (equal work)",
             _ratio(by, ("ours", b), ("keras_hub_same_loss_noattndrop", b))),
            (f"{b}: ours / keras_hub_same_loss",
             _ratio(by, ("ours", b), ("keras_hub_same_loss", b))),
            (f"{b}: ours / keras_hub (as written)",
             _ratio(by, ("ours", b), ("keras_hub", b))),
            (f"{b}: loss part (keras_hub_same_loss / keras_hub)",
             _ratio(by, ("keras_hub_same_loss", b), ("keras_hub", b))),
        ]
    for t_model in ("torch_nn", "torch_nn_noattndrop"):
        out.append((f"ours[torch] / {t_model}",
                    _ratio(by, ("ours", "torch"), (t_model, "pytorch"))))
    ours = {b: v for (m, b), v in by.items() if m == "ours"}
    torch_rows = {m: v for (m, b), v in by.items() if b == "pytorch"}
    if ours and torch_rows:
        out.append(("best ours / best torch.nn row",
                    max(ours.values()) / max(torch_rows.values())))
    return [(label, value) for label, value in out if value is not None]


def matmul_lines(matmul_runs, reference):
    lines = []
    for when, run in zip(("before", "after"), matmul_runs):
        if "error" in run:
            lines.append(f"- {when} the workers: FAILED ({run['error']})")
            continue
        rates = ", ".join(
            f"{name} {rate['gflops_max']:,.0f} (median {rate['gflops_median']:,.0f})"
            for name, rate in run.get("rates", {}).items())
        lines.append(f"- {when} the workers ({run.get('threads')} threads): "
                     f"{rates} GFLOP/s")
    if reference:
        lines.append(f"- util. = model FLOP/s / {reference[0]:,.0f} GFLOP/s "
                     f"(best {reference[1]}, both measurements)")
    return lines


def param_lines(results, cfg):
    sys.path.insert(0, HERE)
    from _peers import analytic_parameter_counts

    c = analytic_parameter_counts(
        cfg["vocabulary_size"], cfg["num_layers"], cfg["d_model"], cfg["d_ff"]
    )
    lines = [
        f"- analytic: {fmt_int(c['non_embedding'])} non-embedding parameters "
        f"(encoder {fmt_int(c['encoder'])}, decoder {fmt_int(c['decoder'])}) "
        f"+ {fmt_int(c['embedding'])} per V x d_model embedding matrix "
        f"= {fmt_int(c['non_embedding'] + c['embedding'])} with one shared "
        "embedding/output matrix"
    ]
    counts = {}
    for r in results:
        if "error" not in r:
            counts.setdefault(r["model"], r["params"])
    ref = counts.get("ours") or next(iter(counts.values()), None)
    for m, p in counts.items():
        diff = f" ({100 * (p - ref) / ref:+.2f}% vs ours)" if (
            "ours" in counts and m != "ours") else ""
        lines.append(f"- {m}: {fmt_int(p)} parameters{diff}")
    return lines


def write_outputs(results, cfg, args, command, matmul_runs=()):
    import csv

    os.makedirs(args.output_dir, exist_ok=True)
    ok = [r for r in results if "error" not in r]
    on_gpu = any(not r.get("device", "cpu").startswith("cpu") for r in ok)
    tag = args.tag or (("gpu" if on_gpu else "cpu") + (
        "" if args.preset == "default" else f"_{args.preset}"))
    base = os.path.join(args.output_dir, f"train_throughput_{tag}")
    accounting = flops_accounting(cfg)
    flops_tok = accounting["useful_per_token"]
    reference = reference_rate(matmul_runs, cfg["dtype_policy"], on_gpu)

    with open(base + ".json", "w") as f:
        json.dump({"command": command, "config": cfg,
                   "flops_per_target_token": flops_tok,
                   "flops_accounting": accounting,
                   "matmul_reference": list(matmul_runs),
                   "utilisation_reference_gflops": reference,
                   "model_notes": MODEL_NOTES,
                   "peak_tflops": args.peak_tflops, "results": results},
                  f, indent=2)

    fields = ["model", "backend", "tokens_per_second", "tokens_per_second_min",
              "tokens_per_second_max", "step_ms", "cpu_ms_per_step",
              "tokens_per_cpu_second", "tokens_per_step",
              "achieved_tflops", "utilisation", "mfu", "peak_mem_mb",
              "mem_kind", "peak_rss_mb", "rss_before_fit_mb", "params",
              "jit_compile", "first_step_seconds", "device", "error"]
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in results:
            row = dict(r)
            if "error" not in r:
                row["achieved_tflops"] = r["tokens_per_second"] * flops_tok / 1e12
                if reference:
                    row["utilisation"] = row["achieved_tflops"] * 1e3 / reference[0]
                if args.peak_tflops:
                    row["mfu"] = row["achieved_tflops"] / args.peak_tflops
            w.writerow(row)

    devices = sorted({r["device"] for r in ok})
    versions = {}
    for r in ok:
        versions.update(r.get("versions", {}))
    if cfg["pad_fraction"]:
        padding = (
            f"Padding: {100 * accounting['source_padding']:.0f}% of source and "
            f"{100 * accounting['target_padding']:.0f}% of target positions "
            f"(--pad-fraction {cfg['pad_fraction']}). tokens/s counts "
            "non-padding target tokens only; model FLOP/s counts the useful "
            f"work only ({accounting['useful_per_token'] / 1e6:.1f} MFLOP per "
            "real target token, at each example's real lengths); a model that "
            "computes every padded position does "
            f"{accounting['padded_per_token'] / 1e6:.1f} MFLOP per real "
            "target token.")
    else:
        padding = "No padding: every position is a real token."
    threads_env = os.environ.get("OMP_NUM_THREADS")
    md = [
        f"# Training throughput ({tag})",
        "",
        f"Command: `{command}`",
        "",
        f"Date: {datetime.date.today().isoformat()}; device: "
        f"{'; '.join(devices)}; {os.cpu_count()} logical CPUs visible"
        + (f" (workers pinned to {cfg['cpu_threads']})"
           if cfg.get("cpu_threads") else "")
        + (f"; OMP_NUM_THREADS={threads_env}" if threads_env else "")
        + "; load average (1 min) before/after: "
        + "/".join(f"{la[0]:.1f}" if la else "?"
                   for la in cfg.get("load_average_before_after", [None]))
        + "; "
        + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())),
        "",
        f"Config: V={cfg['vocabulary_size']}, d_model={cfg['d_model']}, "
        f"heads={cfg['num_heads']}, d_ff={cfg['d_ff']}, "
        f"layers={cfg['num_layers']}+{cfg['num_layers']}, "
        f"batch={cfg['batch_size']} x {cfg['seq_len']} tokens, "
        f"dropout={cfg['dropout_rate']}, dtype policy="
        f"{cfg['dtype_policy'] or 'float32'}, jit_compile={cfg['jit_compile']}, "
        f"peer embeddings={cfg['peer_embeddings']}; "
        f"{cfg['warmup_steps']} warm-up steps, then {cfg['repeats']} windows "
        f"of {cfg['steps']} steps (median shown). "
        f"Model FLOPs/target token: {flops_tok / 1e6:.1f} M. {padding}",
        "",
        markdown_table(results, cfg, args, accounting, reference, on_gpu),
        "",
        "Rows:",
        "",
        *note_lines(results),
        "",
        "Matmul reference (same machine, same run; util. column):",
        "",
        *matmul_lines(matmul_runs, reference),
        "",
        "Ratios (tokens/s):",
        "",
        *ratio_lines(results),
        "",
        *((["Ratios of tokens per CPU-second (one pinned thread per worker: "
            "barely disturbed by other load on the machine):", "",
            *ratio_lines(results, "tokens_per_cpu_second"), ""])
          if cfg.get("cpu_threads") == 1 else []),
        "Parameters:",
        "",
        *param_lines(results, cfg),
        "",
    ]
    with open(base + ".md", "w") as f:
        f.write("\n".join(md))

    plot(ok, base + ".png", tag)
    return base


def plot(results, path, tag):
    if not results:
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    models = list(dict.fromkeys(r["model"] for r in results))
    backends = list(dict.fromkeys(r["backend"] for r in results))
    width = 0.8 / len(backends)
    fig, ax = plt.subplots(figsize=(max(6, 2 * len(models)), 4))
    for j, b in enumerate(backends):
        xs, ys, errs = [], [], []
        for i, m in enumerate(models):
            r = next((r for r in results
                      if r["model"] == m and r["backend"] == b), None)
            if r:
                xs.append(i + (j - (len(backends) - 1) / 2) * width)
                ys.append(r["tokens_per_second"])
                errs.append([r["tokens_per_second"] - r["tokens_per_second_min"],
                             r["tokens_per_second_max"] - r["tokens_per_second"]])
        if xs:
            bars = ax.bar(xs, ys, width, label=b,
                          yerr=list(zip(*errs)), capsize=3)
            ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=2)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models)
    ax.set_ylabel("target tokens / s (median, min-max)")
    ax.set_title(f"Training throughput ({tag})")
    ax.legend(title="backend")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--models", default=",".join(ALL_MODELS),
                   help="comma-separated subset of " + ",".join(ALL_MODELS))
    p.add_argument("--backends", default=",".join(ALL_BACKENDS),
                   help="Keras backends for the Keras models")
    p.add_argument("--preset", default="default", choices=sorted(PRESETS),
                   help="model size: default = V 8000, d 256, 4 heads, d_ff "
                   "1024, 3+3 layers, 64 x 32 tokens; base = the paper's base "
                   "model, V 37000, 196 x 128 tokens (~25k target tokens); "
                   "tiny = smoke test")
    p.add_argument("--batch-size", type=int, default=None,
                   help="override the preset's batch size")
    p.add_argument("--seq-len", type=int, default=None,
                   help="override the preset's source = target length")
    p.add_argument("--steps", type=int, default=10,
                   help="training steps per timed window")
    p.add_argument("--repeats", type=int, default=5, help="timed windows")
    p.add_argument("--warmup-steps", type=int, default=3,
                   help="untimed first steps (tracing / compilation)")
    p.add_argument("--dropout-rate", type=float, default=0.1)
    p.add_argument("--dtype-policy", default=None,
                   help="Keras dtype policy, e.g. mixed_bfloat16 (torch_nn "
                   "then uses torch.autocast with the same dtype)")
    p.add_argument("--jit-compile", default="auto",
                   choices=("auto", "true", "false"),
                   help="model.compile(jit_compile=...) for the Keras models "
                   "(auto: XLA on tf-GPU and jax, eager on torch)")
    p.add_argument("--torch-compile", default="both",
                   choices=("off", "on", "both"),
                   help="torch_nn eager, under torch.compile, or both")
    p.add_argument("--peer-embeddings", default="tied",
                   choices=("tied", "untied"),
                   help="keras_hub/torch_nn: one shared embedding + tied "
                   "output projection (paper) or separate encoder/decoder "
                   "embeddings + output layer (keras.io style)")
    p.add_argument("--pad-fraction", type=float, default=0.0,
                   help="average fraction of padded positions in the batches")
    p.add_argument("--data-pool", type=int, default=8,
                   help="distinct random batches, cycled")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-threads", type=int, default=None,
                   help="pin each worker to this many CPUs (default: all); "
                   "on a busy shared machine 1 avoids OpenMP stalls")
    p.add_argument("--no-matmul-reference", action="store_true",
                   help="skip the matmul-rate measurement (no util. column)")
    p.add_argument("--peak-tflops", type=float, default=None,
                   help="device peak TFLOP/s for MFU (H100 bf16 dense: 989)")
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--tag", default=None,
                   help="output file suffix (default: cpu/gpu[_preset])")
    p.add_argument("--worker-timeout", type=int, default=3600,
                   help="seconds before a worker is killed")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--worker-config", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    if args.warmup_steps < 1 or args.steps < 1 or args.repeats < 1:
        raise SystemExit("--warmup-steps, --steps and --repeats must be >= 1")
    cfg = build_config(args)
    jobs = jobs_for(args)
    command = recorded_command(__file__, argv)
    print(f"# {len(jobs)} runs: " + ", ".join(f"{m}/{b}" for m, b in jobs),
          flush=True)
    matmul_runs = [run_matmul(cfg, args)]
    results = []
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    for model, backend in jobs:
        r = run_job(model, backend, cfg, args)
        results.append(r)
        if "error" in r:
            print(f"{model:>17} {backend:<10} FAILED: {r['error']}\n"
                  f"{r.get('log_tail', '')}", flush=True)
        else:
            print(f"{model:>17} {backend:<10} {r['tokens_per_second']:>10,.0f}"
                  f" tok/s  {r['step_ms']:8.1f} ms/step  "
                  f"(run {r['wall_seconds']:.0f}s)", flush=True)
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    cfg["load_average_before_after"] = [load_before, load_after]
    matmul_runs.append(run_matmul(cfg, args))
    base = write_outputs(results, cfg, args, command, matmul_runs)
    with open(base + ".md") as f:
        print("\n" + f.read())
    print(f"wrote {base}.{{md,csv,json,png}}")
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
