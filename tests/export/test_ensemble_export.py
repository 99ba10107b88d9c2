"""SavedModel export of an ensemble: one SavedModel with every signature of
the single-model export, each serving, in a fresh process with only
TensorFlow and tensorflow-text, what `Translator.from_directory([...])`
returns; bad requests fail with INVALID_ARGUMENT. The export and the serving
run once per suite, under TensorFlow; under every backend the Translator
returns the outputs that the SavedModel served, stored in
tests/fixtures/export_expected.json (see expectations.py)."""

import json
import os
import textwrap

import expectations
import keras
import numpy as np
import pytest
from expectations import assert_same, plain
from saved_model_client import SERVE_PRELUDE, serve

from keras_transformer import Transformer
from keras_transformer.data import SubwordTokenizer, default_task_splits
from keras_transformer.export.saved_model import export_saved_model
from keras_transformer.models.transformer.translator import Translator

pytestmark = pytest.mark.slow

BEAM, ALPHA, EXTRA, MAX_SOURCE, WEIGHTS = 2, 0.6, 6, 16, [0.7, 0.3]
VOCABULARY = 64
SIGNATURES = ("serving_default", "translate_nbest", "translate_token_ids",
              "translate_prefix", "translate_constrained", "translate_sample",
              "score")  # fmt: skip

SERVE = SERVE_PRELUDE + textwrap.dedent(
    """

    sentences = strings(case["sentences"])
    call = lambda name, **inputs: plain(loaded.signatures[name](**inputs))
    out = {
        "signatures": sorted(loaded.signatures.keys()),
        "serving_default": call("serving_default", sentences=sentences),
        "translate_nbest": call("translate_nbest", sentences=sentences),
        "translate_token_ids": call(
            "translate_token_ids", token_ids=tf.constant(case["token_ids"], tf.int32)),
        "translate_prefix": call(
            "translate_prefix", sources=sentences, prefixes=strings(case["prefixes"])),
        "translate_constrained": call(
            "translate_constrained", sources=sentences,
            constraints=tf.constant(case["constraints"], tf.string)),
        "translate_sample": call("translate_sample", sentences=sentences, seed=tf.constant(5)),
        "score": call("score", sources=sentences, targets=strings(case["targets"])),
        "bad_token_ids": failure("translate_token_ids", token_ids=tf.constant([[5, %d]], tf.int32)),
        "bad_prefix": failure("translate_prefix", sources=strings(["nine"]),
                              prefixes=strings(["sieben " * 40])),
        "bad_constraints": failure("translate_constrained", sources=strings(["nine"]),
                                   constraints=tf.constant([["sieben " * 40]], tf.string)),
        "bad_constraint_rows": failure("translate_constrained", sources=strings(["nine"]),
                                       constraints=tf.constant([["a"], ["b"]], tf.string)),
        "bad_score_rows": failure("score", sources=strings(["nine", "two"]),
                                  targets=strings(["neun"])),
        "bad_seed": failure("translate_sample", sentences=strings(["nine"]),
                            seed=tf.constant(-1)),
        "keras_transformer_imported": "keras_transformer" in sys.modules,
    }
    print(json.dumps(out))
    """
    % VOCABULARY
)


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory):
    """Two run directories sharing one vocabulary, with random models of
    different sizes, and a third with another vocabulary. The weights come
    from NumPy's generator: the same models under every backend."""
    root = tmp_path_factory.mktemp("ensemble_export")
    source, target = default_task_splits(num_train=300, num_valid=1, num_test=1)["train"]
    tokenizer = SubwordTokenizer.train(source + target, VOCABULARY)
    other = SubwordTokenizer.train(target + source[:100], VOCABULARY)
    keras.utils.set_random_seed(2)
    models = (
        Transformer(vocabulary_size=VOCABULARY, num_layers=1, d_model=32, num_heads=4,
                    d_ff=64, dropout_rate=0.0),
        Transformer(vocabulary_size=VOCABULARY, num_layers=1, d_model=16, num_heads=2,
                    d_ff=32, dropout_rate=0.0),
    )  # fmt: skip
    rng = np.random.default_rng(2)
    for model in models:
        for weight in model.weights:
            value = keras.ops.convert_to_numpy(weight)
            if value.std() > 0:  # constants (norm scales and offsets, biases) stay
                scale = 1.0 / np.sqrt(value.shape[-2]) if value.ndim >= 2 else 0.1
                weight.assign(rng.normal(0.0, scale, value.shape).astype(value.dtype))
    directories = []
    for name, vocabulary, model in (("a", tokenizer, models[0]), ("b", tokenizer, models[1]),
                                    ("other", other, models[0])):  # fmt: skip
        directory = root / name
        directory.mkdir()
        vocabulary.save(str(directory))
        model.save(str(directory / "model.keras"))
        directories.append(str(directory))
    return directories


SENTENCES = ["twenty-one", "three hundred forty-five", "", "nine"]
CASE = {
    "sentences": SENTENCES,
    "prefixes": ["ein", "", "", "neun"],
    "targets": ["einundzwanzig", "dreihundert", "", "neun"],
    "token_ids": [[5, 6, 7], [8, 0, 0]],
    "constraints": [["ein", "zwanzig"], ["hundert", ""], ["", ""], ["neun", ""]],
}


def translator_outputs(run_dirs):
    """What `Translator` returns for each request the SavedModel serves (the
    blank sentence, SENTENCES[2], left out: it is served as "")."""
    translator = Translator.from_directory(
        run_dirs[:2], weights=WEIGHTS, max_source_length=MAX_SOURCE
    )
    options = dict(beam_size=BEAM, alpha=ALPHA, max_extra_length=EXTRA)
    kept = [s for s in SENTENCES if s]
    out = {}

    def texts_and_scores(name, **more):
        texts, scores = translator.translate(kept, return_scores=True, **options, **more)
        out[name] = {"translations": texts, "scores": scores}

    texts_and_scores("serving_default")
    texts_and_scores("translate_nbest", num_return=BEAM)
    prefixes = [p for s, p in zip(SENTENCES, CASE["prefixes"]) if s]
    texts_and_scores("translate_prefix", target_prefix=prefixes)
    constraints = [[p for p in row if p] for s, row in zip(SENTENCES, CASE["constraints"]) if s]
    texts_and_scores("translate_constrained", constraints=constraints)
    # The SavedModel draws each sentence's samples with its position in the
    # request, as `Translator` does with its position in the list.
    out["translate_sample"] = translator.translate(
        SENTENCES, **dict(options, beam_size=1, sampling=True, seed=5)
    )
    out["score"] = translator.score(SENTENCES, CASE["targets"])
    hypotheses, scores = translator.generate([[5, 6, 7], [8]], **options)
    out["translate_token_ids"] = {
        "ids": [h[0] for h in hypotheses], "scores": [s[0] for s in scores]
    }
    return plain(out)


def test_ensemble_translator_returns_what_the_saved_model_served(run_dirs):
    """Under JAX and PyTorch: the outputs that the SavedModel served (the
    next test, under TensorFlow, checks them against the SavedModel and
    against the Translator there)."""
    if keras.config.backend() == "tensorflow":
        pytest.skip("under tensorflow the export test checks the Translator against the stored outputs")
    assert_same(translator_outputs(run_dirs), expectations.load("ensemble"))


def test_ensemble_export_serves_like_the_translator(run_dirs, tmp_path):
    if keras.config.backend() != "tensorflow":
        pytest.skip(
            "the export runs once per suite, under the tensorflow backend; "
            "test_ensemble_translator_returns_what_the_saved_model_served covers this backend"
        )
    version_dir = export_saved_model(
        run_dirs[:2], str(tmp_path / "export"), beam_size=BEAM, alpha=ALPHA,
        max_extra_length=EXTRA, max_source_length=MAX_SOURCE, warmup=False, weights=WEIGHTS,
    )  # fmt: skip
    with open(os.path.join(version_dir, "assets.extra", "export_config.json")) as f:
        config = json.load(f)
    assert config["model_dir"] == [os.path.abspath(d) for d in run_dirs[:2]]
    assert config["weights"] == pytest.approx(WEIGHTS)
    served = serve(tmp_path, SERVE, version_dir, CASE)
    assert served["keras_transformer_imported"] is False
    assert sorted(SIGNATURES) == [s for s in served["signatures"] if s in SIGNATURES]
    assert f"[token_ids contains id] [{VOCABULARY}]" in served["bad_token_ids"]
    assert "a prefix leaves no room for EOS" in served["bad_prefix"]
    assert "constraints longer than their output allows" in served["bad_constraints"]
    assert "one row of constraints per source" in served["bad_constraint_rows"]
    assert "score needs one target per source" in served["bad_score_rows"]
    assert "seed must be >= 0" in served["bad_seed"]

    expected = translator_outputs(run_dirs)

    def with_blank(values, blank):
        values = list(values)
        return values[:2] + [blank] + values[2:]  # SENTENCES[2] is blank

    for name in ("serving_default", "translate_prefix", "translate_constrained"):
        assert_same(served[name], {
            "translations": with_blank(expected[name]["translations"], ""),
            "scores": with_blank(expected[name]["scores"], 0.0),
        }, name)  # fmt: skip
    assert_same(served["translate_nbest"], {
        "translations": with_blank(expected["translate_nbest"]["translations"], [""] * BEAM),
        "scores": with_blank(expected["translate_nbest"]["scores"], [0.0] * BEAM),
    }, "translate_nbest")  # fmt: skip
    samples = list(expected["translate_sample"])
    samples[2] = ""  # a blank input gives ""
    assert served["translate_sample"]["translations"] == samples
    np.testing.assert_allclose(served["score"]["scores"], expected["score"], atol=1e-3)
    for served_ids, ids in zip(
        served["translate_token_ids"]["token_ids"], expected["translate_token_ids"]["ids"]
    ):
        assert served_ids[: len(ids)] == ids
        assert set(served_ids[len(ids):]) <= {0}
    np.testing.assert_allclose(
        served["translate_token_ids"]["scores"], expected["translate_token_ids"]["scores"],
        atol=1e-3,
    )
    if os.environ.get("KT_WRITE_EXPECTATIONS"):
        expectations.write("ensemble", expected)
    else:
        assert_same(expected, expectations.load("ensemble"))


def test_ensemble_export_refuses_vocabularies_that_differ_before_any_work(run_dirs, tmp_path):
    export_dir = tmp_path / "export"
    with pytest.raises(ValueError, match="share one vocabulary") as error:
        export_saved_model([run_dirs[0], run_dirs[2]], str(export_dir))
    assert repr(run_dirs[0]) in str(error.value) and repr(run_dirs[2]) in str(error.value)
    with pytest.raises(ValueError, match="one value per model"):
        export_saved_model(run_dirs[:2], str(export_dir), weights=[1.0, 2.0, 3.0])
    assert not export_dir.exists()
