"""Seeded token sampling (keras_transformer.decoding.sampling), every backend."""

import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding.sampling import hash32, sample_tokens, uniform_noise
from keras_transformer.decoding.search import NEG_INF


def _numpy_hash32(x):
    x = np.asarray(x, np.int64).astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x.astype(np.int32)


def test_hash_matches_the_uint32_reference_on_this_backend():
    x = np.array([0, 1, 2, -1, 123456789, -2**31, 2**31 - 1, 77], np.int32)
    np.testing.assert_array_equal(ops.convert_to_numpy(hash32(x)), _numpy_hash32(x))


def test_noise_is_a_pure_function_of_seed_step_row_and_token():
    rows = np.array([0, 1, 2], np.int32)
    a = ops.convert_to_numpy(uniform_noise(7, 3, rows, 50))
    b = ops.convert_to_numpy(uniform_noise(7, 3, rows[::-1].copy(), 50))
    np.testing.assert_array_equal(a, b[::-1])  # row order does not matter
    assert a.shape == (3, 50) and 0 < a.min() and a.max() < 1
    assert not np.array_equal(a, ops.convert_to_numpy(uniform_noise(8, 3, rows, 50)))
    assert not np.array_equal(a, ops.convert_to_numpy(uniform_noise(7, 4, rows, 50)))
    # Independent-looking: mean ~ 0.5 over many draws.
    many = ops.convert_to_numpy(uniform_noise(1, 0, np.arange(200, dtype=np.int32), 100))
    assert abs(many.mean() - 0.5) < 0.01


def _draw(log_probs, rows=20000, **kwargs):
    log_probs = np.log(np.asarray(log_probs, np.float32))
    batch = np.tile(log_probs, (rows, 1))
    tokens = sample_tokens(batch, 5, 0, np.arange(rows, dtype=np.int32), **kwargs)
    return np.bincount(ops.convert_to_numpy(tokens), minlength=len(log_probs)) / rows


PROBS = [0.5, 0.3, 0.15, 0.05]


def test_samples_follow_the_distribution():
    np.testing.assert_allclose(_draw(PROBS), PROBS, atol=0.015)


def test_temperature_top_k_and_top_p():
    greedy = [1.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(_draw(PROBS, rows=500, top_k=1), greedy)
    np.testing.assert_allclose(_draw(PROBS, rows=500, temperature=1e-4), greedy)
    # Nucleus 0.7: tokens 0 and 1 (0.5 before token 1 < 0.7; 0.8 before 2).
    np.testing.assert_allclose(_draw(PROBS, top_p=0.7), [0.625, 0.375, 0, 0], atol=0.015)
    # top-k 3 then top-p 0.99 of the renormalised rest: tokens 0-2.
    expected = np.array(PROBS[:3] + [0]) / 0.95
    np.testing.assert_allclose(_draw(PROBS, top_k=3, top_p=0.99), expected, atol=0.015)
    # Temperature 2 flattens: p ** (1/2), renormalised.
    flat = np.sqrt(PROBS) / np.sqrt(PROBS).sum()
    np.testing.assert_allclose(_draw(PROBS, temperature=2.0), flat, atol=0.015)


def test_forbidden_tokens_are_never_drawn_even_when_hot():
    log_probs = np.log(np.array([[0.4, 0.3, 0.2, 0.1]] * 2000, np.float32))
    log_probs[:, 0] = NEG_INF  # e.g. PAD
    tokens = sample_tokens(log_probs, 1, 2, np.arange(2000, dtype=np.int32), temperature=50.0)
    assert 0 not in set(ops.convert_to_numpy(tokens).tolist())


@pytest.mark.parametrize("seed", [0, 2**31 - 1])
def test_same_seed_same_samples(seed):
    rows = np.arange(64, dtype=np.int32)
    log_probs = np.log(np.full((64, 30), 1 / 30, np.float32))
    a = ops.convert_to_numpy(sample_tokens(log_probs, seed, 4, rows))
    b = ops.convert_to_numpy(sample_tokens(log_probs, seed, 4, rows))
    c = ops.convert_to_numpy(sample_tokens(log_probs, seed + 1 if seed == 0 else 0, 4, rows))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
