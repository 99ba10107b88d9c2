"""SavedModel export of a multilingual model (a vocabulary with language
tags): every signature that takes text also takes ``target_language``, one
code per sentence, and serves, in a fresh process with only TensorFlow and
tensorflow-text, what ``Translator.translate(..., target_language=...)``
returns, for both places of the tag (``language_tag`` "source" and
"target"); an unknown code or a wrong count fails the request with
INVALID_ARGUMENT. A model of one target language keeps the signature inputs
it always had. The exports and the serving run once per suite, under
TensorFlow; under JAX and PyTorch the Translator returns the outputs that
the SavedModel served, stored in tests/fixtures/export_expected.json (see
expectations.py)."""

import json
import os
import textwrap

import expectations
import keras
import numpy as np
import pytest
from expectations import assert_same, plain
from saved_model_client import PLAIN_INPUTS, SERVE_PRELUDE, WARMUP_SIGNATURES, serve

from keras_transformer import Transformer
from keras_transformer.data import SubwordTokenizer, default_task_splits
from keras_transformer.export.saved_model import export_saved_model
from keras_transformer.models.transformer.translator import Translator

pytestmark = pytest.mark.slow

BEAM, ALPHA, EXTRA, MAX_SOURCE = 2, 0.6, 6, 16
VOCABULARY = 64
LANGUAGES = ["de", "fr"]

SERVE = SERVE_PRELUDE + textwrap.dedent(
    """

    sentences = strings(case["sentences"])
    languages = strings(case["languages"])
    call = lambda name, **inputs: plain(loaded.signatures[name](**inputs))
    out = {
        # As TF Serving at load: the warm-up requests first.
        "warmup": replay_warmup(),
        "inputs": {
            name: sorted(function.structured_input_signature[1])
            for name, function in loaded.signatures.items()
        },
        "serving_default": call("serving_default", sentences=sentences, target_language=languages),
        "translate_nbest": call("translate_nbest", sentences=sentences, target_language=languages),
        "translate_prefix": call(
            "translate_prefix", sources=sentences, prefixes=strings(case["prefixes"]),
            target_language=languages),
        "translate_constrained": call(
            "translate_constrained", sources=sentences,
            constraints=tf.constant(case["constraints"], tf.string), target_language=languages),
        "translate_sample": call(
            "translate_sample", sentences=sentences, seed=tf.constant(5), target_language=languages),
        "score": call(
            "score", sources=sentences, targets=strings(case["targets"]), target_language=languages),
        "empty": call("serving_default", sentences=strings([]), target_language=strings([])),
        "unknown": {
            name: failure(name, **dict(inputs, target_language=strings(["de", "xx"])))
            for name, inputs in (
                ("serving_default", {"sentences": strings(["nine", "two"])}),
                ("score", {"sources": strings(["nine", "two"]), "targets": strings(["a", "b"])}),
                ("translate_prefix", {"sources": strings(["nine", "two"]),
                                      "prefixes": strings(["", ""])}),
            )
        },
        "count": failure("serving_default", sentences=strings(["nine", "two"]),
                         target_language=strings(["de"])),
        "keras_transformer_imported": "keras_transformer" in sys.modules,
    }
    print(json.dumps(out))
    """
)


def _run_directory(root, name, language_tag):
    """A run directory of a random tiny model whose vocabulary has the tags
    of `LANGUAGES`; its config.json names ``language_tag`` (none for
    "source", the default). The weights come from NumPy's generator: the
    same model under every backend."""
    source, target = default_task_splits(num_train=300, num_valid=1, num_test=1)["train"]
    tokenizer = SubwordTokenizer.train(source + target, VOCABULARY, languages=LANGUAGES)
    assert sorted(tokenizer.languages) == LANGUAGES
    keras.utils.set_random_seed(3)
    model = Transformer.from_preset(
        "tiny", vocabulary_size=VOCABULARY, num_layers=1, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0,
    )  # fmt: skip
    rng = np.random.default_rng(3)
    for weight in model.weights:
        value = keras.ops.convert_to_numpy(weight)
        if value.std() > 0:  # constants (norm scales and offsets, biases) stay
            scale = 1.0 / np.sqrt(value.shape[-2]) if value.ndim >= 2 else 0.1
            weight.assign(rng.normal(0.0, scale, value.shape).astype(value.dtype))
    directory = root / name
    directory.mkdir()
    tokenizer.save(str(directory))
    model.save(str(directory / "model.keras"))
    if language_tag != "source":
        (directory / "config.json").write_text(json.dumps({"language_tag": language_tag}))
    return str(directory)


SENTENCES = ["twenty-one", "three hundred forty-five", "nine", "one thousand two"]
LANGUAGES_OF_SENTENCES = ["de", "fr", "fr", "de"]  # mixed in one batch
CASE = {
    "sentences": SENTENCES,
    "languages": LANGUAGES_OF_SENTENCES,
    "prefixes": ["ein", "", "neun", "zwei"],
    "targets": ["einundzwanzig", "dreihundert", "", "neun"],
    "constraints": [["ein", "zwanzig"], ["hundert", ""], ["", ""], ["neun", ""]],
}


def translator_outputs(model_dir, language_tag):
    """What `Translator` returns for each request the SavedModel serves, and
    the same sentences all in German."""
    translator = Translator.from_directory(model_dir, max_source_length=MAX_SOURCE)
    assert translator.language_tag == language_tag
    settings = {
        "beam_size": BEAM, "alpha": ALPHA, "max_extra_length": EXTRA, "return_scores": True
    }  # fmt: skip
    languages = LANGUAGES_OF_SENTENCES
    out = {}

    def texts_and_scores(name, **more):
        texts, scores = translator.translate(
            SENTENCES, target_language=more.pop("target_language", languages), **settings, **more
        )
        out[name] = {"translations": texts, "scores": scores}

    texts_and_scores("serving_default")
    texts_and_scores("translate_nbest", num_return=BEAM)
    texts_and_scores("translate_prefix", target_prefix=CASE["prefixes"])
    constraints = [[phrase for phrase in row if phrase] for row in CASE["constraints"]]
    texts_and_scores("translate_constrained", constraints=constraints)
    out["translate_sample"] = translator.translate(
        SENTENCES, beam_size=1, sampling=True, seed=5, alpha=ALPHA, max_extra_length=EXTRA,
        target_language=languages,
    )  # fmt: skip
    out["score"] = translator.score(SENTENCES, CASE["targets"], target_language=languages)
    texts_and_scores("german", target_language="de")
    return plain(out)


# The export always runs under TensorFlow (outside it, in a subprocess);
# each takes about a minute, so they run once per suite, under TensorFlow,
# and the other backends compare their Translator with the stored outputs:
# JAX the target tag, PyTorch the source tag.
_PLACEMENTS = {"jax": ["target"], "torch": ["source"]}


@pytest.mark.parametrize("language_tag", _PLACEMENTS.get(keras.config.backend(), ["source"]))
def test_multilingual_translator_returns_what_the_saved_model_served(language_tag, tmp_path):
    """Under JAX and PyTorch: the outputs that the SavedModel served (the
    next test, under TensorFlow, checks them against the SavedModel and
    against the Translator there)."""
    if keras.config.backend() == "tensorflow":
        pytest.skip("under tensorflow the export test checks the Translator against the stored outputs")
    model_dir = _run_directory(tmp_path, "run", language_tag)
    outputs = translator_outputs(model_dir, language_tag)
    assert_same(outputs, expectations.load(f"multilingual_{language_tag}"))


@pytest.mark.parametrize("language_tag", ["source", "target"])
def test_multilingual_export_serves_like_the_translator(language_tag, tmp_path):
    if keras.config.backend() != "tensorflow":
        pytest.skip(
            "the exports run once per suite, under the tensorflow backend; "
            "test_multilingual_translator_returns_what_the_saved_model_served covers this backend"
        )
    model_dir = _run_directory(tmp_path, "run", language_tag)
    # The run's config.json says where the tag goes (the export reads it as
    # Translator.from_directory does).
    version_dir = export_saved_model(
        model_dir, str(tmp_path / "export"), beam_size=BEAM, alpha=ALPHA,
        max_extra_length=EXTRA, max_source_length=MAX_SOURCE,
    )  # fmt: skip
    with open(os.path.join(version_dir, "assets.extra", "export_config.json")) as f:
        config = json.load(f)
    assert config["language_tag"] == language_tag
    assert config["languages"] == {"de": 4, "fr": 5}
    served = serve(tmp_path, SERVE, version_dir, CASE)
    assert served["keras_transformer_imported"] is False
    # TF Serving replays the warm-up requests, one per signature (after
    # serving_default on one sentence), each answered row for row: each text
    # signature's gives a language per sentence, translate_token_ids' none.
    assert [name for name, *_ in served["warmup"]] == WARMUP_SIGNATURES
    for name, inputs, rows, answered, languages in served["warmup"]:
        assert answered == rows, name
        if name == "translate_token_ids":
            assert inputs == PLAIN_INPUTS[name] and languages is None
            continue
        assert inputs == sorted(PLAIN_INPUTS[name] + ["target_language"]), name
        assert languages == ["de"] * rows, name
    # target_language comes after the other inputs of every text signature;
    # translate_token_ids takes ids that carry their tag already.
    expected_inputs = {
        name: sorted(inputs + ["target_language"]) if name != "translate_token_ids" else inputs
        for name, inputs in PLAIN_INPUTS.items()
    }
    assert served["inputs"] == expected_inputs

    expected = translator_outputs(model_dir, language_tag)
    for name in ("serving_default", "translate_nbest", "translate_prefix",
                 "translate_constrained"):  # fmt: skip
        assert served[name]["translations"] == expected[name]["translations"], name
        np.testing.assert_allclose(
            served[name]["scores"], expected[name]["scores"], atol=1e-3, err_msg=name
        )
    assert served["translate_sample"]["translations"] == expected["translate_sample"]
    np.testing.assert_allclose(served["score"]["scores"], expected["score"], atol=1e-3)
    # The language changes the request: not the same as all in German.
    german = expected["german"]
    assert (german["translations"], german["scores"]) != (
        served["serving_default"]["translations"], served["serving_default"]["scores"]
    )
    assert served["empty"] == {"translations": [], "scores": []}
    for name, error in served["unknown"].items():
        assert "target_language: the model does not translate into" in error, (name, error)
        assert "xx" in error and "de, fr" in error, (name, error)
    assert "serving_default needs one target_language per sentence" in served["count"]
    name = f"multilingual_{language_tag}"
    if os.environ.get("KT_WRITE_EXPECTATIONS"):
        expectations.write(name, expected)
    else:
        assert_same(expected, expectations.load(name))


def test_export_rejects_a_bad_language_tag(tmp_path):
    with pytest.raises(ValueError, match="language_tag"):
        export_saved_model(str(tmp_path), str(tmp_path / "out"), language_tag="middle")


def test_signatures_of_one_target_language_are_unchanged():
    from keras_transformer.export.saved_model_signatures import (
        SIGNATURES,
        signature_inputs,
    )

    for multilingual in (False, True):
        inputs = {
            name: sorted(spec.name for spec in specs)
            for name, (_, specs) in signature_inputs(multilingual).items()
        }
        if multilingual:
            assert inputs == {
                name: sorted(names + ["target_language"]) if name != "translate_token_ids"
                else names
                for name, names in PLAIN_INPUTS.items()
            }
        else:
            assert inputs == PLAIN_INPUTS
            assert signature_inputs(False) == SIGNATURES
