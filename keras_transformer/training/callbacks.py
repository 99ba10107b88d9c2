"""The Keras callbacks of a training run (`keras_transformer.training.train`).

- `TimeBudget`, `StepLimit`: stop after so many minutes, or optimizer updates.
- `FiniteCheckpoint`, `PruneCheckpoints`: one checkpoint per epoch, written
  atomically and only when its weights are finite; the oldest pruned.
- `ValidationBleu`: greedy-decodes validation sentences every N updates (or
  each epoch), scores them with sacreBLEU and puts ``val_bleu`` and
  ``val_exact_match`` into the epoch logs, where `keras.callbacks.CSVLogger`
  and `keras.callbacks.TensorBoard` record them.
- `BestCheckpoint`: keeps the weights with the best validation BLEU or loss
  in ``checkpoints/best/`` and stops training when the value has not improved
  for ``patience`` evaluations.
- `run_callbacks`: all of them (and Keras' `BackupAndRestore`,
  `SwapEMAWeights`, `TerminateOnNaN`, `CSVLogger`, `TensorBoard`) for a
  `TrainConfig`, in the order they must run.

With gradient accumulation Keras calls ``on_train_batch_end`` once per batch
while the optimizer updates the weights every ``accumulate_steps`` batches;
the callbacks here count updates, as ``optimizer.iterations`` does.

With an exponential moving average of the weights (the optimizer's
``use_ema``), validation BLEU and the best checkpoint use the average
(`ema_weights`), the model that training will deliver; the epoch checkpoints
hold the raw weights and the optimizer state, which includes the average.
"""

import contextlib
import csv
import dataclasses
import importlib.util
import json
import math
import os
import time

import keras
import numpy as np
import tensorflow as tf

from keras_transformer.models.transformer.translator import Translator
from keras_transformer.training.checkpoints import list_checkpoints
from keras_transformer.training.evaluation import evaluate_translations
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import (
    atomic_write_json,
    nonfinite_variables,
    save_weights,
)

# Inside checkpoints/: a subdirectory, so that the best weights are not taken
# for an epoch checkpoint (`list_checkpoints`, `average-checkpoints DIR`).
BEST_DIRNAME = "best"
BEST_WEIGHTS_FILENAME = "best.weights.h5"
BEST_STATE_FILENAME = "best.json"
# Inside logs/: the epoch history (CSVLogger), one row per validation BLEU,
# the TensorBoard run of the per-update validation scalars.
HISTORY_FILENAME = "history.csv"
VALIDATION_LOG_FILENAME = "validation.csv"
VALIDATION_EVENTS_DIRNAME = "validation"
# Whether a larger value is better.
_MAXIMIZE = {"val_bleu": True, "val_exact_match": True, "val_loss": False}


def _iterations(model):
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
        # After BackupAndRestore (earlier in the list) restored the optimizer.
        self.updates = _iterations(self.model)
        self._batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self._batches += 1
        if self._batches % self.accumulate_steps == 0:
            self.updates += 1
            self.on_update(logs)

    def on_update(self, logs=None):
        pass


class TimeBudget(keras.callbacks.Callback):
    """Stops training after ``minutes`` of wall-clock time in `fit`."""

    def __init__(self, minutes):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.stopped = False

    def on_train_begin(self, logs=None):
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


class FiniteCheckpoint(keras.callbacks.Callback):
    """Saves ``checkpoints/epoch_NNN.weights.h5`` after each epoch, atomically.

    An epoch whose weights hold NaN or inf (a diverged run) writes nothing:
    its name goes to ``skipped`` and no earlier good checkpoint is touched.
    """

    def __init__(self, run, verbose=1):
        super().__init__()
        self.run = run
        self.verbose = verbose
        self.skipped = []

    def on_epoch_end(self, epoch, logs=None):
        path = self.run.checkpoint_path(epoch + 1)
        bad = nonfinite_variables(self.model.weights)
        if bad:
            self.skipped.append(path)
            log(
                f"Epoch {epoch + 1}: non-finite weights ({bad[0]}, ...); "
                f"{os.path.basename(path)} was not written.",
                self.verbose,
            )
            return
        # Optimizer state included, as keras.callbacks.ModelCheckpoint does.
        save_weights(self.model, path)


class PruneCheckpoints(keras.callbacks.Callback):
    """Deletes all but the newest ``keep`` epoch checkpoints."""

    def __init__(self, directory, keep):
        super().__init__()
        self.directory = directory
        self.keep = keep

    def on_epoch_end(self, epoch, logs=None):
        for path in list_checkpoints(self.directory)[: -self.keep]:
            os.remove(path)


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


class ValidationBleu(UpdateCounter):
    """Validation BLEU during training: greedy decoding, sacreBLEU.

    Every ``every_steps`` optimizer updates, or at the end of each epoch when
    ``every_steps`` is None, translates ``sources`` greedily with a
    `keras_transformer.Translator` of the model being trained (with the
    moving average of the weights, when the optimizer keeps one) and scores
    the translations with `keras_transformer.evaluation.evaluate_translations`.

    Each epoch's logs get the latest ``val_bleu`` (cased detokenized
    sacreBLEU) and ``val_exact_match`` (NaN before the first evaluation), so
    that `keras.callbacks.CSVLogger`, `keras.callbacks.TensorBoard` and the
    `fit` history, which come later in the callback list, record them. Each
    evaluation is also a row of ``csv_path`` (epoch, update, scores, seconds)
    and, with ``tensorboard_dir``, an ``update_bleu`` / ``update_exact_match``
    scalar at its update.

    Args:
        tokenizer: the run's `SubwordTokenizer`.
        sources: list of str. Validation source sentences.
        references: list of str. Their references.
        every_steps: int or None. Evaluate every N updates; None: each epoch.
        accumulate_steps: int. Batches per optimizer update. Defaults to 1.
        max_extra_length: int. Output limit = source length + this.
        csv_path: str or None. Where to append one row per evaluation.
        tensorboard_dir: str or None. Event files of the per-update scalars.
        on_result: callable ``(values, updates)`` or None, called after each
            evaluation with its ``{"val_bleu": ..., "val_exact_match": ...}``
            (`BestCheckpoint.observe_logs`).
        verbose: int. 1 prints one line per evaluation.
    """

    def __init__(
        self,
        tokenizer,
        sources,
        references,
        every_steps=None,
        accumulate_steps=1,
        max_extra_length=50,
        csv_path=None,
        tensorboard_dir=None,
        on_result=None,
        verbose=1,
    ):
        super().__init__(accumulate_steps)
        if not sources or len(sources) != len(references):
            raise ValueError(
                "ValidationBleu needs aligned, non-empty sources and references. "
                f"Received: {len(sources)} sources, {len(references)} references."
            )
        self.tokenizer = tokenizer
        self.sources = list(sources)
        self.references = list(references)
        self.every_steps = every_steps
        self.max_extra_length = max_extra_length
        self.csv_path = csv_path
        self.tensorboard_dir = tensorboard_dir
        self.on_result = on_result
        self.verbose = verbose
        self.latest = {"val_bleu": math.nan, "val_exact_match": math.nan}
        self.results = []  # (updates, values) of every evaluation in this fit.
        self._translator = None
        self._writer = None
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_update(self, logs=None):
        if self.every_steps is not None and self.updates % self.every_steps == 0:
            self.evaluate()

    def on_epoch_end(self, epoch, logs=None):
        if self.every_steps is None:
            self.evaluate()
        if logs is not None:
            logs.update(self.latest)

    def evaluate(self):
        """Translates and scores the validation sentences now; returns the values."""

        model = self.model  # Under JAX: the current weights, synced.
        with ema_weights(model):
            if self._translator is None:
                # Kept: its compiled decoding serves every evaluation.
                self._translator = Translator(model, self.tokenizer)
            result = evaluate_translations(
                self._translator,
                self.sources,
                self.references,
                beam_size=1,
                max_extra_length=self.max_extra_length,
                verbose=0,
            )
        self.latest = {"val_bleu": result.bleu.score, "val_exact_match": result.exact_match}
        self.results.append((self.updates, dict(self.latest)))
        log(
            f"Validation BLEU after {self.updates} updates: {result.bleu.score:.2f} "
            f"(exact match {result.exact_match:.1%}; {result.num_sentences} "
            f"sentences, greedy, {result.seconds:.1f} s)",
            self.verbose,
        )
        self._record(result)
        if self.on_result is not None:
            self.on_result(dict(self.latest), self.updates)
        return dict(self.latest)

    def _record(self, result):
        if self.csv_path is not None:
            new = not os.path.exists(self.csv_path)
            with open(self.csv_path, "a", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                if new:
                    writer.writerow(
                        ["epoch", "update", "val_bleu", "val_tokenized_bleu",
                         "val_exact_match", "seconds"]
                    )  # fmt: skip
                writer.writerow(
                    [self._epoch + 1, self.updates, f"{result.bleu.score:.4f}",
                     f"{result.tokenized_bleu.score:.4f}",
                     f"{result.exact_match:.6f}", f"{result.seconds:.2f}"]
                )  # fmt: skip
        if self.tensorboard_dir is not None:

            if self._writer is None:
                self._writer = tf.summary.create_file_writer(self.tensorboard_dir)
            with self._writer.as_default(step=self.updates):
                tf.summary.scalar("update_bleu", result.bleu.score)
                tf.summary.scalar("update_exact_match", result.exact_match)
            self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None


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
            self.observe_logs(logs, _iterations(self.model))

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


@dataclasses.dataclass
class RunCallbacks:
    """A run's callbacks for `fit` (``callbacks``, in order), and those
    whose state `train` reads afterwards."""

    callbacks: list
    time_budget: object = None
    step_limit: object = None
    best: object = None

    def stop_reason(self, losses):
        """Why `fit` stopped early, from its loss history and the callbacks."""
        if losses and not np.isfinite(losses[-1]):
            return "NaN loss"
        for reason, callback in (
            ("time budget", self.time_budget),
            ("max_steps", self.step_limit),
            ("patience", self.best),
        ):
            if callback is not None and callback.stopped:
                return reason
        return None

    def best_summary(self):
        """``{"monitor", "value", "update", "path"}`` of the best checkpoint, or None."""
        if self.best is None or not self.best.has_best:
            return None
        return {
            "monitor": self.best.monitor,
            "value": self.best.best,
            "update": self.best.best_step,
            "path": self.best.weights_path,
        }


def run_callbacks(config, run, tokenizer, valid_pairs, resume=False, verbose=1):
    """The callbacks of a training run, in the order they must run.

    Args:
        config: the resolved `keras_transformer.config.TrainConfig`.
        run: the `keras_transformer.RunDirectory`.
        tokenizer: the run's `SubwordTokenizer` (for validation BLEU).
        valid_pairs: ``(sources, references)`` of the validation split, or
            None (needed with ``valid_bleu_sentences``).
        resume: bool. The run resumes an interrupted one (`BestCheckpoint`
            then continues from its saved state).
        verbose: int.

    Returns:
        A `RunCallbacks`.
    """
    os.makedirs(run.logs_dir, exist_ok=True)
    per_update = config.accumulate_steps
    # First, so that later callbacks see the restored state. A second copy of
    # the backup survives a crash while the first is written.
    callbacks = [keras.callbacks.BackupAndRestore(run.backup_dir, double_checkpoint=True)]
    chosen = RunCallbacks(callbacks)
    if config.ema_decay is not None:
        # fit's validation loss is then the moving average's.
        callbacks.append(keras.callbacks.SwapEMAWeights())
    if config.keep_best is not None:
        chosen.best = BestCheckpoint(
            os.path.join(run.checkpoint_dir, BEST_DIRNAME),
            monitor="val_" + config.keep_best,
            patience=config.patience,
            resume=resume,
            verbose=verbose,
        )
    tensorboard = importlib.util.find_spec("tensorboard") is not None
    events = os.path.join(run.logs_dir, VALIDATION_EVENTS_DIRNAME) if tensorboard else None
    if config.valid_bleu_sentences != 0:
        if valid_pairs is None:
            raise ValueError("valid_bleu_sentences needs a validation split.")
        sources, references = valid_pairs
        count = config.valid_bleu_sentences  # None: all.
        # Before the loggers: they record the val_bleu it puts in the logs.
        callbacks.append(
            ValidationBleu(
                tokenizer,
                sources[:count],
                references[:count],
                every_steps=config.eval_every_steps,
                accumulate_steps=per_update,
                max_extra_length=config.max_extra_length,
                csv_path=os.path.join(run.logs_dir, VALIDATION_LOG_FILENAME),
                tensorboard_dir=events,
                on_result=chosen.best.observe_logs if chosen.best is not None else None,
                verbose=verbose,
            )
        )
    if chosen.best is not None:
        callbacks.append(chosen.best)
    callbacks += [
        FiniteCheckpoint(run, verbose),
        keras.callbacks.TerminateOnNaN(),
        keras.callbacks.CSVLogger(os.path.join(run.logs_dir, HISTORY_FILENAME), append=True),
    ]
    if tensorboard:
        callbacks.append(keras.callbacks.TensorBoard(run.logs_dir, write_graph=False))
    else:
        log(
            f"(TensorBoard is not installed: metrics go to logs/{HISTORY_FILENAME}; "
            "pip install tensorboard for event files.)",
            verbose,
        )
    if config.keep_checkpoints is not None:
        keep = config.keep_checkpoints
        if config.final_model == "average":
            keep = max(keep, *config.average_candidates)
        callbacks.append(PruneCheckpoints(run.checkpoint_dir, keep))
    if config.time_budget_minutes is not None:
        chosen.time_budget = TimeBudget(config.time_budget_minutes)
        callbacks.append(chosen.time_budget)
    if config.max_steps is not None:
        chosen.step_limit = StepLimit(config.max_steps, accumulate_steps=per_update)
        callbacks.append(chosen.step_limit)
    return chosen
