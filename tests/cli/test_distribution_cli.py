"""`keras-transformer train --distribution data` under JAX on 2 virtual CPU
devices, end to end: the token-bucketed pipeline's batch sizes are rounded to
the device count, so `keras.distribution.DataParallel` can shard every batch
(issue #15). The run is a subprocess (virtual devices must be configured
before JAX starts), in the JAX suite only: it tests JAX's data parallelism,
whichever backend the rest of the suite runs."""

import json
import os
import subprocess
import sys

import keras
import pytest

from conftest import REPO_ROOT, TWO_JAX_CPU_DEVICES


def test_cli_trains_data_parallel_on_two_jax_devices(tmp_path):
    if keras.config.backend() != "jax":
        pytest.skip("JAX data parallelism: runs in the JAX suite")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="jax")
    env["XLA_FLAGS"] = TWO_JAX_CPU_DEVICES
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    run = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "keras_transformer", "train", "--backend", "jax",
         "--distribution", "data", "--output-dir", str(run), "--max-steps", "4",
         "--tokens-per-batch", "600", "--eval-sentences", "0", "--verbose", "2"],
        env=env, capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert (run / "model.weights.h5").exists()
    results = json.loads((run / "results.json").read_text())
    assert results["steps"] == 4, results
    # The log reports the rounding and the padding of the batches it trained on.
    assert "multiples of 2" in result.stdout, result.stdout[-2000:]


def test_torch_data_parallel_without_torchrun_is_one_line(tmp_path, capsys, monkeypatch):
    """Under PyTorch, --distribution data needs torchrun's processes: without
    its variables, one error line before anything is written."""
    if keras.config.backend() != "torch":
        pytest.skip("torch.distributed: runs in the PyTorch suite")
    from keras_transformer.cli.main import main

    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as info:
        main(["train", "--backend", "torch", "--distribution", "data",
              "--output-dir", str(run), "--max-steps", "1"])
    err = capsys.readouterr().err
    assert info.value.code != 0 and "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "torchrun --nproc_per_node" in errors[0], err
    assert not run.exists()


@pytest.mark.slow
def test_cli_trains_data_parallel_on_two_torch_processes(tmp_path):
    """`torchrun --nproc_per_node=2 -m keras_transformer train --backend torch
    --distribution data` on the CPU (gloo): process 0 alone logs and writes
    (one history row per epoch, where two writers would append two)."""
    if keras.config.backend() != "torch":
        pytest.skip("torch.distributed: runs in the PyTorch suite")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="torch", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    run = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         "-m", "keras_transformer", "train", "--backend", "torch",
         "--distribution", "data", "--output-dir", str(run), "--max-steps", "4",
         "--tokens-per-batch", "600", "--eval-sentences", "0", "--verbose", "2"],
        env=env, capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert (run / "model.weights.h5").exists()
    results = json.loads((run / "results.json").read_text())
    assert results["steps"] == 4, results
    assert result.stdout.count("Data parallel: 2 torch.distributed processes (gloo)") == 1
    assert result.stdout.count("Training on the embedded default task") == 1
    assert "each batch split over 2 shards" in result.stdout, result.stdout[-2000:]
    history = (run / "logs" / "history.csv").read_text().strip().splitlines()
    assert len(history) == 2, history
