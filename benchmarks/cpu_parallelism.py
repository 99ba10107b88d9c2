"""What a Keras training step of the Multi30k model costs this CPU: wall time,
CPU time, kernel (system) time and the cores it keeps busy.

On the 2-core VMs this project is measured on, TensorFlow's step spent
2.5-2.8 s of its CPU time per step in the kernel, mapping and page-faulting
large tensors that glibc's malloc unmaps again when they are freed, while a
NumPy matmul in the same minutes kept both cores busy at full speed. This
script measures that cost and the effect of `keras_transformer.host_memory`
(``--retain-host-memory on``), and tells whether a machine gives a training
step both of its cores before you trust a tokens/s or BLEU-in-25-minutes
figure taken on it.

Each repeat is a fresh process (the malloc setting is per process) that builds
the Multi30k benchmark model (`benchmarks/multi30k.yaml`: preset small,
dropout 0.2, V=8000), trains it with `model.fit` on one fixed packed-shape
batch of 64 rows x 64 tokens (random ids, four segments per row) for
``--warmup`` untimed and ``--steps`` timed updates, and prints the step
time, the process CPU time per step and their ratio (the cores used). A
NumPy matmul before each repeat gives the cores the machine offers to a
spinning BLAS. ``--retain-host-memory on`` keeps freed host memory in the
worker (`keras_transformer.host_memory`, what `train` does under TensorFlow).

    python benchmarks/cpu_parallelism.py --backend tensorflow --repeats 4
    python benchmarks/cpu_parallelism.py --backend tensorflow --retain-host-memory on
"""

import argparse
import json
import os
import subprocess
import sys
import time

WORKER = r"""
import json, os, sys, time
import numpy as np
import keras
from keras_transformer.config import TrainConfig
from keras_transformer.training import build_model

steps, warmup, jit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if sys.argv[4] == "on":
    from keras_transformer.host_memory import retain_freed_memory
    applied, reason = retain_freed_memory()
    assert applied, reason
jit = {"true": True, "false": False}.get(jit, jit)
config = TrainConfig(
    preset="small", warmup_steps=500, jit_compile=jit,
    model_overrides={"dropout_rate": 0.2, "logits_dtype": None},
).resolved()
model = build_model(config, 8000)
rng = np.random.default_rng(0)
rows, length = 64, 64
segments = np.zeros((rows, length), "int32")
for r in range(rows):
    row = np.ones(length, "int32")
    for cut in np.sort(rng.choice(np.arange(5, 58), 3, replace=False)):
        row[cut:] += 1
    row[61:] = 0
    segments[r] = row
ids = np.where(segments > 0, rng.integers(4, 8000, (rows, length)), 0).astype("int32")
x = {"encoder_token_ids": ids, "decoder_token_ids": ids,
     "encoder_segment_ids": segments, "decoder_segment_ids": segments}

def batches():
    while True:
        yield x, ids

model.fit(batches(), steps_per_epoch=warmup, epochs=1, verbose=0)
cpu0, wall0 = os.times(), time.perf_counter()
model.fit(batches(), steps_per_epoch=steps, epochs=1, verbose=0)
cpu1, wall = os.times(), time.perf_counter() - wall0
cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
print(json.dumps({"step_s": wall / steps, "cpu_s_per_step": cpu / steps,
                  "system_s_per_step": (cpu1.system - cpu0.system) / steps,
                  "cores_used": cpu / wall}))
"""


def matmul_cores(seconds):
    """GFLOP/s and cores used (CPU time / wall time) of NumPy 2048^3 matmuls."""
    import numpy as np

    a = np.ones((2048, 2048), np.float32)
    cpu0, start, n = os.times(), time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        a @ a
        n += 1
    wall, cpu1 = time.perf_counter() - start, os.times()
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    return n * 2 * 2048**3 / wall / 1e9, cpu / wall


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="tensorflow")
    parser.add_argument("--repeats", type=int, default=4, help="fresh processes")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--jit-compile", default="auto", choices=["auto", "true", "false"])
    parser.add_argument(
        "--retain-host-memory", default="off", choices=["on", "off"],
        help="call keras_transformer.host_memory.retain_freed_memory() in the worker "
        "(what `train` does under TensorFlow by default)",
    )
    parser.add_argument("--matmul-seconds", type=float, default=10.0)
    parser.add_argument("--output", help="write the rows here as JSON")
    args = parser.parse_args()

    env = dict(os.environ, KERAS_BACKEND=args.backend, TF_CPP_MIN_LOG_LEVEL="3")
    rows = []
    for repeat in range(args.repeats):
        gflops, blas_cores = matmul_cores(args.matmul_seconds)
        result = subprocess.run(
            [sys.executable, "-c", WORKER, str(args.steps), str(args.warmup), args.jit_compile, args.retain_host_memory],
            capture_output=True, text=True, env=env,
        )
        if result.returncode != 0:
            sys.exit(f"worker failed:\n{result.stderr[-3000:]}")
        row = json.loads(result.stdout.strip().splitlines()[-1])
        row.update(repeat=repeat, matmul_gflops=gflops, matmul_cores_used=blas_cores)
        rows.append(row)
        print(
            f"repeat {repeat}: step {row['step_s']:.2f} s, CPU {row['cpu_s_per_step']:.2f} s/step "
            f"(system {row['system_s_per_step']:.2f}), cores used {row['cores_used']:.2f}; "
            f"NumPy matmul before it: {gflops:.0f} GFLOP/s, cores used {blas_cores:.2f}",
            flush=True,
        )
    if args.output:
        with open(args.output, "w") as f:
            json.dump(
                {
                    "command": "python " + " ".join(sys.argv),
                    "date": time.strftime("%Y-%m-%d"),
                    "cpu_count": len(os.sched_getaffinity(0)),
                    "backend": args.backend,
                    "retain_host_memory": args.retain_host_memory,
                    "rows": rows,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
