"""Checkpoint averaging (paper §6.1: "averaging the last 5 checkpoints").

Training writes one checkpoint per epoch to ``<output_dir>/checkpoints/``
(``epoch_001.weights.h5``, ...) next to ``model_config.json``, the model's
serialized architecture. `average_checkpoints` rebuilds the model from that
file, loads each checkpoint in turn and averages every floating-point
variable; the result is an ordinary `Transformer` that translates.

Example:

```python
from keras_transformer import average_checkpoints
average_checkpoints("runs/model/checkpoints", last_n=5,
                    output_path="runs/model/averaged")  # a preset + vocab.spm
```
"""

import glob
import json
import os
import re
import tempfile

import h5py
import keras
import numpy as np

from keras_transformer.models.transformer.transformer_preset_writer import (
    replace_preset_model,
)
from keras_transformer.models.transformer.transformer_presets import (
    BACKBONE_REGISTERED_NAMES,
)
from keras_transformer.utils.file_io import (
    atomic_write_json,
    check_finite,
    check_weights_file,
    copy_file_atomic,
    load_model,
    nonfinite_variables,
    read_json,
    save_model,
)
from keras_transformer.training.run_preset import run_files, write_run_preset
from keras_transformer.utils.run_files import (
    ARCHITECTURE_FILENAME,
    MODEL_FILENAME,
    MODEL_WEIGHTS_FILE,
    PRESET_CONFIG_FILENAME,
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
    is_preset_directory,
)

_CHECKPOINT_SUFFIXES = (".weights.h5", ".keras")


def save_architecture(model, directory):
    """Writes ``directory/model_config.json`` so weights files can be rebuilt."""
    path = os.path.join(directory, ARCHITECTURE_FILENAME)
    config = keras.saving.serialize_keras_object(model)
    return atomic_write_json(path, config, indent=1)


def load_architecture(directory):
    """An untrained model rebuilt from ``directory/model_config.json``."""
    path = os.path.join(directory, ARCHITECTURE_FILENAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"No {ARCHITECTURE_FILENAME} in {directory!r}: pass `model=` (a "
            "model of the checkpoints' architecture) or average `.keras` files."
        )
    # Registers the package's classes before deserializing.

    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        return keras.saving.deserialize_keras_object(config)
    except (OSError, ValueError, TypeError, KeyError) as error:
        raise ValueError(f"Cannot rebuild the model from {path!r}: {error}") from error


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


def _weights_layout(path, groups=None):
    """``{dataset name: shape}`` of a ``.weights.h5`` file.

    Only datasets under the top-level ``groups`` (e.g. ``{"layers"}``) count
    when given; checkpoints of a compiled model also hold optimizer state.
    """

    check_weights_file(path)
    layout = {}

    def visit(name, item):
        if isinstance(item, h5py.Dataset):
            if groups is None or name.split("/", 1)[0] in groups:
                layout[name] = tuple(item.shape)

    try:
        with h5py.File(path, "r") as f:
            f.visititems(visit)
    except (OSError, RuntimeError) as error:
        raise ValueError(f"Cannot read the checkpoint {path!r}: {error}") from error
    return layout


def _model_layout(model):
    """The `_weights_layout` of ``model``'s own weights file."""

    with tempfile.TemporaryDirectory(prefix="keras-transformer-") as directory:
        path = os.path.join(directory, "template.weights.h5")
        model.save_weights(path)
        return _weights_layout(path)


def _check_layout(expected, path):
    """Raises a ValueError naming ``path`` and the first variable that does not fit."""
    if path.endswith(".keras"):
        return  # Checked against the loaded model's weights in `_load_into`.
    groups = {name.split("/", 1)[0] for name in expected}
    found = _weights_layout(path, groups)
    for name, shape in expected.items():
        if name in found and found[name] != shape:
            raise ValueError(
                f"The checkpoint {path!r} does not fit the model: variable "
                f"{name!r} has shape {found[name]} but the model's has shape "
                f"{shape}. Were these checkpoints written by one run?"
            )
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} variable(s) missing (e.g. {missing[0]!r})")
        if extra:
            parts.append(f"{len(extra)} the model lacks (e.g. {extra[0]!r})")
        raise ValueError(
            f"The checkpoint {path!r} does not fit the model: "
            f"{' and '.join(parts)}. Were these checkpoints written by one run?"
        )


def _load_into(model, path):
    try:
        if path.endswith(".keras"):
            loaded = load_model(path, compile=False)
            shapes = [tuple(v.shape) for v in model.weights]
            found = [tuple(v.shape) for v in loaded.weights]
            if shapes != found:
                raise ValueError(
                    f"its {len(found)} variables do not match the model's "
                    f"{len(shapes)} in number or shape"
                )
            model.set_weights(loaded.get_weights())
        else:
            # The file may hold optimizer variables too (it does when written
            # by a compiled model); the template has no optimizer and skips them.
            model.load_weights(path)
    except (ValueError, OSError, KeyError) as error:
        if os.fspath(path) in str(error):
            raise
        raise ValueError(f"Cannot load the checkpoint {path!r}: {error}") from error
    bad = nonfinite_variables(model.weights)
    if bad:
        raise ValueError(
            f"The checkpoint {path!r} has non-finite (NaN or inf) weights (in "
            f"{bad[0]!r}{f' and {len(bad) - 1} more' if len(bad) > 1 else ''}); "
            "averaging it would poison the model. Did that run diverge? Average "
            "other checkpoints (list the files, or a smaller --last-n)."
        )


def average_checkpoints(checkpoints, output_path=None, last_n=5, model=None):
    """Averages the weights of the last ``last_n`` checkpoints.

    Floating-point variables are averaged (in float64, then cast back);
    other variables (e.g. dropout seed states) keep the newest checkpoint's
    value. Optimizer state in the files is ignored.

    Args:
        checkpoints: a directory (its ``*.weights.h5``/``*.keras`` files in
            epoch order), or a list of paths, oldest first.
        output_path: str. Where to save the averaged model: a directory,
            which gets it as a keras-hub preset with a copy of the run's
            ``vocab.spm`` when one is found next to the checkpoint directory
            (so `Translator.from_directory`, the exports and ``init_from``
            take it; `save_averaged`), or a ``.keras`` path. None saves
            nothing.
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
    if output_path is not None:
        check_output_path(output_path)
    if model is None:
        if paths[0].endswith(".keras"):
            model = load_model(paths[0], compile=False)
        else:
            model = load_architecture(os.path.dirname(os.path.abspath(paths[0])))
    # Every checkpoint must fit the model before any work (a file of another
    # architecture could otherwise load partly, or fail with a vague error).
    expected = _model_layout(model)
    for path in paths:
        _check_layout(expected, path)
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
    check_finite(variables, f"The average of {len(paths)} checkpoints")
    if output_path is not None:
        save_averaged(model, output_path, checkpoint_dir=os.path.dirname(paths[-1]))
    return model, paths


def check_output_path(output_path):
    """Raises before any work when ``output_path`` cannot receive the averaged model."""
    output_path = os.fspath(output_path)
    if output_path.endswith(".keras"):
        if os.path.isdir(output_path):
            raise ValueError(f"The output {output_path!r} is a directory, not a .keras file.")
        directory = os.path.dirname(output_path)
    else:
        directory = output_path
    if directory and os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(
            f"The output directory {directory!r} is a file; give a directory "
            "or a path ending in .keras."
        )


def save_averaged(model, output_path, checkpoint_dir=None):
    """Saves ``model`` to ``output_path``: a directory, or a ``.keras`` file.

    A directory gets the model once, as a keras-hub preset
    (`write_run_preset`: ``model.weights.h5`` with its ``.sha256``,
    ``config.json``, the tokenizer(s), ``task.json``, ...), which
    `Translator.from_directory`, ``from_preset``, the exports and
    ``init_from`` read. The run's ``vocab.spm`` (and ``source_vocab.spm``)
    is copied from the parent of ``checkpoint_dir`` (the run directory)
    where the target has none, a different one already there being an
    error (the model would not match it); the preset takes its decoding
    settings from that run's ``train_config.json``. A directory that holds
    the package's preset already (a run directory) keeps its tokenizers and
    settings and gets the new model (`replace_preset_model`); a
    ``model.keras`` there (a run of earlier versions) is replaced too, so
    that it never holds another model. A run directory of earlier versions
    without preset files (its ``model.keras``, its `TrainConfig` perhaps in
    ``config.json``) keeps its layout: its ``model.keras`` is replaced. A
    directory without a vocabulary (no run above the checkpoints) gets
    ``model.keras``: a preset needs its tokenizer.

    A ``.keras`` path gets that file (and, where its directory holds the
    package's preset, the preset the new model too). Writes are atomic and
    the weights are checked finite first.

    Returns:
        The path of the file that holds the weights.
    """
    output_path = os.fspath(output_path)
    check_output_path(output_path)
    keras_file = output_path.endswith(".keras")
    directory = os.path.dirname(output_path) if keras_file else output_path
    copies, config = {}, {}
    if checkpoint_dir is not None and directory:
        run_dir = os.path.dirname(os.path.abspath(checkpoint_dir))
        vocabulary, source_vocabulary, config = run_files(run_dir)
        for source, name in (
            (vocabulary, VOCABULARY_FILENAME),
            (source_vocabulary, SOURCE_VOCABULARY_FILENAME),
        ):
            target = os.path.join(directory, name)
            if source is None:
                continue
            if os.path.isfile(target) and not _same_bytes(source, target):
                raise ValueError(
                    f"{target!r} differs from the checkpoints' vocabulary {source!r}: "
                    "the averaged model would not match it. Choose another output."
                )
            copies[target] = source
    if keras_file:
        save_model(model, output_path)
    for target, source in copies.items():
        if not os.path.exists(target):
            copy_file_atomic(source, target)
    legacy = os.path.join(directory, MODEL_FILENAME)
    vocabulary = os.path.join(directory, VOCABULARY_FILENAME)
    if directory and _holds_package_preset(directory):
        replace_preset_model(directory, model)
        weights = os.path.join(directory, MODEL_WEIGHTS_FILE)
    elif keras_file:
        return output_path
    elif os.path.isfile(vocabulary) and not (
        os.path.isfile(legacy) or os.path.isfile(os.path.join(directory, PRESET_CONFIG_FILENAME))
    ):
        source_vocabulary = os.path.join(directory, SOURCE_VOCABULARY_FILENAME)
        weights = write_run_preset(
            directory,
            model,
            vocabulary,
            config,
            source_vocabulary if os.path.isfile(source_vocabulary) else None,
        )
    else:
        return save_model(model, legacy)
    if keras_file:
        return output_path
    if os.path.isfile(legacy):
        save_model(model, legacy)
    return weights


def _holds_package_preset(directory):
    if not is_preset_directory(directory):
        return False
    config = read_json(os.path.join(directory, PRESET_CONFIG_FILENAME), "preset file")
    return config.get("registered_name") in BACKBONE_REGISTERED_NAMES


def _same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()
