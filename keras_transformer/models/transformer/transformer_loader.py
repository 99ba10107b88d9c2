"""The one loader of a trained model directory: a run directory of
``keras-transformer train`` or a keras-hub preset (``save_to_preset``).

It reads one layout, the keras-hub preset's: ``config.json`` naming the
backbone (its ``registered_name``), ``model.weights.h5`` and
``assets/tokenizer/vocabulary.spm`` (with ``task.json``'s generation
defaults and ``language_tag``). A run directory of this version holds
those files beside its own (``train_config.json``, ``vocab.spm``, ...;
its weights once, in ``model.weights.h5``), so it is read as a preset; so
is one of earlier versions that held ``model.keras`` beside the preset
files (the same weights twice). Older layouts are
converted as they are read: a run directory of earlier versions
(``model.keras`` + ``vocab.spm``, its `TrainConfig` in ``config.json``)
gives the same `TrainedModelFiles` answers from those files, and a run
directory with a preset in ``preset/`` is read as that preset.

`find_trained_model` says where the model, its vocabulary and its decoding
settings are (`TrainedModelFiles`), and loads each of them;
`Translator.from_directory`, the keras-hub classes' ``from_preset``, the
command line and both exports load through it. `find_trained_models` and
`load_models` do the same for an ensemble of several directories. Models
are deserialized by their registered Keras names, so this module imports no
model class.
"""

import os

import keras

from keras_transformer.decoding.ensemble import Ensemble, check_weights
from keras_transformer.models.transformer.transformer_presets import (
    check_preset_directory,
    check_run_directory,
    source_vocabulary_asset,
)
from keras_transformer.options import RUN_DEFAULTS
from keras_transformer.utils.file_io import check_weights_file, load_model, read_json
from keras_transformer.utils.run_files import (
    MODEL_FILENAME,
    MODEL_WEIGHTS_FILE,
    PRESET_CONFIG_FILENAME,
    PRESET_VOCABULARY_PATH,
    RUN_PRESET_DIRNAME,
    SOURCE_VOCABULARY_FILENAME,
    TASK_CONFIG_FILE,
    VOCABULARY_FILENAME,
    is_preset_directory,
    train_config_path,
)

# The model every layout loads as: the backbone with its output projection.
TRANSFORMER_REGISTERED_NAME = "keras_transformer>Transformer"

try:
    from keras_hub.models import Backbone
except ImportError:  # pragma: no cover - keras-hub presets need keras-hub.
    Backbone = None


class TrainedModelFiles:
    """Where a trained model's files are: a keras-hub preset (``config.json``,
    ``model.weights.h5``, ``assets/tokenizer/vocabulary.spm``; a run
    directory of this version is one) or a run directory of earlier
    versions (``model.keras`` + ``vocab.spm``).

    Attributes:
        kind: "preset", or "run" (a run directory of earlier versions).
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
        """The `Transformer` (logits out), its errors naming the file: a
        run's ``model.keras``, or a preset's backbone built as the
        `Transformer` (the same layers and weights) with its weights."""
        if self.kind == "run":
            return load_model(os.path.join(self.directory, MODEL_FILENAME), compile=compile)
        check_preset_directory(self.directory, require_tokenizer=False)
        return load_preset_model(self.directory)

    @property
    def source_vocabulary_path(self):
        """The source side's own SentencePiece model (``source_vocab.spm``
        of a run directory, as `keras_transformer.convert` writes for a
        Marian model; ``assets/source_tokenizer/vocabulary.spm`` of a
        preset whose preprocessor has a ``source_tokenizer``), or None where
        source and target share ``vocabulary_path``.
        (`TransformerTokenizer.load` reads both.)"""
        if self.kind != "run":
            # A preset's source_tokenizer.json names it (missing, it is an
            # error of the loader, not the shared vocabulary).
            return source_vocabulary_asset(self.directory)
        path = os.path.join(self.directory, SOURCE_VOCABULARY_FILENAME)
        return path if os.path.isfile(path) else None

    def language_tag(self):
        """Where the model finds its language tag (``"source"`` or
        ``"target"``): a run's `TrainConfig` ``language_tag``, a preset's
        ``task.json`` task config; ``"source"`` where neither says (a model
        of one target language, an older file)."""
        if self.kind == "run":
            path = train_config_path(self.directory)
            if path is None:
                return "source"
            return read_json(path, "run config").get("language_tag") or "source"
        path = os.path.join(self.directory, TASK_CONFIG_FILE)
        if not os.path.isfile(path):
            return "source"
        task = read_json(path, "preset file")
        config = task.get("config", {}) if isinstance(task, dict) else {}
        return (config.get("language_tag") if isinstance(config, dict) else None) or "source"

    def decoding_defaults(self):
        """The decoding settings saved with the model: a run's `TrainConfig`
        (its `keras_transformer.options.RUN_DEFAULTS` and ``max_length``)
        or a preset's ``task.json`` (the task's ``decode_options``); unset
        values are left out."""
        if self.kind == "run":
            path = train_config_path(self.directory)
            if path is None:
                return {}
            config = read_json(path, "run config")
            keys = (*RUN_DEFAULTS, "max_length")
            return {key: config[key] for key in keys if config.get(key) is not None}
        path = os.path.join(self.directory, TASK_CONFIG_FILE)
        if not os.path.isfile(path):
            return {}
        task = read_json(path, "preset file")
        config = task.get("config", {}) if isinstance(task, dict) else None
        if not isinstance(config, dict):
            raise ValueError(f"The preset file {path!r} holds no task config (a JSON object).")
        settings = dict(config.get("decode_options") or {})
        keys = RUN_DEFAULTS
        settings.update({key: config[key] for key in keys if key in config})
        return settings


def load_preset_model(directory):
    """The `Transformer` (logits out) of the preset ``directory``, whose
    ``config.json`` holds a `TransformerBackbone` or a `Transformer`: the
    two share their config, layers and weights file, so the config is
    built as a `Transformer` (by its registered name, in Keras' safe mode)
    and ``model.weights.h5`` loads into it, as keras-hub's
    `Backbone.from_preset` reads them, without keras-hub (which needs
    TensorFlow Text). Sharded weights and remote presets load through
    keras-hub.

    Raises:
        ImportError: sharded weights or a remote preset without keras-hub.
        ValueError: naming the file, when one is unreadable.
    """
    weights_path = os.path.join(directory, MODEL_WEIGHTS_FILE)
    transformer = keras.saving.get_registered_object(TRANSFORMER_REGISTERED_NAME)
    if "://" in directory or not os.path.isfile(weights_path):
        if Backbone is None:
            raise ImportError(
                f"The preset {directory!r} is remote or has sharded weights (no "
                f"{MODEL_WEIGHTS_FILE}), which only keras-hub reads: pip install keras-hub."
            )
        backbone = Backbone.from_preset(directory)
        if isinstance(backbone, transformer):
            return backbone
        model = transformer.from_config(backbone.get_config())
        model.set_weights(backbone.get_weights())
        return model
    config_path = os.path.join(directory, PRESET_CONFIG_FILENAME)
    config = read_json(config_path, "preset file")
    try:
        model = keras.saving.deserialize_keras_object(
            dict(
                config,
                module=transformer.__module__,
                class_name=transformer.__name__,
                registered_name=TRANSFORMER_REGISTERED_NAME,
            )
        )
    except (TypeError, ValueError) as error:
        raise ValueError(f"Cannot build the model of {config_path!r}: {error}") from error
    check_weights_file(weights_path)
    try:
        model.load_weights(weights_path)
    except (ValueError, KeyError, OSError) as error:
        raise ValueError(f"Cannot load the weights {weights_path!r}: {error}") from error
    return model


def load_run_model(directory, cls, load_weights=True, **overrides):
    """The model of a run directory (``model.keras``) as an instance of
    ``cls``; with ``overrides`` or ``load_weights=False``, rebuilt from its
    config with the overrides and fresh weights.

    Raises:
        ValueError: naming the file, when the directory lacks the model or
            the vocabulary, or holds another class of model.
    """
    check_run_directory(directory)
    path = os.path.join(directory, MODEL_FILENAME)
    model = load_model(path, compile=False)
    if not isinstance(model, cls):
        raise ValueError(f"{path!r} holds a {type(model).__name__}, not a {cls.__name__}.")
    if overrides or not load_weights:
        model = cls.from_config({**model.get_config(), **overrides})
    return model


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
    """The `TrainedModelFiles` of ``directory``: a keras-hub preset directory
    (``TransformerSeq2SeqLM.save_to_preset``, or a run directory of
    ``keras-transformer train``, which is one), a run directory of earlier
    versions, or a run directory with a preset in ``preset/``. `Translator`, ``translate``, ``evaluate`` and both
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
        f"No trained model in {directory!r}: expected {PRESET_CONFIG_FILENAME}, "
        f"{MODEL_WEIGHTS_FILE} and {PRESET_VOCABULARY_PATH} (a run directory of "
        "`keras-transformer train` or a preset written by save_to_preset), or "
        f"{MODEL_FILENAME} and {VOCABULARY_FILENAME} (a run directory of earlier versions)."
    )


def model_directories(directory):
    """``directory`` (a path) or a sequence of paths as a list of paths."""
    if isinstance(directory, (str, bytes, os.PathLike)):
        return [os.fspath(directory)]
    directories = [os.fspath(d) for d in directory]
    if not directories:
        raise ValueError("No model directory given. Received: directory=[]")
    return directories


def find_trained_models(directories):
    """The `TrainedModelFiles` of each of ``directories`` (a path or a list
    of paths: the models of an ensemble), checked to share one vocabulary:
    their SentencePiece files must hold the same bytes. Nothing is loaded
    or compiled.

    Raises:
        FileNotFoundError: a directory without a trained model or without
            its vocabulary file.
        ValueError: naming the directories, when their vocabularies differ.
    """
    found = [find_trained_model(directory) for directory in model_directories(directories)]
    if len(found) == 1:
        return found
    contents = []
    for files in found:
        if not os.path.isfile(files.vocabulary_path):
            raise FileNotFoundError(
                f"{files.vocabulary_path!r} not found: the model in "
                f"{files.directory!r} has no vocabulary."
            )
        with open(files.vocabulary_path, "rb") as f:
            contents.append(f.read())
    for files, content in zip(found[1:], contents[1:]):
        if content != contents[0]:
            raise ValueError(
                "The models of an ensemble must share one vocabulary, but "
                f"{found[0].directory!r} and {files.directory!r} have different "
                f"ones ({found[0].vocabulary_path!r} and {files.vocabulary_path!r} "
                "differ)."
            )
    return found


def load_models(found, weights=None):
    """The model of one `TrainedModelFiles`, or an `Ensemble` of several
    (``weights``: one number > 0 per model, normalized; equal by default).

    Raises:
        ValueError: bad ``weights`` (checked before any model loads), or
            models with different vocabulary sizes, naming their directories.
    """
    check_weights(weights, len(found))
    models = [files.load_model(compile=False) for files in found]
    if len(models) == 1:
        return models[0]
    for files, model in zip(found[1:], models[1:]):
        if model.vocabulary_size != models[0].vocabulary_size:
            raise ValueError(
                "The models of an ensemble must share one vocabulary, but the "
                f"model in {found[0].directory!r} has {models[0].vocabulary_size} "
                f"output ids and the one in {files.directory!r} "
                f"{model.vocabulary_size}."
            )
    return Ensemble(models, weights)
