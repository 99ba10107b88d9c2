"""Shared fixtures. The backend comes from KERAS_BACKEND (the README's test
command runs the suite once per backend)."""

import gc
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# OpenMP's busy-waiting makes torch many times slower when other work shares
# the (2) cores, e.g. tf.data threads; must be set before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# A cheaper XLA:CPU compiler (JAX; TensorFlow where it uses XLA): the suite
# compiles thousands of small programs and runs each a few times, so compile
# time is most of its JAX time. LLVM at optimisation level 0, and XLA's
# older LLVM IR emitters for fusions instead of its MLIR fusion emitters,
# which take about 2.5 times as long to compile the suite's programs
# (benchmarks/README.md, "Test suite"). The same programs, a cheaper
# compiler. Subprocesses inherit them. Set before JAX is imported; a value
# set in XLA_FLAGS is kept.
for _flag, _value in (
    ("xla_backend_optimization_level", "0"),
    ("xla_cpu_use_fusion_emitters", "false"),
):
    if _flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + f" --{_flag}={_value}"
        ).strip()
# XLA_FLAGS for a subprocess with two virtual JAX CPU devices, keeping the
# suite's other XLA flags.
TWO_JAX_CPU_DEVICES = (
    os.environ["XLA_FLAGS"] + " --xla_force_host_platform_device_count=2"
).strip()

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Files written by the package for the tests to read (a trained preset,
# files saved by an older version).
FIXTURES = os.path.join(REPO_ROOT, "tests", "fixtures")
MULTI30K_DIR = os.environ.get(
    "MULTI30K_DIR", os.path.join(REPO_ROOT, "..", "shared", "data", "multi30k")
)


def pytest_report_header(config):
    return f"keras backend: {keras.config.backend()}"


# Tests marked backend_independent run in this backend's suite only (the
# README's test command runs the suite once per backend; PyTorch's ends first).
BACKEND_INDEPENDENT_SUITE = "torch"


def pytest_collection_modifyitems(config, items):
    if keras.config.backend() == BACKEND_INDEPENDENT_SUITE:
        return
    skip = pytest.mark.skip(
        reason="backend independent: runs once per suite, in the "
        f"KERAS_BACKEND={BACKEND_INDEPENDENT_SUITE} suite"
    )
    for item in items:
        if item.get_closest_marker("backend_independent"):
            item.add_marker(skip)


def pytest_collection_finish(session):
    # The objects alive once every test module is imported (the modules of
    # Keras and the backends, about half a million objects) live to the end
    # of the run: freezing them keeps each full garbage collection from
    # scanning them again.
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _seed_and_reset_policy():
    keras.utils.set_random_seed(1234)
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture
def multi30k_dir():
    if not os.path.exists(os.path.join(MULTI30K_DIR, "train.en.gz")):
        pytest.skip(f"Multi30k not found at {MULTI30K_DIR} (set MULTI30K_DIR)")
    return MULTI30K_DIR


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def to_numpy(x):
    return np.asarray(keras.ops.convert_to_numpy(x))


def compiled(model, function):
    """``function`` (of tensors, reading ``model``'s weights) compiled under
    JAX: one XLA compilation per input shape, where eager JAX compiles each
    operation for each shape it meets (seconds for a model called on a few
    shapes); unchanged on the other backends, whose eager calls are fast."""
    if keras.config.backend() == "jax":
        from keras_transformer.decoding.backends import jax_stateless_jit

        return jax_stateless_jit(model, function)
    return function
