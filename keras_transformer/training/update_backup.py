"""`UpdateBackup`: Keras' `BackupAndRestore` that also knows where in the
data and in the epoch a backup was taken, backs up every N updates, and
saves and stops on SIGTERM.

Keras' callback restores the weights, the optimizer and the epoch counter;
a run resumed from a backup taken inside an epoch would start that epoch
again, and the data pipeline would start again from its first batch. This
callback writes two more fields into the backup's
``training_metadata.json``:

- ``"batch_in_epoch"``: batches of the interrupted epoch already trained on;
- ``"batches"``: batches trained on since the start of the run, that is the
  position in the data stream.

`train` reads them before `fit` (`read_backup_position`) to finish the
interrupted epoch with its remaining batches only, and to start the data
where the backup left it.

SIGTERM (what a preempted cloud instance or a batch scheduler sends before
it kills a process) sets a flag; after the batch in flight, the callback
saves a backup and raises `TrainingTerminated` out of `fit` (no validation,
no checkpoint of the partial epoch: a preemption notice leaves seconds), and
`train` exits without writing a final model, so that the same command
resumes (Marian's ``--sigterm save-and-exit``).
"""

import contextlib
import json
import os
import signal
import threading

import keras

from keras_transformer.utils.file_io import atomic_write_json
from keras_transformer.utils.run_files import BACKUP_METADATA_FILENAME


class UpdateBackup(keras.callbacks.BackupAndRestore):
    """`BackupAndRestore` with the position in the epoch and in the data.

    Args:
        backup_dir: str. Where the backup is kept.
        every_batches: int or None. Also back up every this many batches
            (``backup_every_steps * accumulate_steps``); None backs up at the
            end of each epoch only.
        start_epoch: int. The epoch the `fit` call starts at (its
            ``initial_epoch``).
        start_batch_in_epoch: int. Batches of ``start_epoch`` already trained
            before this `fit` call (a resumed, interrupted epoch).
        start_batches: int. Batches trained on since the start of the run
            before this `fit` call.
        accumulate_steps: int. Batches per optimizer update: a backup on
            SIGTERM waits for the batch that completes an update, so that
            no half-accumulated gradient is saved.
        delete_on_end: bool. Delete the backup when `fit` ends. Defaults to
            True; False for a `fit` call that another one continues.
    """

    def __init__(
        self,
        backup_dir,
        every_batches=None,
        start_epoch=0,
        start_batch_in_epoch=0,
        start_batches=0,
        accumulate_steps=1,
        delete_on_end=True,
    ):
        super().__init__(
            backup_dir,
            save_freq=every_batches or "epoch",
            double_checkpoint=True,
            delete_checkpoint=delete_on_end,
        )
        self._current_epoch = start_epoch
        self._start_batch_in_epoch = start_batch_in_epoch
        self._batch_in_epoch = start_batch_in_epoch
        self._batches = start_batches
        self.accumulate_steps = accumulate_steps
        self._signal = None
        self.stopped_by_signal = False
        # Data parallel under PyTorch: SIGTERM stops at the batch that the
        # processes agree on (`request_sigterm_stop`), not where it arrived.
        self.defer_sigterm = False
        self._stop_requested = False

    @property
    def batches(self):
        """Batches trained on since the start of the run."""
        return self._batches

    def on_train_end(self, logs=None):
        # Stopped by SIGTERM: the backup is what the next run resumes from.
        if not self.stopped_by_signal:
            super().on_train_end(logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        self._batch_in_epoch = 0
        self._start_batch_in_epoch = 0
        self._current_epoch = epoch + 1
        # Every epoch end is saved, whatever the batch frequency (Keras'
        # saves it only with save_freq="epoch"); the batch count restarts.
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = -1
        self._save_model()

    def on_train_batch_end(self, batch, logs=None):
        self._batch_in_epoch = self._start_batch_in_epoch + batch + 1
        self._batches += 1
        signalled = self._stop_requested if self.defer_sigterm else self.sigterm_received()
        if signalled and self._batches % self.accumulate_steps == 0:
            self._save_model()
            self.stopped_by_signal = True
            # Out of `fit` at once: stopping it the usual way would still end
            # the epoch (validation, an epoch checkpoint of a partial epoch).
            raise TrainingTerminated(
                f"SIGTERM: training state saved after batch {self._batches}."
            )
        super().on_train_batch_end(batch, logs)

    def sigterm_received(self):
        """Whether SIGTERM arrived within `stop_on_sigterm`."""
        return self._signal is not None and self._signal.is_set()

    def request_sigterm_stop(self):
        """With ``defer_sigterm``: save and stop as on SIGTERM, at the next
        batch that completes an update."""
        self._stop_requested = True

    def _save_model(self):
        super()._save_model()
        path = os.path.join(self.backup_dir, BACKUP_METADATA_FILENAME)
        metadata = {
            "epoch": self._current_epoch,
            "batch": self._last_batch_seen,
            "batch_in_epoch": self._batch_in_epoch,
            "batches": self._batches,
        }
        atomic_write_json(path, metadata)

    @contextlib.contextmanager
    def stop_on_sigterm(self):
        """Within the block, SIGTERM makes `fit` save a backup after the
        current batch and stop (the main thread only; elsewhere the default
        handling stays)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._signal = threading.Event()
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: self._signal.set())
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)
            self._signal = None


SIGTERM_STOP = "SIGTERM"


class TrainingTerminated(Exception):
    """Raised out of `fit` by `UpdateBackup` once the backup of a SIGTERM is
    saved; `train` catches it."""


def read_backup_position(backup_dir):
    """``(epoch, batch_in_epoch, batches)`` of the backup in ``backup_dir``:
    the epoch in progress (or the next one), the batches of it already
    trained on, and the batches trained on since the start of the run;
    ``(0, 0, 0)`` without a backup. A backup written by Keras' own
    `BackupAndRestore` (epoch ends only) has no position in the data: its
    batches are None."""
    path = os.path.join(backup_dir, BACKUP_METADATA_FILENAME)
    if not os.path.isfile(path):
        return 0, 0, 0
    with open(path, encoding="utf-8") as f:
        metadata = json.load(f)
    return (
        int(metadata.get("epoch", 0)),
        int(metadata.get("batch_in_epoch", 0)),
        metadata.get("batches"),
    )
