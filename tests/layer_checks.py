"""One helper that checks every layer the same way (keras-hub style)."""

import keras
import numpy as np

from conftest import to_numpy


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

    # Mixed precision: variables stay float32, compute in half precision.
    for policy in ("mixed_float16", "mixed_bfloat16"):
        mixed = layer_cls(**init_kwargs, dtype=policy)
        outputs = mixed(inputs, **call_kwargs)
        for weight in mixed.weights:
            assert weight.dtype == "float32"
        assert np.all(np.isfinite(to_numpy(keras.ops.cast(outputs, "float32"))))
    return layer, eager
