"""`BestCheckpoint`: the best weights by a validation value, and early
stopping when that value stops improving (``patience``)."""

import json
import math
import os

import keras

from keras_transformer.training.optimizer_state import ema_weights, optimizer_updates
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import (
    atomic_write_json,
    nonfinite_variables,
    save_weights,
)
from keras_transformer.utils.run_files import (
    BEST_STATE_FILENAME,
    BEST_WEIGHTS_FILENAME,
)

# Whether a larger value is better.
_MAXIMIZE = {"val_bleu": True, "val_exact_match": True, "val_loss": False}


class BestCheckpoint(keras.callbacks.Callback):
    """Keeps the best weights by a validation value; stops after ``patience``.

    Each evaluation of ``monitor`` ("val_bleu" or "val_exact_match": larger is
    better; "val_loss": smaller) that beats the best so far writes the weights
    (the moving average, with the optimizer's ``use_ema``) to
    ``<directory>/best.weights.h5``, atomically and only when finite, and the
    value with its update number to ``<directory>/best.json``. After
    ``patience`` evaluations in a row without improvement training stops.

    Keras' `ModelCheckpoint(save_best_only=True)` and `EarlyStopping` look at
    epoch logs only; validation BLEU can run every N updates, in the middle
    of an epoch, so `ValidationBleu` reports each value to `observe_logs`.
    "val_loss", which `fit` computes once per epoch, is read from the epoch
    logs. A resumed run (``resume=True``) continues from ``best.json``: its
    best value and the count of evaluations without improvement.

    Args:
        directory: str. Where best.weights.h5 and best.json go.
        monitor: str. "val_bleu", "val_exact_match" or "val_loss".
        patience: int or None. Evaluations without improvement before
            training stops; None never stops.
        resume: bool. Continue from ``best.json`` (an interrupted run);
            otherwise files left there by an earlier attempt are replaced.
        verbose: int. 1 prints improvements and the stop.
    """

    def __init__(self, directory, monitor="val_bleu", patience=None, resume=False, verbose=1):
        super().__init__()
        if monitor not in _MAXIMIZE:
            raise ValueError(
                f"monitor must be one of {sorted(_MAXIMIZE)}. Received: monitor={monitor!r}"
            )
        if patience is not None and patience < 1:
            raise ValueError(f"patience must be >= 1 or None. Received: patience={patience}")
        self.directory = directory
        self.monitor = monitor
        self.patience = patience
        self.resume = resume
        self.verbose = verbose
        self.weights_path = os.path.join(directory, BEST_WEIGHTS_FILENAME)
        self.state_path = os.path.join(directory, BEST_STATE_FILENAME)
        self.best = None
        self.best_step = None
        self.wait = 0
        self.stopped = False

    def on_train_begin(self, logs=None):
        if not self.resume:
            # Left by an earlier attempt of this run that ended before its
            # first epoch's backup: not this fit's.
            for path in (self.weights_path, self.state_path):
                if os.path.exists(path):
                    os.remove(path)
            return
        if os.path.isfile(self.state_path) and os.path.isfile(self.weights_path):
            with open(self.state_path, encoding="utf-8") as f:
                state = json.load(f)
            if state.get("monitor") == self.monitor:
                self.best = state.get("value")
                self.best_step = state.get("update")
                self.wait = int(state.get("evaluations_without_improvement", 0))

    @property
    def has_best(self):
        return self.best is not None and os.path.isfile(self.weights_path)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor == "val_loss" and logs and "val_loss" in logs:
            self.observe_logs(logs, optimizer_updates(self.model))

    def observe_logs(self, values, updates):
        """Takes ``values[monitor]`` as the evaluation after ``updates`` updates."""
        if self.monitor in values:
            self.observe(values[self.monitor], updates)

    def observe(self, value, updates):
        """One evaluation: keeps the weights if ``value`` is the best so far.

        Returns:
            True when the weights were kept as the new best.
        """
        value = float(value) if value is not None else math.nan
        better = math.isfinite(value) and (
            self.best is None
            or (value > self.best if _MAXIMIZE[self.monitor] else value < self.best)
        )
        if better:
            better = self._save(value, updates)
        if better:
            self.best, self.best_step, self.wait = value, updates, 0
        else:
            self.wait += 1
        atomic_write_json(
            self.state_path,
            {
                "monitor": self.monitor,
                "value": self.best,
                "update": self.best_step,
                "evaluations_without_improvement": self.wait,
            },
        )
        if self.patience is not None and self.wait >= self.patience:
            self.stopped = self.model.stop_training = True
            log(
                f"Stopping: {self.monitor} has not improved on {self.best} (after "
                f"{self.best_step} updates) for {self.wait} evaluations.",
                self.verbose,
            )
        return better

    def _save(self, value, updates):
        model = self.model
        with ema_weights(model):
            bad = nonfinite_variables(model.weights)
            if bad:
                log(
                    f"{self.monitor}={value} after {updates} updates, but the weights "
                    f"are not finite ({bad[0]}, ...): not kept as the best.",
                    self.verbose,
                )
                return False
            save_weights(model, self.weights_path)
        log(
            f"Best {self.monitor} so far ({value:.4g} after {updates} updates): "
            f"kept in {self.weights_path}",
            self.verbose,
        )
        return True
