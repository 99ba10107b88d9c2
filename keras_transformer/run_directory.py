"""A run directory: the one place a training run keeps what it writes.

Layout (the names below are the only literals the package uses)::

    <run>/
      config.json         the resolved `TrainConfig`: the run's identity
      vocab.spm           the shared SentencePiece vocabulary
      model.keras         the final model (written last)
      results.json        steps, time, scores (strict JSON: NaN -> null)
      checkpoints/        model_config.json, epoch_001.weights.h5, ...
      backup/             `BackupAndRestore` state while the run is unfinished
      logs/               history.csv (and TensorBoard events)

What a run directory guarantees:

* One run. `RunDirectory.claim` lets a run start in an empty (or missing)
  directory, or resume an unfinished run whose ``config.json`` has the same
  settings. A finished run, a run with other settings, or files that are not
  a run are refused; ``overwrite=True`` first renames the old directory aside
  (``<run>.old-<timestamp>``), it never mixes two runs' files or deletes any.
* Atomic, checked writes. `atomic_write_json`, `save_model` and
  `save_weights` write to a hidden temporary name in the same directory,
  check the result (finite weights, strict JSON), then `os.replace` it over
  the old file: a crash or a NaN never replaces a good file.
* The spelling of the path does not matter: ``runs/x``, ``runs/x/`` and
  ``./runs/x`` are the same run (the directory is identified by where it is,
  not by the ``output_dir`` string stored in ``config.json``).

Example:

```python
run = RunDirectory("runs/numbers")
run.claim(config.to_dict(), may_change={"epochs"})  # "new" or "resume"
atomic_write_json(run.results_path, {"bleu": float("nan")})  # -> null
```
"""

import json
import math
import os
import shutil
import time
import zipfile

MODEL_FILENAME = "model.keras"
VOCABULARY_FILENAME = "vocab.spm"
CONFIG_FILENAME = "config.json"
ARCHITECTURE_FILENAME = "model_config.json"
RESULTS_FILENAME = "results.json"
CHECKPOINTS_DIRNAME = "checkpoints"
BACKUP_DIRNAME = "backup"
LOGS_DIRNAME = "logs"
CHECKPOINT_PATTERN = "epoch_{epoch:03d}.weights.h5"
# BackupAndRestore's files inside backup/.
BACKUP_METADATA_FILENAME = "training_metadata.json"
BACKUP_WEIGHTS_FILENAME = "latest.weights.h5"
BACKUP_PREVIOUS_WEIGHTS_FILENAME = "latest.weights.h5.bkp"

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
        return self.join(MODEL_FILENAME)

    @property
    def vocabulary_path(self):
        return self.join(VOCABULARY_FILENAME)

    @property
    def config_path(self):
        return self.join(CONFIG_FILENAME)

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
        """True when the run wrote its model or its results."""
        return os.path.exists(self.model_path) or os.path.exists(self.results_path)

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
            may_change: keys that may differ from the saved ``config.json``
                when an unfinished run is resumed (``output_dir`` always may).
            overwrite: bool. Rename a directory that holds anything else aside
                (``<path>.old-<timestamp>``) instead of refusing.
            complete_saved: optional function ``dict -> dict`` applied to the
                saved ``config.json`` before the comparison, e.g. to fill in
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
        if CONFIG_FILENAME not in entries:
            return (
                "is not empty and holds no run (no config.json): "
                f"{', '.join(entries[:5])}{', ...' if len(entries) > 5 else ''}"
            )
        if self.is_finished():
            return f"holds a finished run ({MODEL_FILENAME} or {RESULTS_FILENAME})"
        try:
            with open(self.config_path, encoding="utf-8") as f:
                saved = json.load(f)
            if not isinstance(saved, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as error:
            return f"holds an unreadable {CONFIG_FILENAME} ({error})"
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


def check_weights_file(path, raise_error=True):
    """Checks that ``path`` is a readable HDF5 weights file.

    Returns None when it is; otherwise raises a ValueError naming the file
    (or, with ``raise_error=False``, returns the reason as a str).
    """
    import h5py

    reason = None
    if not os.path.isfile(path):
        reason = "no such file"
    else:
        try:
            with h5py.File(path, "r"):
                pass
        except OSError as error:
            reason = f"truncated or not an HDF5 file: {error}"
    if reason is not None and raise_error:
        raise ValueError(f"Cannot read the weights file {path!r} ({reason}).")
    return reason


# --- atomic, checked writes ---


def finite_json(value):
    """``value`` with non-finite floats replaced by None (strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(item) for item in value]
    if hasattr(value, "item") and hasattr(value, "dtype"):  # NumPy scalars.
        return finite_json(value.item())
    return value


def _temporary_path(path):
    """A hidden name next to ``path`` with the same suffix (Keras checks suffixes)."""
    directory, name = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".tmp-{os.getpid()}-{name}")


def _replace_with(path, write):
    """Calls ``write(temporary_path)``, then renames the result over ``path``."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    temporary = _temporary_path(path)
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return path


def atomic_write_bytes(path, data):
    """Writes ``data`` to ``path`` atomically; returns the path."""

    def write(temporary):
        with open(temporary, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    return _replace_with(path, write)


def atomic_write_json(path, value, indent=2):
    """Writes ``value`` as strict JSON (NaN/inf -> null) atomically; returns the path."""
    text = json.dumps(finite_json(value), indent=indent, allow_nan=False) + "\n"
    return atomic_write_bytes(path, text.encode("utf-8"))


def nonfinite_variables(variables):
    """Paths of the floating-point variables holding NaN or inf."""
    import keras
    import numpy as np

    bad = []
    for variable in variables:
        if "float" not in keras.backend.standardize_dtype(variable.dtype):
            continue
        value = np.asarray(keras.ops.convert_to_numpy(variable), dtype=np.float32)
        if not np.isfinite(value).all():
            bad.append(getattr(variable, "path", variable.name))
    return bad


def check_finite(variables, what):
    """Raises a ValueError naming ``what`` and the variables with NaN or inf."""
    bad = nonfinite_variables(variables)
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise ValueError(
            f"{what} has non-finite (NaN or inf) weights in "
            f"{', '.join(bad[:3])}{more}; nothing was written."
        )


def save_model(model, path):
    """Saves ``model`` as ``.keras`` atomically, after checking its weights are finite."""
    check_finite(model.weights, f"The model to save as {os.fspath(path)!r}")
    return _replace_with(path, model.save)


def save_weights(model, path):
    """Saves ``model``'s weights atomically, after checking they are finite."""
    check_finite(model.weights, f"The model to save as {os.fspath(path)!r}")
    return _replace_with(path, model.save_weights)


def load_model(path, compile=True):
    """`keras.saving.load_model` whose errors name the file and what is wrong."""
    import keras

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Model file not found: {path!r}")
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"Cannot load the model {path!r}: not a valid .keras file (not a "
            "zip archive; truncated or corrupt?)."
        )
    # Registers the package's layers before deserializing.
    import keras_transformer  # noqa: F401

    try:
        return keras.saving.load_model(path, compile=compile)
    except (ValueError, OSError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"Cannot load the model {path!r}: {error}") from error


def copy_file_atomic(source, target):
    """Copies ``source`` to ``target`` atomically; returns the target."""
    return _replace_with(target, lambda temporary: shutil.copyfile(source, temporary))


# --- trained models: run directories and keras-hub presets, one loader ---

# keras-hub preset layout (keras_hub/src/utils/preset_utils.py), as written by
# `TransformerSeq2SeqLM.save_to_preset`.
PRESET_CONFIG_FILENAME = "config.json"
PRESET_VOCABULARY_PATH = os.path.join("assets", "tokenizer", "vocabulary.spm")
# A run directory may hold a keras-hub preset in this subdirectory.
RUN_PRESET_DIRNAME = "preset"


def read_json(path, what="file"):
    """The JSON value in ``path``; a ValueError naming the ``what`` and the
    path when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise ValueError(f"Cannot read the {what} {path!r}: {error}") from error


def is_preset_directory(directory):
    """True when ``directory`` holds a keras-hub preset (a ``config.json``
    with a ``registered_name``). An unreadable ``config.json`` is a
    ValueError naming it, not a silent "no preset"."""
    path = os.path.join(directory, PRESET_CONFIG_FILENAME)
    if not os.path.isfile(path):
        return False
    config = read_json(path, "preset file")
    return isinstance(config, dict) and "registered_name" in config


class TrainedModelFiles:
    """Where a trained model's files are: a run directory (``model.keras`` +
    ``vocab.spm``) or a keras-hub preset (``config.json``,
    ``model.weights.h5``, ``assets/tokenizer/vocabulary.spm``).

    Attributes:
        kind: "run" or "preset".
        directory: the run or preset directory.
        vocabulary_path: the SentencePiece model.
    """

    def __init__(self, kind, directory, vocabulary_path):
        self.kind = kind
        self.directory = directory
        self.vocabulary_path = vocabulary_path

    def __repr__(self):
        return f"TrainedModelFiles({self.kind!r}, {self.directory!r})"

    def load_model(self, compile=False):
        """The `Transformer`, its errors naming the file."""
        if self.kind == "run":
            return load_model(os.path.join(self.directory, MODEL_FILENAME), compile=compile)
        from keras_transformer.model import Transformer

        return Transformer.from_preset(self.directory)

    def load_tokenizer(self):
        """The `SubwordTokenizer` of ``vocabulary_path``."""
        from keras_transformer.data.tokenizer import SubwordTokenizer

        return SubwordTokenizer.load(self.vocabulary_path)


def locate_trained_model(directory):
    """`find_trained_model`'s answer, or None where there is no model."""
    directory = os.fspath(directory)
    if is_preset_directory(directory):
        return TrainedModelFiles(
            "preset", directory, os.path.join(directory, PRESET_VOCABULARY_PATH)
        )
    if os.path.isfile(os.path.join(directory, MODEL_FILENAME)):
        return TrainedModelFiles("run", directory, os.path.join(directory, VOCABULARY_FILENAME))
    nested = os.path.join(directory, RUN_PRESET_DIRNAME)
    if is_preset_directory(nested):
        return TrainedModelFiles("preset", nested, os.path.join(nested, PRESET_VOCABULARY_PATH))
    return None


def find_trained_model(directory):
    """The `TrainedModelFiles` of ``directory``: a run directory of
    ``keras-transformer train``, a keras-hub preset directory
    (``TransformerSeq2SeqLM.save_to_preset``), or a run directory with such a
    preset in ``preset/``. `Translator`, ``translate``, ``evaluate`` and both
    exports load models through it.

    Raises:
        FileNotFoundError: naming the directory and what a trained model
            directory holds, when it is neither.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Model directory not found: {directory!r}")
    files = locate_trained_model(directory)
    if files is not None:
        return files
    raise FileNotFoundError(
        f"No trained model in {directory!r}: expected {MODEL_FILENAME} and "
        f"{VOCABULARY_FILENAME} (a run directory of `keras-transformer train`) "
        f"or {PRESET_CONFIG_FILENAME}, model.weights.h5 and "
        f"{PRESET_VOCABULARY_PATH} (a preset written by save_to_preset)."
    )
