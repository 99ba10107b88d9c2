"""Weights files are verified at every load (issue 49, item 6).

Every weights file the package writes gets its SHA-256 beside it
(``<file>.sha256``, `keras_transformer.utils.file_io.save_weights`); a file
whose bytes differ from it, or whose values are not finite, is refused with
one error naming the file (and the variables), on each load path: the
command line, `Translator`, ``from_preset``, checkpoint averaging. A file
of an earlier version (no checksum) still loads, with the finite check.
"""

import hashlib
import os
import shutil

import numpy as np
import pytest

import keras_transformer as kt
from keras_transformer.cli.main import main
from keras_transformer.models.transformer.transformer_preset_writer import (
    replace_preset_model,
)
from keras_transformer.training.checkpoints import save_architecture
from keras_transformer.utils import file_io

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "fixtures")
WEIGHTS = "model.weights.h5"


def one_error_line(argv, capsys):
    """Runs ``main(argv)``; returns its one ``error:`` line (non-zero exit)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code != 0, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def corrupt_middle(path, size=4096, seed=0):
    """Writes ``size`` random bytes into the middle of ``path`` (the issue's case)."""
    data = bytearray(open(path, "rb").read())
    start = len(data) // 2
    data[start:start + size] = np.random.default_rng(seed).bytes(size)
    with open(path, "wb") as f:
        f.write(bytes(data))


@pytest.fixture(scope="module")
def saved_preset(tmp_path_factory):
    """The numbers preset (written without checksums), loaded and saved again
    by the package's writer: its weights now carry a ``.sha256``."""
    directory = tmp_path_factory.mktemp("verified") / "preset"
    shutil.copytree(os.path.join(FIXTURES, "numbers_preset"), directory)
    assert not os.path.exists(directory / (WEIGHTS + ".sha256"))
    model = kt.Translator.from_directory(str(directory)).model  # No checksum: loads.
    replace_preset_model(str(directory), model)
    return directory, model


@pytest.fixture
def preset(saved_preset, tmp_path):
    directory = tmp_path / "preset"
    shutil.copytree(saved_preset[0], directory)
    return directory


def test_saved_weights_carry_their_sha256_in_sha256sum_format(preset):
    path = preset / WEIGHTS
    line = (preset / (WEIGHTS + ".sha256")).read_text()
    assert line == hashlib.sha256(path.read_bytes()).hexdigest() + "  " + WEIGHTS + "\n"
    file_io.check_weights_file(str(path))
    kt.Translator.from_directory(str(preset))  # Verified, loads.


def test_a_corrupted_weights_file_is_refused_by_name_on_every_load_path(preset, capsys):
    path = str(preset / WEIGHTS)
    corrupt_middle(path)
    for load in (
        lambda: kt.Translator.from_directory(str(preset)),
        lambda: kt.Transformer.from_preset(str(preset)),
        lambda: file_io.check_weights_file(path),
    ):
        with pytest.raises(ValueError, match="corrupt") as info:
            load()
        assert path in str(info.value)
    if kt.KERAS_HUB_AVAILABLE:
        with pytest.raises(ValueError, match="corrupt"):
            kt.TransformerSeq2SeqLM.from_preset(str(preset))
    line = one_error_line(
        ["translate", "--model-dir", str(preset), "--input", os.devnull], capsys
    )
    assert path in line and "SHA-256" in line


def test_non_finite_weights_are_refused_naming_the_variable(saved_preset, preset, capsys):
    """A file whose checksum matches but whose values are NaN (saved past the
    package's checked writer) is refused, naming the file and the variable."""
    model = saved_preset[1]
    variable = model.weights[3]
    kept = variable.numpy() if hasattr(variable, "numpy") else np.asarray(variable)
    try:
        variable.assign(np.full(variable.shape, np.nan, "float32"))
        path = str(preset / WEIGHTS)
        model.save_weights(path)  # Keras' own writer: no finite check.
        file_io.write_checksum(path)
    finally:
        variable.assign(kept)
    with pytest.raises(ValueError, match="non-finite") as info:
        kt.Translator.from_directory(str(preset))
    assert path in str(info.value) and variable.path in str(info.value)
    if kt.KERAS_HUB_AVAILABLE:  # keras-hub loads them into a TransformerBackbone.
        for load in (kt.TransformerSeq2SeqLM.from_preset, kt.TransformerBackbone.from_preset):
            with pytest.raises(ValueError, match="non-finite") as info:
                load(str(preset))
            assert path in str(info.value) and variable.path in str(info.value)
    line = one_error_line(
        ["translate", "--model-dir", str(preset), "--input", os.devnull], capsys
    )
    assert path in line and variable.path in line and "non-finite" in line


def test_a_corrupted_checkpoint_is_refused_by_average_checkpoints(saved_preset, tmp_path, capsys):
    model = saved_preset[1]
    directory = tmp_path / "checkpoints"
    directory.mkdir()
    save_architecture(model, str(directory))
    for epoch in (1, 2):
        file_io.save_weights(model, directory / f"epoch_{epoch:03d}.weights.h5")
    corrupt_middle(directory / "epoch_002.weights.h5")
    line = one_error_line(
        ["average-checkpoints", str(directory), "--output", str(tmp_path / "avg")], capsys
    )
    assert str(directory / "epoch_002.weights.h5") in line and "SHA-256" in line
    assert not (tmp_path / "avg").exists()


def test_a_checksum_file_that_holds_no_digest_is_named(preset):
    (preset / (WEIGHTS + ".sha256")).write_text("not a digest\n")
    with pytest.raises(ValueError, match="holds no SHA-256") as info:
        kt.Translator.from_directory(str(preset))
    assert str(preset / (WEIGHTS + ".sha256")) in str(info.value)


def test_keras_hubs_save_to_preset_writes_the_checksum_too(saved_preset, tmp_path):
    """keras-hub's own writer (the task's ``save_to_preset``) leaves a
    current ``.sha256`` (never a stale one from an earlier save)."""
    pytest.importorskip("keras_hub")
    task = kt.TransformerSeq2SeqLM.from_preset(str(saved_preset[0]))
    directory = tmp_path / "hub"
    directory.mkdir()
    (directory / (WEIGHTS + ".sha256")).write_text("0" * 64 + "  " + WEIGHTS + "\n")  # stale
    task.save_to_preset(str(directory))
    line = (directory / (WEIGHTS + ".sha256")).read_text()
    assert line.split()[0] == hashlib.sha256((directory / WEIGHTS).read_bytes()).hexdigest()
    kt.TransformerSeq2SeqLM.from_preset(str(directory))  # Loads.
    kt.TransformerBackbone.from_preset(str(directory))
    backbone = tmp_path / "backbone"  # The backbone's own save_to_preset.
    backbone.mkdir()
    (backbone / (WEIGHTS + ".sha256")).write_text("0" * 64 + "  " + WEIGHTS + "\n")  # stale
    task.backbone.save_to_preset(str(backbone))
    kt.TransformerBackbone.from_preset(str(backbone))  # Loads: the checksum is current.
    corrupt_middle(directory / WEIGHTS)
    for load in (kt.TransformerSeq2SeqLM.from_preset, kt.TransformerBackbone.from_preset):
        with pytest.raises(ValueError, match="corrupt"):
            load(str(directory))
