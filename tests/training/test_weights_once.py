"""A run directory keeps its final model's weights once (issue 49, item 6).

A run directory of this version holds the keras-hub preset's
``model.weights.h5`` and no ``model.keras`` (the whole-run checks are in
test_training_loop.py and tests/cli/test_cli.py). Directories of earlier
versions, ``model.keras`` + ``vocab.spm`` with or without the preset files,
keep loading everywhere (tests/test_compatibility.py's fixture is one);
here, built without a fixture: translation, the command line, ``init_from``
and the run directory's "finished" rule, for both layouts.
"""

import numpy as np
import pytest

from keras_transformer import Transformer, Translator
from keras_transformer.cli.main import main
from keras_transformer.data import SubwordTokenizer
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.run_data import check_init_from
from keras_transformer.training.run_directory import RunDirectory, RunDirectoryError
from keras_transformer.training.run_model import build_model
from keras_transformer.training.run_preset import write_run_preset

SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a"] * 10
INPUTS = ["a b c", "h g"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny model (random weights) and its tokenizer."""
    tokenizer = SubwordTokenizer.train(SENTENCES, 20)
    model = Transformer(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1, d_model=16, num_heads=2, d_ff=32
    )
    return model, tokenizer


def write_directory(path, trained, layout):
    """``layout`` "legacy": model.keras + vocab.spm only (a run directory of
    earlier versions); "preset": vocab.spm and the preset files, as a run
    of this version."""
    model, tokenizer = trained
    tokenizer.save(str(path))
    if layout == "legacy":
        model.save(str(path / "model.keras"))
    else:
        write_run_preset(str(path), model, str(path / "vocab.spm"), {"beam_size": 2})
    return path


def test_a_directory_of_only_model_keras_and_vocab_spm_translates(trained, tmp_path, capsys):
    directory = write_directory(tmp_path / "old", trained, "legacy")
    assert sorted(p.name for p in directory.iterdir()) == ["model.keras", "vocab.spm"]
    expected = Translator(*trained).translate(INPUTS, beam_size=2, max_extra_length=4)
    loaded = Translator.from_directory(str(directory))
    assert loaded.translate(INPUTS, beam_size=2, max_extra_length=4) == expected
    source = tmp_path / "input.txt"
    source.write_text("\n".join(INPUTS) + "\n")
    output = tmp_path / "output.txt"
    code = main(
        ["translate", "--model-dir", str(directory), "--input", str(source),
         "--output", str(output), "--beam-size", "2", "--max-extra-length", "4"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert output.read_text().splitlines() == expected


@pytest.mark.parametrize("layout", ["legacy", "preset"])
def test_init_from_takes_either_layout(trained, tmp_path, layout):
    directory = write_directory(tmp_path / layout, trained, layout)
    check_init_from(str(directory))
    config = TrainConfig(init_from=str(directory), output_dir=str(tmp_path / "next")).resolved()
    model = build_model(config, trained[1].vocabulary_size)
    assert type(model) is Transformer
    for a, b in zip(model.get_weights(), trained[0].get_weights()):
        np.testing.assert_array_equal(a, b)


def test_init_from_without_a_model_is_refused_naming_the_weights(trained, tmp_path):
    directory = tmp_path / "no_model"
    trained[1].save(str(directory))  # vocab.spm alone
    with pytest.raises(ValueError, match=r"holds no model .*model\.weights\.h5"):
        check_init_from(str(directory))
    preset = write_directory(tmp_path / "no_vocabulary", trained, "preset")
    (preset / "vocab.spm").unlink()
    with pytest.raises(ValueError, match=r"vocab\.spm' is missing"):
        check_init_from(str(preset))


@pytest.mark.parametrize("layout", ["legacy", "preset"])
def test_a_directory_with_a_model_holds_a_finished_run(trained, tmp_path, layout):
    directory = write_directory(tmp_path / layout, trained, layout)
    (directory / "train_config.json").write_text("{}")
    run = RunDirectory(directory)
    assert run.is_finished()
    with pytest.raises(RunDirectoryError, match="holds a finished run"):
        run.claim({"epochs": 1})


def test_a_directory_without_a_model_names_the_files_of_a_finished_run(trained, tmp_path):
    directory = tmp_path / "unfinished"
    trained[1].save(str(directory))  # vocab.spm alone
    with pytest.raises(FileNotFoundError, match=r"config\.json, model\.weights\.h5"):
        Translator.from_directory(str(directory))
    pytest.importorskip("keras_hub")
    with pytest.raises(ValueError, match=r"holds config\.json and model\.weights\.h5"):
        Transformer.from_preset(str(directory))
