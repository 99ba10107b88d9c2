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
  (`check_model_arrays` of in-memory data in ``Transformer.fit``/
  ``evaluate``/``predict``, `make_dataset`'s ``vocabulary_size``) remain;
* under JAX, ``fit``/``evaluate``/``predict`` check each batch on the host
  (NumPy, no device work) as Keras hands it to the compiled step
  (`checked_jax_step_function`), and raise a ``ValueError`` before the step
  runs, leaving the model usable. Inside ``jax.jit`` itself nothing is
  checked (see `_check_jax`).

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
import itertools

from keras_transformer.utils.private_apis import mark_jax_state_synced


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


def _array_like(value):
    """Whether ``value`` is data held in memory (not a dataset or generator)."""
    if isinstance(value, (np.ndarray, list, tuple)):
        return True
    return keras.ops.is_tensor(value) and not isinstance(value, keras.KerasTensor)


def _check_segment_id_array(segment_ids, token_ids, name):
    """Packed rows' segment ids: integers >= 0 in the token ids' shape."""
    segments = np.asarray(ops.convert_to_numpy(segment_ids))
    if not np.issubdtype(segments.dtype, np.integer):
        raise ValueError(f"{name} must be integers. Received dtype {segments.dtype}")
    if segments.size and segments.min() < 0:
        raise ValueError(
            f"{name} must be >= 0 (0 marks padding). Received a minimum of "
            f"{segments.min()}"
        )
    if token_ids is not None and _array_like(token_ids):
        shape = np.shape(ops.convert_to_numpy(token_ids))
        if segments.shape != shape:
            raise ValueError(
                f"{name} must have the shape of the token ids. Received "
                f"{name} shape {segments.shape}, token ids shape {shape}"
            )


def check_model_arrays(model, x=None, y=None, label_ignore_id=None):
    """Entry-point check of in-memory ``(x, y)`` for `Transformer.fit` & co.

    Raises a ValueError naming the input before any (compiled) step runs, so
    that the model is left untouched (a failure inside a compiled JAX step
    loses the model's variables, a Keras limitation) and so that the check
    also holds where the graph check cannot (TensorFlow with XLA). Datasets
    and generators pass through: the graph checks cover them.

    Args:
        model: a `Transformer` (reads ``vocabulary_size`` and
            ``source_vocabulary_size``).
        x: the inputs dict, or anything else (ignored).
        y: labels (array-like), or None.
        label_ignore_id: int or None. A label id allowed anywhere (the loss's
            padding id).
    """
    if isinstance(x, dict):
        sizes = {
            "encoder_token_ids": model.source_vocabulary_size,
            "decoder_token_ids": model.vocabulary_size,
        }
        for name, size in sizes.items():
            if name in x and _array_like(x[name]):
                check_token_id_arrays(x[name], size, name)
        for side in ("encoder", "decoder"):
            name = f"{side}_segment_ids"
            if name in x and _array_like(x[name]):
                _check_segment_id_array(x[name], x.get(f"{side}_token_ids"), name)
    if y is not None and _array_like(y):
        check_token_id_arrays(y, model.vocabulary_size, "labels", label_ignore_id)


def checked_jax_step_function(model, step_function, kind):
    """Wraps a Keras JAX ``(state, iterator)`` step function with batch checks.

    The batches of one call (``steps_per_execution`` of them) are taken from
    the iterator and checked with `check_model_arrays` before the compiled
    step runs. On a bad batch the variables that Keras detached for the
    step are put back from ``state`` (nothing was donated yet), so the model
    stays usable, and a ValueError naming the input is raised.

    Args:
        model: the `Transformer`.
        step_function: ``model.train_function`` / ``test_function`` /
            ``predict_function`` as Keras' JAX trainer built it.
        kind: "train", "test" or "predict" (the layout of ``state``).
    """

    def checked(state, iterator):
        batches = list(itertools.islice(iterator, max(1, model.steps_per_execution)))
        if not batches:
            raise StopIteration
        try:
            for batch in batches:
                x, y, _ = keras.utils.unpack_x_y_sample_weight(batch)
                check_model_arrays(
                    model, x, None if kind == "predict" else y,
                    label_ignore_id=getattr(model.loss, "pad_id", None),
                )
        except ValueError:
            _restore_jax_state(model, state, kind)
            raise
        return step_function(state, iter(batches))

    return checked


def _restore_jax_state(model, state, kind):
    groups = [model.trainable_variables, model.non_trainable_variables]
    if kind == "train":
        groups.append(model.optimizer.variables)
    if kind in ("train", "test"):
        groups.append(model.metrics_variables)
    for variables, values in zip(groups, state):
        for variable, value in zip(variables, values):
            variable.assign(value)
    mark_jax_state_synced(model)


class TokenIdCheckedModel:
    """A `keras.Model` mixin that holds the token-id contract at the entry
    points of Keras' trainer: in-memory arrays are checked in ``fit``,
    ``evaluate`` and ``predict`` before any step runs, and under JAX every
    batch of a dataset or generator is checked on the host before its
    compiled step (`checked_jax_step_function`).

    Why the trainer methods are overridden: Keras has no public hook that
    sees each batch before a compiled JAX step, and an ``Assert`` cannot
    raise inside ``jax.jit``; a callback sees no data. The overrides only
    check and delegate to Keras. After a refused JAX batch,
    `_restore_jax_state` puts back the variables Keras detached for the
    step and marks them synced (`mark_jax_state_synced`), so the model
    stays usable.
    """

    def _check_arrays(self, x, y=None):
        check_model_arrays(
            self, x, y, label_ignore_id=getattr(self.loss, "pad_id", None)
        )

    def fit(self, x=None, y=None, *args, **kwargs):
        self._check_arrays(x, y)
        validation_data = kwargs.get("validation_data")
        if isinstance(validation_data, (tuple, list)) and validation_data:
            self._check_arrays(*validation_data[:2])
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        self._check_arrays(x, y)
        return super().evaluate(x, y, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        self._check_arrays(x)
        return super().predict(x, *args, **kwargs)

    # Under JAX, datasets and generators are checked batch by batch on the
    # host before each compiled step (no check can raise inside jit cheaply).

    def make_train_function(self, force=False):
        built = force or self.train_function is None
        result = super().make_train_function(force)
        if built and keras.config.backend() == "jax":
            self.train_function = checked_jax_step_function(self, self.train_function, "train")
        return result

    def make_test_function(self, force=False):
        built = force or self.test_function is None
        result = super().make_test_function(force)
        if built and keras.config.backend() == "jax":
            self.test_function = checked_jax_step_function(self, self.test_function, "test")
        return result

    def make_predict_function(self, force=False):
        built = force or self.predict_function is None
        super().make_predict_function(force)
        if built and keras.config.backend() == "jax":
            self.predict_function = checked_jax_step_function(
                self, self.predict_function, "predict"
            )
        return self.predict_function
