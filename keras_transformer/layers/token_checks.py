"""The token-id contract: every id a model reads lies in ``[0, vocabulary_size)``.

An embedding lookup with an out-of-range id does not fail cleanly on any
backend: id -1 wraps to the last row, an id >= V gives NaN (JAX), zeros or a
device-side assert, and an out-of-range label trains silently. So the
`Transformer` checks its two inputs and `LabelSmoothedCrossEntropy` its labels
with `check_token_ids`, which raises an error naming the input, the offending
id and the vocabulary size wherever the ids are:

* concrete values (NumPy, eager TensorFlow, JAX arrays outside ``jit``,
  PyTorch tensors, which Keras runs eagerly): a ``ValueError`` at once;
* inside a TensorFlow graph (``fit``, ``predict``, a SavedModel signature): a
  ``tf.debugging.Assert`` that raises ``InvalidArgumentError`` when the step
  runs. XLA drops ``Assert`` ops, so with ``jit_compile=True`` (Keras' default
  on a TensorFlow GPU) the graph check is a no-op; the entry-point checks
  (`keras_transformer.models.token_id_checked_model.check_model_arrays` of
  in-memory data in ``Transformer.fit``/``evaluate``/``predict``,
  `make_dataset`'s ``vocabulary_size``) remain;
* under JAX, ``fit``/``evaluate``/``predict`` check each batch on the host
  (NumPy, no device work) as Keras hands it to the compiled step
  (`keras_transformer.models.token_id_checked_model`), and raise a
  ``ValueError`` before the step runs, leaving the model usable. Inside
  ``jax.jit`` itself nothing is checked (see `_check_jax`).

The cost is two integer reductions per checked tensor;
`benchmarks/token_check_cost.py` times it.
"""

import keras
import numpy as np
from keras import ops

if keras.config.backend() == "tensorflow":
    from keras_transformer.utils.tensorflow_devices import tf
else:  # Only the TensorFlow backend's paths use TensorFlow.
    tf = None


def out_of_range_message(name, token_id, vocabulary_size):
    return (
        f"{name} contains id {token_id} outside [0, {vocabulary_size}) "
        f"(vocabulary_size={vocabulary_size})"
    )


def _raise_if_out_of_range(low, high, vocabulary_size, name):
    low, high = int(low), int(high)
    if low < 0:
        raise ValueError(out_of_range_message(name, low, vocabulary_size))
    if high >= vocabulary_size:
        raise ValueError(out_of_range_message(name, high, vocabulary_size))


def _concrete_ids(token_ids, name, integer_dtype=False):
    """``token_ids`` as a NumPy array, or None when they are not concrete
    (symbolic or traced tensors are checked in the graph). Raises a
    ValueError naming ``name`` for values that are not integer ids (with
    ``integer_dtype``: for any non-integer dtype)."""
    try:
        ids = np.asarray(ops.convert_to_numpy(token_ids))
    except Exception:  # symbolic / traced tensors
        return None
    if integer_dtype and not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"{name} must be integers. Received dtype {ids.dtype}")
    if ids.dtype == object:
        return None
    if not (np.issubdtype(ids.dtype, np.integer) or np.issubdtype(ids.dtype, np.floating)):
        raise ValueError(f"{name} must be integer token ids. Received dtype {ids.dtype}")
    if np.issubdtype(ids.dtype, np.floating) and not np.array_equal(ids, np.round(ids)):
        raise ValueError(f"{name} must be integer token ids. Received non-integer values")
    return ids


def check_token_id_arrays(token_ids, vocabulary_size, name, ignore_id=None):
    """Raise a ValueError if concrete ids lie outside ``[0, vocabulary_size)``.

    ``ignore_id`` (e.g. a label padding id) is allowed wherever it is. Does
    nothing for values that are not concrete (symbolic or traced tensors).
    """
    ids = _concrete_ids(token_ids, name)
    if ids is None:
        return
    if ignore_id is not None:
        ids = ids[ids != ignore_id]
    if ids.size:
        _raise_if_out_of_range(ids.min(), ids.max(), vocabulary_size, name)


def validate_token_ids(token_ids, vocabulary_size, name="token_ids"):
    """Raise a ValueError if concrete integer token ids fall outside the
    vocabulary, naming the range found: the check of the public entry points
    that receive ids (the `Translator`, the decoders). Symbolic tensors are
    not checked."""
    ids = _concrete_ids(token_ids, name, integer_dtype=True)
    if ids is None or ids.size == 0:
        return
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= vocabulary_size:
        raise ValueError(
            f"{name} must be in [0, {vocabulary_size}) (vocabulary_size="
            f"{vocabulary_size}). Received ids in [{low}, {high}]"
        )


def check_token_ids(token_ids, vocabulary_size, name, ignore_id=None):
    """Returns ``token_ids``, raising if any lies outside ``[0, vocabulary_size)``.

    Works eagerly and inside compiled steps (see the module docstring for
    how each backend reports the error). Use the returned tensor, so that
    graph-mode checks run before the ids are read.

    Args:
        token_ids: int tensor of any shape.
        vocabulary_size: int. Ids must be ``< vocabulary_size``; None
            (a dynamic size) skips the check.
        name: str. The input named in the error, e.g. "encoder_token_ids".
        ignore_id: int or None. An id allowed anywhere (a label padding id
            outside the vocabulary).
    """
    if vocabulary_size is None:  # unknown (dynamic) size: nothing to check
        return token_ids
    vocabulary_size = int(vocabulary_size)
    backend = keras.config.backend()
    if backend == "tensorflow":
        return _check_tensorflow(token_ids, vocabulary_size, name, ignore_id)
    if backend == "jax":
        return _check_jax(token_ids, vocabulary_size, name, ignore_id)
    if backend == "torch":
        return _check_torch(token_ids, vocabulary_size, name, ignore_id)
    check_token_id_arrays(token_ids, vocabulary_size, name, ignore_id)
    return token_ids


def _range_of_ids(token_ids, ignore_id):
    """``(min, max)`` of the ids as int32 scalars, ``ignore_id`` counted as 0.

    Static shapes only (no boolean masking), so that it also compiles under
    XLA; an empty tensor gives ``(INT32_MAX, INT32_MIN)``, which passes.
    """
    ids = ops.cast(token_ids, "int32")
    if ignore_id is not None:
        ids = ops.where(ops.equal(ids, int(ignore_id)), 0, ids)
    return ops.min(ids), ops.max(ids)


def _check_tensorflow(token_ids, vocabulary_size, name, ignore_id):

    if tf.executing_eagerly():
        check_token_id_arrays(token_ids, vocabulary_size, name, ignore_id)
        return token_ids
    token_ids = tf.convert_to_tensor(token_ids)
    low, high = _range_of_ids(token_ids, ignore_id)
    offending = tf.where(low < 0, low, high)
    assertion = tf.debugging.Assert(
        tf.logical_and(low >= 0, high < vocabulary_size),
        [
            f"{name} contains id",
            offending,
            f"outside [0, {vocabulary_size}) (vocabulary_size={vocabulary_size})",
        ],
    )
    with tf.control_dependencies([assertion]):
        return tf.identity(token_ids)


def _check_jax(token_ids, vocabulary_size, name, ignore_id):
    import jax

    if not isinstance(token_ids, jax.core.Tracer):
        check_token_id_arrays(token_ids, vocabulary_size, name, ignore_id)
    # Inside jit nothing is checked: raising needs a host callback, and a
    # compiled step that holds one (even in a branch never taken) loses
    # JAX's fast dispatch: about 4 ms more per step on CPU, 2x a small
    # model's step. `checked_jax_step_function` checks each batch on the
    # host before the compiled step instead.
    return token_ids


def _check_torch(token_ids, vocabulary_size, name, ignore_id):
    import torch

    # Keras runs PyTorch eagerly, so the ids are concrete: reduce on their
    # device and fetch two numbers (on a GPU, one synchronisation).
    if not isinstance(token_ids, torch.Tensor):
        check_token_id_arrays(token_ids, vocabulary_size, name, ignore_id)
        return token_ids
    if token_ids.device.type == "meta" or token_ids.numel() == 0:
        return token_ids
    if token_ids.is_floating_point() or token_ids.is_complex() or token_ids.dtype == torch.bool:
        check_token_id_arrays(token_ids, vocabulary_size, name, ignore_id)
        return token_ids
    low, high = _range_of_ids(token_ids, ignore_id)
    _raise_if_out_of_range(*torch.stack([low, high]).tolist(), vocabulary_size, name)
    return token_ids


@keras.saving.register_keras_serializable(package="keras_transformer")
class TokenIdCheck(keras.layers.Layer):
    """Identity on token ids that raises if any lies outside the vocabulary.

    The `Transformer` applies one to each of its inputs, so that ``model(...)``,
    ``predict``, ``evaluate`` and ``fit`` all reject out-of-range ids with an
    error naming the input (see `check_token_ids`).

    Args:
        vocabulary_size: int. Ids must be in ``[0, vocabulary_size)``.
        input_name: str. The input named in the error. Defaults to
            "token_ids".

    Call arguments:
        token_ids: int tensor of any shape; returned unchanged.

    Example:
    >>> check = TokenIdCheck(10, input_name="encoder_token_ids")
    >>> check(np.array([[3, 69]]))
    Traceback (most recent call last):
    ValueError: encoder_token_ids contains id 69 outside [0, 10) ...
    """

    def __init__(self, vocabulary_size, input_name="token_ids", **kwargs):
        super().__init__(**kwargs)
        if (
            isinstance(vocabulary_size, bool)
            or not isinstance(vocabulary_size, (int, np.integer))
            or vocabulary_size <= 0
        ):
            raise ValueError(
                "vocabulary_size must be a positive int. Received: "
                f"vocabulary_size={vocabulary_size!r}"
            )
        self.vocabulary_size = int(vocabulary_size)
        self.input_name = input_name
        self.supports_masking = False
        self.built = True

    def call(self, token_ids):
        return check_token_ids(token_ids, self.vocabulary_size, self.input_name)

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, token_ids):
        return keras.KerasTensor(token_ids.shape, dtype=token_ids.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"vocabulary_size": self.vocabulary_size, "input_name": self.input_name}
        )
        return config
