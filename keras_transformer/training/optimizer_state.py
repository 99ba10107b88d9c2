"""What the optimizer holds, as the training callbacks read it.

- `optimizer_updates` and `UpdateCounter`: the count of optimizer updates.
  With gradient accumulation Keras calls ``on_train_batch_end`` once per
  batch while the optimizer updates the weights every ``accumulate_steps``
  batches; callbacks that act every N updates count updates, as
  ``optimizer.iterations`` does.
- `ema_weights`: the optimizer's exponential moving average of the weights
  (``use_ema``) in the model for the duration of a block. Validation BLEU
  and the best checkpoint use the average, the model that training will
  deliver; the epoch checkpoints hold the raw weights and the optimizer
  state, which includes the average.
"""

import contextlib

import keras
import numpy as np


def optimizer_updates(model):
    """Optimizer updates so far (under accumulation: batches // steps)."""
    return int(keras.ops.convert_to_numpy(model.optimizer.iterations))


class UpdateCounter(keras.callbacks.Callback):
    """A callback that counts optimizer updates in ``self.updates``.

    ``on_update(logs)`` runs after each update. Accessing ``self.model``
    (which under JAX copies the training state back into the variables) is
    left to subclasses, for the batches where they need it.

    Args:
        accumulate_steps: int. Batches per optimizer update. Defaults to 1.
    """

    def __init__(self, accumulate_steps=1):
        super().__init__()
        self.accumulate_steps = accumulate_steps
        self.updates = 0
        self._batches = 0

    def on_train_begin(self, logs=None):
        # BackupAndRestore, before this callback in the list, has restored
        # the optimizer by now.
        self.updates = optimizer_updates(self.model)
        self._batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self._batches += 1
        if self._batches % self.accumulate_steps == 0:
            self.updates += 1
            self.on_update(logs)

    def on_update(self, logs=None):
        pass



@contextlib.contextmanager
def ema_weights(model):
    """Puts the optimizer's moving average of the weights into ``model`` for
    the duration of the block, then the raw weights back.

    Does nothing when the optimizer keeps no average (``use_ema=False``) or
    has not been built yet.
    """
    optimizer = model.optimizer
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # LossScaleOptimizer
    if not getattr(inner, "use_ema", False) or not inner.built:
        yield
        return
    variables = model.trainable_variables
    raw = [np.array(keras.ops.convert_to_numpy(v)) for v in variables]
    optimizer.finalize_variable_values(variables)
    try:
        yield
    finally:
        for variable, value in zip(variables, raw):
            variable.assign(value)
