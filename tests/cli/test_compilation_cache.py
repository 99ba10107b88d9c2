"""JAX's on-disk compilation cache on the command line: ``train`` leaves
``translate``'s search compiled, so the first ``translate`` of a new model
compiles nothing (every function it needs is read from the cache)."""

import os
import subprocess
import sys

import keras
import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "jax", reason="the on-disk compilation cache is JAX's"
)

TINY = [
    "model_overrides.num_layers=1", "model_overrides.d_model=32",
    "model_overrides.num_heads=2", "model_overrides.d_ff=64", "warmup_steps=10",
]


def _command(cache, *argv, stdin=None):
    env = dict(
        os.environ, KERAS_BACKEND="jax", PYTHONPATH=REPO_ROOT,
        KERAS_TRANSFORMER_COMPILATION_CACHE=str(cache),
    )
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "keras_transformer", *argv], input=stdin, env=env,
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_first_translate_after_train_compiles_nothing(tmp_path):
    cache, run_dir = tmp_path / "cache", tmp_path / "run"
    overrides = [arg for value in TINY for arg in ("--set", value)]
    output = _command(
        cache, "train", "--output-dir", str(run_dir), "--vocabulary-size", "128",
        "--max-length", "8", "--tokens-per-batch", "256", "--epochs", "1",
        "--steps-per-epoch", "2", "--eval-sentences", "4", "--beam-size", "2", *overrides,
    )
    assert "Compiled the translation of one sentence" in output, output[-2000:]
    compiled = set(os.listdir(cache))
    assert compiled

    translations = _command(
        cache, "translate", "--model-dir", str(run_dir),
        stdin="three hundred forty-five thousand six hundred seventy-eight\n",
    ).splitlines()
    assert len(translations) == 1
    assert set(os.listdir(cache)) == compiled, "translate compiled what train did not"
