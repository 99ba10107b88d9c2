import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import to_numpy
from keras_transformer.layers import sinusoidal_encoding

V = 61


def tiny(**overrides):
    args = dict(vocabulary_size=V, num_layers=2, d_model=32, num_heads=4, d_ff=64)
    args.update(overrides)
    return kt.Transformer(**args)


def batch(rng, batch_size=2, source_length=7, target_length=5):
    source = rng.integers(4, V, size=(batch_size, source_length)).astype("int32")
    target = rng.integers(4, V, size=(batch_size, target_length)).astype("int32")
    target[:, 0] = kt.BOS_ID
    return {"encoder_token_ids": source, "decoder_token_ids": target}


def logits_of(model, inputs):
    return to_numpy(model(inputs, training=False))


def test_output_shape_dtype_and_config_round_trip(rng):
    model = tiny()
    inputs = batch(rng)
    logits = model(inputs)
    assert tuple(logits.shape) == (2, 5, V)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    config = model.get_config()
    restored = kt.Transformer.from_config(config)
    assert restored.get_config() == config
    restored.set_weights(model.get_weights())
    np.testing.assert_allclose(logits_of(restored, inputs), logits_of(model, inputs), atol=1e-6)


def test_embeddings_are_shared_by_default_and_separable():
    shared = tiny()
    names = [w.path for w in shared.weights if "embeddings" in w.path]
    assert len(names) == 1, names
    separate = tiny(share_embeddings=False, source_vocabulary_size=40)
    tables = sorted(tuple(w.shape) for w in separate.weights if w.path.endswith("embeddings"))
    assert tables == [(40, 32), (V, 32)]
    separate(batch(np.random.default_rng(0)) | {"encoder_token_ids": np.array([[5, 39, 0]])} | {"decoder_token_ids": np.array([[2, 60]])})


def test_no_future_leakage(rng):
    model = tiny(dropout_rate=0.0)
    inputs = batch(rng, target_length=8)
    reference = logits_of(model, inputs)
    for i in range(7):
        changed = {k: v.copy() for k, v in inputs.items()}
        changed["decoder_token_ids"][:, i + 1 :] = rng.integers(4, V, size=(2, 7 - i))
        np.testing.assert_allclose(
            logits_of(model, changed)[:, : i + 1], reference[:, : i + 1], atol=1e-5
        )


def test_appending_padding_changes_no_real_output(rng):
    for position in ("post", "pre"):
        model = tiny(normalization_position=position)
        inputs = batch(rng)
        reference = logits_of(model, inputs)
        padded = {
            "encoder_token_ids": np.pad(inputs["encoder_token_ids"], ((0, 0), (0, 4))),
            "decoder_token_ids": np.pad(inputs["decoder_token_ids"], ((0, 0), (0, 3))),
        }
        np.testing.assert_allclose(logits_of(model, padded)[:, :5], reference, atol=1e-5)


def test_all_padding_source_gives_finite_logits(rng):
    model = tiny()
    inputs = batch(rng)
    inputs["encoder_token_ids"][0] = 0
    assert np.all(np.isfinite(logits_of(model, inputs)))


def test_options_build_and_run(rng):
    model = tiny(positional_encoding="learned", max_length=16, normalization_position="pre")
    assert tuple(model(batch(rng)).shape) == (2, 5, V)
    assert any("position_embeddings" in w.path for w in model.weights)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d_model": 30}, "divisible"),
        ({"num_layers": 0}, "num_layers"),
        ({"d_ff": -1}, "d_ff"),
        ({"vocabulary_size": 0}, "vocabulary_size"),
        ({"dropout_rate": 1.0}, "dropout_rate"),
        ({"dropout_rate": -0.1}, "dropout_rate"),
        ({"positional_encoding": "rotary"}, "positional_encoding"),
        ({"normalization_position": "sandwich"}, "normalization_position"),
        ({"source_vocabulary_size": 10}, "share_embeddings"),
    ],
)
def test_configuration_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tiny(**kwargs)


def test_presets_and_errors():
    with pytest.raises(ValueError, match="Unknown preset 'huge'"):
        kt.Transformer.from_preset("huge")
    with pytest.raises(ValueError, match=r"\['d_modle'\]"):
        kt.Transformer.from_preset("tiny", d_modle=64)
    model = kt.Transformer.from_preset("tiny", vocabulary_size=100, dropout_rate=0.0)
    assert model.vocabulary_size == 100 and model.dropout_rate == 0.0
    assert kt.PRESETS["base"]["d_model"] == 512 and kt.PRESETS["big"]["dropout_rate"] == 0.3


def analytic_parameter_count(
    vocabulary_size,
    num_layers,
    d_model,
    d_ff,
    share_embeddings=True,
    source_vocabulary_size=None,
    positional_encoding="sinusoidal",
    max_length=1024,
    normalization_position="post",
    **unused,
):
    """The paper's architecture counted by hand (weights and biases)."""
    d = d_model
    attention = 4 * d * d + 4 * d  # Q, K, V and output projections
    feed_forward = d * d_ff + d_ff + d_ff * d + d
    layer_norm = 2 * d
    encoder_layer = attention + feed_forward + 2 * layer_norm
    decoder_layer = 2 * attention + feed_forward + 3 * layer_norm
    count = num_layers * (encoder_layer + decoder_layer)
    count += vocabulary_size * d  # shared with the output projection, no bias
    if not share_embeddings:
        count += (source_vocabulary_size or vocabulary_size) * d
    if positional_encoding == "learned":
        count += 2 * max_length * d
    if normalization_position == "pre":
        count += 2 * layer_norm
    return count


@pytest.mark.parametrize("preset", ["base", "big"])
def test_parameter_counts_match_the_paper(preset):
    # Table 3: base 65M, big 213M (37,000-token shared vocabulary). A count
    # needs the variables' shapes, not their values: built in a stateless
    # scope that leaves them uninitialized (Keras' deferred initialization),
    # the `big` model skips drawing 214M random values (15 CPU-seconds under
    # JAX at the suite's XLA optimisation level).
    with keras.StatelessScope(initialize_variables=False):
        model = kt.Transformer.from_preset(preset)
    expected = analytic_parameter_count(**kt.PRESETS[preset])
    assert model.count_params() == expected
    assert {"base": 63_082_496, "big": 214_245_376}[preset] == expected


def test_parameter_count_of_every_option():
    options = dict(
        share_embeddings=False,
        source_vocabulary_size=40,
        positional_encoding="learned",
        max_length=16,
        normalization_position="pre",
    )
    model = tiny(**options)
    expected = analytic_parameter_count(V, num_layers=2, d_model=32, d_ff=64, **options)
    assert model.count_params() == expected


@pytest.mark.parametrize(
    "options, atol",
    [
        ({"normalization_position": "post"}, 1e-4),
        ({"normalization_position": "pre"}, 1e-4),
        ({"positional_encoding": "learned", "max_length": 10}, 1e-4),
        # bfloat16 keeps 8 significant bits; logits are O(1).
        ({"dtype": "mixed_bfloat16"}, 5e-2),
    ],
)
def test_cached_decode_step_matches_full_decode(rng, options, atol):
    model = tiny(**options)
    inputs = batch(rng, source_length=6, target_length=6)
    inputs["encoder_token_ids"][1, 3:] = 0
    full = logits_of(model, inputs)
    encoder_output, mask = model.encode(inputs["encoder_token_ids"])
    cache = model.build_cache(encoder_output, mask, max_length=10)
    steps = []
    for t in range(6):
        logits, cache = model.decode_step(
            inputs["decoder_token_ids"][:, t : t + 1], cache, t
        )
        steps.append(to_numpy(logits))
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=atol)
    np.testing.assert_allclose(
        to_numpy(model.decode(inputs["decoder_token_ids"], encoder_output, mask)),
        full,
        atol=atol / 10,
    )


def test_cached_multi_token_step_masks_padding_in_a_forced_prefix(rng):
    # A forced prefix fed in one step may contain padding; later tokens must
    # not attend to it, exactly as in the uncached decoder.
    model = tiny()
    inputs = batch(rng, source_length=6, target_length=6)
    inputs["decoder_token_ids"][0, 2:4] = kt.PAD_ID
    full = logits_of(model, inputs)
    encoder_output, mask = model.encode(inputs["encoder_token_ids"])
    cache = model.build_cache(encoder_output, mask, max_length=8)
    prefix, cache = model.decode_step(inputs["decoder_token_ids"][:, :4], cache, 0)
    steps = [to_numpy(prefix)]
    for t in (4, 5):
        logits, cache = model.decode_step(
            inputs["decoder_token_ids"][:, t : t + 1], cache, t
        )
        steps.append(to_numpy(logits))
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-4)


def test_logits_dtype_and_projection_layout_config(rng):
    model = tiny(dtype="mixed_bfloat16")
    config = model.get_config()
    assert config["logits_dtype"] == "float32"
    assert config["projection_layout"] == "head_major"
    # A config saved before these options existed loads with the layout its
    # weights were trained in and float32 logits.
    del config["logits_dtype"], config["projection_layout"]
    legacy = kt.Transformer.from_config(config)
    assert legacy.projection_layout == "qkv_major" and legacy.logits_dtype == "float32"
    attention = legacy.get_layer("encoder_layer_0").self_attention
    assert attention.projection_layout == "qkv_major"
    fast = tiny(dtype="mixed_bfloat16", logits_dtype=None)
    assert keras.backend.standardize_dtype(fast(batch(rng)).dtype) == "bfloat16"
    with pytest.raises(ValueError, match="projection_layout"):
        tiny(projection_layout="columns")


def _softmax(logits):
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True)


def test_attention_scores_for_plotting(rng):
    model = tiny()
    inputs = batch(rng)
    inputs["encoder_token_ids"][1, 4:] = kt.PAD_ID
    inputs["decoder_token_ids"][1, 3:] = kt.PAD_ID
    source, target = inputs["encoder_token_ids"], inputs["decoder_token_ids"]
    scores = model.attention_scores(source, target)
    scores = {key: [to_numpy(s) for s in value] for key, value in scores.items()}
    assert len(scores["encoder_self_attention"]) == 2
    assert scores["decoder_cross_attention"][0].shape == (2, 4, 5, 7)
    assert scores["decoder_self_attention"][1].shape == (2, 4, 5, 5)
    for key, value in scores.items():
        for layer_scores in value:  # each query's weights are a distribution
            np.testing.assert_allclose(layer_scores.sum(-1), 1.0, atol=1e-5, err_msg=key)
    # No weight on padded keys, nor on future target positions.
    for layer_scores in scores["encoder_self_attention"] + scores["decoder_cross_attention"]:
        assert np.all(layer_scores[1, :, :, 4:] == 0)
    for layer_scores in scores["decoder_self_attention"]:
        assert np.all(np.triu(layer_scores[0], 1) == 0)
        assert np.all(layer_scores[1, :, :, 3:] == 0)
    # The first encoder layer's weights are softmax(QK^T / sqrt(d_k)) of its
    # input (scaled embeddings + sinusoidal positions), recomputed here.
    table = to_numpy(model.token_embedding.embeddings)
    x = table[source] * np.sqrt(32) + to_numpy(sinusoidal_encoding(np.arange(7), 32))
    kernel, bias = (to_numpy(w) for w in model.get_layer("encoder_layer_0").self_attention.qkv_dense.weights)
    qkv = (x @ kernel + bias).reshape(2, 7, 4, 3, 8)  # head-major columns
    q, k = qkv[..., 0, :], qkv[..., 1, :]
    logits = np.einsum("bthd,bshd->bhts", q, k) / np.sqrt(8)
    logits = np.where((source != kt.PAD_ID)[:, None, None, :], logits, -np.inf)
    np.testing.assert_allclose(scores["encoder_self_attention"][0], _softmax(logits), atol=1e-5)
