"""The flags of the commands that load a trained model (``translate``,
``score``, ``evaluate``, ``export``): ``--model-dir`` and ``--weights``
checked before any work, the run's saved settings, the decoding flags as
`DecodeOptions`, ``--target-language``, and the `Translator` they load.
"""

import os

from keras_transformer import options as decode_options
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer.transformer_loader import (
    locate_trained_model,
)
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.special_tokens import target_language_ids
from keras_transformer.training.config import load_run_config
from keras_transformer.training.run_directory import RunDirectory


def _check_model_dir(args):
    """Raises before any work when a ``--model-dir`` cannot hold a trained
    model, or when ``--weights`` does not give one weight per directory
    (what a directory holds is checked when the models load, after the
    options)."""
    for model_dir in args.model_dir:
        if not os.path.isdir(model_dir):
            what = "is not a directory" if os.path.exists(model_dir) else "does not exist"
            raise FileNotFoundError(
                f"--model-dir {model_dir!r} {what} (expected a run directory of "
                "train or convert, or a preset written by save_to_preset)."
            )
    if args.weights is not None and len(args.weights) != len(args.model_dir):
        raise ValueError(
            f"--weights gives {len(args.weights)} weight(s) for "
            f"{len(args.model_dir)} --model-dir(s); give one per model."
        )


def _model_dirs(args):
    """The ``--model-dir`` value for the library: one path, or the list of
    an ensemble's."""
    return args.model_dir[0] if len(args.model_dir) == 1 else list(args.model_dir)


def _run_config(model_dir):
    """The `TrainConfig` of a run directory (``train_config.json``, or an
    older run's ``config.json``); None for a preset of ``save_to_preset``
    or a directory without one."""

    if RunDirectory(model_dir).saved_config_path() is not None:
        return load_run_config(model_dir)
    return None


def _preset_decoding_settings(model_dir):
    """The generation defaults a keras-hub preset saved (its task.json)."""
    files = locate_trained_model(model_dir)
    if files is None or files.kind != "preset":
        return {}
    return files.decoding_defaults()


def _check_output_file(path, flag="--output"):
    """Raises before any work when the output file ``path`` cannot be written."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{flag} {path!r} is a directory, not a file.")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{flag} {path!r}: the directory {directory!r} does not exist.")
    if not os.access(directory, os.W_OK) or (
        os.path.exists(path) and not os.access(path, os.W_OK)
    ):
        raise PermissionError(f"{flag} {path!r} is not writable.")


def _decoding_kwargs(args, run_config):
    """The decoding options the flags set, else the run's (a run's
    `TrainConfig`, or a preset's saved settings) for the options a run
    keeps (`keras_transformer.options.RUN_DEFAULTS`); plus ``batch_size``.
    Options nobody set are left out (their `DecodeOptions` defaults)."""
    kwargs = {}
    saved = {}
    if run_config is None and getattr(args, "model_dir", None):
        saved = _preset_decoding_settings(args.model_dir[0])
    for option in decode_options.OPTIONS:
        value = getattr(args, option.name, None)
        if value is False and option.type is bool:
            value = None  # an unset store_true flag
        if value is None and option.run_default:
            if run_config is not None:
                value = getattr(run_config, option.name)
            else:
                value = saved.get(option.name)
        if value is not None:
            kwargs[option.name] = value
    if getattr(args, "batch_size", None) is not None:
        kwargs["batch_size"] = args.batch_size
    return kwargs


def _decode_options(args, run_config):
    """The `DecodeOptions` of the flags (and the run's settings), validated
    before any model is loaded; errors name the option."""

    values = _decoding_kwargs(args, run_config)
    values.pop("batch_size", None)
    if getattr(args, "sampling", False) and getattr(args, "beam_size", None) is None:
        values["beam_size"] = 1  # the run's beam size is for search
    return DecodeOptions(**values)


def _load_translator(args, **kwargs):
    """The `Translator` of ``--model-dir`` (an ensemble for several),
    ``--weights`` and ``--quantize``."""
    return Translator.from_directory(
        _model_dirs(args), weights=args.weights, quantize=args.quantize, **kwargs
    )


def _target_language(args, translator):
    """``--target-language`` for the `Translator`'s ``target_language``,
    checked against the model's languages; a ValueError naming the flag
    when it is missing for a multilingual model, names a language the model
    does not know, or is given to a model of one target language."""
    code = args.target_language
    if code is None:
        if translator.languages:
            raise ValueError(
                "--target-language is required: the model translates into "
                f"{', '.join(sorted(translator.languages))}."
            )
        return None
    target_language_ids(code, translator.languages, 1, name="--target-language")
    return code
