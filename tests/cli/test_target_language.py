"""``--target-language`` of ``translate``, ``evaluate`` and ``score``: the
output of ``Translator`` with that ``target_language``, and a one-line error
naming the flag for a missing or unknown language, or for a model of one
target language."""

import json

import pytest

from keras_transformer import Transformer
from keras_transformer.cli.main import main
from keras_transformer.data import SubwordTokenizer
from keras_transformer.models.transformer.translator import Translator

SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a"] * 10
DECODING = ["--beam-size", "1", "--max-extra-length", "5"]


def fails(argv, capsys):
    """Runs ``main(argv)``; returns stderr's one error line."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def _run_directory(directory, languages):
    tokenizer = SubwordTokenizer.train(SENTENCES, 20, languages=languages)
    tokenizer.save(str(directory))
    model = Transformer(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1, d_model=16, num_heads=2,
        d_ff=32, dropout_rate=0.0,
    )  # fmt: skip
    model.save(str(directory / "model.keras"))
    return directory


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """A multilingual run directory (de, fr), one of a single target
    language, and a source and a target file."""
    root = tmp_path_factory.mktemp("target_language")
    multilingual = _run_directory(root / "multi", ["de", "fr"])
    plain = _run_directory(root / "plain", [])
    (root / "src.txt").write_text("a b c\nh g f e\n")
    (root / "tgt.txt").write_text("c b a\ne f g h\n")
    return multilingual, plain, root


def test_translate_score_evaluate_into_the_given_language(dirs, tmp_path, capsys):
    multilingual, _, root = dirs
    translator = Translator.from_directory(str(multilingual))
    sources = ["a b c", "h g f e"]
    scored, translated = {}, {}
    for language in ("de", "fr"):
        output = tmp_path / f"out.{language}"
        code = main(
            ["translate", "--model-dir", str(multilingual), "--input", str(root / "src.txt"),
             "--output", str(output), "--target-language", language, "--format", "jsonl",
             *DECODING]
        )  # fmt: skip
        assert code == 0
        texts, scores = translator.translate(
            sources, beam_size=1, max_extra_length=5, target_language=language,
            return_scores=True,
        )  # fmt: skip
        records = [json.loads(line)["hypotheses"][0] for line in output.read_text().splitlines()]
        translated[language] = [record["score"] for record in records]
        assert [record["text"] for record in records] == texts
        assert translated[language] == pytest.approx(scores, abs=1e-5)

        scores = tmp_path / f"scores.{language}"
        code = main(
            ["score", "--model-dir", str(multilingual), "--src", str(root / "src.txt"),
             "--tgt", str(root / "tgt.txt"), "--output", str(scores),
             "--target-language", language]
        )  # fmt: skip
        assert code == 0
        expected = translator.score(sources, ["c b a", "e f g h"], target_language=language)
        scored[language] = [float(v) for v in scores.read_text().split()]
        assert scored[language] == pytest.approx(expected, abs=1e-5)

        hypotheses = tmp_path / f"evaluated.{language}"
        capsys.readouterr()
        code = main(
            ["evaluate", "--model-dir", str(multilingual), "--src", str(root / "src.txt"),
             "--ref", str(root / "tgt.txt"), "--output", str(hypotheses),
             "--target-language", language, *DECODING]
        )  # fmt: skip
        assert code == 0
        assert "BLEU" in capsys.readouterr().out
        assert hypotheses.read_text().splitlines() == texts
    # The source's tag differs: so do the scores.
    assert scored["de"] != pytest.approx(scored["fr"], abs=1e-6)
    assert translated["de"] != pytest.approx(translated["fr"], abs=1e-6)


@pytest.mark.parametrize("command", ["translate", "score", "evaluate"])
def test_a_missing_or_unknown_language_is_a_one_line_error(command, dirs, capsys):
    multilingual, plain, root = dirs
    files = {
        "translate": ["--input", str(root / "src.txt"), *DECODING],
        "score": ["--src", str(root / "src.txt"), "--tgt", str(root / "tgt.txt")],
        "evaluate": ["--src", str(root / "src.txt"), "--ref", str(root / "tgt.txt"), *DECODING],
    }[command]
    argv = [command, "--model-dir", str(multilingual), *files]
    error = fails(argv, capsys)
    assert "--target-language is required" in error and "de, fr" in error
    error = fails(argv + ["--target-language", "xx"], capsys)
    assert "--target-language" in error and "'xx'" in error and "'de', 'fr'" in error
    # A model of one target language has no tags to choose from.
    error = fails([command, "--model-dir", str(plain), *files, "--target-language", "de"], capsys)
    assert "--target-language was given" in error and "one language" in error
