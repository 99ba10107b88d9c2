"""The epoch checkpoints of a run: `FiniteCheckpoint` writes one per epoch,
atomically and only when its weights are finite; `PruneCheckpoints` deletes
the oldest. The checkpoints are averaged (`average_checkpoints`) into the
final model; `keras.callbacks.BackupAndRestore` keeps the separate state
from which an interrupted run resumes.
"""

import os

import keras

from keras_transformer.training.checkpoints import list_checkpoints
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import nonfinite_variables, save_weights


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
