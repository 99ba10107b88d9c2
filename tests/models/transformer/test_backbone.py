"""keras-hub's backbone/task contract: `TransformerBackbone` returns hidden
states, the heads (`Transformer`, `TransformerSeq2SeqLM`) apply the tied
output projection, and the two models share one weight layout."""

import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import to_numpy

TINY = dict(vocabulary_size=40, num_layers=2, d_model=16, num_heads=2, d_ff=32, dropout_rate=0.0)


def _inputs(rng):
    return {
        "encoder_token_ids": rng.integers(4, 40, (2, 7)).astype("int32"),
        "decoder_token_ids": rng.integers(4, 40, (2, 5)).astype("int32"),
    }


def _pair(**overrides):
    """A backbone and a `Transformer` with the same weights."""
    backbone = kt.TransformerBackbone(**TINY, **overrides)
    if backbone.output_bias:
        bias = backbone.token_embedding.bias
        bias.assign(np.linspace(-1.0, 1.0, bias.shape[0]).astype("float32"))
    transformer = kt.Transformer.from_config(backbone.get_config())
    transformer.set_weights(backbone.get_weights())
    return backbone, transformer


@pytest.mark.parametrize("overrides", [{}, {"output_bias": True, "normalization_position": "pre"}])
def test_backbone_returns_hidden_states_and_transformer_the_projected_logits(rng, overrides):
    backbone, transformer = _pair(**overrides)
    inputs = _inputs(rng)
    outputs = backbone(inputs)
    assert sorted(outputs) == ["decoder_sequence_output", "encoder_sequence_output"]
    assert tuple(outputs["encoder_sequence_output"].shape) == (2, 7, 16)
    hidden = outputs["decoder_sequence_output"]
    assert tuple(hidden.shape) == (2, 5, 16)
    logits = to_numpy(transformer(inputs))
    assert logits.shape == (2, 5, 40) and logits.dtype == np.float32
    # The head is the shared embedding's reverse call (with the bias where
    # there is one): the same numbers, bit for bit.
    np.testing.assert_array_equal(to_numpy(backbone.logits(hidden)), logits)
    np.testing.assert_array_equal(
        to_numpy(backbone.token_embedding(hidden, reverse=True)), logits
    )
    if overrides.get("output_bias"):
        without_bias = to_numpy(hidden) @ to_numpy(backbone.token_embedding.embeddings).T
        assert not np.allclose(without_bias, logits, atol=1e-3)
    # Both have the layers, and so the weights, in the same order.
    assert [w.path for w in backbone.weights] == [w.path for w in transformer.weights]
    assert isinstance(transformer, kt.TransformerBackbone)


def test_backbone_decoding_interface_and_packed_rows(rng):
    backbone, transformer = _pair()
    inputs = _inputs(rng)
    encoded, mask = backbone.encode(inputs["encoder_token_ids"])
    # Eager layer calls against the functional graph: equal up to rounding.
    np.testing.assert_allclose(
        to_numpy(backbone.decode(inputs["decoder_token_ids"], encoded, mask)),
        to_numpy(transformer(inputs)),
        atol=1e-5,
    )
    packed = dict(
        inputs,
        encoder_segment_ids=np.ones((2, 7), "int32"),
        decoder_segment_ids=np.ones((2, 5), "int32"),
    )
    outputs = backbone(packed)
    np.testing.assert_allclose(
        to_numpy(backbone.logits(outputs["decoder_sequence_output"])),
        to_numpy(transformer(packed)),
        atol=1e-5,
    )


def test_backbone_saves_and_loads_by_its_registered_name(rng, tmp_path):
    backbone, _ = _pair()
    assert keras.saving.get_registered_name(kt.TransformerBackbone) == (
        "keras_transformer>TransformerBackbone"
    )
    path = str(tmp_path / "backbone.keras")
    backbone.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert type(loaded) is kt.TransformerBackbone
    inputs = _inputs(rng)
    np.testing.assert_array_equal(
        to_numpy(loaded(inputs)["decoder_sequence_output"]),
        to_numpy(backbone(inputs)["decoder_sequence_output"]),
    )


def test_task_applies_the_tied_projection_to_the_backbone(rng, tmp_path):
    pytest.importorskip("keras_hub")
    backbone, transformer = _pair(output_bias=True)
    inputs = _inputs(rng)
    expected = to_numpy(transformer(inputs))
    task = kt.TransformerSeq2SeqLM(backbone)
    np.testing.assert_array_equal(to_numpy(task(inputs)), expected)
    # A `Transformer` (the backbone of earlier versions' tasks): its logits.
    np.testing.assert_array_equal(to_numpy(kt.TransformerSeq2SeqLM(transformer)(inputs)), expected)
    # The backbone's preset loads as either model, with the same numbers.
    backbone.save_to_preset(str(tmp_path / "preset"))
    as_transformer = kt.Transformer.from_preset(str(tmp_path / "preset"))
    assert type(as_transformer) is kt.Transformer
    np.testing.assert_array_equal(to_numpy(as_transformer(inputs)), expected)
    as_backbone = kt.TransformerBackbone.from_preset(str(tmp_path / "preset"))
    assert type(as_backbone) is kt.TransformerBackbone
    with pytest.raises(ValueError, match="TransformerBackbone"):
        kt.TransformerSeq2SeqLM(keras.Model())
