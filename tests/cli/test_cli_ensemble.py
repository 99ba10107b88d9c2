"""``--model-dir`` given several times (or with several directories):
``translate``, ``score``, ``evaluate`` and ``export`` decode with an
ensemble, ``--weights`` weighs its models, and mistakes end in one line
naming the directories or the flag before any model loads."""

import pytest

from keras_transformer import Transformer
from keras_transformer.cli import commands
from keras_transformer.cli.main import main
from keras_transformer.data import SubwordTokenizer, default_task_splits
from keras_transformer.models.transformer.translator import Translator

VOCABULARY = 48


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory):
    """Two run directories with random models of different sizes and one
    vocabulary, and a third with another vocabulary."""
    root = tmp_path_factory.mktemp("cli_ensemble")
    source, target = default_task_splits(num_train=200, num_valid=1, num_test=1)["train"]
    tokenizer = SubwordTokenizer.train(source + target, VOCABULARY)
    directories = []
    for name, vocabulary, d_model in (
        ("a", tokenizer, 16),
        ("b", tokenizer, 32),
        ("other", SubwordTokenizer.train(target + source[:50], VOCABULARY), 16),
    ):
        directory = root / name
        vocabulary.save(str(directory))
        Transformer(
            vocabulary_size=VOCABULARY, num_layers=1, d_model=d_model, num_heads=2, d_ff=32
        ).save(str(directory / "model.keras"))
        directories.append(str(directory))
    return directories


def _one_line_error(argv, capsys):
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code != 0 and "Traceback" not in err
    [line] = [line for line in err.splitlines() if "error:" in line]
    return line


def test_translate_score_and_evaluate_decode_with_the_ensemble(
    run_dirs, tmp_path, capsys, monkeypatch
):
    # What `Translator.from_directory([a, b], weights=...)` gives, whether the
    # directories follow one --model-dir or each its own.
    a, b, _ = run_dirs
    sentences = ["twenty-one", "", "three hundred forty-five"]
    targets = ["einundzwanzig", "", "dreihundert"]
    source = tmp_path / "input.en"
    source.write_text("\n".join(sentences) + "\n")
    target = tmp_path / "target.de"
    target.write_text("\n".join(targets) + "\n")
    translator = Translator.from_directory([a, b], weights=[1, 3])
    # Each command loads the ensemble; this one, already compiled, is
    # returned, and the arguments it gets are recorded.
    loads = []

    def from_directory(cls, directory, weights=None, **kwargs):
        loads.append((directory, weights))
        return translator

    monkeypatch.setattr(Translator, "from_directory", classmethod(from_directory))

    capsys.readouterr()
    assert main(["translate", "--model-dir", a, b, "--weights", "1", "3", "--input",
                 str(source), "--beam-size", "2", "--max-extra-length", "4"]) == 0  # fmt: skip
    texts = translator.translate(sentences, beam_size=2, max_extra_length=4)
    assert capsys.readouterr().out.split("\n") == [texts[0], "", texts[2], ""]

    assert main(["score", "--model-dir", a, "--model-dir", b, "--weights", "1", "3",
                 "--src", str(source), "--tgt", str(target)]) == 0  # fmt: skip
    totals = [float(line) for line in capsys.readouterr().out.splitlines()]
    assert totals == pytest.approx(translator.score(sentences, targets), abs=1e-5)

    assert main(["evaluate", "--model-dir", a, b, "--src", str(source), "--ref",
                 str(target), "--beam-size", "2", "--max-extra-length", "4"]) == 0  # fmt: skip
    assert "cased detokenized sacreBLEU" in capsys.readouterr().out
    assert loads == [([a, b], [1.0, 3.0]), ([a, b], [1.0, 3.0]), ([a, b], None)]


def test_ensemble_mistakes_are_one_line_before_any_model_loads(
    run_dirs, tmp_path, capsys, monkeypatch
):
    run, _, other = run_dirs
    source = tmp_path / "input.en"
    source.write_text("twenty-one\n")
    line = _one_line_error(["translate", "--model-dir", run, other, "--input", str(source)], capsys)
    assert "share one vocabulary" in line and repr(run) in line and repr(other) in line
    line = _one_line_error(
        ["score", "--model-dir", run, run, "--weights", "1", "--src", str(source),
         "--tgt", str(source)], capsys,
    )  # fmt: skip
    assert "--weights gives 1 weight(s) for 2 --model-dir(s)" in line
    line = _one_line_error(["translate", "--model-dir", run, run, "--weights", "1", "0"], capsys)
    assert "--weights" in line and "must be a finite number > 0" in line
    export = ["export", "--model-dir", run, run, "--export-dir", str(tmp_path / "e")]
    line = _one_line_error(export + ["--format", "ctranslate2"], capsys)
    assert "--format ctranslate2 exports one model" in line

    calls = []
    monkeypatch.setattr(
        commands, "export_saved_model",
        lambda *args, **kwargs: calls.append((args, kwargs)) or str(tmp_path / "e" / "1"),
    )  # fmt: skip
    assert main(export + ["--weights", "2", "1"]) == 0
    [(args, kwargs)] = calls
    assert args == ([run, run], str(tmp_path / "e")) and kwargs["weights"] == [2.0, 1.0]
