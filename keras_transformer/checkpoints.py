"""Checkpoint averaging (paper §6.1: "averaging the last 5 checkpoints").

Training writes one checkpoint per epoch to ``<output_dir>/checkpoints/``
(``epoch_001.weights.h5``, ...) next to ``model_config.json``, the model's
serialized architecture. `average_checkpoints` rebuilds the model from that
file, loads each checkpoint in turn and averages every floating-point
variable; the result is an ordinary `Transformer` that translates.

Example:

```python
from keras_transformer.checkpoints import average_checkpoints
average_checkpoints("runs/model/checkpoints", last_n=5,
                    output_path="runs/model/averaged")  # + vocab.spm copied
```
"""

import glob
import json
import os
import re
import shutil

import keras
import numpy as np

ARCHITECTURE_FILENAME = "model_config.json"
CHECKPOINT_PATTERN = "epoch_{epoch:03d}.weights.h5"
_CHECKPOINT_SUFFIXES = (".weights.h5", ".keras")


def save_architecture(model, directory):
    """Writes ``directory/model_config.json`` so weights files can be rebuilt."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, ARCHITECTURE_FILENAME)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(keras.saving.serialize_keras_object(model), f, indent=1)
    return path


def load_architecture(directory):
    """An untrained model rebuilt from ``directory/model_config.json``."""
    path = os.path.join(directory, ARCHITECTURE_FILENAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"No {ARCHITECTURE_FILENAME} in {directory!r}: pass `model=` (a "
            "model of the checkpoints' architecture) or average `.keras` files."
        )
    # Registers the package's classes before deserializing.
    import keras_transformer  # noqa: F401

    with open(path, encoding="utf-8") as f:
        return keras.saving.deserialize_keras_object(json.load(f))


def _epoch_key(path):
    numbers = re.findall(r"\d+", os.path.basename(path))
    return (int(numbers[-1]) if numbers else -1, os.path.basename(path))


def list_checkpoints(directory):
    """Checkpoint files of a directory, oldest first (by the number in the name).

    Both ``*.weights.h5`` and ``*.keras`` files count; `BackupAndRestore`'s
    files live elsewhere and are not listed.
    """
    paths = [
        path
        for suffix in _CHECKPOINT_SUFFIXES
        for path in glob.glob(os.path.join(glob.escape(directory), "*" + suffix))
    ]
    return sorted(paths, key=_epoch_key)


def select_checkpoints(checkpoints, last_n=5):
    """The paths to average: the newest ``last_n`` of a directory or list."""
    if isinstance(last_n, bool) or not isinstance(last_n, int) or last_n < 1:
        raise ValueError(f"last_n must be a positive int. Received: last_n={last_n!r}")
    if isinstance(checkpoints, (str, os.PathLike)) and os.path.isdir(checkpoints):
        paths = list_checkpoints(os.fspath(checkpoints))
        if not paths:
            raise FileNotFoundError(
                f"No checkpoints (*.weights.h5 or *.keras) in {os.fspath(checkpoints)!r}"
            )
    elif isinstance(checkpoints, (str, os.PathLike)):
        paths = [os.fspath(checkpoints)]
    else:
        paths = [os.fspath(path) for path in checkpoints]
    if not paths:
        raise ValueError("No checkpoints given.")
    for path in paths:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Checkpoint not found: {path!r}")
        if not path.endswith(_CHECKPOINT_SUFFIXES):
            raise ValueError(
                f"Checkpoints must be *.weights.h5 or *.keras files. Received: {path!r}"
            )
    return paths[-last_n:]


def _load_into(model, path):
    if path.endswith(".keras"):
        loaded = keras.saving.load_model(path, compile=False)
        model.set_weights(loaded.get_weights())
    else:
        # The file may hold optimizer variables too (it does when written
        # by a compiled model); the template has no optimizer and skips them.
        model.load_weights(path)


def average_checkpoints(checkpoints, output_path=None, last_n=5, model=None):
    """Averages the weights of the last ``last_n`` checkpoints.

    Floating-point variables are averaged (in float64, then cast back);
    other variables (e.g. dropout seed states) keep the newest checkpoint's
    value. Optimizer state in the files is ignored.

    Args:
        checkpoints: a directory (its ``*.weights.h5``/``*.keras`` files in
            epoch order), or a list of paths, oldest first.
        output_path: str. Where to save the averaged model: a ``.keras`` path,
            or a directory that gets ``model.keras`` (and a copy of the run's
            ``vocab.spm`` when one is found next to the checkpoint directory,
            so `Translator.from_directory` works on it). None saves nothing.
        last_n: int. How many of the newest checkpoints to average (5 in the
            paper). Defaults to 5.
        model: a built model with the checkpoints' architecture, used as the
            template. Defaults to the one described by ``model_config.json``
            next to the ``.weights.h5`` files, or to the first ``.keras`` file.

    Returns:
        ``(model, paths)``: the model holding the averaged weights and the
        checkpoint paths that were averaged.
    """
    paths = select_checkpoints(checkpoints, last_n)
    if model is None:
        if paths[0].endswith(".keras"):
            model = keras.saving.load_model(paths[0], compile=False)
        else:
            model = load_architecture(os.path.dirname(os.path.abspath(paths[0])))
    variables = model.weights
    floating = [
        "float" in keras.backend.standardize_dtype(v.dtype) for v in variables
    ]
    sums = None
    for path in paths:
        _load_into(model, path)
        values = [keras.ops.convert_to_numpy(v) for v in variables]
        if sums is None:
            sums = [np.zeros(v.shape, np.float64) for v in values]
        for total, value, is_float in zip(sums, values, floating):
            if is_float:
                total += value
    # The newest checkpoint is loaded now: non-float variables keep its values.
    for variable, total, is_float in zip(variables, sums, floating):
        if is_float:
            variable.assign((total / len(paths)).astype(variable.dtype))
    if output_path is not None:
        save_averaged(model, output_path, checkpoint_dir=os.path.dirname(paths[-1]))
    return model, paths


def save_averaged(model, output_path, checkpoint_dir=None):
    """Saves ``model`` to ``output_path`` (a ``.keras`` file or a directory).

    For a directory, ``model.keras`` is written there, and ``vocab.spm``
    is copied from the parent of ``checkpoint_dir`` (the run directory) when
    the target has none. Returns the ``.keras`` path.
    """
    output_path = os.fspath(output_path)
    if output_path.endswith(".keras"):
        directory, model_path = os.path.dirname(output_path), output_path
    else:
        directory, model_path = output_path, os.path.join(output_path, "model.keras")
    if directory:
        os.makedirs(directory, exist_ok=True)
    model.save(model_path)
    if checkpoint_dir is not None and directory:
        run_dir = os.path.dirname(os.path.abspath(checkpoint_dir))
        vocab = os.path.join(run_dir, "vocab.spm")
        target = os.path.join(directory, "vocab.spm")
        if os.path.isfile(vocab) and not os.path.exists(target):
            shutil.copyfile(vocab, target)
    return model_path
