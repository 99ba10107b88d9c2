import math

import keras
import numpy as np
import pytest
from keras import ops

from conftest import to_numpy
from keras_transformer import layers
from keras_transformer.layers.buffer_writes import write_along
from layer_checks import run_layer_checks

B, T, S, D, H = 2, 5, 7, 32, 4


def random_inputs(*shape):
    return np.random.default_rng(0).normal(size=shape).astype("float32")


# --- MultiHeadAttention ---------------------------------------------------


@keras.saving.register_keras_serializable(package="keras_transformer_tests")
class AttentionOutputs(layers.MultiHeadAttention):
    """`MultiHeadAttention` returning its ``outputs`` alone: a functional
    model's layer outputs must all be tensors, and the attention's
    `AttentionOutput` holds None where no cache or weights were asked for."""

    def call(self, query, key_value=None, **kwargs):
        return super().call(query, key_value, **kwargs).outputs


def test_attention_returns_one_structure_whatever_its_arguments():
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H)
    x = random_inputs(B, T, D)
    plain = attention(x)
    assert isinstance(plain, layers.AttentionOutput)
    assert plain.cache is None and plain.attention_scores is None
    scored = attention(x, return_attention_scores=True)
    assert scored.cache is None and tuple(scored.attention_scores.shape) == (B, H, T, T)
    cache = ops.zeros((B, 2, H, T, D // H))
    cached = attention(x[:, :1], cache=cache, cache_index=0)
    assert cached.attention_scores is None
    assert tuple(cached.cache.shape) == tuple(cache.shape)
    both = attention(x[:, :1], cache=cache, cache_index=0, return_attention_scores=True)
    assert both.cache is not None and both.attention_scores is not None
    for result in (plain, scored, cached, both):
        assert tuple(result.outputs.shape)[-1] == D


@pytest.mark.parametrize("self_attention", [True, False])
def test_the_attention_paths_compute_one_function(self_attention):
    """`MultiHeadAttention`'s three numeric paths: the fused kernel
    (`keras.ops.dot_product_attention`), the explicit one (weights asked
    for) and cached decoding's one-query step give the same outputs."""
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H, self_attention=self_attention)
    x = random_inputs(B, T, D)
    memory = x if self_attention else random_inputs(B, S, D)
    keys = T if self_attention else S
    mask = np.arange(keys)[None, :] < np.array([[keys], [keys - 2]])  # row 1: 2 pads
    kwargs = dict(padding_mask=mask, use_causal_mask=self_attention)
    if not self_attention:
        kwargs["key_value"] = memory
    fused = to_numpy(attention(x, **kwargs).outputs)
    explicit = to_numpy(attention(x, return_attention_scores=True, **kwargs).outputs)
    np.testing.assert_allclose(explicit, fused, atol=1e-5)
    if self_attention:
        cache = ops.zeros((B, 2, H, T, D // H))
    else:
        cache = attention.compute_key_value_cache(memory)
    steps = []
    for t in range(T):
        step = attention(x[:, t:t + 1], padding_mask=mask, cache=cache, cache_index=t)
        cache = step.cache
        steps.append(to_numpy(step.outputs))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), fused, atol=1e-5)


def test_attention_layer_checks():
    # The attention's computation through the common checks (config,
    # symbolic call, saved model, fit step, mixed precision).
    run_layer_checks(
        AttentionOutputs,
        {"d_model": D, "num_heads": H},
        random_inputs(B, T, D),
        {"use_causal_mask": True},
    )


def test_attention_rejects_bad_sizes():
    with pytest.raises(ValueError, match="divisible"):
        layers.MultiHeadAttention(d_model=30, num_heads=4)
    with pytest.raises(ValueError, match="positive"):
        layers.MultiHeadAttention(d_model=0, num_heads=4)
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H)
    with pytest.raises(ValueError, match="d_model=32"):
        attention(random_inputs(B, T, D + 1))


def test_attention_fused_path_matches_explicit_weights():
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H)
    x = random_inputs(B, T, D)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    fused = attention(x, padding_mask=mask, use_causal_mask=True).outputs
    explicit, _, weights = attention(
        x, padding_mask=mask, use_causal_mask=True, return_attention_scores=True
    )
    np.testing.assert_allclose(to_numpy(fused), to_numpy(explicit), atol=1e-5)
    weights = to_numpy(weights)
    assert weights.shape == (B, H, T, T)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    # Causal: no weight on future keys; padding: none on padded keys.
    assert np.all(weights[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
    assert np.all(weights[0, :, :, 3:] == 0)


def _split_reference(x, n, layout):
    """numpy: (batch, time, n * D) -> n arrays (batch, time, H, D // H)."""
    batch, time = x.shape[:2]
    if layout == "head_major":  # [h_1: q k v | h_2: q k v | ...]
        x = x.reshape(batch, time, H, n, D // H)
        return [x[:, :, :, i] for i in range(n)]
    x = x.reshape(batch, time, n, H, D // H)  # [Q | K | V]
    return [x[:, :, i] for i in range(n)]


@pytest.mark.parametrize("layout", ["head_major", "qkv_major"])
def test_attention_matches_reference_formula(layout):
    attention = layers.MultiHeadAttention(
        d_model=D, num_heads=H, self_attention=False, projection_layout=layout
    )
    q, kv = random_inputs(B, T, D), random_inputs(B, S, D)
    out = to_numpy(attention(q, kv).outputs)
    wq, bq = (to_numpy(w) for w in attention.query_dense.weights)
    wkv, bkv = (to_numpy(w) for w in attention.key_value_dense.weights)
    wo, bo = (to_numpy(w) for w in attention.output_dense.weights)
    dk = D // H
    Q = (q @ wq + bq).reshape(B, T, H, dk)
    K, V = _split_reference(kv @ wkv + bkv, 2, layout)
    logits = np.einsum("bthd,bshd->bhts", Q, K) / math.sqrt(dk)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    heads = np.einsum("bhts,bshd->bthd", w, V).reshape(B, T, D)
    np.testing.assert_allclose(out, heads @ wo + bo, atol=1e-4)


def test_fully_masked_rows_are_finite_in_outputs_and_gradients():
    query = keras.Input((T, D))
    key_value = keras.Input((S, D))
    mask = keras.Input((S,), dtype="bool")
    attention = AttentionOutputs(d_model=D, num_heads=H, self_attention=False)
    model = keras.Model([query, key_value, mask], attention(query, key_value, padding_mask=mask))
    model.compile(optimizer="sgd", loss="mse")
    padding = np.ones((B, S), bool)
    padding[0] = False  # every key of example 0 is masked
    inputs = [random_inputs(B, T, D), random_inputs(B, S, D), padding]
    outputs = to_numpy(model(inputs))
    assert np.all(np.isfinite(outputs))
    # A row that may attend to nothing gets the output bias only (zero heads).
    bias = to_numpy(attention.output_dense.bias)
    np.testing.assert_allclose(outputs[0], np.broadcast_to(bias, (T, D)), atol=1e-6)
    model.fit(inputs, np.ones((B, T, D), "float32"), verbose=0)
    assert all(np.all(np.isfinite(to_numpy(w))) for w in model.weights)


@pytest.mark.parametrize("layout", ["head_major", "qkv_major"])
def test_self_attention_matches_reference_formula(layout):
    attention = layers.MultiHeadAttention(
        d_model=D, num_heads=H, projection_layout=layout
    )
    x = random_inputs(B, T, D)
    out = to_numpy(attention(x, use_causal_mask=True).outputs)
    w, b = (to_numpy(v) for v in attention.qkv_dense.weights)
    wo, bo = (to_numpy(v) for v in attention.output_dense.weights)
    Q, K, V = _split_reference(x @ w + b, 3, layout)
    logits = np.einsum("bthd,bshd->bhts", Q, K) / math.sqrt(D // H)
    logits = np.where(np.tril(np.ones((T, T), bool)), logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    heads = np.einsum("bhts,bshd->bthd", weights, V).reshape(B, T, D)
    np.testing.assert_allclose(out, heads @ wo + bo, atol=1e-4)


def test_projection_layout_config_and_legacy_default():
    with pytest.raises(ValueError, match="projection_layout"):
        layers.MultiHeadAttention(d_model=D, num_heads=H, projection_layout="rows")
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H)
    assert attention.projection_layout == "head_major"
    config = attention.get_config()
    assert layers.MultiHeadAttention.from_config(config).projection_layout == "head_major"
    # Configs saved before the option existed hold [Q | K | V] kernels.
    del config["projection_layout"]
    assert layers.MultiHeadAttention.from_config(config).projection_layout == "qkv_major"
    layer_config = layers.TransformerEncoderLayer(D, H, 64).get_config()
    del layer_config["projection_layout"]
    legacy = layers.TransformerEncoderLayer.from_config(layer_config)
    legacy(random_inputs(B, T, D))
    assert legacy.self_attention.projection_layout == "qkv_major"


@pytest.mark.parametrize("fused", [True, False])
def test_float16_logits_that_fit_after_scaling_do_not_overflow(fused):
    # q . k = 60^2 * 32 = 115,200 overflows float16 (max 65,504) on the
    # diagonal; divided by sqrt(head_dim) it is 40,729, which fits.
    d = 8
    attention = layers.MultiHeadAttention(
        d_model=d, num_heads=1, self_attention=False, dtype="mixed_float16"
    )
    x = np.where(np.random.default_rng(0).random((1, 4, d)) < 0.5, -2.0, 2.0)
    x = x.astype("float32")
    attention(x, x)
    identity = np.eye(d, dtype="float32")
    attention.query_dense.set_weights([60 * identity, np.zeros(d, "float32")])
    # One head: both layouts are [K | V].
    attention.key_value_dense.set_weights(
        [np.concatenate([60 * identity, identity], 1), np.zeros(2 * d, "float32")]
    )
    attention.output_dense.set_weights([identity, np.zeros(d, "float32")])
    result = attention(x, x, return_attention_scores=not fused)
    out = to_numpy(ops.cast(result.outputs, "float32"))
    logits = np.einsum("btd,bsd->bts", 60 * x, 60 * x) / math.sqrt(d)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(out, weights @ x, atol=1e-2)


@pytest.mark.parametrize("self_attention", [True, False])
def test_attention_cache_step_by_step_equals_one_shot(self_attention):
    attention = layers.MultiHeadAttention(
        d_model=D, num_heads=H, self_attention=self_attention
    )
    x = random_inputs(B, T, D)
    memory = random_inputs(B, S, D)
    if self_attention:
        one_shot = to_numpy(attention(x, use_causal_mask=True).outputs)
        cache = ops.zeros((B, 2, H, T + 3, D // H))  # longer than needed
    else:
        one_shot = to_numpy(attention(x, memory).outputs)
        cache = attention.compute_key_value_cache(memory)
    steps = []
    for t in range(T):
        out, cache, _ = attention(x[:, t : t + 1], cache=cache, cache_index=t)
        steps.append(to_numpy(out))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), one_shot, atol=1e-5)


@pytest.mark.parametrize("steps", [1, 3])
def test_shared_cross_attention_cache_serves_every_beam(steps):
    # Beam search keeps one encoder-decoder cache row per sentence for its
    # g beams (rows b*g ... b*g+g-1). One query per row (a decoding step)
    # and several (the general path) must equal a cache tiled per row,
    # with a padded source in the batch.
    g = 3
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H, self_attention=False)
    memory = random_inputs(B, S, D)
    padding = np.ones((B, S), bool)
    padding[1, 4:] = False
    x = random_inputs(B * g, steps, D)
    # Each row attending to its sentence's memory directly (builds the layer).
    direct = attention(x, np.repeat(memory, g, axis=0),
                       padding_mask=np.repeat(padding, g, axis=0)).outputs
    cache = attention.compute_key_value_cache(memory)
    tiled = ops.repeat(cache, g, axis=0)
    expected = attention(
        x, padding_mask=np.repeat(padding, g, axis=0), cache=tiled
    ).outputs
    shared, returned, _ = attention(x, padding_mask=padding, cache=cache)
    np.testing.assert_allclose(to_numpy(shared), to_numpy(expected), atol=1e-5)
    assert tuple(returned.shape) == tuple(cache.shape)
    np.testing.assert_allclose(to_numpy(shared), to_numpy(direct), atol=1e-5)


@pytest.mark.parametrize("steps", [1, 3])
def test_write_along_equals_slice_update(steps):
    # A cache write: numpy's slice assignment, for one position and for
    # several (a forced prefix); under TensorFlow also inside a graph whose
    # shapes are unknown (the SavedModel's), where it is a select.
    rng = np.random.default_rng(0)
    buffer = rng.normal(size=(2, 2, 3, 8, 4)).astype("float32")
    update = rng.normal(size=(2, 2, 3, steps, 4)).astype("float32")
    for index in (0, 2, 8 - steps):
        expected = buffer.copy()
        expected[:, :, :, index:index + steps] = update
        np.testing.assert_array_equal(
            to_numpy(write_along(ops.convert_to_tensor(buffer), ops.convert_to_tensor(update),
                                 index, axis=3)),
            expected,
        )
        mask = np.ones((2, 8), bool)
        written = to_numpy(write_along(ops.convert_to_tensor(mask),
                                       ops.zeros((2, steps), "bool"), index, axis=1))
        assert (~written).sum() == 2 * steps and not written[:, index:index + steps].any()
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        graph_write = tf.function(
            lambda b, u, i: write_along(b, u, i, axis=3),
            input_signature=[tf.TensorSpec([None] * 5), tf.TensorSpec([None] * 5),
                             tf.TensorSpec([], tf.int32)],
        )
        expected = buffer.copy()
        expected[:, :, :, 1:1 + steps] = update
        np.testing.assert_array_equal(graph_write(buffer, update, 1).numpy(), expected)
        ops_used = {op.type for op in graph_write.get_concrete_function().graph.get_operations()}
        assert not any(op.startswith("Xla") for op in ops_used), ops_used


def test_self_attention_cache_needs_index():
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H)
    with pytest.raises(ValueError, match="cache_index"):
        attention(random_inputs(B, 1, D), cache=ops.zeros((B, 2, H, 4, D // H)))


def test_attention_cache_in_the_wrong_layout_is_named():
    # The cache is head-major (batch, 2, heads, length, head_dim); the
    # position-major layout of older versions is refused with the shape named.
    attention = layers.MultiHeadAttention(d_model=D, num_heads=H)
    with pytest.raises(ValueError, match="num_heads=4, length, head_dim"):
        attention(
            random_inputs(B, 1, D), cache=ops.zeros((B, 2, 6, H, D // H)), cache_index=0
        )


# --- positional encodings ---------------------------------------------------


def test_sinusoidal_encoding_matches_the_formula():
    d_model, length = 16, 50
    encoding = to_numpy(layers.sinusoidal_encoding(np.arange(length), d_model))
    for pos in (0, 1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert encoding[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-5)
            assert encoding[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-5)


def test_sinusoidal_layer_adds_encoding_for_any_length_and_offset():
    layer = layers.SinusoidalPositionalEncoding()
    for length in (3, 5000):  # no table to overflow
        x = np.zeros((1, length, 8), "float32")
        np.testing.assert_allclose(
            to_numpy(layer(x))[0],
            to_numpy(layers.sinusoidal_encoding(np.arange(length), 8)),
            atol=1e-4,
        )
    x = random_inputs(2, 1, 8)
    np.testing.assert_allclose(
        to_numpy(layer(x, start_index=9)),
        x + to_numpy(layers.sinusoidal_encoding(np.array([9]), 8))[None],
        atol=1e-5,
    )
    run_layer_checks(layers.SinusoidalPositionalEncoding, {}, random_inputs(B, T, D))


def test_learned_positional_embedding():
    layer, _ = run_layer_checks(
        layers.LearnedPositionalEmbedding, {"max_length": 16}, random_inputs(B, T, D)
    )
    x = np.zeros((1, 3, D), "float32")
    table = to_numpy(layer.position_embeddings)
    np.testing.assert_allclose(to_numpy(layer(x, start_index=4))[0], table[4:7], atol=1e-6)
    with pytest.raises(ValueError, match="max_length=16"):
        layer(np.zeros((1, 17, D), "float32"))
    with pytest.raises(ValueError, match="max_length"):
        layers.LearnedPositionalEmbedding(max_length=0)


# --- embeddings and feed-forward ---------------------------------------------


def test_token_embedding_scales_and_ties():
    layer, out = run_layer_checks(
        layers.TokenEmbedding,
        {"vocabulary_size": 50, "d_model": 16},
        np.array([[1, 2, 3], [4, 0, 0]], "int32"),
        fit=False,
    )
    table = to_numpy(layer.embeddings)
    np.testing.assert_allclose(to_numpy(out)[0, 1], table[2] * 4.0, rtol=1e-6)
    hidden = random_inputs(2, 3, 16)
    logits = layer(hidden, reverse=True)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    np.testing.assert_allclose(to_numpy(logits), hidden @ table.T, atol=1e-5)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_token_embedding_logits_have_float32_precision(policy):
    # Hidden states arrive in the compute dtype; the projection must not
    # round the products or the sum to it (a cast afterwards would only
    # change the dtype): logits == float32 matmul of the half inputs.
    mixed = layers.TokenEmbedding(50, 64, dtype=policy)
    mixed.build()
    table = to_numpy(mixed.embeddings)
    hidden = ops.cast(random_inputs(2, 3, 64) * 4.0, mixed.compute_dtype)
    expected = to_numpy(ops.cast(hidden, "float32")).astype("float64") @ table.T
    logits = mixed(hidden, reverse=True)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    np.testing.assert_allclose(to_numpy(logits), expected, rtol=1e-5, atol=1e-5)
    # logits_dtype=None: the compute dtype, for speed.
    fast = layers.TokenEmbedding(50, 64, logits_dtype=None, dtype=policy)
    fast.build()
    assert keras.backend.standardize_dtype(fast(hidden, reverse=True).dtype) == (
        mixed.compute_dtype
    )
    config = mixed.get_config()
    assert config["logits_dtype"] == "float32"
    del config["logits_dtype"]  # configs saved before the option existed
    assert layers.TokenEmbedding.from_config(config).logits_dtype == "float32"
    with pytest.raises(ValueError, match="logits_dtype"):
        layers.TokenEmbedding(50, 64, logits_dtype="int32")


def test_validate_token_ids():
    layers.validate_token_ids(np.array([[0, 49]]), 50)
    with pytest.raises(ValueError, match=r"\[0, 50\).*\[0, 50\]"):
        layers.validate_token_ids(np.array([[0, 50]]), 50)
    with pytest.raises(ValueError, match="-1"):
        layers.validate_token_ids(np.array([[-1, 3]]), 50)


def test_feed_forward_is_relu_mlp():
    layer, out = run_layer_checks(
        layers.PositionwiseFeedForward, {"d_model": D, "d_ff": 64}, random_inputs(B, T, D)
    )
    w1, b1, w2, b2 = (to_numpy(w) for w in layer.weights)
    x = random_inputs(B, T, D)
    np.testing.assert_allclose(
        to_numpy(layer(x)), np.maximum(0, x @ w1 + b1) @ w2 + b2, atol=1e-4
    )


# --- encoder and decoder layers ------------------------------------------------


@pytest.mark.parametrize("position", ["post", "pre"])
def test_encoder_layer(position):
    kwargs = {"d_model": D, "num_heads": H, "d_ff": 64, "normalization_position": position}
    layer, out = run_layer_checks(
        layers.TransformerEncoderLayer, kwargs, random_inputs(B, T, D)
    )
    if position == "post":  # output of a LayerNorm: zero mean, unit variance
        np.testing.assert_allclose(to_numpy(out).mean(-1), 0.0, atol=1e-4)


def test_layer_argument_errors():
    with pytest.raises(ValueError, match="normalization_position"):
        layers.TransformerEncoderLayer(D, H, 64, normalization_position="middle")
    with pytest.raises(ValueError, match="dropout_rate"):
        layers.TransformerDecoderLayer(D, H, 64, dropout_rate=1.0)
    with pytest.raises(ValueError, match="divisible"):
        layers.TransformerDecoderLayer(30, H, 64)


def test_encoder_padding_does_not_change_real_positions():
    layer = layers.TransformerEncoderLayer(D, H, 64)
    x = random_inputs(1, T, D)
    padded = np.concatenate([x, random_inputs(1, 3, D)], axis=1)
    mask = np.array([[True] * T + [False] * 3])
    np.testing.assert_allclose(
        to_numpy(layer(padded, encoder_padding_mask=mask))[:, :T],
        to_numpy(layer(x)),
        atol=1e-5,
    )


@pytest.mark.parametrize("position", ["post", "pre"])
def test_decoder_layer_and_cache(position):
    layer = layers.TransformerDecoderLayer(D, H, 64, normalization_position=position)
    y, x = random_inputs(B, T, D), random_inputs(B, S, D)
    encoder_mask = np.ones((B, S), bool)
    encoder_mask[1, 4:] = False
    one_shot = to_numpy(layer(y, x, encoder_padding_mask=encoder_mask))
    config = layer.get_config()
    assert layers.TransformerDecoderLayer.from_config(config).get_config() == config
    self_cache = ops.zeros((B, 2, H, T, D // H))
    cross_cache = layer.cross_attention.compute_key_value_cache(x)
    steps = []
    for t in range(T):
        out, self_cache = layer(
            y[:, t : t + 1],
            encoder_padding_mask=encoder_mask,
            self_attention_cache=self_cache,
            cross_attention_cache=cross_cache,
            cache_index=t,
        )
        steps.append(to_numpy(out))
    np.testing.assert_allclose(np.concatenate(steps, 1), one_shot, atol=1e-5)
    out, scores = layer(y, x, encoder_padding_mask=encoder_mask, return_attention_scores=True)
    assert to_numpy(scores["cross_attention"]).shape == (B, H, T, S)
    assert np.all(to_numpy(scores["cross_attention"])[1, :, :, 4:] == 0)
