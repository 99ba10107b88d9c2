"""One helper that checks every layer the same way (keras-hub style)."""

import os
import tempfile

import keras
import numpy as np

from conftest import to_numpy

# Half-precision outputs vs float32 outputs with the same weights: relative
# to the outputs' scale (bfloat16 keeps 8 significant bits).
HALF_PRECISION_TOLERANCE = {"mixed_float16": 1e-2, "mixed_bfloat16": 5e-2}


def run_layer_checks(layer_cls, init_kwargs, inputs, call_kwargs=None, fit=True):
    """Config round-trip, symbolic == eager shapes, saved-weights round-trip,
    one `fit` step, and mixed-precision dtype policies."""
    call_kwargs = call_kwargs or {}
    layer = layer_cls(**init_kwargs)
    eager = layer(inputs, **call_kwargs)

    # Config round-trip: same config, and same outputs with the same weights.
    config = layer.get_config()
    restored = layer_cls.from_config(config)
    assert restored.get_config() == config
    restored(inputs, **call_kwargs)
    restored.set_weights(layer.get_weights())
    np.testing.assert_allclose(
        to_numpy(restored(inputs, **call_kwargs)), to_numpy(eager), atol=1e-6
    )

    # Serialization through the registry (what .keras files use).
    serialized = keras.saving.serialize_keras_object(layer)
    deserialized = keras.saving.deserialize_keras_object(serialized, safe_mode=True)
    assert type(deserialized) is layer_cls

    # Symbolic call has the eager shape (batch dim free).
    symbolic_input = keras.KerasTensor(
        (None,) + tuple(np.shape(inputs))[1:], dtype=str(np.asarray(inputs).dtype)
    )
    symbolic = layer_cls(**init_kwargs)(symbolic_input, **call_kwargs)
    assert tuple(symbolic.shape)[1:] == tuple(eager.shape)[1:]

    # Saved-weights round trip: a model holding the layer, saved to a .keras
    # file and loaded with safe_mode, gives the same outputs.
    model_input = keras.Input(
        shape=tuple(np.shape(inputs))[1:], dtype=str(np.asarray(inputs).dtype)
    )
    saved_layer = layer_cls(**init_kwargs)
    saved_model = keras.Model(model_input, saved_layer(model_input, **call_kwargs))
    saved_layer.set_weights(layer.get_weights())
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "layer.keras")
        saved_model.save(path)
        loaded = keras.saving.load_model(path, safe_mode=True)
    loaded_layer = loaded.layers[-1]
    assert type(loaded_layer) is layer_cls
    assert loaded_layer.get_config() == saved_layer.get_config()
    np.testing.assert_allclose(to_numpy(loaded(inputs)), to_numpy(eager), atol=1e-6)

    # One training step changes the weights and gives a finite loss.
    if fit and layer.trainable_weights:
        model_input = keras.Input(
            shape=tuple(np.shape(inputs))[1:], dtype=str(np.asarray(inputs).dtype)
        )
        fit_layer = layer_cls(**init_kwargs)
        output = fit_layer(model_input, **call_kwargs)
        model = keras.Model(model_input, output)
        model.compile(optimizer="sgd", loss="mse")
        before = [to_numpy(w).copy() for w in model.trainable_weights]
        target = np.ones(tuple(eager.shape), "float32")
        history = model.fit(inputs, target, epochs=1, batch_size=len(inputs), verbose=0)
        assert np.isfinite(history.history["loss"][0])
        after = [to_numpy(w) for w in model.trainable_weights]
        assert any(not np.allclose(a, b) for a, b in zip(before, after))

    # Mixed precision: variables stay float32, compute (and outputs) in half
    # precision, and the outputs are the float32 ones up to that precision.
    for policy, tolerance in HALF_PRECISION_TOLERANCE.items():
        mixed = layer_cls(**init_kwargs, dtype=policy)
        mixed(inputs, **call_kwargs)
        mixed.set_weights(layer.get_weights())
        outputs = mixed(inputs, **call_kwargs)
        for weight in mixed.weights:
            assert weight.dtype == "float32"
        half = policy.split("_")[1]
        assert mixed.compute_dtype == half
        assert keras.backend.standardize_dtype(outputs.dtype) == half
        outputs = to_numpy(keras.ops.cast(outputs, "float32"))
        assert np.all(np.isfinite(outputs))
        reference = to_numpy(eager)
        scale = max(1.0, float(np.abs(reference).max()))
        np.testing.assert_allclose(outputs, reference, atol=tolerance * scale)
    return layer, eager
