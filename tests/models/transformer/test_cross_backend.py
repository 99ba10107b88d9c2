"""A .keras file saved under one backend loads under another, gives the
same logits, and keeps training with its optimizer state.

Each backend's suite saves under its own backend and loads under the next
one (tensorflow -> jax -> torch -> tensorflow), so the README's test
command checks every backend as saver and as loader, with one subprocess
per suite instead of two. (tests/models/transformer/test_hub.py does the same for presets.)"""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import REPO_ROOT, to_numpy

NEXT_BACKEND = {"tensorflow": "jax", "jax": "torch", "torch": "tensorflow"}

LOAD_AND_CONTINUE = textwrap.dedent(
    """
    import sys
    import keras
    import numpy as np
    import keras_transformer  # registers the classes; no custom_objects

    path, data_path = sys.argv[1], sys.argv[2]
    data = np.load(data_path)
    inputs = {"encoder_token_ids": data["source"], "decoder_token_ids": data["target"]}
    model = keras.saving.load_model(path)  # safe_mode=True by default
    logits = keras.ops.convert_to_numpy(model(inputs, training=False))
    np.testing.assert_allclose(logits, data["logits"], atol=1e-5)
    assert int(model.optimizer.iterations) == 2, int(model.optimizer.iterations)
    # jit_compile was "auto" when saved: the loading backend resolves it as a
    # fresh compile here does (not the saving backend's True/False).
    fresh = keras_transformer.Transformer(vocabulary_size=40, num_layers=1, d_model=32, num_heads=4, d_ff=64)
    fresh.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    assert model.jit_compile == fresh.jit_compile, (model.jit_compile, fresh.jit_compile)
    before = float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))
    model.fit(inputs, data["labels"], epochs=1, batch_size=len(data["labels"]), verbose=0)
    assert int(model.optimizer.iterations) == 3
    after = float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))
    assert after > before, (before, after)  # still warming up: schedule continued
    print("ok", keras.backend.backend())
    """
)


@pytest.mark.slow
def test_keras_file_loads_and_trains_under_the_next_backend(tmp_path, rng):
    model = kt.Transformer(
        vocabulary_size=40, num_layers=1, d_model=32, num_heads=4, d_ff=64
    )
    model.compile(
        optimizer=kt.transformer_optimizer(32, warmup_steps=100),
        loss=kt.LabelSmoothedCrossEntropy(),
        metrics=[kt.MaskedTokenAccuracy()],
    )
    source = rng.integers(4, 40, size=(4, 6)).astype("int32")
    target = rng.integers(4, 40, size=(4, 5)).astype("int32")
    target[:, 0] = kt.BOS_ID
    target[0, 3:] = 0
    labels = np.concatenate([target[:, 1:], np.full((4, 1), kt.EOS_ID)], 1)
    labels[0, 2:] = 0
    inputs = {"encoder_token_ids": source, "decoder_token_ids": target}
    model.fit(inputs, labels, epochs=2, batch_size=4, verbose=0)
    path = str(tmp_path / "model.keras")
    model.save(path)
    assert model.get_compile_config()["jit_compile"] == "auto"
    data_path = str(tmp_path / "data.npz")
    np.savez(
        data_path,
        source=source,
        target=target,
        labels=labels,
        logits=to_numpy(model(inputs, training=False)),
    )
    script = tmp_path / "load.py"
    script.write_text(LOAD_AND_CONTINUE)
    for backend in [NEXT_BACKEND[keras.backend.backend()]]:
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
        result = subprocess.run(
            [sys.executable, str(script), path, data_path],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, (
            f"saved under {keras.backend.backend()}, loading under {backend} failed:\n"
            + result.stderr[-3000:]
        )
        assert f"ok {backend}" in result.stdout


def test_jit_compile_is_saved_as_auto_unless_it_departs_from_auto():
    model = kt.Transformer(vocabulary_size=40, num_layers=1, d_model=32, num_heads=4, d_ff=64)
    loss = kt.LabelSmoothedCrossEntropy()
    model.compile(optimizer="adam", loss=loss)
    auto = model.jit_compile  # this backend's choice for "auto"
    assert auto in (True, False)
    assert model.get_compile_config()["jit_compile"] == "auto"
    model.compile(optimizer="adam", loss=loss, jit_compile=not auto)
    assert model.jit_compile is (not auto)
    assert model.get_compile_config()["jit_compile"] is (not auto)
