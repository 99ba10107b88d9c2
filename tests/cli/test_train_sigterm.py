"""`keras-transformer train` and SIGTERM: the process saves its training
state after the batch in flight, says so, and exits with 143 (128 +
SIGTERM) without a final model, so that a scheduler runs it again."""

import json
import os
import signal
import subprocess
import sys
import time

from conftest import REPO_ROOT


def test_sigterm_saves_a_backup_and_exits_with_143(tmp_path):
    run = tmp_path / "run"
    command = [
        sys.executable, "-m", "keras_transformer", "train", "--output-dir", str(run),
        "--set", "epochs=500", "--set", "steps_per_epoch=2", "--set", "verbose=2",
        "--set", "eval_sentences=0", "--set", "max_length=8",
        "--set", "tokens_per_batch=256", "--set", "vocabulary_size=128",
        "--set", 'model_overrides={"num_layers": 1, "d_model": 32, "num_heads": 2, "d_ff": 64}',
    ]  # fmt: skip
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    output = []
    deadline = time.monotonic() + 300
    for line in process.stdout:
        output.append(line)
        if line.startswith("Epoch 3/"):  # Two epochs trained: a backup exists.
            process.send_signal(signal.SIGTERM)
            break
        assert time.monotonic() < deadline, "".join(output)
    rest, _ = process.communicate(timeout=120)
    output = "".join(output) + rest
    assert process.returncode == 128 + signal.SIGTERM, output
    assert "SIGTERM: saved the training state" in output
    assert "run the same command again to resume" in output
    assert not (run / "model.weights.h5").exists()
    assert not (run / "results.json").exists()
    with open(run / "backup" / "training_metadata.json", encoding="utf-8") as f:
        metadata = json.load(f)
    assert metadata["batches"] >= 4
