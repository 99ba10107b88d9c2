"""Training from text files through a prepared corpus, and resuming inside an
epoch: after a kill or SIGTERM the run continues the interrupted epoch and
the data stream where the backup was taken, and ends with the weights of an
uninterrupted run."""

import json
import os
import signal

import keras
import numpy as np
import pytest

from keras_transformer.data import default_task_splits, write_lines
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.trainer import train

# Deterministic steps (no dropout): an interrupted and resumed run must end
# with the same weights as an uninterrupted one.
STREAM = dict(
    preset="tiny",
    model_overrides=dict(num_layers=1, d_model=32, num_heads=2, d_ff=64, dropout_rate=0.0),
    vocabulary_size=64,
    max_length=16,
    tokens_per_batch=128,
    bucketing="packed",  # One batch shape: one compilation.
    warmup_steps=10,
    steps_per_epoch=4,
    epochs=3,
    window_size=64,  # Several windows per pass.
    final_model="last",
    eval_sentences=0,
    verbose=0,
)


class Killed(Exception):
    pass


class KillAtBatch(keras.callbacks.Callback):
    """Simulates the process dying after the ``batch``-th batch of the run
    (1-based), once the callbacks before it have run."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.seen = 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.batch:
            raise Killed(f"killed after batch {self.batch}")


class TerminateAtBatch(KillAtBatch):
    """Sends this process SIGTERM after the ``batch``-th batch."""

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.batch:
            os.kill(os.getpid(), signal.SIGTERM)


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("text")
    english, german = default_task_splits(num_train=300, num_valid=0, num_test=0)["train"]
    return (
        str(write_lines(directory / "train.en", english)),
        str(write_lines(directory / "train.de", german)),
    )


def config_for(directory, corpus_files, **overrides):
    src, tgt = corpus_files
    return TrainConfig(
        output_dir=str(directory),
        train_src=src,
        train_tgt=tgt,
        **dict(STREAM, **overrides),
    )


def weights(model):
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, corpus_files):
    directory = tmp_path_factory.mktemp("uninterrupted") / "run"
    return train(config_for(directory, corpus_files))


def backup_metadata(run):
    with open(os.path.join(run, "backup", "training_metadata.json"), encoding="utf-8") as f:
        return json.load(f)


def assert_same_weights(result, expected):
    assert result.steps == expected.steps == 12
    for got, want in zip(weights(result.model), weights(expected.model)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_training_files_are_prepared_into_the_run_directory(uninterrupted):
    run = uninterrupted.output_dir
    manifest = os.path.join(run, "corpus", "manifest.json")
    with open(manifest, encoding="utf-8") as f:
        assert json.load(f)["complete"] is True
    with open(os.path.join(run, "vocab.spm"), "rb") as a:
        with open(os.path.join(run, "corpus", "vocab.spm"), "rb") as b:
            assert a.read() == b.read()
    assert not os.path.exists(os.path.join(run, "backup"))  # Finished.


def test_a_kill_inside_an_epoch_resumes_at_the_last_backup(tmp_path, corpus_files, uninterrupted):
    run = tmp_path / "run"
    config = config_for(run, corpus_files, backup_every_steps=2)
    # Batch 7 is the third of epoch 2; the last backup was after batch 6.
    with pytest.raises(Killed):
        train(config, callbacks=[KillAtBatch(7)])
    assert backup_metadata(run)["batches"] == 6
    assert backup_metadata(run)["batch_in_epoch"] == 2
    assert not (run / "model.weights.h5").exists()

    result = train(config)
    assert result.initial_epoch == 1  # Finishes the interrupted epoch 2.
    assert result.epochs_run == 2
    assert_same_weights(result, uninterrupted)
    # The interrupted epoch's checkpoint is at the same update as without
    # the interruption.
    for epoch in (2, 3):
        name = f"checkpoints/epoch_{epoch:03d}.weights.h5"
        assert (run / name).exists()


def test_sigterm_saves_a_backup_and_the_same_command_resumes(tmp_path, corpus_files, uninterrupted):
    run = tmp_path / "run"
    config = config_for(run, corpus_files)
    stopped = train(config, callbacks=[TerminateAtBatch(5)])
    assert stopped.stop_reason == "SIGTERM"
    assert stopped.model_path is None
    assert not (run / "results.json").exists()
    # The signal arrives after the backup callback has seen batch 5: the
    # backup is taken after the next batch, the one in flight.
    assert backup_metadata(run)["batches"] == 6
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # Handler removed.

    result = train(config)
    assert result.stop_reason is None
    assert_same_weights(result, uninterrupted)


def test_a_prepared_corpus_gives_the_vocabulary_size(tmp_path, uninterrupted):
    """`train_corpus` without `vocabulary_size`: the corpus' size, not the
    default of 8,000; a size that differs is an error naming both."""
    corpus = os.path.join(uninterrupted.output_dir, "corpus")
    config = TrainConfig(
        output_dir=str(tmp_path / "run"),
        train_corpus=corpus,
        **dict(STREAM, vocabulary_size=None, epochs=1, steps_per_epoch=1),
    )
    result = train(config)
    assert result.config.vocabulary_size == 64
    assert result.tokenizer.vocabulary_size == 64
    with pytest.raises(ValueError, match="vocabulary of 64 pieces.*vocabulary_size=128"):
        train(config.replace(output_dir=str(tmp_path / "other"), vocabulary_size=128))
