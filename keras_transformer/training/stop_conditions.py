"""Callbacks that stop training on a budget: `TimeBudget` (minutes of `fit`)
and `StepLimit` (optimizer updates). Each records in ``stopped`` whether it
stopped the run (`RunCallbacks.stop_reason`). Stopping on validation values
(``patience``) is `BestCheckpoint`'s.
"""

import time

import keras

from keras_transformer.training.optimizer_state import UpdateCounter


class TimeBudget(keras.callbacks.Callback):
    """Stops training after ``minutes`` of wall-clock time in `fit`."""

    def __init__(self, minutes):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.stopped = False
        self.start = None

    def on_train_begin(self, logs=None):
        # Once per run: a resumed, interrupted epoch is finished by a `fit`
        # call of its own before the `fit` of the remaining epochs.
        if self.start is None:
            self.start = time.monotonic()

    def on_train_batch_end(self, batch, logs=None):
        if time.monotonic() - self.start >= self.seconds:
            self.stopped = self.model.stop_training = True


class StepLimit(UpdateCounter):
    """Stops training when the optimizer has made ``max_steps`` updates."""

    def __init__(self, max_steps, accumulate_steps=1):
        super().__init__(accumulate_steps)
        self.max_steps = max_steps
        self.stopped = False

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self.stopped = self.model.stop_training = self.updates >= self.max_steps

    def on_update(self, logs=None):
        if self.updates >= self.max_steps:
            self.stopped = self.model.stop_training = True
