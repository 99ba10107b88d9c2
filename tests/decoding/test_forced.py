"""Forced decoding (scores of given targets, alignments) against the search."""

import keras
import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.decoding import DecodeOptions, Generator, SearchInputs
from keras_transformer.decoding.forced import alignments, shift_right, token_log_probs
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

from conftest import to_numpy

MAX_LENGTH = 12


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(11)
    return Transformer(
        vocabulary_size=48, num_layers=2, d_model=32, num_heads=4, d_ff=64, dropout_rate=0.0
    )


@pytest.fixture(scope="module")
def searched(model):
    rng = np.random.default_rng(5)
    ids = np.zeros((3, 10), "int32")
    for row, length in enumerate([2, 6, 10]):
        ids[row, : length - 1] = rng.integers(4, 48, length - 1)
        ids[row, length - 1] = EOS_ID
    # Raw ids (no EOS; the last column held only EOS): `prepare_sources`
    # inside `Generator.decode` turns them back into ``ids``.
    raw = np.where(ids == EOS_ID, PAD_ID, ids)[:, :-1]
    options = DecodeOptions(beam_size=3, alpha=0.0, num_return=2, max_extra_length=MAX_LENGTH)
    sequences, scores = Generator(model).decode(
        raw, options, MAX_LENGTH, SearchInputs(max_lengths=np.array([12, 7, 12], "int32"))
    )
    return ids, sequences, scores


def test_shift_right():
    shifted = to_numpy(shift_right(np.array([[5, 6, EOS_ID, PAD_ID]], "int32")))
    np.testing.assert_array_equal(shifted, [[BOS_ID, 5, 6, EOS_ID]])


def test_forced_log_probability_equals_the_search_score(model, searched):
    # With alpha = 0 a hypothesis' score is its total log-probability, EOS
    # included: one teacher-forced pass over the hypothesis must give it.
    ids, sequences, scores = searched
    batch, num_return, length = sequences.shape
    targets = sequences.reshape(batch * num_return, length)
    per_token = to_numpy(token_log_probs(model, np.repeat(ids, num_return, 0), targets))
    assert np.all(per_token[targets == PAD_ID] == 0)
    assert np.all(per_token[targets != PAD_ID] < 0)
    np.testing.assert_allclose(per_token.sum(-1), scores.reshape(-1), rtol=1e-4, atol=1e-4)


def test_alignments_are_the_head_averaged_cross_attention_argmax(model, searched):
    ids, sequences, _ = searched
    targets = sequences[:, 0]
    found = to_numpy(alignments(model, ids, targets, layer=-1))
    weights = to_numpy(
        model.attention_scores(ids, to_numpy(shift_right(targets)))["decoder_cross_attention"][-1]
    ).mean(axis=1)
    expected = np.where(targets == PAD_ID, -1, weights.argmax(-1))
    np.testing.assert_array_equal(found, expected)
    # Never a padding position of the source.
    source_lengths = (ids != PAD_ID).sum(-1)
    assert np.all(found < source_lengths[:, None])
