"""Data-parallel training under PyTorch (training/torch_distributed.py): two
gloo processes on the CPU, each training on half the rows of every global
batch, end with the weights of one process trained on the whole batches.

The processes are started by ``python -m torch.distributed.run`` in a
subprocess. The rows of each global batch have different numbers of target
tokens, so the halves do too: only the token-weighted sum of the gradients
(not their mean) gives the one-process update. Process 1 starts from other
initial weights, which the broadcast from process 0 must replace."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "torch", reason="torch.distributed: the PyTorch suite"
)

# Same data, same initial weights, no dropout: the runs differ in the order
# of float32 sums only.
TOLERANCE = 2e-5

WORKER = textwrap.dedent(
    """
    import json, sys
    import keras, numpy as np
    import keras_transformer as kt
    from keras_transformer.models.transformer.torch_train_step import CompiledTorchTrainStep
    from keras_transformer.training.distribution import training_processes

    step_kind, out = sys.argv[1], sys.argv[2]
    processes = training_processes("data")
    rank, world = processes.rank, processes.world_size
    vocab, rows, length, steps = 40, 4, 6, 3
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(steps):
        source = rng.integers(4, vocab, (rows, length))
        target = rng.integers(4, vocab, (rows, length))
        # 1 to 6 target tokens per row, then padding (id 0).
        target[np.arange(length) >= rng.integers(1, length + 1, (rows, 1))] = 0
        decoder = np.concatenate([np.full((rows, 1), 2), target[:, :-1]], 1)
        batches.append(({"encoder_token_ids": source.astype("int32"),
                         "decoder_token_ids": decoder.astype("int32")},
                        target.astype("int32")))

    def build(seed):
        keras.utils.set_random_seed(seed)
        model = kt.Transformer(vocabulary_size=vocab, num_layers=1, d_model=16,
                               num_heads=2, d_ff=32, dropout_rate=0.0)
        model.compile(optimizer=keras.optimizers.Adam(1e-2, epsilon=1e-3),
                      loss=kt.LabelSmoothedCrossEntropy(),
                      jit_compile=step_kind == "compiled")
        return model

    def fit(model, part, callbacks=()):
        if step_kind == "compiled":
            model.train_function = CompiledTorchTrainStep(model, backend="eager")
        data = [(keras.tree.map_structure(lambda a: a[part], x), y[part])
                for x, y in batches]
        model.fit((batch for batch in data), epochs=1, steps_per_epoch=steps, verbose=0,
                  callbacks=list(callbacks))
        return {v.path: np.asarray(v.numpy()) for v in model.trainable_variables}

    # Other initial weights in each process: the broadcast must replace them.
    model = build(seed=1 + rank)
    initial = {v.path: np.asarray(v.numpy()) for v in model.trainable_variables}
    processes.install(model)
    backup = processes.follower_backup(None)
    share = rows // world
    weights = fit(model, slice(rank * share, (rank + 1) * share),
                  [processes.callback(backup)])
    np.savez(f"{out}/rank{rank}.npz", **weights)
    if rank == 0:
        np.savez(f"{out}/initial.npz", **initial)
        step_kind = "eager"  # The reference: Keras' own step on one process.
        reference = fit(build(seed=1), slice(None))
        np.savez(f"{out}/one_process.npz", **reference)
    processes.close()
    """
)


def _run(tmp_path, step_kind):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, KERAS_BACKEND="torch", TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         str(script), step_kind, str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    load = lambda name: dict(np.load(tmp_path / f"{name}.npz"))  # noqa: E731
    return load("rank0"), load("rank1"), load("one_process"), load("initial")


def _max_difference(a, b):
    assert a.keys() == b.keys()
    return max(float(np.max(np.abs(a[key] - b[key]))) for key in a)


@pytest.mark.parametrize(
    "step_kind", ["eager", pytest.param("compiled", marks=pytest.mark.slow)]
)
def test_two_processes_train_the_weights_of_one(tmp_path, step_kind):
    """Keras' eager step, and the package's compiled step (recorded as one
    graph, run by ``torch.compile``'s "eager" backend so that it takes
    seconds) with the all-reduces inside the graph."""
    rank0, rank1, one_process, initial = _run(tmp_path, step_kind)
    # The updates moved the weights far more than the tolerance...
    assert _max_difference(one_process, initial) > 100 * TOLERANCE
    # ...and both processes hold the one-process weights.
    assert _max_difference(rank0, one_process) < TOLERANCE
    assert _max_difference(rank1, rank0) == 0.0
