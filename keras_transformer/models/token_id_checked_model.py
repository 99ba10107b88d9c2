"""`TokenIdCheckedModel`: the token-id contract at the entry points of Keras' trainer.

The layers check the ids they read (`keras_transformer.layers.token_checks`:
`check_token_ids`, `TokenIdCheck`); a model also checks the data handed to
``fit``, ``evaluate`` and ``predict`` before any step runs
(`check_model_arrays`), and under JAX each batch on the host before its
compiled step (`checked_jax_step_function`), where nothing inside ``jit``
can raise cheaply. `TransformerBackbone` (and so `Transformer`) mixes it in.
"""

import itertools

import keras
import numpy as np
from keras import ops

from keras_transformer.layers.token_checks import check_token_id_arrays
from keras_transformer.utils.private_apis import mark_jax_state_synced


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
