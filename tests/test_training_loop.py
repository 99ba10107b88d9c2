"""Tests for keras_transformer.training.train: outputs, resume after a kill."""

import json
import os

import keras
import pytest

from keras_transformer.config import TrainConfig
from keras_transformer.data import default_task_splits
from keras_transformer.data import write_lines
from keras_transformer.training import PruneCheckpoints
from keras_transformer.training import StepLimit
from keras_transformer.training import TimeBudget
from keras_transformer.training import _schedule
from keras_transformer.training import train

# A few-second run on the default task: a very small model and short epochs.
TINY = dict(
    model_overrides=dict(num_layers=1, d_model=32, num_heads=2, d_ff=64),
    vocabulary_size=128,
    max_length=8,  # One bucket shape: fewer compilations.
    tokens_per_batch=256,
    warmup_steps=10,
    steps_per_epoch=3,
    epochs=2,
    eval_sentences=0,
    verbose=0,
)


class Killed(Exception):
    pass


class KillAtEpoch(keras.callbacks.Callback):
    """Simulates the process dying when ``epoch`` (0-based) begins."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise Killed(f"killed at the start of epoch {epoch + 1}")


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs, self.iterations, self.learning_rates = [], [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)
        optimizer = self.model.optimizer
        self.iterations.append(int(keras.ops.convert_to_numpy(optimizer.iterations)))
        self.learning_rates.append(
            float(keras.ops.convert_to_numpy(optimizer.learning_rate))
        )


@pytest.fixture
def parallel_files(tmp_path):
    """Training files of the user-data path (no validation set: fewer compilations)."""
    english, german = default_task_splits(num_train=300, num_valid=0, num_test=0)["train"]
    return write_lines(tmp_path / "train.en", english), write_lines(tmp_path / "train.de", german)


def test_killed_run_resumes_where_it_stopped(tmp_path, parallel_files):
    train_src, train_tgt = parallel_files
    config = TrainConfig(
        output_dir=str(tmp_path / "run"),
        train_src=str(train_src),
        train_tgt=str(train_tgt),
        preset="tiny",
        average_last_n=2,
        **dict(TINY, vocabulary_size=64, tokens_per_batch=128),
    )
    with pytest.raises(Killed):
        train(config, callbacks=[KillAtEpoch(1)])
    run = tmp_path / "run"
    assert (run / "backup" / "latest.weights.h5").is_file()
    assert (run / "checkpoints" / "epoch_001.weights.h5").is_file()
    assert not (run / "model.keras").exists()

    recorder = Recorder()
    result = train(config, callbacks=[recorder])
    # The resumed fit starts at the second epoch with the optimizer's
    # iterations (so the learning-rate step) restored, not from zero.
    assert recorder.epochs == [1]
    assert recorder.iterations == [3]
    schedule = result.model.optimizer._learning_rate
    expected_rate = float(keras.ops.convert_to_numpy(schedule(3)))
    assert recorder.learning_rates[0] == pytest.approx(expected_rate, rel=1e-5)
    assert result.initial_epoch == 1 and result.epochs_run == 1
    assert result.steps == 6
    assert not (run / "backup").exists()  # Finished: the backup is removed.
    for name in ("model.keras", "vocab.spm", "config.json", "logs/history.csv"):
        assert (run / name).is_file(), name
    assert TrainConfig.from_file(run / "config.json") == config.resolved()
    assert json.loads((run / "results.json").read_text())["steps"] == 6
    # The final model averages the checkpoint of the killed run's epoch and
    # the resumed one.
    assert [os.path.basename(p) for p in result.averaged_checkpoints] == [
        "epoch_001.weights.h5",
        "epoch_002.weights.h5",
    ]


def test_backend_mismatch_is_an_error_before_any_work(tmp_path):
    other = next(b for b in ("jax", "torch", "tensorflow") if b != keras.config.backend())
    config = TrainConfig(output_dir=str(tmp_path / "run"), backend=other, **TINY)
    with pytest.raises(ValueError, match=f"KERAS_BACKEND={other}"):
        train(config)
    assert not (tmp_path / "run").exists()


def test_resume_with_other_settings_is_refused(tmp_path):
    config = TrainConfig(output_dir=str(tmp_path), **TINY)
    config.resolved().save(tmp_path / "config.json")
    (tmp_path / "backup").mkdir()
    (tmp_path / "backup" / "training_metadata.json").write_text('{"epoch": 1}')
    with pytest.raises(ValueError, match="vocabulary_size: 128 -> 256"):
        train(config.replace(vocabulary_size=256))


class FakeModel:
    def __init__(self, iterations=0):
        self.stop_training = False
        self.optimizer = type("Optimizer", (), {"iterations": iterations})()


def test_step_limit_counts_restored_iterations():
    limit = StepLimit(max_steps=5)
    limit.set_model(FakeModel(iterations=3))
    limit.on_train_begin()
    assert not limit.model.stop_training
    limit.on_train_batch_end(0)
    assert not limit.model.stop_training
    limit.on_train_batch_end(1)
    assert limit.stopped and limit.model.stop_training
    done = StepLimit(max_steps=3)
    done.set_model(FakeModel(iterations=3))
    done.on_train_begin()
    assert done.model.stop_training


def test_schedule_honours_max_steps():
    config = TrainConfig(epochs=10)
    assert _schedule(config.resolved(), num_batches=32) == (10, 32)
    assert _schedule(config.replace(max_steps=70).resolved(), 32) == (3, 32)
    assert _schedule(config.replace(max_steps=5).resolved(), 32) == (1, 5)
    assert _schedule(config.replace(steps_per_epoch=4).resolved(), 32) == (10, 4)


def test_prune_keeps_the_newest_checkpoints(tmp_path):
    for epoch in (1, 2, 3, 10):
        (tmp_path / f"epoch_{epoch:03d}.weights.h5").write_bytes(b"x")
    (tmp_path / "model_config.json").write_text("{}")
    PruneCheckpoints(str(tmp_path), keep=2).on_epoch_end(3)
    assert sorted(os.listdir(tmp_path)) == [
        "epoch_003.weights.h5",
        "epoch_010.weights.h5",
        "model_config.json",
    ]


def test_time_budget_stops_training():
    budget = TimeBudget(minutes=0.0)
    budget.set_model(FakeModel())
    budget.on_train_begin()
    budget.on_train_batch_end(0)
    assert budget.stopped and budget.model.stop_training
