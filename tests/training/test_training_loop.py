"""Tests for keras_transformer.training.train: outputs, resume after a kill."""

import contextlib
import io
import json
import os
import shutil

import h5py
import keras
import numpy as np
import pytest

from keras_transformer import (
    Transformer,
    TransformerBackbone,
    TransformerSeq2SeqLM,
    TransformerSeq2SeqLMPreprocessor,
    TransformerTokenizer,
    Translator,
)
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_model,
    load_preset_model,
)
from keras_transformer.training.config import TrainConfig
from keras_transformer.data import default_task_splits
from keras_transformer.data import write_lines
from keras_transformer.training.epoch_checkpoints import PruneCheckpoints
from keras_transformer.training.stop_conditions import StepLimit
from keras_transformer.training.stop_conditions import TimeBudget
from keras_transformer.training.run_model import fit_schedule
from keras_transformer.training.trainer import train

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


def parallel_lines():
    """Training text of the user-data path (no validation set: fewer compilations)."""
    return default_task_splits(num_train=300, num_valid=0, num_test=0)["train"]


@pytest.fixture
def parallel_files(tmp_path):
    english, german = parallel_lines()
    return write_lines(tmp_path / "train.en", english), write_lines(tmp_path / "train.de", german)


def snapshot(directory):
    """{relative path: bytes} of every file under ``directory``."""
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                files[os.path.relpath(full, directory)] = f.read()
    return files


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory):
    """A run killed at the start of its second epoch, then resumed to the end.

    Shared: the finished run directory also serves the tests that train
    another run into it (on a copy).
    """
    directory = tmp_path_factory.mktemp("resumed")
    english, german = parallel_lines()
    config = TrainConfig(
        output_dir=str(directory / "run"),
        train_src=str(write_lines(directory / "train.en", english)),
        train_tgt=str(write_lines(directory / "train.de", german)),
        preset="tiny",
        average_last_n=3,  # more than the run's 2 epochs: the log says so
        **dict(TINY, vocabulary_size=64, tokens_per_batch=128, verbose=2),  # a log to read
    )
    run = directory / "run"
    with pytest.raises(Killed):
        train(config, callbacks=[KillAtEpoch(1)])
    killed = snapshot(run)

    # A truncated backup (a crash while it was written) is refused, naming it.
    backup = run / "backup" / "latest.weights.h5"
    data = backup.read_bytes()
    backup.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError) as truncated:
        train(config)
    backup.write_bytes(data)

    # Resumed under another spelling of the same directory.
    recorder = Recorder()
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        result = train(config.replace(output_dir=str(run) + os.sep), callbacks=[recorder])
    return dict(
        config=config, run=run, killed=killed, truncated=str(truncated.value),
        recorder=recorder, result=result, log=log.getvalue(),
    )  # fmt: skip


def test_killed_run_resumes_where_it_stopped(resumed_run):
    config, run, killed = resumed_run["config"], resumed_run["run"], resumed_run["killed"]
    assert "backup/latest.weights.h5" in killed
    assert "checkpoints/epoch_001.weights.h5" in killed
    assert "model.keras" not in killed and "model.weights.h5" not in killed
    assert "latest.weights.h5" in resumed_run["truncated"]
    assert "truncated" in resumed_run["truncated"]

    recorder, result = resumed_run["recorder"], resumed_run["result"]
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
    for name in ("model.weights.h5", "vocab.spm", "train_config.json", "logs/history.csv"):
        assert (run / name).is_file(), name
    assert TrainConfig.from_file(run / "train_config.json") == config.resolved()
    recorded = json.loads((run / "results.json").read_text())
    assert recorded["steps"] == 6 and recorded["dtype_policy"] == "float32"
    # The final model averages the checkpoint of the killed run's epoch and
    # the resumed one.
    assert [os.path.basename(p) for p in result.averaged_checkpoints] == [
        "epoch_001.weights.h5",
        "epoch_002.weights.h5",
    ]
    # Fewer checkpoints than average_last_n asks for: said, not silent.
    assert (
        "Averaged the last 2 epoch checkpoints (epochs 1-2). average_last_n asks "
        "for 3; this run has only 2"
    ) in resumed_run["log"]


class PoisonWeights(keras.callbacks.Callback):
    """Sets every weight to NaN after batch ``batch`` (a diverging run)."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch

    def on_train_batch_end(self, batch, logs=None):
        if batch == self.batch:
            for variable in self.model.trainable_variables:
                variable.assign(keras.ops.full(variable.shape, float("nan")))


def test_another_run_never_replaces_a_finished_one(resumed_run, tmp_path):
    """Issue #12: a diverging (and shorter) retrain into a finished run's directory."""
    run = tmp_path / "run"
    shutil.copytree(resumed_run["run"], run)
    finished = snapshot(run)
    assert "checkpoints/epoch_002.weights.h5" in finished

    # A shorter run with other settings that diverges to NaN.
    other = resumed_run["config"].replace(
        output_dir=str(run), epochs=1, learning_rate_scale=2.0
    )
    with pytest.raises(ValueError, match="finished run.*--overwrite"):
        train(other, callbacks=[PoisonWeights(batch=1)])
    assert snapshot(run) == finished  # Refused: nothing touched.

    result = train(other, callbacks=[PoisonWeights(batch=1)], overwrite=True)
    assert result.stop_reason == "NaN loss" and result.model_path is None
    [old] = [p for p in os.listdir(tmp_path) if p.startswith("run.old-")]
    assert snapshot(tmp_path / old) == finished  # Moved aside whole.
    # The NaN epoch wrote no checkpoint, and none of the old run's is here
    # for `average-checkpoints --last-n 2` to pick up.
    assert os.listdir(run / "checkpoints") == ["model_config.json"]
    assert not (run / "model.keras").exists() and not (run / "model.weights.h5").exists()

    def refuse(constant):
        raise AssertionError(f"results.json holds {constant}: not strict JSON")

    results = json.loads((run / "results.json").read_text(), parse_constant=refuse)
    assert results["stop_reason"] == "NaN loss"
    assert results["final_metrics"]["loss"] is None
    assert TrainConfig.from_file(run / "train_config.json") == other.resolved()


PRESET_FILES = (
    "config.json", "model.weights.h5", "metadata.json", "tokenizer.json",
    "assets/tokenizer/vocabulary.spm", "preprocessor.json", "task.json",
)  # fmt: skip
SOURCES = ["twenty-one", "three hundred forty-five", "seven"]


def _translations(translator_or_task, **kwargs):
    texts, scores = (
        translator_or_task.translate(SOURCES, beam_size=2, return_scores=True, **kwargs)
        if isinstance(translator_or_task, Translator)
        else translator_or_task.generate(SOURCES, beam_size=2, return_scores=True, **kwargs)
    )
    return texts, np.asarray(scores, "float64")


def test_a_run_directory_is_a_keras_hub_preset(resumed_run):
    """The run writes the preset files beside its own; the package's loader
    reads it as a preset (without keras-hub too) with the final model's
    weights, and translates as the final model."""
    run, result = resumed_run["run"], resumed_run["result"]
    for name in PRESET_FILES:
        assert (run / name).is_file(), name
    # The final model's weights once: the preset's, no model.keras (the
    # checkpoints/ of the run aside).
    weights = sorted(
        name for name in os.listdir(run) if name.endswith((".h5", ".keras", ".weights.json"))
    )
    assert weights == ["model.weights.h5"]
    recorded = json.loads((run / "results.json").read_text())
    assert recorded["model_path"] == result.model_path == str(run / "model.weights.h5")
    assert (run / "vocab.spm").read_bytes() == (run / PRESET_FILES[4]).read_bytes()
    backbone = json.loads((run / "config.json").read_text())
    assert backbone["registered_name"] == "keras_transformer>TransformerBackbone"
    assert backbone["config"] == json.loads(json.dumps(result.model.get_config()))
    task = json.loads((run / "task.json").read_text())["config"]
    config = result.config
    assert task["decode_options"]["beam_size"] == config.beam_size
    assert task["decode_options"]["alpha"] == config.alpha
    assert task["preprocessor"]["config"]["encoder_sequence_length"] == config.max_length
    assert task["language_tag"] == "source"

    files = find_trained_model(run)
    assert files.kind == "preset" and files.directory == str(run)
    assert files.decoding_defaults()["beam_size"] == config.beam_size
    # The final (averaged) model, logits out, as the loader gives a run
    # directory of earlier versions.
    for loaded in (files.load_model(), load_preset_model(str(run))):
        assert type(loaded) is Transformer
        for a, b in zip(loaded.get_weights(), result.model.get_weights()):
            np.testing.assert_array_equal(a, b)
    texts, scores = _translations(Translator(result.model, result.tokenizer))
    loaded_texts, loaded_scores = _translations(Translator.from_directory(run))
    assert loaded_texts == texts
    np.testing.assert_allclose(loaded_scores, scores, rtol=1e-5, atol=1e-5)


def test_keras_hub_loads_the_run_directory(resumed_run, tmp_path):
    """keras-hub's own `Seq2SeqLM.from_preset(run_dir)` gives the package's
    task with the run's weights; its files are those `save_to_preset` of
    the same model writes."""
    keras_hub = pytest.importorskip("keras_hub")
    run, result = resumed_run["run"], resumed_run["result"]
    task = keras_hub.models.Seq2SeqLM.from_preset(str(run))
    assert type(task) is TransformerSeq2SeqLM
    assert type(task.backbone) is TransformerBackbone
    assert (task.beam_size, task.alpha) == (result.config.beam_size, result.config.alpha)
    texts, scores = _translations(Translator.from_directory(run))
    task_texts, task_scores = _translations(task)
    assert task_texts == texts
    np.testing.assert_allclose(task_scores, scores, rtol=1e-5, atol=1e-5)
    ours = TransformerSeq2SeqLM.from_preset(str(run))
    assert _translations(ours)[0] == texts

    # save_to_preset of the same model, tokenizer and settings.
    backbone = TransformerBackbone.from_config(result.model.get_config())
    backbone.set_weights(result.model.get_weights())
    tokenizer = TransformerTokenizer(proto=(run / "vocab.spm").read_bytes())
    preprocessor = TransformerSeq2SeqLMPreprocessor(
        tokenizer,
        encoder_sequence_length=result.config.max_length,
        decoder_sequence_length=result.config.max_length,
    )
    TransformerSeq2SeqLM(
        backbone, preprocessor, beam_size=result.config.beam_size,
        alpha=result.config.alpha, max_extra_length=result.config.max_extra_length,
    ).save_to_preset(str(tmp_path / "saved"))  # fmt: skip
    saved = tmp_path / "saved"
    written = {p for p in snapshot(saved)}
    assert written <= set(snapshot(run)), written - set(snapshot(run))
    for name in written:
        if name.endswith(".json"):
            assert _unnamed(json.loads((run / name).read_text())) == _unnamed(
                json.loads((saved / name).read_text())
            ), name
        elif name.endswith(".spm"):
            assert (run / name).read_bytes() == (saved / name).read_bytes(), name
    assert _weights_file(run / "model.weights.h5") == _weights_file(saved / "model.weights.h5")


def _unnamed(value):
    """A preset file's JSON without what differs between two saves: layer
    names (keras numbers them) and the date."""
    if isinstance(value, dict):
        return {k: _unnamed(v) for k, v in value.items() if k not in ("name", "date_saved")}
    if isinstance(value, list):
        return [_unnamed(v) for v in value]
    return value


def _weights_file(path):
    """{dataset path: bytes} of an HDF5 weights file."""
    contents = {}
    with h5py.File(path, "r") as f:
        f.visititems(
            lambda name, item: contents.__setitem__(name, item[()].tobytes())
            if isinstance(item, h5py.Dataset) else None
        )
    return contents


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


def test_an_empty_training_file_is_named(tmp_path, parallel_files):
    train_src, _ = parallel_files
    blank = tmp_path / "blank.de"
    blank.write_text("\n  \n" * 150)
    config = TrainConfig(
        output_dir=str(tmp_path / "run"), train_src=str(train_src), train_tgt=str(blank), **TINY
    )
    with pytest.raises(ValueError, match="blank.de' have no line with text on both sides"):
        train(config)


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
    assert fit_schedule(config.resolved(), num_batches=32) == (10, 32)
    assert fit_schedule(config.replace(max_steps=70).resolved(), 32) == (3, 32)
    assert fit_schedule(config.replace(max_steps=5).resolved(), 32) == (1, 5)
    assert fit_schedule(config.replace(steps_per_epoch=4).resolved(), 32) == (10, 4)


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
