"""The final model of a run, kept once: the keras-hub preset files.

A run directory (``keras-transformer train``, ``convert``, or the output
directory of ``average-checkpoints``) keeps its final model's weights once,
in the preset's ``model.weights.h5`` (with its ``.sha256``), beside
``config.json``, the tokenizer(s), ``preprocessor.json`` and ``task.json``
(`write_preset_files`): the files every loader reads (`find_trained_model`,
``from_preset``, `Translator.from_directory`, the exports, the command
line, ``init_from``). Run directories of earlier versions held the same
weights a second time in ``model.keras``; they still load (the loaders read
``model.keras`` where a directory holds no preset).

`write_run_preset` takes the run's settings from its `TrainConfig` (as a
dict: ``TrainConfig.to_dict()`` or a saved ``train_config.json``): its
decoding defaults (`keras_transformer.options.RUN_DEFAULTS`) become the
task's generation defaults, its ``language_tag`` the task's, its
``max_length`` (else 128) the preprocessor's tokens per side.
"""

import os

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer.transformer_preset_writer import (
    write_preset_files,
)
from keras_transformer.options import RUN_DEFAULTS
from keras_transformer.utils.file_io import read_json
from keras_transformer.utils.run_files import (
    MODEL_WEIGHTS_FILE,
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
    train_config_path,
)

# The preprocessor's tokens per side where the run sets no max_length.
DEFAULT_SEQUENCE_LENGTH = 128


def write_run_preset(directory, model, vocabulary_path, config=None, source_vocabulary_path=None):
    """Writes ``model`` as the keras-hub preset of the run directory
    ``directory`` (`write_preset_files`).

    Args:
        directory: the run directory.
        model: the final `Transformer`.
        vocabulary_path: its SentencePiece model (the run's ``vocab.spm``).
        config: dict. The run's `TrainConfig` fields; None or missing keys
            take the defaults.
        source_vocabulary_path: the sources' own SentencePiece model (the
            run's ``source_vocab.spm``), or None.

    Returns:
        The path of the weights file (``model.weights.h5``).
    """
    config = config or {}
    fields = {key: config[key] for key in RUN_DEFAULTS if config.get(key) is not None}
    write_preset_files(
        directory,
        model,
        vocabulary_path,
        source_vocabulary_path=source_vocabulary_path,
        decode_options=DecodeOptions().replace(**fields),
        language_tag=config.get("language_tag") or "source",
        sequence_length=int(config.get("max_length") or DEFAULT_SEQUENCE_LENGTH),
    )
    return weights_path(directory)


def weights_path(directory):
    """The final model's weights in the run directory ``directory``."""
    return os.path.join(directory, MODEL_WEIGHTS_FILE)


def run_files(run_dir):
    """``(vocabulary, source vocabulary, TrainConfig dict)`` of the run
    directory ``run_dir``: the paths of its ``vocab.spm`` and
    ``source_vocab.spm`` (None where missing) and its saved `TrainConfig`
    (``train_config.json``, or the ``config.json`` of a run of earlier
    versions; an empty dict where there is none)."""
    vocabulary = os.path.join(run_dir, VOCABULARY_FILENAME)
    source = os.path.join(run_dir, SOURCE_VOCABULARY_FILENAME)
    config_path = train_config_path(run_dir)
    config = read_json(config_path, "run config") if config_path is not None else {}
    return (
        vocabulary if os.path.isfile(vocabulary) else None,
        source if os.path.isfile(source) else None,
        config if isinstance(config, dict) else {},
    )
