"""The package's int8: int8 kernels, float inputs (weights-only quantization).

``Translator(quantize="int8")``, ``keras-transformer export --quantize
int8``, `Ensemble.quantize("int8")` and the ``quantize("int8")`` of
`Transformer`, `TransformerBackbone` and `TransformerSeq2SeqLM` quantize
the same way, through `quantize_int8` and `quantization_config` (the
models' ``quantize``: `quantize_with_package_default`): each
``keras.layers.Dense`` kernel is stored as int8 with one float scale per
output unit (Keras' ``AbsMaxQuantizer(axis=0)``, the kernels of Keras' own
int8), and the layer's inputs stay in the compute dtype. A step then
multiplies the inputs by the int8 kernel read as the compute dtype and
divides by the scales: int8 weights in files and in memory, the matmul of
the float model. (A TensorFlow graph search reads each int8 kernel as the
compute dtype once, before its loop, and holds that copy while it runs:
`keras_transformer.utils.private_apis.variables_read_as_cast`.)

Keras' default int8 (``keras.Model.quantize(model, "int8")``, which
bypasses the package's override, or ``model.quantize("int8", config=...)``
with an `Int8QuantizationConfig` that names its weight quantizer) also
quantizes each Dense layer's inputs and multiplies int8 by int8 into int32.
TensorFlow's stock CPU build has no fast kernel for that product
(`BatchMatMulV3` on int8 runs several times slower than the bfloat16 matmul
at a decode step's shapes on an AVX512-VNNI CPU,
benchmarks/results/decode_kernels_cpu.md), so a fully int8 SavedModel
translates slower than the float one. It stays available as above, and
such models save and reload as they are.

A quantized backbone's config records the choice (``int8_inputs``:
"float" for the package's int8; absent, "int8", for Keras' default), and
`keep_float_inputs` applies it to the rebuilt layers, so that a quantized
preset or ``.keras`` file reloads as the model that was saved.
"""

import keras

from keras_transformer.utils.private_apis import (
    flatten_layers,
    one_garbage_collection,
    set_dense_int8_config,
)

# What the int8 Dense layers of a quantized backbone do with their inputs:
# "int8" quantizes them (Keras' default), "float" keeps them in the
# compute dtype (the package's int8).
INT8_INPUTS = ("int8", "float")


def int8_weights_only_config():
    """The package's int8 as a Keras `Int8QuantizationConfig`: kernels
    quantized per output unit (Keras' default weight quantizer), inputs
    not quantized."""
    return keras.quantizers.Int8QuantizationConfig(
        weight_quantizer=keras.quantizers.AbsMaxQuantizer(axis=0),
        activation_quantizer=None,
    )


def quantization_config(mode, config=None):
    """The ``config`` that a model's ``quantize(mode, config)`` passes on to
    Keras: the package's int8 (`int8_weights_only_config`) for ``"int8"``
    without a config, else ``config`` as given.

    Keras' ``Layer`` wraps every ``quantize`` method so that a call without
    a config reaches it with ``Int8QuantizationConfig()``, Keras' default;
    that config (no weight quantizer, the default input quantizer) counts
    as none. Keras' own int8 is asked for with a config that names its
    weight quantizer, or by ``keras.Model.quantize(model, "int8")``."""
    if mode == "int8" and (config is None or _is_keras_default_int8(config)):
        return int8_weights_only_config()
    return config


def _is_keras_default_int8(config):
    """Whether ``config`` is what Keras makes of an int8 call without one."""
    activation = getattr(config, "activation_quantizer", None)
    return (
        type(config) is keras.quantizers.Int8QuantizationConfig
        and config.weight_quantizer is None
        and type(activation) is keras.quantizers.AbsMaxQuantizer
        and activation.get_config() == keras.quantizers.AbsMaxQuantizer().get_config()
    )


def quantize_with_package_default(quantize, mode=None, config=None, **kwargs):
    """Calls ``quantize`` (Keras' ``Model.quantize`` of a model, its
    ``super().quantize``) with `quantization_config(mode, config)`,
    collecting garbage once (Keras collects once per deleted float kernel):
    the ``quantize`` of the package's models."""
    with one_garbage_collection():
        quantize(mode, config=quantization_config(mode, config), **kwargs)


def quantize_int8(model):
    """Quantizes ``model`` in place the package's way (see the module
    docstring): int8 kernels, float inputs.

    Args:
        model: a `keras.Model` of the package, or a
            `keras_transformer.decoding.Ensemble` (each of its models).

    Keras deletes each float kernel with a full garbage collection; one
    collection runs at the end instead.
    """
    with one_garbage_collection():
        model.quantize("int8", config=int8_weights_only_config())


def int8_inputs_of(model):
    """``"float"`` when ``model`` has int8 Dense layers that keep float
    inputs (the package's int8), ``"int8"`` otherwise."""
    for layer in _int8_dense_layers(model):
        config = layer.quantization_config
        if config is not None and config.activation_quantizer is None:
            return "float"
    return "int8"


def keep_float_inputs(model):
    """Makes each int8 Dense layer of ``model`` (built from a saved
    ``DTypePolicyMap``) keep its inputs in the compute dtype, as the
    package's int8 quantized it. Keras builds an int8 layer with the
    ``quantization_config`` it was constructed with, and the package's
    layers construct their Dense layers without one."""
    for layer in _int8_dense_layers(model):
        set_dense_int8_config(layer, int8_weights_only_config())


def _int8_dense_layers(model):
    return [
        layer for layer in flatten_layers(model)
        if isinstance(layer, keras.layers.Dense) and layer.quantization_mode == "int8"
    ]
