"""`run_callbacks`: the callbacks of a training run for a `TrainConfig`, in
the order they must run, with Keras' own (`BackupAndRestore`, as
`UpdateBackup`,
`SwapEMAWeights`, `TerminateOnNaN`, `CSVLogger`, `TensorBoard`), and
`RunCallbacks`, which holds them and tells why `fit` stopped.
"""

import dataclasses
import importlib.util
import os

import keras
import numpy as np

from keras_transformer.training.best_checkpoint import BestCheckpoint
from keras_transformer.training.epoch_checkpoints import (
    FiniteCheckpoint,
    PruneCheckpoints,
)
from keras_transformer.training.stop_conditions import StepLimit, TimeBudget
from keras_transformer.training.update_backup import UpdateBackup
from keras_transformer.training.validation_bleu import (
    ValidationBleu,
    load_tensorflow_summary,
)
from keras_transformer.utils.console import log
from keras_transformer.utils.run_files import (
    BEST_DIRNAME,
    HISTORY_FILENAME,
    VALIDATION_EVENTS_DIRNAME,
    VALIDATION_LOG_FILENAME,
)


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


def run_callbacks(config, run, tokenizer, valid_pairs, resume=False, verbose=1, backup=None):
    """The callbacks of a training run, in the order they must run.

    Args:
        config: the resolved `TrainConfig`.
        run: the `RunDirectory`.
        tokenizer: the run's `TransformerTokenizer` (for validation BLEU).
        valid_pairs: ``(sources, references)`` of the validation split, or
            None (needed with ``valid_bleu_sentences``).
        resume: bool. The run resumes an interrupted one (`BestCheckpoint`
            then continues from its saved state).
        verbose: int.
        backup: the `UpdateBackup` of the first `fit` call (`train` gives a
            second `fit` call another). Defaults to one that backs up at
            epoch ends.

    Returns:
        A `RunCallbacks`.
    """
    os.makedirs(run.logs_dir, exist_ok=True)
    # First, so that later callbacks see the restored state. A second copy of
    # the backup survives a crash while the first is written.
    callbacks = [backup or UpdateBackup(run.backup_dir)]
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
    # Keras' TensorBoard callback and the validation scalars write with
    # TensorFlow's tf.summary: event files need tensorboard and TensorFlow.
    tensorboard = all(
        importlib.util.find_spec(name) is not None for name in ("tensorboard", "tensorflow")
    )
    if tensorboard:
        # Through the module that hides TensorFlow's GPUs under JAX and
        # PyTorch, before Keras' callback imports it.
        load_tensorflow_summary()
    if config.valid_bleu_sentences != 0:
        # Before the loggers: they record the val_bleu it puts in the logs.
        callbacks.append(
            _validation_bleu(config, run, tokenizer, valid_pairs, chosen.best, tensorboard, verbose)
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
            f"(TensorBoard or TensorFlow is not installed: metrics go to "
            f"logs/{HISTORY_FILENAME} and logs/{VALIDATION_LOG_FILENAME}; pip install "
            "tensorboard tensorflow for event files.)",
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
        chosen.step_limit = StepLimit(config.max_steps, accumulate_steps=config.accumulate_steps)
        callbacks.append(chosen.step_limit)
    return chosen


def _validation_bleu(config, run, tokenizer, valid_pairs, best, tensorboard, verbose):
    """The `ValidationBleu` of ``config``; it reports each value to ``best``
    (a `BestCheckpoint` or None)."""
    if valid_pairs is None:
        raise ValueError("valid_bleu_sentences needs a validation split.")
    sources, references = valid_pairs
    count = config.valid_bleu_sentences  # None: all.
    return ValidationBleu(
        tokenizer,
        sources[:count],
        references[:count],
        every_steps=config.eval_every_steps,
        accumulate_steps=config.accumulate_steps,
        max_extra_length=config.max_extra_length,
        csv_path=os.path.join(run.logs_dir, VALIDATION_LOG_FILENAME),
        tensorboard_dir=(
            os.path.join(run.logs_dir, VALIDATION_EVENTS_DIRNAME) if tensorboard else None
        ),
        on_result=best.observe_logs if best is not None else None,
        verbose=verbose,
        translator_options=config.translator_options(tokenizer),
    )
