"""TensorFlow never takes a GPU unless it is the backend
(`keras_transformer.utils.tensorflow_devices`): every path of the package
that imports TensorFlow under JAX or PyTorch hides its GPUs before its first
op, and the TensorFlow backend keeps them. Checked in fresh processes, where
TensorFlow has run no op yet."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

# Records TensorFlow's set_visible_devices calls, then imports a module of
# the package that uses TensorFlow and runs a tf.data op.
SCRIPT = """
import json
import sys

import tensorflow as tf

calls = []
original = tf.config.set_visible_devices


def recording(devices, device_type=None):
    calls.append([list(devices), device_type])
    return original(devices, device_type)


tf.config.set_visible_devices = recording
import importlib

for name in sys.argv[1:]:
    module = importlib.import_module(name)
    if hasattr(module, "load_tensorflow_summary"):
        module.load_tensorflow_summary()
from keras_transformer.utils.tensorflow_devices import tensorflow_gpus_hidden

list(tf.data.Dataset.range(3).map(lambda x: x + 1))
print(json.dumps({
    "calls": calls,
    "hidden": tensorflow_gpus_hidden(),
    "visible_gpus": [d.name for d in tf.config.get_visible_devices("GPU")],
    "logical_gpus": [d.name for d in tf.config.list_logical_devices("GPU")],
}))
"""

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed"
    ),
    # Each check runs in a fresh process with the backend it names.
    pytest.mark.backend_independent,
]


def _run(backend, *modules):
    env = dict(os.environ, KERAS_BACKEND=backend)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *modules], cwd=REPO_ROOT, env=env,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "backend, modules",
    [
        # The tf.data stream, and TensorBoard's writer (tf.summary), loaded
        # when a run writes event files: one hiding for both.
        ("jax", ["keras_transformer.data.stream", "keras_transformer.training.validation_bleu"]),
        ("torch", ["keras_transformer.data.pipeline"]),
    ],
)
def test_tensorflow_sees_no_gpu_under_jax_and_torch(backend, modules):
    state = _run(backend, *modules)
    assert state["calls"] == [[[], "GPU"]], state
    assert state["hidden"], state
    assert state["visible_gpus"] == [] and state["logical_gpus"] == [], state


def test_the_tensorflow_backend_keeps_its_gpus():
    state = _run("tensorflow", "keras_transformer.data.stream")
    assert state["calls"] == [] and not state["hidden"], state
