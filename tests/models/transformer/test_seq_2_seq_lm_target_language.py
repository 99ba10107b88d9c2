"""`TransformerSeq2SeqLM.generate(..., target_language=...)`: a multilingual
task translates as `Translator.translate` with the same
``target_language``, its tag where the task's ``language_tag`` says (read
from a run directory's config.json, kept by ``save_to_preset``)."""

import json

import pytest

import keras_transformer as kt
from keras_transformer.data import SubwordTokenizer
from keras_transformer.models.transformer.translator import Translator

SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a"] * 10
SETTINGS = {"beam_size": 1, "max_extra_length": 5}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A run directory of a random multilingual model (de, fr) whose tag
    is the target's first token."""
    directory = tmp_path_factory.mktemp("task_languages") / "run"
    tokenizer = SubwordTokenizer.train(SENTENCES, 20, languages=["de", "fr"])
    tokenizer.save(str(directory))
    model = kt.Transformer(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1, d_model=16, num_heads=2,
        d_ff=32, dropout_rate=0.0,
    )  # fmt: skip
    model.save(str(directory / "model.keras"))
    (directory / "config.json").write_text(json.dumps({"language_tag": "target"}))
    return directory


def test_generate_translates_into_the_given_languages(run_dir, tmp_path):
    lm = kt.TransformerSeq2SeqLM.from_preset(str(run_dir))
    assert lm.language_tag == "target"
    translator = Translator.from_directory(str(run_dir))
    sources = ["a b c", "h g f e", "d d"]
    languages = ["de", "fr", "fr"]
    got = lm.generate(sources, target_language=languages, return_scores=True, **SETTINGS)
    expected = translator.translate(
        sources, target_language=languages, return_scores=True, **SETTINGS
    )
    assert got[0] == expected[0]
    assert got[1] == pytest.approx(expected[1], abs=1e-5)
    # The forced tag counts in the score: another language, another score.
    german = lm.generate(sources, target_language="de", return_scores=True, **SETTINGS)
    assert german[1][1] != pytest.approx(got[1][1], abs=1e-6)
    # One str in, one str out.
    assert lm.generate("a b c", target_language="fr", **SETTINGS) == translator.translate(
        ["a b c"], target_language="fr", **SETTINGS
    )[0]
    with pytest.raises(ValueError, match="target_language is required"):
        lm.generate(sources, **SETTINGS)
    with pytest.raises(ValueError, match="'xx'"):
        lm.generate(sources, target_language="xx", **SETTINGS)

    # save_to_preset keeps where the tag goes.
    lm.save_to_preset(str(tmp_path / "preset"))
    reloaded = kt.TransformerSeq2SeqLM.from_preset(str(tmp_path / "preset"))
    assert reloaded.language_tag == "target"
    assert reloaded.generate(sources, target_language=languages, **SETTINGS) == got[0]


def test_language_tag_defaults_to_source_and_is_checked(run_dir):
    backbone = kt.Transformer(
        vocabulary_size=20, num_layers=1, d_model=16, num_heads=2, d_ff=32
    )
    assert kt.TransformerSeq2SeqLM(backbone).language_tag == "source"
    with pytest.raises(ValueError, match="language_tag"):
        kt.TransformerSeq2SeqLM(backbone, language_tag="middle")
