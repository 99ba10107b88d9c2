"""Every failing `keras-transformer` command ends in one line naming the problem.

Issue #12, group 3: no traceback (unless --debug), a non-zero exit code, and
a message that names the file or argument at fault. Arguments are checked
before any expensive work. Each test reproduces a case that escaped as a
traceback (or a vague or silent result) before.
"""

import io
import os
import sys

import keras
import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.training.checkpoints import save_architecture
from keras_transformer.cli.main import main
from keras_transformer.data import SubwordTokenizer

SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a"] * 10


def fails(argv, capsys, code=None):
    """Runs ``main(argv)``; returns stderr after checking it is a one-line error."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code != 0, err
    if code is not None:
        assert info.value.code == code, err
    assert "Traceback" not in err
    assert "error:" in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def tiny_model(vocabulary_size, **overrides):
    arguments = dict(dict(num_layers=1, d_model=16, num_heads=2, d_ff=32), **overrides)
    return Transformer(vocabulary_size=vocabulary_size, **arguments)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A run directory with an (untrained) model.keras and its vocab.spm."""
    directory = tmp_path_factory.mktemp("cli_errors") / "run"
    tokenizer = SubwordTokenizer.train(SENTENCES, 20)
    tokenizer.save(str(directory))
    tiny_model(tokenizer.vocabulary_size).save(str(directory / "model.keras"))
    return directory


@pytest.fixture
def broken_dir(model_dir, tmp_path):
    """A copy of ``model_dir`` whose model.keras is truncated."""
    directory = tmp_path / "broken"
    directory.mkdir()
    (directory / "vocab.spm").write_bytes((model_dir / "vocab.spm").read_bytes())
    data = (model_dir / "model.keras").read_bytes()
    (directory / "model.keras").write_bytes(data[: len(data) // 2])
    return directory


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["translate", "--batch-size", "-5"], "--batch-size"),
        (["translate", "--batch-size", "0"], "--batch-size"),  # Was silently 32.
        (["translate", "--beam-size", "0"], "--beam-size"),
        (["translate", "--alpha", "nan"], "--alpha"),
        (["evaluate", "--max-sentences", "-998"], "--max-sentences"),  # Scored 2.
        (["evaluate", "--max-sentences", "0"], "--max-sentences"),
        (["average-checkpoints", "x", "--output", "y", "--last-n", "0"], "--last-n"),
        (["export", "--export-dir", "e", "--version", "0"], "--version"),
    ],
)
def test_bad_numbers_are_rejected_by_name(argv, flag, model_dir, capsys):
    if argv[0] in ("translate", "evaluate", "export"):
        argv = argv + ["--model-dir", str(model_dir)]
    line = fails(argv, capsys, code=2)
    assert flag in line


def test_a_truncated_or_corrupt_model_is_named(broken_dir, tmp_path, capsys):
    line = fails(["translate", "--model-dir", str(broken_dir)], capsys)
    assert str(broken_dir / "model.keras") in line
    assert "not a valid .keras file" in line and "File not found" not in line
    (broken_dir / "model.keras").write_bytes(b"PK\x03\x04 not really a zip" * 10)
    text = tmp_path / "text"
    text.write_text("a b\n")
    argv = ["evaluate", "--model-dir", str(broken_dir), "--src", str(text), "--ref", str(text)]
    line = fails(argv, capsys)
    assert str(broken_dir / "model.keras") in line


def test_invalid_utf8_on_stdin_is_named(model_dir, capsys, monkeypatch):
    # Python's stdin under a C locale: invalid bytes become lone surrogates,
    # which used to reach the tokenizer (TypeError).
    stdin = io.TextIOWrapper(io.BytesIO(b"ok\ncaf\xe9\n"), errors="surrogateescape")
    monkeypatch.setattr(sys, "stdin", stdin)
    line = fails(["translate", "--model-dir", str(model_dir)], capsys)
    assert "stdin is not UTF-8" in line and "byte 6" in line


def test_translate_output_is_checked_before_translating(broken_dir, tmp_path, capsys):
    source = tmp_path / "in.en"
    source.write_text("a b\n")
    # The model is broken too: the --output error must come first (no work).
    argv = ["translate", "--model-dir", str(broken_dir), "--input", str(source)]
    line = fails(argv + ["--output", str(tmp_path)], capsys)
    assert "--output" in line and "is a directory" in line
    line = fails(argv + ["--output", str(tmp_path / "missing" / "out.de")], capsys)
    assert "--output" in line and "does not exist" in line


def test_export_to_an_existing_version_is_refused_before_work(broken_dir, tmp_path, capsys):
    (tmp_path / "exported" / "1").mkdir(parents=True)
    argv = ["export", "--model-dir", str(broken_dir), "--export-dir", str(tmp_path / "exported")]
    line = fails(argv, capsys)
    assert os.path.join(str(tmp_path / "exported"), "1") in line and "exists" in line


@pytest.mark.skipif(
    keras.config.backend() == "tensorflow", reason="the export child runs only off TensorFlow"
)
def test_an_export_refused_in_the_child_process_is_one_line(tmp_path, model_dir, capsys):
    """The TensorFlow child's ValueError (a vocabulary that does not fit) is relayed."""
    directory = tmp_path / "mismatched"
    directory.mkdir()
    (directory / "vocab.spm").write_bytes((model_dir / "vocab.spm").read_bytes())
    # Fewer output ids (12) than the tokenizer's 20 pieces: refused (a model
    # may have more ids than its tokenizer, never fewer).
    tiny_model(12).save(str(directory / "model.keras"))
    line = fails(
        ["export", "--model-dir", str(directory), "--export-dir", str(tmp_path / "e")],
        capsys,
    )
    assert "Export under the TensorFlow backend failed: ValueError:" in line
    assert "20 pieces but the model only 12 output ids" in line


@pytest.fixture
def checkpoint_dir(tmp_path):
    directory = tmp_path / "run" / "checkpoints"
    model = tiny_model(24)
    save_architecture(model, directory)
    model.save_weights(str(directory / "epoch_001.weights.h5"))
    model.save_weights(str(directory / "epoch_002.weights.h5"))
    return directory


def test_average_checkpoints_names_the_bad_checkpoint(checkpoint_dir, tmp_path, capsys):
    argv = ["average-checkpoints", str(checkpoint_dir), "--last-n", "2", "--output",
            str(tmp_path / "avg")]  # fmt: skip
    path = checkpoint_dir / "epoch_002.weights.h5"
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # Truncated (h5py OSError).
    line = fails(argv, capsys)
    assert str(path) in line and "truncated" in line

    tiny_model(24, d_model=32).save_weights(str(path))  # Another shape.
    line = fails(argv, capsys)
    assert str(path) in line and "(24, 32)" in line and "(24, 16)" in line

    model = tiny_model(24)
    model.weights[0].assign(np.full(model.weights[0].shape, np.inf, "float32"))
    model.save_weights(str(path))  # A diverged run's checkpoint.
    line = fails(argv, capsys)
    assert str(path) in line and "non-finite" in line
    assert not (tmp_path / "avg").exists()  # Nothing was written.


@pytest.mark.parametrize(
    "argv, key",
    [(["train", "--epochs", "many"], "'epochs'"),
     (["train", "--average-last-n", "3,five"], "'average_last_n'")],
)  # fmt: skip
def test_a_value_of_the_wrong_type_is_a_user_error_naming_the_key(argv, key, capsys):
    line = fails(argv, capsys, code=2)
    assert key in line and "must be int" in line
    assert "internal error" not in line  # The user's value, not a bug.


def test_config_and_training_files_are_named(tmp_path, capsys):
    config = tmp_path / "run.yaml"
    config.write_bytes(b"\xff\xfe\x00binary\x80")
    line = fails(["train", "--config", str(config)], capsys, code=2)
    assert str(config) in line and "UTF-8" in line

    empty = tmp_path / "empty.en"
    empty.write_text("")
    blank = tmp_path / "blank.de"
    blank.write_text("  \n\n")
    argv = ["train", "--train-src", str(empty), "--train-tgt", str(empty),
            "--output-dir", str(tmp_path / "run"), "--backend", keras.config.backend()]  # fmt: skip
    line = fails(argv, capsys)
    assert str(empty) in line and "is empty" in line


def test_train_into_a_finished_run_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "model.keras").write_bytes(b"a finished run's model")
    argv = ["train", "--output-dir", str(run) + "/", "--backend", keras.config.backend()]
    line = fails(argv, capsys)
    assert "finished run" in line and "--overwrite" in line
    assert (run / "model.keras").read_bytes() == b"a finished run's model"


def test_debug_shows_the_traceback(broken_dir):
    with pytest.raises(ValueError, match="not a valid .keras file"):
        main(["translate", "--debug", "--model-dir", str(broken_dir)])
