"""Checked file writes and reads: atomic replacement, strict JSON, finite weights.

`atomic_write_json`, `save_model` and `save_weights` write to a hidden
temporary name in the same directory, check the result (finite weights,
strict JSON), then `os.replace` it over the old file: a crash or a NaN never
replaces a good file. Reads (`read_json`, `load_model`, `check_weights_file`)
raise errors that name the file and what is wrong with it.
"""

import json
import math
import os
import shutil
import zipfile

import h5py
import keras
import numpy as np


def check_weights_file(path, raise_error=True):
    """Checks that ``path`` is a readable HDF5 weights file.

    Returns None when it is; otherwise raises a ValueError naming the file
    (or, with ``raise_error=False``, returns the reason as a str).
    """

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

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Model file not found: {path!r}")
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"Cannot load the model {path!r}: not a valid .keras file (not a "
            "zip archive; truncated or corrupt?)."
        )
    # Registers the package's layers before deserializing.

    try:
        return keras.saving.load_model(path, compile=compile)
    except (ValueError, OSError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"Cannot load the model {path!r}: {error}") from error


def copy_file_atomic(source, target):
    """Copies ``source`` to ``target`` atomically; returns the target."""
    return _replace_with(target, lambda temporary: shutil.copyfile(source, temporary))


def read_json(path, what="file"):
    """The JSON value in ``path``; a ValueError naming the ``what`` and the
    path when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise ValueError(f"Cannot read the {what} {path!r}: {error}") from error
