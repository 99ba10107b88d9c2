"""Two kernels of a beam-search step, timed alone on every backend.

1. The per-beam top-k: one ``ops.top_k`` over the vocabulary against
   `blocked_top_k` (a max per block of the vocabulary, then two small
   top-ks), at a step's shape (batch x beam x vocabulary, the best
   ``2 * beam`` per beam); both results are checked to be equal.
2. What Keras' int8 quantization (``Model.quantize("int8")``, the
   ``Translator(quantize="int8")`` path) can buy: ``ops.matmul`` of a
   step's activations ``(batch * beam, d_model)`` by a kernel, in float32,
   bfloat16 and int8 (int8 x int8, as Keras' int8 ``Dense`` calls it), and
   the int8 ``Dense`` path whole (quantizing the activations, the int8
   matmul, de-scaling).
3. A cached step's write of one position into a key/value buffer ``(batch
   * beam, 2, heads, length, head_dim)`` in bfloat16:
   `keras_transformer.layers.buffer_writes.write_along` (under TensorFlow a
   scatter of the position's rows, elsewhere ``slice_update``) against a
   select over the whole buffer with the position broadcast (``ops.where``,
   the TensorFlow write before the scatter); both results are checked to
   be equal.

Each function is compiled as the decoders compile it
(`keras_transformer.decoding.compile.compile_for_backend`: ``jax.jit`` with the
variables as inputs, a ``tf.function``, eager torch under ``no_grad``), each
backend in its own process:

    python benchmarks/decode_kernels.py --tag cpu

Writes ``benchmarks/results/decode_kernels_<tag>.{md,json}``.
"""

import argparse
import datetime
import json
import os
import sys

from _workers import recorded_command
from _workers import run_worker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# Key/value buffer lengths of the cache write (the searches' growing stages).
CACHE_LENGTHS = (32, 64)


def worker(args):
    sys.path.insert(0, REPO)
    import time

    import keras
    import numpy as np
    from keras import ops

    from keras_transformer.decoding.backends import compile_for_backend
    from keras_transformer.decoding.search import blocked_top_k
    from keras_transformer.layers.buffer_writes import write_along

    backend = keras.config.backend()
    rng = np.random.default_rng(0)

    # Compiled by the decoders' own helper: under JAX a layer's variables
    # are inputs of the jitted function, not constants baked into it.
    no_variables = keras.layers.Identity()

    def compiled(function, layer=None):
        return compile_for_backend(layer or no_variables, function)

    def best_ms(function, *inputs, layer=None):
        function = compiled(function, layer)
        out = function(*inputs)
        ops.convert_to_numpy(keras.tree.flatten(out)[0])
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for _ in range(args.calls):
                out = function(*inputs)
            ops.convert_to_numpy(keras.tree.flatten(out)[0])
            times.append((time.perf_counter() - start) / args.calls)
        return 1000 * min(times), out

    row = {"backend": backend}
    # 1. Top-k.
    n = 2 * args.beam
    x = ops.convert_to_tensor(
        rng.normal(size=(args.batch, args.beam, args.vocabulary)).astype("float32")
    )
    row["top_k_ms"], one = best_ms(lambda x: ops.top_k(x, n), x)
    row["blocked_top_k_ms"], blocked = best_ms(lambda x: blocked_top_k(x, n), x)
    one, blocked = ([ops.convert_to_numpy(t) for t in r] for r in (one, blocked))
    row["same_values"] = bool(np.array_equal(one[0], blocked[0]))
    row["same_indices"] = bool(np.array_equal(one[1], blocked[1]))

    # 2. Matmuls of a step: (rows, d_model) x (d_model, width).
    rows = args.batch * args.beam
    inputs = rng.normal(size=(rows, args.d_model)).astype("float32")
    for width in (3 * args.d_model, 4 * args.d_model, args.vocabulary):
        kernel = rng.normal(size=(args.d_model, width)).astype("float32") * 0.05
        flops = 2 * rows * args.d_model * width
        for dtype in ("float32", "bfloat16"):
            a, b = (ops.convert_to_tensor(t, dtype=dtype) for t in (inputs, kernel))
            ms, _ = best_ms(ops.matmul, a, b)
            row[f"matmul_{width}_{dtype}_ms"] = ms
            row[f"matmul_{width}_{dtype}_gflops"] = flops / ms / 1e6
        a = ops.convert_to_tensor(np.clip(inputs * 30, -127, 127).astype("int8"))
        b = ops.convert_to_tensor(np.clip(kernel * 2000, -127, 127).astype("int8"))
        ms, _ = best_ms(ops.matmul, a, b)
        row[f"matmul_{width}_int8_ms"] = ms
        row[f"matmul_{width}_int8_gops"] = flops / ms / 1e6
        layer = keras.layers.Dense(width, use_bias=False, dtype="mixed_bfloat16")
        layer.build((None, args.d_model))
        layer.kernel.assign(kernel)
        layer.quantize("int8")
        ms, _ = best_ms(
            lambda x: layer(x), ops.convert_to_tensor(inputs, dtype="bfloat16"), layer=layer
        )
        row[f"dense_{width}_int8_ms"] = ms
        bf16 = keras.layers.Dense(width, use_bias=False, dtype="mixed_bfloat16")
        bf16.build((None, args.d_model))
        bf16.kernel.assign(kernel)
        ms, _ = best_ms(
            lambda x: bf16(x), ops.convert_to_tensor(inputs, dtype="bfloat16"), layer=bf16
        )
        row[f"dense_{width}_bf16_ms"] = ms

    # 3. A cache write of one position.
    head_dim = args.d_model // args.heads
    for length in CACHE_LENGTHS:
        buffer = ops.convert_to_tensor(
            rng.normal(size=(rows, 2, args.heads, length, head_dim)), dtype="bfloat16"
        )
        update = ops.convert_to_tensor(
            rng.normal(size=(rows, 2, args.heads, 1, head_dim)), dtype="bfloat16"
        )
        index = ops.convert_to_tensor(length // 2, "int32")

        def select(buffer, update, index):
            positions = ops.arange(ops.shape(buffer)[3], dtype="int32")
            return ops.where(ops.reshape(positions == index, (1, 1, 1, -1, 1)), update, buffer)

        row[f"write_{length}_ms"], written = best_ms(
            lambda b, u, i: write_along(b, u, i, axis=3), buffer, update, index
        )
        row[f"select_{length}_ms"], selected = best_ms(select, buffer, update, index)
        row[f"write_{length}_same"] = bool(np.array_equal(
            ops.convert_to_numpy(ops.cast(written, "float32")),
            ops.convert_to_numpy(ops.cast(selected, "float32")),
        ))
    print(json.dumps(row))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backends", default="tensorflow,jax,torch")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--vocabulary", type=int, default=8000)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--calls", type=int, default=50, help="calls per timed repeat")
    p.add_argument("--repeats", type=int, default=5, help="best of this many")
    p.add_argument("--tag", default="cpu")
    p.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    rows = []
    for backend in args.backends.split(","):
        worker_args = [
            f"--{k.replace('_', '-')}={getattr(args, k)}"
            for k in ("batch", "beam", "vocabulary", "d_model", "heads", "calls", "repeats")
        ]
        stdout = run_worker(__file__, backend, worker_args, log_level="3")
        rows.append(json.loads(stdout.strip().splitlines()[-1]))
    command = recorded_command(__file__, argv)
    rows_per_step = args.batch * args.beam
    widths = (3 * args.d_model, 4 * args.d_model, args.vocabulary)
    result = {
        "command": command, "date": datetime.date.today().isoformat(),
        "cpus": os.cpu_count(), "batch": args.batch, "beam": args.beam,
        "vocabulary": args.vocabulary, "d_model": args.d_model, "heads": args.heads,
        "rows": rows,
    }  # fmt: skip
    os.makedirs(args.output_dir, exist_ok=True)
    stem = os.path.join(args.output_dir, f"decode_kernels_{args.tag}")
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [
        f"# Decoding kernels ({args.tag})", "", f"Command: `{command}`", "",
        f"Date: {result['date']}; {result['cpus']} CPU(s); best of {args.repeats} x "
        f"{args.calls} compiled calls.", "",
        f"Per-beam top-k: candidates ({args.batch}, {args.beam}, {args.vocabulary}), "
        f"the best {2 * args.beam} per beam.", "",
        "| backend | ops.top_k (ms) | blocked_top_k (ms) | speed-up | same values | same indices |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    lines += [
        f"| {r['backend']} | {r['top_k_ms']:.3f} | {r['blocked_top_k_ms']:.3f} | "
        f"{r['top_k_ms'] / r['blocked_top_k_ms']:.2f}x | {r['same_values']} | "
        f"{r['same_indices']} |"
        for r in rows
    ]
    lines += [
        "", f"Matmuls of a step: ({rows_per_step}, {args.d_model}) x ({args.d_model}, N), "
        "ms (GFLOP/s or GOP/s); 'Dense int8' is Keras' quantized Dense whole (activation "
        "quantization, int8 matmul, de-scaling) against the bf16 Dense.", "",
        "| backend | N | float32 | bfloat16 | int8 matmul | Dense bf16 | Dense int8 |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        for width in widths:
            lines.append(
                f"| {r['backend']} | {width} | "
                f"{r[f'matmul_{width}_float32_ms']:.3f} ({r[f'matmul_{width}_float32_gflops']:.0f}) | "
                f"{r[f'matmul_{width}_bfloat16_ms']:.3f} ({r[f'matmul_{width}_bfloat16_gflops']:.0f}) | "
                f"{r[f'matmul_{width}_int8_ms']:.3f} ({r[f'matmul_{width}_int8_gops']:.0f}) | "
                f"{r[f'dense_{width}_bf16_ms']:.3f} | {r[f'dense_{width}_int8_ms']:.3f} |"
            )
    lines += [
        "", f"A cache write of one position into ({rows_per_step}, 2, {args.heads}, length, "
        f"{args.d_model // args.heads}) bfloat16, ms: `write_along` against a select over "
        "the whole buffer.", "",
        "| backend | length | write_along | select | speed-up | same |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        for length in CACHE_LENGTHS:
            lines.append(
                f"| {r['backend']} | {length} | {r[f'write_{length}_ms']:.3f} | "
                f"{r[f'select_{length}_ms']:.3f} | "
                f"{r[f'select_{length}_ms'] / r[f'write_{length}_ms']:.2f}x | "
                f"{r[f'write_{length}_same']} |"
            )
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
