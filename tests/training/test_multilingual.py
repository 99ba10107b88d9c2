"""One model, two target languages: English number words to German number
words and to digits (a generated language: "2024" -> "2 0 2 4"), trained by
`train` from two pairs of files, then asked for each language."""

import re

import keras
import numpy as np
import pytest

import keras_transformer as kt
from keras_transformer.data.default_task import number_to_english, number_to_german
from keras_transformer.data.text_files import write_lines

NUMBERS = (7, 21, 345, 2024, 9999, 610, 4083, 88)
# Four-digit numbers are 90% of the training pairs (numbers drawn from
# 0..9999): a model this short learns them first.
LONG_NUMBERS = (2024, 9999, 4083, 3519, 7160, 5807, 1342, 8888)


def _digits(n):
    return " ".join(str(n))


def _is_digits(text):
    return re.fullmatch(r"\d( \d)*", text) is not None


def _is_german(text):
    return re.fullmatch(r"[a-zäöüß]+", text) is not None


@pytest.fixture(scope="module", params=["target", "source"])
def run(request, tmp_path_factory):
    """A trained run for each placement of the tag (the decoder's first
    token; the source's first token). The training takes a minute, so it
    runs once per placement per suite, under PyTorch, whose eager steps
    take less than half of JAX's CPU time at the suite's XLA optimisation
    level (tests/conftest.py); the training loop itself is the same code under
    every backend, and test_training.py, test_stream.py and
    tests/data/test_multilingual_data.py check it and the tags under the
    others."""
    if keras.config.backend() != "torch":
        pytest.skip("trained once per tag placement per suite: under torch")
    language_tag = request.param
    directory = tmp_path_factory.mktemp("multilingual_run")
    rng = np.random.default_rng(0)
    german, digits, valid = (rng.choice(10_000, n, replace=False) for n in (2500, 2500, 100))
    files = {
        "a.en": [number_to_english(int(n)) for n in german],
        "a.de": [number_to_german(int(n)) for n in german],
        "b.en": [number_to_english(int(n)) for n in digits],
        "b.dg": [_digits(int(n)) for n in digits],
        "v.en": [number_to_english(int(n)) for n in valid],
        "v.dg": [_digits(int(n)) for n in valid],
    }
    for name, lines in files.items():
        write_lines(str(directory / name), lines)
    config = kt.TrainConfig(
        train_src=[str(directory / "a.en"), str(directory / "b.en")],
        train_tgt=[str(directory / "a.de"), str(directory / "b.dg")],
        target_languages=["de", "dg"],
        language_tag=language_tag,
        sampling_temperature=1.0,
        valid_src=str(directory / "v.en"),
        valid_tgt=str(directory / "v.dg"),
        eval_language="dg",
        output_dir=str(directory / "run"),
        preset="tiny",
        vocabulary_size=256,
        max_length=32,
        tokens_per_batch=2048,
        epochs=6,
        warmup_steps=100,
        learning_rate_scale=0.35,
        average_last_n=2,
        eval_sentences=40,
        seed=0,
    )
    result = kt.train(config.replace(verbose=0), overwrite=True)
    return result, str(directory / "run"), language_tag


def test_the_model_answers_in_the_requested_language(run):
    result, directory, language_tag = run
    translator = kt.Translator.from_directory(directory)
    assert translator.languages == {"de": 4, "dg": 5}
    assert translator.language_tag == language_tag
    sources = [number_to_english(n) for n in NUMBERS]
    german = translator.translate(sources, target_language="de")
    digits = translator.translate(sources, target_language="dg")
    assert all(map(_is_german, german)), german
    assert all(map(_is_digits, digits)), digits
    # The same model, one language per sentence in one call.
    mixed = translator.translate(sources, target_language=["de", "dg"] * 4)
    assert all(map(_is_german, mixed[0::2])) and all(map(_is_digits, mixed[1::2])), mixed
    # It has learned the task, not only the script of each language.
    sources = [number_to_english(n) for n in LONG_NUMBERS]
    digits = translator.translate(sources, target_language="dg")
    german = translator.translate(sources, target_language="de")
    right = sum(d == _digits(n) for d, n in zip(digits, LONG_NUMBERS))
    assert right >= 6, digits
    right = sum(g == number_to_german(n) for g, n in zip(german, LONG_NUMBERS))
    assert right >= 5, german
    # The final evaluation translated the digits validation set.
    assert result.evaluation.bleu.score > 50


def test_language_errors_come_before_any_decoding(run, monkeypatch):
    _, directory, _ = run
    translator = kt.Translator.from_directory(directory)

    def no_decoding(*args, **kwargs):
        raise AssertionError("decoding started")

    monkeypatch.setattr(translator.generator, "decode", no_decoding)
    with pytest.raises(ValueError, match="does not translate into 'fr'; it knows 'de', 'dg'"):
        translator.translate(["seven"], target_language="fr")
    with pytest.raises(ValueError, match="target_language is required"):
        translator.translate(["seven"])
    with pytest.raises(ValueError, match="one language per sentence"):
        translator.translate(["seven", "eight"], target_language=["de"])
    with pytest.raises(ValueError, match="target_language"):
        translator.score(["seven"], ["sieben"], target_language="xx")


def test_scores_follow_the_language(run):
    _, directory, _ = run
    translator = kt.Translator.from_directory(directory)
    german, digits = translator.score(
        ["seven hundred", "seven hundred"], ["siebenhundert", "7 0 0"], target_language="de"
    )
    assert german > digits
    german, digits = translator.score(
        ["seven hundred", "seven hundred"], ["siebenhundert", "7 0 0"], target_language="dg"
    )
    assert digits > german


def test_config_checks_the_language_keys():
    files = dict(train_src=["a.en", "b.en"], train_tgt=["a.de", "b.fr"])
    config = kt.TrainConfig(**files, target_languages=["de", "fr"], language_tag="target")
    assert config.target_languages == ["de", "fr"] and config.language_tag == "target"
    for bad, message in (
        (dict(target_languages=["de"]), "one language per train_src/train_tgt entry: 1"),
        (dict(target_languages=["de", "German"]), "target_languages must be a language code"),
        (dict(target_languages=["de", "de"]), "names de more than once"),
        (dict(target_languages=["de", "fr"], eval_language="cs"), "eval_language must be one of"),
        (dict(target_languages=["de", "fr"], language_tag="decoder"), "language_tag"),
        (dict(target_languages=["de", "fr"], sampling_temperature=0), "sampling_temperature"),
        (dict(eval_language="de"), "eval_language needs target_languages"),
    ):
        with pytest.raises(ValueError, match=message):
            kt.TrainConfig(**files, **bad)
    with pytest.raises(ValueError, match="target_languages needs train_src"):
        kt.TrainConfig(target_languages=["de"])
