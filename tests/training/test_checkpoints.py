"""Tests for keras_transformer.checkpoints (averaging the last N checkpoints)."""

import json
import os

import numpy as np
import pytest

from conftest import to_numpy
from keras_transformer import Transformer, Translator
from keras_transformer.models.transformer.transformer_loader import find_trained_model
from keras_transformer.training.run_data import check_init_from
from keras_transformer.utils.file_io import load_model
from keras_transformer.training.checkpoints import average_checkpoints
from keras_transformer.training.checkpoints import list_checkpoints
from keras_transformer.training.checkpoints import save_architecture
from keras_transformer.objectives.schedules import transformer_optimizer
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy


def tiny_model():
    return Transformer(
        vocabulary_size=24, num_layers=1, d_model=16, num_heads=2, d_ff=32
    )


def float_weights(model):
    return [
        to_numpy(v) for v in model.weights if "float" in str(v.dtype)
    ]


@pytest.fixture
def three_checkpoints(tmp_path, rng):
    """epoch_001..epoch_004 with known weights; epoch_001 is an outlier."""
    directory = tmp_path / "checkpoints"
    model = tiny_model()
    # Written by a compiled model, as training does (optimizer state inside).
    model.compile(optimizer=transformer_optimizer(16), loss=LabelSmoothedCrossEntropy())
    model.optimizer.build(model.trainable_variables)
    save_architecture(model, directory)
    known = []
    for epoch, scale in ((1, 1000.0), (2, 1.0), (3, 2.0), (4, 3.0)):
        values = [
            (rng.normal(size=w.shape) * scale).astype("float32")
            for w in float_weights(model)
        ]
        floats = iter(values)
        model.set_weights(
            [next(floats) if "float" in str(v.dtype) else to_numpy(v) for v in model.weights]
        )
        model.save_weights(str(directory / f"epoch_{epoch:03d}.weights.h5"))
        known.append(values)
    return directory, known


def test_average_is_the_mean_of_the_last_n(three_checkpoints, tmp_path):
    directory, known = three_checkpoints
    assert [os.path.basename(p) for p in list_checkpoints(directory)] == [
        f"epoch_{i:03d}.weights.h5" for i in (1, 2, 3, 4)
    ]
    model, paths = average_checkpoints(directory, last_n=3)
    assert [os.path.basename(p) for p in paths] == [
        f"epoch_{i:03d}.weights.h5" for i in (2, 3, 4)
    ]
    expected = [np.mean(group, axis=0) for group in zip(*known[1:])]
    averaged = float_weights(model)
    assert len(averaged) == len(expected) > 10
    for got, want in zip(averaged, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Not the mean of all four (epoch 1 is far away).
    assert not np.allclose(averaged[0], np.mean([k[0] for k in known], axis=0))


def test_averaged_model_is_saved_and_loads(three_checkpoints, tmp_path):
    directory, known = three_checkpoints
    output = tmp_path / "averaged" / "model.keras"
    model, paths = average_checkpoints(
        [directory / "epoch_001.weights.h5", directory / "epoch_002.weights.h5"],
        output_path=str(output),
        last_n=5,
    )
    assert len(paths) == 2
    import keras

    loaded = keras.saving.load_model(str(output))
    assert isinstance(loaded, Transformer)
    for got, want in zip(float_weights(loaded), zip(*known[:2])):
        np.testing.assert_allclose(got, np.mean(want, axis=0), rtol=1e-5, atol=1e-6)


def _tiny_run(run):
    """A run directory's vocab.spm and checkpoints/model_config.json for a
    tiny model over it; returns the model."""
    from keras_transformer.data import SubwordTokenizer

    tokenizer = SubwordTokenizer.train(["a b c d e f g h"] * 20 + ["a c e g"] * 20, 20)
    tokenizer.save(str(run))
    model = Transformer(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1, d_model=16, num_heads=2, d_ff=32
    )
    save_architecture(model, run / "checkpoints")
    return model


def test_average_into_a_directory_keeps_the_weights_once_as_a_preset(tmp_path):
    """An output directory gets the model once, as a keras-hub preset with
    the run's vocab.spm and decoding settings (no model.keras): it
    translates and continues training (init_from)."""
    run = tmp_path / "run"
    model = _tiny_run(run)
    (run / "train_config.json").write_text(json.dumps({"beam_size": 3, "max_length": 16}))
    model.save_weights(str(run / "checkpoints" / "epoch_001.weights.h5"))
    model.save_weights(str(run / "checkpoints" / "epoch_002.weights.h5"))
    averaged, _ = average_checkpoints(run / "checkpoints", output_path=str(tmp_path / "avg"))
    output = tmp_path / "avg"
    assert (output / "vocab.spm").read_bytes() == (run / "vocab.spm").read_bytes()
    weights = sorted(p.name for p in output.iterdir() if p.suffix in (".h5", ".keras"))
    assert weights == ["model.weights.h5"]
    files = find_trained_model(output)
    assert files.kind == "preset" and files.decoding_defaults()["beam_size"] == 3
    for a, b in zip(files.load_model().get_weights(), averaged.get_weights()):
        np.testing.assert_array_equal(a, b)
    check_init_from(str(output))
    translator = Translator.from_directory(str(output))
    assert len(translator.translate(["a b"], beam_size=1, max_extra_length=3)) == 1


def test_average_into_a_run_directory_replaces_its_preset_model(tmp_path):
    """A run directory is a keras-hub preset: averaging into it replaces the
    model the loaders read (model.weights.h5); a model.keras beside it (a
    run of earlier versions) is replaced too, never left holding another
    model."""
    from keras_transformer.models.transformer.transformer_preset_writer import (
        write_preset_files,
    )

    run = tmp_path / "run"
    model = _tiny_run(run)
    write_preset_files(str(run), model, str(run / "vocab.spm"))
    model.save(str(run / "model.keras"))
    for epoch in (1, 2):
        model.set_weights([w + epoch for w in model.get_weights()])
        model.save_weights(str(run / "checkpoints" / f"epoch_{epoch:03d}.weights.h5"))
    averaged, _ = average_checkpoints(run / "checkpoints", output_path=str(run), last_n=2)
    for loaded in (find_trained_model(run).load_model(), load_model(str(run / "model.keras"))):
        for a, b in zip(loaded.get_weights(), averaged.get_weights()):
            np.testing.assert_array_equal(a, b)


def test_average_into_a_run_directory_of_earlier_versions_keeps_its_layout(tmp_path):
    """A run of earlier versions (model.keras, its TrainConfig in
    config.json, no preset): its model.keras gets the average; its
    config.json is not overwritten by a preset's."""
    run = tmp_path / "run"
    model = _tiny_run(run)
    legacy_config = json.dumps({"beam_size": 3, "max_length": 16})
    (run / "config.json").write_text(legacy_config)
    model.save(str(run / "model.keras"))
    for epoch in (1, 2):
        model.set_weights([w + epoch for w in model.get_weights()])
        model.save_weights(str(run / "checkpoints" / f"epoch_{epoch:03d}.weights.h5"))
    averaged, _ = average_checkpoints(run / "checkpoints", output_path=str(run), last_n=2)
    assert (run / "config.json").read_text() == legacy_config
    assert not (run / "model.weights.h5").exists()
    files = find_trained_model(run)
    assert files.kind == "run" and files.decoding_defaults()["beam_size"] == 3
    for a, b in zip(files.load_model().get_weights(), averaged.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="No checkpoints"):
        average_checkpoints(str(tmp_path))
    with pytest.raises(ValueError, match="last_n"):
        average_checkpoints(str(tmp_path), last_n=0)
    (tmp_path / "epoch_001.weights.h5").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="model_config.json"):
        average_checkpoints(str(tmp_path))


def nan_checkpoint(directory, epoch):
    """Writes epoch ``epoch`` of the fixture's architecture with NaN weights."""
    from keras_transformer.training.checkpoints import load_architecture

    model = load_architecture(str(directory))
    variable = model.weights[0]
    variable.assign(np.full(variable.shape, np.nan, "float32"))
    path = directory / f"epoch_{epoch:03d}.weights.h5"
    model.save_weights(str(path))  # Not the checked writer: a diverged run's file.
    return path, variable.path


def test_a_nan_checkpoint_is_refused_naming_file_and_variable(three_checkpoints, tmp_path):
    directory, _ = three_checkpoints
    path, variable = nan_checkpoint(directory, 5)
    output = tmp_path / "averaged"
    with pytest.raises(ValueError, match="epoch_005.weights.h5.*non-finite") as info:
        average_checkpoints(directory, last_n=2, output_path=str(output))
    assert variable in str(info.value)
    assert not output.exists()  # Nothing written.
    # Without the NaN checkpoint (an explicit list) averaging works.
    model, paths = average_checkpoints(
        [directory / "epoch_003.weights.h5", directory / "epoch_004.weights.h5"]
    )
    assert len(paths) == 2


def test_a_truncated_checkpoint_is_named(three_checkpoints):
    directory, _ = three_checkpoints
    path = directory / "epoch_004.weights.h5"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="epoch_004.weights.h5.*truncated"):
        average_checkpoints(directory, last_n=2)


@pytest.mark.parametrize(
    "other, message",
    [
        (dict(d_model=32), "has shape \\(24, 32\\) but the model's has shape \\(24, 16\\)"),
        # Extra layers used to load silently (Keras ignores unknown entries).
        (dict(num_layers=2), "the model lacks"),
    ],
    ids=["other-width", "more-layers"],
)
def test_checkpoints_of_another_architecture_are_named(three_checkpoints, other, message):
    directory, _ = three_checkpoints
    arguments = dict(vocabulary_size=24, num_layers=1, d_model=16, num_heads=2, d_ff=32)
    Transformer(**dict(arguments, **other)).save_weights(
        str(directory / "epoch_005.weights.h5")
    )
    with pytest.raises(ValueError, match="epoch_005.weights.h5.*" + message):
        average_checkpoints(directory, last_n=2)


def test_averaging_into_a_directory_with_another_vocabulary_is_refused(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "vocab.spm").write_bytes(b"the run's vocabulary")
    model = tiny_model()
    save_architecture(model, run / "checkpoints")
    model.save_weights(str(run / "checkpoints" / "epoch_001.weights.h5"))
    other = tmp_path / "other"
    other.mkdir()
    (other / "vocab.spm").write_bytes(b"another vocabulary")
    with pytest.raises(ValueError, match="other/vocab.spm.*differs"):
        average_checkpoints(run / "checkpoints", output_path=str(other))
    assert os.listdir(other) == ["vocab.spm"]
