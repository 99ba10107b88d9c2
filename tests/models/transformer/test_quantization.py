"""The package's int8 (`keras_transformer.utils.quantization`): int8 kernels,
float inputs; saved and reloaded as itself, beside Keras' own int8."""

import contextlib
import importlib

import keras
import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.decoding import DecodeOptions, Ensemble, Generator, SearchInputs
from keras_transformer.models.transformer.transformer_backbone import TransformerBackbone
from keras_transformer.utils.quantization import quantize_int8

INPUTS = {
    "encoder_token_ids": np.array([[5, 6, 7, 9, 3, 0], [8, 3, 0, 0, 0, 0]], "int32"),
    "decoder_token_ids": np.array([[2, 8, 9, 11], [2, 12, 0, 0]], "int32"),
}


def _model(cls=Transformer, dtype="float32"):
    keras.utils.set_random_seed(3)
    return cls(
        vocabulary_size=64, num_layers=1, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0, dtype=dtype,
    )


def _dense_layers(model):
    return [layer for layer in model._flatten_layers() if isinstance(layer, keras.layers.Dense)]


def _outputs(model):
    outputs = model(INPUTS)
    if isinstance(outputs, dict):
        outputs = outputs["decoder_sequence_output"]
    return keras.ops.convert_to_numpy(outputs)


def _float_input_layers(model):
    """How many int8 Dense layers keep float inputs, of how many."""
    dense = [layer for layer in _dense_layers(model) if layer.quantization_mode == "int8"]
    return sum(layer.inputs_quantizer is None for layer in dense), len(dense)


def test_int8_keeps_float_inputs_and_a_keras_file_reloads_as_itself(tmp_path):
    model = _model()
    float_logits = _outputs(model)
    model.quantize("int8")
    # Every Dense layer: int8 kernel, inputs not quantized.
    assert _float_input_layers(model) == (len(_dense_layers(model)), 11)
    assert all(str(layer.kernel.dtype) == "int8" for layer in _dense_layers(model))
    assert model.get_config()["int8_inputs"] == "float"
    logits = _outputs(model)
    assert not np.array_equal(logits, float_logits)
    assert np.abs(logits - float_logits).max() < 0.05 * np.ptp(float_logits)
    path = str(tmp_path / "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    assert _float_input_layers(reloaded) == (11, 11)
    np.testing.assert_array_equal(_outputs(reloaded), logits)
    # Quantizing the inputs too (Keras' int8) changes the logits: the
    # reload above would have failed without the saved choice.
    keras_int8 = _model()
    keras.Model.quantize(keras_int8, "int8")
    assert not np.array_equal(_outputs(keras_int8), logits)


def test_a_quantized_preset_reloads_with_float_inputs(tmp_path):
    pytest.importorskip("keras_hub")
    backbone = _model(TransformerBackbone)
    backbone.quantize("int8")
    hidden = _outputs(backbone)
    backbone.save_to_preset(str(tmp_path))
    reloaded = TransformerBackbone.from_preset(str(tmp_path))
    assert reloaded.get_config()["dtype"]["class_name"] == "DTypePolicyMap"
    assert reloaded.get_config()["int8_inputs"] == "float"
    assert _float_input_layers(reloaded) == (11, 11)
    np.testing.assert_array_equal(_outputs(reloaded), hidden)


def test_keras_own_int8_still_saves_and_reloads_with_quantized_inputs(tmp_path):
    # Models quantized by Keras' default int8 (every quantized model saved
    # before int8_inputs existed) keep quantizing their inputs.
    model = _model()
    keras.Model.quantize(model, "int8")
    assert _float_input_layers(model) == (0, 11)
    named = _model()
    named.quantize("int8", config=keras.quantizers.Int8QuantizationConfig(
        weight_quantizer=keras.quantizers.AbsMaxQuantizer(axis=0)))
    np.testing.assert_array_equal(_outputs(named), _outputs(model))
    assert "int8_inputs" not in model.get_config()
    logits = _outputs(model)
    path = str(tmp_path / "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    assert _float_input_layers(reloaded) == (0, 11)
    np.testing.assert_array_equal(_outputs(reloaded), logits)
    with pytest.raises(ValueError, match="int8_inputs"):
        Transformer(vocabulary_size=64, num_layers=1, int8_inputs="int4")


def test_quantize_int8_is_the_quantize_of_models_and_ensembles():
    expected = _model()
    expected.quantize("int8")
    quantized = _model()
    quantize_int8(quantized)
    np.testing.assert_array_equal(_outputs(quantized), _outputs(expected))
    member = _model()
    Ensemble([member, member]).quantize("int8")
    assert _float_input_layers(member) == (11, 11)
    np.testing.assert_array_equal(_outputs(member), _outputs(expected))


@pytest.mark.skipif(keras.config.backend() != "tensorflow", reason="TensorFlow graphs")
def test_a_tensorflow_graph_reads_int8_kernels_once_per_search(monkeypatch):
    # The int8 kernel of a layer with float inputs is cast to bfloat16 for
    # the matmul; in a graph without XLA, once per search (not per step),
    # with the same translations.
    generate_module = importlib.import_module("keras_transformer.decoding.generate")
    from keras_transformer.decoding.generate import StaticDecode, tf_decode_signature

    model = _model(dtype="mixed_bfloat16")
    model.quantize("int8")
    options = DecodeOptions(max_extra_length=8, beam_size=2)
    static = StaticDecode.from_options(options, cache_growth=16)
    ids = INPUTS["encoder_token_ids"][:, :-1]

    def int8_casts_in_loop(generator):
        graph = generator._compiled(static).get_concrete_function(
            *tf_decode_signature()).graph.as_graph_def()
        casts = 0
        for function in graph.library.function:
            if "body" not in function.signature.name:
                continue
            reads = {node.name for node in function.node_def if node.op == "ReadVariableOp"}
            casts += sum(
                node.op == "Cast" and node.input[0].split(":")[0] in reads
                and node.attr["SrcT"].type == 6  # DT_INT8
                for node in function.node_def
            )
        return casts

    def decode(generator):
        return generator.decode(ids, options, 8, SearchInputs())

    once = Generator(model)
    translations = decode(once)
    assert int8_casts_in_loop(once) == 0
    monkeypatch.setattr(
        generate_module, "_weights_cast_once", lambda model: contextlib.nullcontext()
    )
    every_step = Generator(model)
    for a, b in zip(translations, decode(every_step)):
        np.testing.assert_array_equal(a, b)
    assert int8_casts_in_loop(every_step) > 0
