"""The SavedModel's searches of a request in groups (`SignatureBuilder`'s
``parallel_searches``): the same hypotheses, scores and samples as one
search of the whole batch, each row back in its place. In process, on the
signature functions that the export saves (no export, no child process)."""

import os

import keras
import numpy as np
import pytest

from conftest import FIXTURES

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_models,
    load_models,
)
from keras_transformer.models.transformer.transformer_tokenizer import load_tokenizers

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "tensorflow", reason="the SavedModel's graphs are TensorFlow's"
)

MODEL_DIR = os.path.join(FIXTURES, "run_directory_0_1_0")
# Lengths in no order, so that the groups' sort changes the rows' order.
SENTENCES = [
    "nine", " ".join(["seven"] * 12), "twenty-one", "", "three hundred forty-five",
    " ".join(["two"] * 5), "one thousand two",
]


def _builder(parallel_searches):
    from keras_transformer.export.saved_model_signatures import SignatureBuilder

    found = find_trained_models(MODEL_DIR)
    tokenizer, _ = load_tokenizers(found[0])
    options = DecodeOptions(beam_size=2, max_extra_length=8, max_source_length=24)
    return SignatureBuilder(
        load_models(found), tokenizer, options, 2,
        options.replace(beam_size=1, sampling=True), parallel_searches=parallel_searches,
    )


@pytest.fixture(scope="module")
def builders():
    return {groups: _builder(groups) for groups in (1, 3)}


def _plain(outputs):
    return {name: np.asarray(value).tolist() for name, value in outputs.items()}


@pytest.mark.parametrize("signature", ["serve", "serve_nbest", "serve_sample"])
def test_groups_give_the_batch_search_outputs(builders, signature):
    import tensorflow as tf

    arguments = [tf.constant(SENTENCES)]
    if signature == "serve_sample":
        arguments.append(tf.constant(5))  # the seed
    one, grouped = (
        _plain(getattr(builders[groups], signature)(*arguments)) for groups in (1, 3)
    )
    assert one["translations"] == grouped["translations"]
    np.testing.assert_allclose(one["scores"], grouped["scores"], atol=1e-5)
    # Every sentence has its own translation (the rows were not merged).
    assert len(set(map(str, one["translations"]))) >= 5


def test_groups_keep_prefixes_and_constraints_with_their_rows(builders):
    import tensorflow as tf

    sources = tf.constant(SENTENCES[:4])
    prefixes = tf.constant(["ein", "", "neun", "zwei"])
    constraints = tf.constant([["zwei"], [""], ["neun"], ["ein"]])
    for method, inputs in (("serve_prefix", prefixes), ("serve_constrained", constraints)):
        one, grouped = (
            _plain(getattr(builders[groups], method)(sources, inputs)) for groups in (1, 3)
        )
        assert one["translations"] == grouped["translations"], method
        np.testing.assert_allclose(one["scores"], grouped["scores"], atol=1e-5)


def test_an_empty_request_and_one_sentence(builders):
    import tensorflow as tf

    assert _plain(builders[3].serve(tf.constant([], tf.string))) == {
        "translations": [], "scores": [],
    }
    one, grouped = (_plain(builders[g].serve(tf.constant(SENTENCES[:1]))) for g in (1, 3))
    assert one == grouped


def test_parallel_searches_is_checked():
    with pytest.raises(ValueError, match="parallel_searches"):
        _builder(0)
