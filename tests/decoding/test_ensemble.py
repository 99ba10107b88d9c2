"""Ensemble decoding: the log of the (weighted) mean of the models'
probabilities at every step, each model with its own cache, in one search.

An ensemble of one model, or of two copies of a model, decodes as that model;
the ensemble's scores (the search's and the forced decoding's) are the log of
the mean probability computed by hand; models of different sizes combine;
an ensemble's directories must share one vocabulary, which is checked before
any model loads.
"""

import os

import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer import Transformer
from keras_transformer.data import SubwordTokenizer
from keras_transformer.decoding import (
    DecodeOptions,
    Ensemble,
    Generator,
    SearchInputs,
    compile_for_backend,
)
from keras_transformer.decoding.forced import alignments, shift_right, token_log_probs
from keras_transformer.models.transformer import transformer_loader
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.special_tokens import EOS_ID, PAD_ID

from conftest import to_numpy

VOCABULARY = 40
MAX_LENGTH = 10
SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a", "ab cd ef gh"] * 8


@pytest.fixture(scope="module")
def models():
    """Two random models of different sizes (one with learned positions)."""
    keras.utils.set_random_seed(3)
    small = Transformer(
        vocabulary_size=VOCABULARY, num_layers=1, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0,
    )
    other = Transformer(
        vocabulary_size=VOCABULARY, num_layers=2, d_model=16, num_heads=2, d_ff=32,
        dropout_rate=0.0, positional_encoding="learned", max_length=24,
    )
    return small, other


@pytest.fixture(scope="module")
def raw_sources():
    """Raw source ids (no EOS, PAD-padded), rows of different lengths."""
    rng = np.random.default_rng(7)
    raw = np.zeros((3, 6), np.int32)
    for row, length in enumerate((6, 2, 4)):
        raw[row, :length] = rng.integers(4, VOCABULARY, length)
    return raw


def _decode(model, raw, options, **inputs):
    return Generator(model).decode(raw, options, MAX_LENGTH, SearchInputs(**inputs))


def _encoder_ids(raw):
    """What `prepare_sources` gives the encoder: EOS after each row's ids."""
    ids = np.pad(raw, [[0, 0], [0, 1]])
    ids[np.arange(len(raw)), (raw != PAD_ID).sum(-1)] = EOS_ID
    return ids


def _on_jax_compiled(model, function):
    """``function`` jitted on JAX, whose eager code compiles every op; a
    TensorFlow trace costs more than eager code there and elsewhere."""
    if keras.config.backend() == "jax":
        return compile_for_backend(model, function)
    return function


def _forced(model, encoder_ids, targets):
    """`token_log_probs` and `alignments` of ``targets``."""
    function = _on_jax_compiled(
        model, lambda ids, y: (token_log_probs(model, ids, y), alignments(model, ids, y))
    )
    return [to_numpy(x) for x in function(encoder_ids, targets)]


def _model_outputs(model, encoder_ids, targets):
    """One model's float64 log-softmax ``(batch, T, vocabulary)`` for
    ``targets`` and its last layer's head-averaged cross-attention."""

    def function(ids, y):
        decoder_ids = shift_right(y)
        logits = model.decode(decoder_ids, *model.encode(ids))
        attention = model.attention_scores(ids, decoder_ids)["decoder_cross_attention"][-1]
        return logits, ops.mean(attention, axis=1)

    logits, attention = _on_jax_compiled(model, function)(encoder_ids, targets)
    logits = to_numpy(logits).astype(np.float64)
    logits = logits - logits.max(-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True)), to_numpy(attention)


def _picked(log_probs, targets):
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    return np.where(targets == PAD_ID, 0.0, picked)


def test_an_ensemble_of_one_model_or_of_two_copies_decodes_as_that_model(models, raw_sources):
    # n-best beam search with target prefixes (of rows with and without
    # one), sampling, forced scores and alignments; the copies weighted 0.3
    # and 0.7 (their mixture is the model's distribution whatever weights).
    model = models[0]
    prefixes = {
        "prefix_ids": np.array([[9, 11], [0, 0], [12, 0]], np.int32),
        "prefix_lengths": np.array([2, 0, 1], np.int32),
    }
    beam = DecodeOptions(beam_size=3, num_return=2, max_extra_length=6)
    sample = DecodeOptions(beam_size=1, sampling=True, num_return=2, max_extra_length=6)
    expected, expected_scores = _decode(model, raw_sources, beam, **prefixes)
    encoder_ids = _encoder_ids(raw_sources)
    targets = expected[:, 0]
    expected_forced, expected_aligned = _forced(model, encoder_ids, targets)
    for ensemble in (Ensemble([model]), Ensemble([model, model], weights=[0.3, 0.7])):
        found, scores = _decode(ensemble, raw_sources, beam, **prefixes)
        np.testing.assert_array_equal(found, expected)
        np.testing.assert_allclose(scores, expected_scores, rtol=1e-5, atol=1e-5)
        forced, aligned = _forced(ensemble, encoder_ids, targets)
        np.testing.assert_allclose(forced, expected_forced, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(aligned, expected_aligned)
    np.testing.assert_array_equal(
        _decode(ensemble, raw_sources, sample, seed=4)[0],
        _decode(model, raw_sources, sample, seed=4)[0],
    )


def test_ensemble_scores_are_the_log_of_the_mean_probability(models, raw_sources):
    # Two models of different sizes and depths, weights 3:1 (normalized):
    # the compiled search's scores (alpha 0: the total log-probability) and
    # the forced decoding's are log(0.75 p_small + 0.25 p_other), by hand.
    ensemble = Ensemble(models, weights=[3, 1])
    assert ensemble.model_weights == (0.75, 0.25)
    options = DecodeOptions(beam_size=3, num_return=3, alpha=0.0, max_extra_length=6)
    sequences, scores = _decode(ensemble, raw_sources, options)
    batch, k, length = sequences.shape
    targets = sequences.reshape(batch * k, length)
    encoder_ids = np.repeat(_encoder_ids(raw_sources), k, axis=0)
    outputs = [_model_outputs(model, encoder_ids, targets) for model in models]
    mixture = 0.75 * np.exp(outputs[0][0]) + 0.25 * np.exp(outputs[1][0])
    by_hand = _picked(np.log(mixture), targets)
    np.testing.assert_allclose(scores.reshape(-1), by_hand.sum(-1), rtol=1e-4, atol=1e-4)
    forced, aligned = _forced(ensemble, encoder_ids, targets)
    np.testing.assert_allclose(forced, by_hand, rtol=1e-4, atol=1e-4)
    # Not any model's own distribution, nor the mean of the log-probabilities.
    for log_probs in (outputs[0][0], outputs[1][0], 0.75 * outputs[0][0] + 0.25 * outputs[1][0]):
        assert np.abs(_picked(log_probs, targets).sum(-1) - by_hand.sum(-1)).max() > 1e-2
    # Alignments: the weighted mean of the models' head-averaged attention.
    attention = 0.75 * outputs[0][1] + 0.25 * outputs[1][1]
    np.testing.assert_array_equal(aligned, np.where(targets == PAD_ID, -1, attention.argmax(-1)))


def test_ensemble_arguments_are_checked():
    small = Transformer(vocabulary_size=VOCABULARY, num_layers=1, d_model=8, num_heads=2, d_ff=8)
    larger = Transformer(vocabulary_size=VOCABULARY + 8, num_layers=1, d_model=8, num_heads=2,
                         d_ff=8)  # fmt: skip
    with pytest.raises(ValueError, match="at least one model"):
        Ensemble([])
    with pytest.raises(ValueError, match=r"vocabulary sizes differ: \[40, 48\]"):
        Ensemble([small, larger])
    for weights, message in (
        ([1.0], "one value per model: 1 value"),
        ([1.0, 0.0], "finite numbers > 0"),
        ([1.0, float("nan")], "finite numbers > 0"),
        ("1,1", "list of numbers"),
    ):
        with pytest.raises(ValueError, match=message):
            Ensemble([small, small], weights=weights)
    assert Ensemble([small, small]).model_weights == (0.5, 0.5)


# --- run directories and the Translator ---


def _run_directory(path, tokenizer, model):
    os.makedirs(path, exist_ok=True)
    tokenizer.save(str(path))
    model.save(os.path.join(str(path), "model.keras"))
    return str(path)


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory, models):
    """Two run directories with one vocabulary and models of different sizes,
    and a third one whose vocabulary differs."""
    root = tmp_path_factory.mktemp("ensemble")
    # Fewer pieces than the models' output ids (as a vocabulary padded to a
    # multiple of 8).
    tokenizer = SubwordTokenizer.train(SENTENCES, 24)
    other_tokenizer = SubwordTokenizer.train(SENTENCES + ["x y z"] * 8, 24)
    return (
        _run_directory(root / "small", tokenizer, models[0]),
        _run_directory(root / "other", tokenizer, models[1]),
        _run_directory(root / "other_vocabulary", other_tokenizer, models[0]),
    )


def test_translator_from_directories(run_dirs, monkeypatch):
    # (Translators of ensembles decode in tests/cli/test_cli_ensemble.py and
    # tests/export/test_ensemble_export.py.)
    translator = Translator.from_directory(run_dirs[:2], weights=[1, 3])
    assert [model.num_layers for model in translator.model.models] == [1, 2]
    assert translator.max_positions == 24  # the learned-position model's
    assert translator.model.model_weights == (0.25, 0.75)
    with pytest.raises(ValueError, match="attention_weights plots one model"):
        translator.attention_weights("a b c")
    assert not isinstance(Translator.from_directory(run_dirs[:1]).model, Ensemble)
    with pytest.raises(ValueError, match="one value per model"):
        Translator.from_directory(run_dirs[:2], weights=[1.0])

    # Vocabularies that differ: refused, naming both directories, before any
    # model loads (so before any compilation).
    def no_loading(self, compile=False):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(transformer_loader.TrainedModelFiles, "load_model", no_loading)
    with pytest.raises(ValueError, match="share one vocabulary") as error:
        Translator.from_directory([run_dirs[0], run_dirs[2]])
    assert repr(run_dirs[0]) in str(error.value) and repr(run_dirs[2]) in str(error.value)
