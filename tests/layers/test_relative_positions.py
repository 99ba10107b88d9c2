"""Relative position representations (Shaw et al., 2018): the attention's
arithmetic against a direct transcription of the paper's equations, cached
decoding, packed rows, saving and the option's checks."""

import math

import keras
import numpy as np
import pytest
from keras import ops

from conftest import compiled, to_numpy
from keras_transformer import Transformer, layers
from keras_transformer.layers.attention import relative_position_ids

B, T, D, H, M = 2, 6, 16, 2, 2


def random_inputs(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def shaw_reference(attention, x, mask):
    """Shaw et al.'s equations (3)-(5), one head and one pair at a time."""
    qkv = to_numpy(attention.qkv_dense(x)).reshape(B, T, H, 3, D // H)
    q, k, v = qkv[:, :, :, 0], qkv[:, :, :, 1], qkv[:, :, :, 2]
    a_k = to_numpy(attention.relative_position_keys)
    a_v = to_numpy(attention.relative_position_values)
    d = D // H
    heads = np.zeros((B, T, H, d), "float32")
    for b in range(B):
        for h in range(H):
            for i in range(T):
                e = np.full(T, -np.inf)
                for j in range(T):
                    if mask[b, i, j]:
                        row = min(max(j - i, -M), M) + M
                        e[j] = q[b, i, h] @ (k[b, j, h] + a_k[row]) / math.sqrt(d)
                alpha = np.exp(e - e.max())
                alpha /= alpha.sum()
                for j in range(T):
                    row = min(max(j - i, -M), M) + M
                    heads[b, i, h] += alpha[j] * (v[b, j, h] + a_v[row])
    return to_numpy(attention.output_dense(heads.reshape(B, T, D)))


@pytest.mark.parametrize("causal", [False, True])
def test_attention_equals_the_papers_equations(causal):
    attention = layers.MultiHeadAttention(D, H, max_relative_position=M)
    x = random_inputs(B, T, D)
    padding = np.ones((B, T), bool)
    padding[1, 4:] = False
    attention(x)  # builds
    for table in (attention.relative_position_keys, attention.relative_position_values):
        table.assign(random_inputs(2 * M + 1, D // H, seed=2))
    mask = np.broadcast_to(padding[:, None, :], (B, T, T))
    if causal:
        mask = mask & np.tril(np.ones((T, T), bool))
    outputs = attention(x, padding_mask=padding, use_causal_mask=causal).outputs
    np.testing.assert_allclose(
        to_numpy(outputs), shaw_reference(attention, x, mask), atol=1e-5
    )


def test_relative_position_ids_clip_and_follow_the_query_start():
    ids = to_numpy(relative_position_ids(2, 6, 2, query_start=3))
    # Queries at positions 3 and 4; row = clip(key - query, -2, 2) + 2.
    np.testing.assert_array_equal(ids, [[0, 0, 1, 2, 3, 4], [0, 0, 0, 1, 2, 3]])


def test_cached_steps_and_a_cached_prefix_equal_one_shot():
    attention = layers.MultiHeadAttention(D, H, max_relative_position=M)
    x = random_inputs(B, T, D)
    one_shot = to_numpy(attention(x, use_causal_mask=True).outputs)
    cache = ops.zeros((B, 2, H, T + 3, D // H))  # longer than needed
    # Three positions at once (a forced prefix), then one per step.
    out, cache, _ = attention(x[:, :3], cache=cache, cache_index=0)
    steps = [to_numpy(out)]
    for t in range(3, T):
        out, cache, _ = attention(x[:, t : t + 1], cache=cache, cache_index=t)
        steps.append(to_numpy(out))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), one_shot, atol=1e-5)


def _model(**kwargs):
    keras.utils.set_random_seed(0)
    return Transformer(
        vocabulary_size=40, num_layers=2, d_model=D, num_heads=H, d_ff=32,
        dropout_rate=0.0, positional_encoding="relative", max_relative_position=M,
        **kwargs,
    )


def _ids():
    rng = np.random.default_rng(0)
    source = rng.integers(4, 40, (B, 7)).astype("int32")
    source[1, 5:] = 0
    target = rng.integers(4, 40, (B, T)).astype("int32")
    target[:, 0] = 2
    return source, target


def test_model_has_no_absolute_positions_and_decodes_cached_as_uncached():
    model = _model()
    assert model.encoder_position is None and model.decoder_position is None
    assert not [w for w in model.weights if "position_embeddings" in w.path]
    # 2 layers x (encoder self, decoder self) x (keys, values); none in
    # encoder-decoder attention.
    tables = [w.path for w in model.weights if "relative_position" in w.path]
    assert len(tables) == 8 and not [p for p in tables if "cross" in p]
    source, target = _ids()
    encoder_output, encoder_mask = compiled(model, model.encode)(source)
    uncached = to_numpy(compiled(model, model.decode)(target, encoder_output, encoder_mask))
    cache = model.build_cache(encoder_output, encoder_mask, T + 2)
    # The step index is a tensor, as in the searches.
    decode_step = compiled(model, model.decode_step)
    logits, cache = decode_step(target[:, :2], cache, np.int32(0))
    steps = [to_numpy(logits)]
    for t in range(2, T):
        logits, cache = decode_step(target[:, t : t + 1], cache, np.int32(t))
        steps.append(to_numpy(logits))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), uncached, atol=1e-4)


def test_packed_rows_equal_rows_of_their_own():
    # Distances inside a packed pair are those of the pair alone.
    model = _model()
    source = np.array([[5, 6, 7, 3, 8, 9, 3, 0]], "int32")
    target = np.array([[2, 11, 12, 2, 13, 14, 15, 0]], "int32")
    call = compiled(model, lambda inputs: model(inputs))
    packed = to_numpy(call({
        "encoder_token_ids": source,
        "decoder_token_ids": target,
        "encoder_segment_ids": np.array([[1, 1, 1, 1, 2, 2, 2, 0]], "int32"),
        "decoder_segment_ids": np.array([[1, 1, 1, 2, 2, 2, 2, 0]], "int32"),
    }))
    first = to_numpy(call({
        "encoder_token_ids": source[:, :4], "decoder_token_ids": target[:, :3]
    }))
    second = to_numpy(call({
        "encoder_token_ids": source[:, 4:7], "decoder_token_ids": target[:, 3:7]
    }))
    np.testing.assert_allclose(packed[:, :3], first, atol=1e-4)
    np.testing.assert_allclose(packed[:, 3:7], second, atol=1e-4)


def test_config_round_trip_and_saved_file(tmp_path):
    model = _model()
    config = model.get_config()
    assert config["positional_encoding"] == "relative"
    assert config["max_relative_position"] == M
    # Other models' configs keep their keys.
    assert "max_relative_position" not in _plain_config()
    source, target = _ids()
    inputs = {"encoder_token_ids": source, "decoder_token_ids": target}
    path = str(tmp_path / "relative.keras")
    model.save(path)
    loaded = keras.saving.load_model(path, compile=False, safe_mode=True)
    assert loaded.get_config()["max_relative_position"] == M
    np.testing.assert_allclose(
        to_numpy(loaded(inputs)), to_numpy(model(inputs)), atol=1e-5
    )


def _plain_config():
    return Transformer(
        vocabulary_size=40, num_layers=1, d_model=D, num_heads=H, d_ff=32,
        max_relative_position=5,
    ).get_config()


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="max_relative_position must be a positive int"):
        _model_with(0)
    with pytest.raises(ValueError, match="max_relative_position must be a positive int"):
        _model_with("16")
    with pytest.raises(ValueError, match="positional_encoding"):
        Transformer(vocabulary_size=40, positional_encoding="rotary")
    with pytest.raises(ValueError, match="self-attention only"):
        layers.MultiHeadAttention(D, H, self_attention=False, max_relative_position=2)
    with pytest.raises(ValueError, match="max_relative_position must be an int >= 0"):
        layers.MultiHeadAttention(D, H, max_relative_position=-1)


def _model_with(max_relative_position):
    return Transformer(
        vocabulary_size=40, num_layers=1, d_model=D, num_heads=H, d_ff=32,
        positional_encoding="relative", max_relative_position=max_relative_position,
    )
