import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import to_numpy

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


def test_parameter_counts_match_the_paper():
    # Table 3: base 65M, big 213M (37,000-token shared vocabulary). Our count
    # is exact arithmetic: shared 37000 x d embeddings, no output bias.
    base = kt.Transformer.from_preset("base")
    assert 62.5e6 < base.count_params() < 63.5e6, base.count_params()
    del base
    big = kt.Transformer.from_preset("big")
    assert 211e6 < big.count_params() < 216e6, big.count_params()


def test_cached_decode_step_matches_full_decode(rng):
    for position in ("post", "pre"):
        model = tiny(normalization_position=position)
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
        np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-4)
        np.testing.assert_allclose(
            to_numpy(model.decode(inputs["decoder_token_ids"], encoder_output, mask)),
            full,
            atol=1e-5,
        )


def test_attention_scores_for_plotting(rng):
    model = tiny()
    inputs = batch(rng)
    scores = model.attention_scores(inputs["encoder_token_ids"], inputs["decoder_token_ids"])
    assert len(scores["encoder_self_attention"]) == 2
    assert tuple(scores["decoder_cross_attention"][0].shape) == (2, 4, 5, 7)
    assert tuple(scores["decoder_self_attention"][1].shape) == (2, 4, 5, 5)
