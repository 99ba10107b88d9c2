"""A run directory: the one place a training run keeps what it writes.

Its layout, and every file and directory name in it, is in
`keras_transformer.utils.run_files`.

What a run directory guarantees:

* One run. `RunDirectory.claim` lets a run start in an empty (or missing)
  directory, or resume an unfinished run whose ``train_config.json`` (or,
  for a run started by an earlier version, ``config.json``) has the same
  settings. A finished run, a run with other settings, or files that are not
  a run are refused; ``overwrite=True`` first renames the old directory aside
  (``<run>.old-<timestamp>``), it never mixes two runs' files or deletes any.
* Atomic, checked writes. `atomic_write_json`, `save_model` and
  `save_weights` write to a hidden temporary name in the same directory,
  check the result (finite weights, strict JSON), then `os.replace` it over
  the old file: a crash or a NaN never replaces a good file.
* The spelling of the path does not matter: ``runs/x``, ``runs/x/`` and
  ``./runs/x`` are the same run (the directory is identified by where it is,
  not by the ``output_dir`` string stored in ``train_config.json``).

Example:

```python
run = RunDirectory("runs/numbers")
run.claim(config.to_dict(), may_change={"epochs"})  # "new" or "resume"
atomic_write_json(run.results_path, {"bleu": float("nan")})  # -> null
```
"""

import json
import os
import time

from keras_transformer.utils.file_io import check_weights_file
from keras_transformer.utils.run_files import (
    ARCHITECTURE_FILENAME,
    BACKUP_DIRNAME,
    BACKUP_METADATA_FILENAME,
    BACKUP_PREVIOUS_WEIGHTS_FILENAME,
    BACKUP_WEIGHTS_FILENAME,
    CHECKPOINT_PATTERN,
    CHECKPOINTS_DIRNAME,
    LOGS_DIRNAME,
    MODEL_FILENAME,
    MODEL_WEIGHTS_FILE,
    RESULTS_FILENAME,
    TRAIN_CONFIG_FILENAME,
    VOCABULARY_FILENAME,
    train_config_path,
)

NEW, RESUME = "new", "resume"


class RunDirectoryError(ValueError):
    """A run directory cannot be used as asked (it holds another run, ...)."""


def normalize_path(path):
    """An absolute, normalized spelling of ``path`` (``runs/x/`` -> ``/.../runs/x``)."""
    return os.path.normpath(os.path.abspath(os.fspath(path)))


class RunDirectory:
    """The files of one training run; see the module docstring.

    Args:
        path: str or path-like. The directory (it need not exist yet).
    """

    def __init__(self, path):
        self.path = normalize_path(path)
        # Where `claim(overwrite=True)` moved an old directory, if it did.
        self.moved_to = None

    def __repr__(self):
        return f"RunDirectory({self.path!r})"

    def join(self, *names):
        return os.path.join(self.path, *names)

    @property
    def model_path(self):
        """The final model's weights: the preset's ``model.weights.h5``
        (the run keeps them once; `keras_transformer.training.run_preset`)."""
        return self.join(MODEL_WEIGHTS_FILE)

    @property
    def legacy_model_path(self):
        """``model.keras``: the final model of runs of earlier versions."""
        return self.join(MODEL_FILENAME)

    @property
    def vocabulary_path(self):
        return self.join(VOCABULARY_FILENAME)

    @property
    def config_path(self):
        """Where the run writes its `TrainConfig` (``train_config.json``)."""
        return self.join(TRAIN_CONFIG_FILENAME)

    def saved_config_path(self):
        """The `TrainConfig` the run saved: ``train_config.json``, or the
        ``config.json`` of a run started by an earlier version; None where
        there is neither."""
        return train_config_path(self.path)

    @property
    def results_path(self):
        return self.join(RESULTS_FILENAME)

    @property
    def checkpoint_dir(self):
        return self.join(CHECKPOINTS_DIRNAME)

    @property
    def architecture_path(self):
        return self.join(CHECKPOINTS_DIRNAME, ARCHITECTURE_FILENAME)

    @property
    def backup_dir(self):
        return self.join(BACKUP_DIRNAME)

    @property
    def logs_dir(self):
        return self.join(LOGS_DIRNAME)

    def checkpoint_path(self, epoch):
        """``checkpoints/epoch_NNN.weights.h5`` of the 1-based ``epoch``."""
        return self.join(CHECKPOINTS_DIRNAME, CHECKPOINT_PATTERN.format(epoch=epoch))

    # --- state ---

    def is_finished(self):
        """True when the run wrote its model (or, in a run of earlier
        versions, ``model.keras``) or its results."""
        return any(
            os.path.exists(path)
            for path in (self.model_path, self.legacy_model_path, self.results_path)
        )

    def backup_epoch(self):
        """The epoch `BackupAndRestore` would resume after, or None."""
        path = self.join(BACKUP_DIRNAME, BACKUP_METADATA_FILENAME)
        if not os.path.isfile(path):
            return None
        try:
            with open(path, encoding="utf-8") as f:
                return int(json.load(f).get("epoch", 0))
        except (OSError, ValueError, AttributeError, TypeError) as error:
            raise RunDirectoryError(
                f"Cannot resume the run in {self.path}: {path!r} is unreadable "
                f"({error})."
            ) from error

    def _entries(self):
        if not os.path.exists(self.path):
            return []
        if not os.path.isdir(self.path):
            raise RunDirectoryError(
                f"The run directory {self.path!r} is a file, not a directory."
            )
        # A vocabulary alone may be provided to be reused.
        return sorted(set(os.listdir(self.path)) - {VOCABULARY_FILENAME})

    def claim(self, config, may_change=(), overwrite=False, complete_saved=None):
        """Makes this directory the home of the run described by ``config``.

        Args:
            config: dict. The resolved config (``TrainConfig.to_dict()``).
            may_change: keys that may differ from the saved `TrainConfig`
                when an unfinished run is resumed (``output_dir`` always may).
            overwrite: bool. Rename a directory that holds anything else aside
                (``<path>.old-<timestamp>``) instead of refusing.
            complete_saved: optional function ``dict -> dict`` applied to the
                saved `TrainConfig` before the comparison, e.g. to fill in
                the defaults of keys that a run started by an older version
                did not write (it ran with those defaults).

        Returns:
            ``"new"`` (start from scratch) or ``"resume"`` (an unfinished run
            with the same settings; `BackupAndRestore` continues it).

        Raises:
            RunDirectoryError: the directory holds a finished run, a run with
                other settings, or files that are not a run.
        """
        reason = self._refusal(config, set(may_change) | {"output_dir"}, complete_saved)
        if reason is None:
            return RESUME if self.backup_epoch() is not None else NEW
        if not overwrite:
            raise RunDirectoryError(
                f"{self.path} {reason}. A run directory holds one run: choose "
                "another output directory, or pass --overwrite (overwrite=True) "
                "to move the old one aside."
            )
        self.moved_to = self.move_aside()
        return NEW

    def _refusal(self, config, may_change, complete_saved=None):
        """None when ``config`` may start or resume here, else why not."""
        entries = self._entries()
        if not entries:
            return None
        try:
            saved_path = self.saved_config_path()
        except ValueError as error:  # An unreadable config.json.
            return f"holds an unreadable run config ({error})"
        if saved_path is None:
            return (
                f"is not empty and holds no run (no {TRAIN_CONFIG_FILENAME}): "
                f"{', '.join(entries[:5])}{', ...' if len(entries) > 5 else ''}"
            )
        if self.is_finished():
            return (
                f"holds a finished run ({MODEL_WEIGHTS_FILE}, {MODEL_FILENAME} or "
                f"{RESULTS_FILENAME})"
            )
        try:
            with open(saved_path, encoding="utf-8") as f:
                saved = json.load(f)
            if not isinstance(saved, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as error:
            return f"holds an unreadable {os.path.basename(saved_path)} ({error})"
        if complete_saved is not None:
            try:
                saved = complete_saved(saved)
            except ValueError:
                pass  # Compared as written: the differences are reported.
        changed = {
            key: (saved.get(key), value)
            for key, value in config.items()
            if key not in may_change and saved.get(key) != value
        }
        if changed:
            details = ", ".join(f"{k}: {old!r} -> {new!r}" for k, (old, new) in changed.items())
            return f"holds an unfinished run started with other settings ({details})"
        try:
            epoch = self.backup_epoch()
        except RunDirectoryError as error:
            return f"holds an unfinished run whose backup cannot be read ({error})"
        if epoch is None and _has_checkpoints(self.checkpoint_dir):
            return (
                "holds epoch checkpoints of an unfinished run but no backup/ "
                "to resume it from"
            )
        if epoch is not None:
            return backup_problem(self.backup_dir)
        return None

    def move_aside(self):
        """Renames the directory to ``<path>.old-<timestamp>``; returns the new path."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target, n = f"{self.path}.old-{stamp}", 1
        while os.path.exists(target):
            target, n = f"{self.path}.old-{stamp}-{n}", n + 1
        os.rename(self.path, target)
        return target


def _has_checkpoints(directory):
    return os.path.isdir(directory) and any(
        name.endswith((".weights.h5", ".keras")) and not name.startswith(".")
        for name in os.listdir(directory)
    )


def backup_problem(backup_dir):
    """None when `BackupAndRestore` can resume from ``backup_dir``, else why not."""
    latest = os.path.join(backup_dir, BACKUP_WEIGHTS_FILENAME)
    previous = os.path.join(backup_dir, BACKUP_PREVIOUS_WEIGHTS_FILENAME)
    error = check_weights_file(latest, raise_error=False)
    if error is None:
        return None
    # BackupAndRestore falls back to the previous epoch's copy by itself.
    if os.path.isfile(previous) and check_weights_file(previous, raise_error=False) is None:
        return None
    return f"holds an unfinished run whose backup {latest!r} cannot be read ({error})"
