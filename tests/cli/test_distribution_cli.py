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
    assert (run / "model.keras").exists()
    results = json.loads((run / "results.json").read_text())
    assert results["steps"] == 4, results
    # The log reports the rounding and the padding of the batches it trained on.
    assert "multiples of 2" in result.stdout, result.stdout[-2000:]
