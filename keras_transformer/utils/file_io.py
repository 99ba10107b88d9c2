"""Checked file writes and reads: atomic replacement, strict JSON, finite weights.

`atomic_write_json`, `save_model` and `save_weights` write to a hidden
temporary name in the same directory, check the result (finite weights,
strict JSON), then `os.replace` it over the old file: a crash or a NaN never
replaces a good file. Reads (`read_json`, `load_model`, `check_weights_file`)
raise errors that name the file and what is wrong with it.

Weights files are verified at every load. `save_weights` writes the file's
SHA-256 beside it, ``<file>.sha256`` in ``sha256sum``'s format (so
``sha256sum -c`` checks it too); `check_weights_file` and
`verify_checksum` compare it with the file's bytes: an HDF5 file whose data
were damaged still opens, and its damage shows only as wrong numbers.
Files written without one (by earlier versions, by Keras directly) load with
the finite check alone: `check_loaded_weights` refuses NaN or inf values,
naming the file and the variables. A ``.keras`` file is a zip archive whose
members carry a CRC-32 that `zipfile` checks as Keras reads them; it gets
the finite check after loading (`load_model`).
"""

import hashlib
import json
import math
import os
import shutil
import zipfile

import h5py
import keras
import numpy as np

from keras_transformer.utils.json_files import read_json  # noqa: F401 (imported from here)


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
    if reason is None:
        reason = _checksum_mismatch(path)
    if reason is not None and raise_error:
        raise ValueError(f"Cannot read the weights file {path!r} ({reason}).")
    return reason


# --- checksums of weights files (``<file>.sha256``, sha256sum's format) ---

CHECKSUM_SUFFIX = ".sha256"
# (path, size, mtime, expected digest) of the files verified in this
# process: a file loaded twice (its check, then its load) is hashed once.
_VERIFIED = set()


def checksum_path(path):
    """The checksum file of ``path``: ``<path>.sha256``."""
    return os.fspath(path) + CHECKSUM_SUFFIX


def file_sha256(path):
    """The SHA-256 of the file ``path``, in hex (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksum(path):
    """Writes ``<path>.sha256`` (``"<hex>  <file name>"``, as ``sha256sum``
    writes it) atomically; returns its path."""
    line = f"{file_sha256(path)}  {os.path.basename(os.fspath(path))}\n"
    return atomic_write_bytes(checksum_path(path), line.encode("ascii"))


def _expected_sha256(path):
    """The digest recorded in ``<path>.sha256``, or None where there is none.
    A checksum file that is not one hex digest is a ValueError naming it."""
    sidecar = checksum_path(path)
    if not os.path.isfile(sidecar):
        return None
    with open(sidecar, "rb") as f:
        fields = f.read(4096).split()
    digest = fields[0].decode("ascii", "replace").lower() if fields else ""
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(
            f"The checksum file {sidecar!r} holds no SHA-256 digest (expected "
            f"'<64 hex digits>  {os.path.basename(os.fspath(path))}')."
        )
    return digest


def _checksum_mismatch(path):
    """None when ``path`` matches its ``.sha256`` file (or has none); else
    the reason, naming both digests."""
    expected = _expected_sha256(path)
    if expected is None:
        return None
    status = os.stat(path)
    key = (os.path.abspath(os.fspath(path)), status.st_size, status.st_mtime_ns, expected)
    if key in _VERIFIED:
        return None
    actual = file_sha256(path)
    if actual != expected:
        return (
            f"corrupt: its SHA-256 is {actual}, not the {expected} written "
            f"with it in {checksum_path(path)!r}"
        )
    _VERIFIED.add(key)
    return None


def verify_checksum(path):
    """Raises a ValueError naming ``path`` when its bytes differ from its
    ``.sha256`` file; files without one pass (earlier versions wrote none)."""
    reason = _checksum_mismatch(path)
    if reason is not None:
        raise ValueError(f"Cannot load the weights file {os.fspath(path)!r} ({reason}).")


def check_loaded_weights(variables, path):
    """Raises a ValueError naming the file ``path`` and the variables
    holding NaN or inf, after ``variables`` were loaded from it."""
    bad = nonfinite_variables(variables)
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise ValueError(
            f"The weights file {os.fspath(path)!r} holds non-finite (NaN or inf) "
            f"values in {', '.join(bad[:3])}{more}: a corrupt file or a diverged "
            "model; it was not used."
        )


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
    """Saves ``model``'s weights atomically, after checking they are finite,
    and their SHA-256 beside them (`write_checksum`).

    The old checksum file goes first: a crash between the two writes leaves
    weights without a checksum (loaded with the finite check alone), never
    weights with another file's checksum.
    """
    check_finite(model.weights, f"The model to save as {os.fspath(path)!r}")
    if os.path.exists(checksum_path(path)):
        os.remove(checksum_path(path))
    _replace_with(path, model.save_weights)
    write_checksum(path)
    return os.fspath(path)


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
        model = keras.saving.load_model(path, compile=compile)
    except (ValueError, OSError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"Cannot load the model {path!r}: {error}") from error
    check_loaded_weights(model.weights, path)
    return model


def copy_file_atomic(source, target):
    """Copies ``source`` to ``target`` atomically; returns the target."""
    return _replace_with(target, lambda temporary: shutil.copyfile(source, temporary))
