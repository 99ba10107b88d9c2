"""The names of every file and directory of a run directory or a preset.

A run directory (``keras-transformer train``)::

    <run>/
      train_config.json   the resolved `TrainConfig`: the run's identity
      vocab.spm           the shared SentencePiece vocabulary
      source_vocab.spm    optionally, the source side's own SentencePiece model
      config.json         the final model, kept once, as a keras-hub
      model.weights.h5    preset: its backbone's config, weights (without
      model.weights.h5.sha256  optimizer state) and their checksum,
      metadata.json       metadata, tokenizer(s) and vocabulary asset(s)
      tokenizer.json      (copies of vocab.spm and source_vocab.spm),
      preprocessor.json   preprocessor, and the task with the run's
      task.json           decoding defaults and language_tag
      assets/             (written last: config.json, after the others)
      results.json        steps, time, scores, the weights' model_path
                          (strict JSON: NaN -> null)
      checkpoints/        model_config.json, epoch_001.weights.h5, ...
      backup/             `BackupAndRestore` state while the run is unfinished
      logs/               history.csv (and TensorBoard events)
      preset/             optionally, a keras-hub preset put there (read where
                          the directory holds no model of its own)

Runs of earlier versions kept the final model in model.keras (a whole
``.keras`` file: config, weights and optimizer state), some with the preset
files beside it, some with their `TrainConfig` in config.json and no preset
files (`train_config_path` finds either); they still load everywhere. A
directory that holds a preset is read as the preset; model.keras is read
only where there is none.

A keras-hub preset (``save_to_preset``): config.json, model.weights.h5,
tokenizer.json, task.json, assets/tokenizer/vocabulary.spm, metadata.json;
and, for a model with a source SentencePiece model of its own,
source_tokenizer.json and assets/source_tokenizer/vocabulary.spm.
These constants are the only literals of those names in the package.
"""

import os

from keras_transformer.utils.json_files import read_json

# The final model of run directories of earlier versions (a run now keeps
# its weights once, in the preset's `MODEL_WEIGHTS_FILE`); also what
# ``average-checkpoints`` writes where it has no vocabulary for a preset.
MODEL_FILENAME = "model.keras"
VOCABULARY_FILENAME = "vocab.spm"
# A model whose source side has a SentencePiece model of its own (over the
# same ids; an imported Marian model): vocab.spm is then the target side's.
SOURCE_VOCABULARY_FILENAME = "source_vocab.spm"
# The resolved `TrainConfig`. Runs of earlier versions kept it in
# config.json (`LEGACY_TRAIN_CONFIG_FILENAME`), where a run now writes the
# keras-hub preset's backbone config (`PRESET_CONFIG_FILENAME`).
TRAIN_CONFIG_FILENAME = "train_config.json"
LEGACY_TRAIN_CONFIG_FILENAME = "config.json"
RESULTS_FILENAME = "results.json"
CHECKPOINTS_DIRNAME = "checkpoints"
BACKUP_DIRNAME = "backup"
LOGS_DIRNAME = "logs"
# The training text prepared into binary shards (`prepare_corpus`), unless
# the config names another place.
CORPUS_DIRNAME = "corpus"

# Inside checkpoints/: the architecture and compile config, and one weights
# file per epoch (or per update interval).
ARCHITECTURE_FILENAME = "model_config.json"
CHECKPOINT_PATTERN = "epoch_{epoch:03d}.weights.h5"
# Inside checkpoints/: the best model so far (validation BLEU or loss), in a
# subdirectory so that it is not taken for an epoch checkpoint
# (`list_checkpoints`, ``average-checkpoints DIR``).
BEST_DIRNAME = "best"
BEST_WEIGHTS_FILENAME = "best.weights.h5"
BEST_STATE_FILENAME = "best.json"

# Inside backup/: the files of Keras' `BackupAndRestore`.
BACKUP_METADATA_FILENAME = "training_metadata.json"
BACKUP_WEIGHTS_FILENAME = "latest.weights.h5"
BACKUP_PREVIOUS_WEIGHTS_FILENAME = "latest.weights.h5.bkp"

# Inside logs/: the epoch history (CSVLogger, val_bleu included), one row per
# validation BLEU, and the TensorBoard run of the per-update validation
# scalars.
HISTORY_FILENAME = "history.csv"
VALIDATION_LOG_FILENAME = "validation.csv"
VALIDATION_EVENTS_DIRNAME = "validation"

# A keras-hub preset (keras_hub/src/utils/preset_utils.py), as written by
# `TransformerSeq2SeqLM.save_to_preset`.
PRESET_CONFIG_FILENAME = "config.json"
PRESET_VOCABULARY_PATH = os.path.join("assets", "tokenizer", "vocabulary.spm")
TASK_CONFIG_FILE = "task.json"
PREPROCESSOR_CONFIG_FILE = "preprocessor.json"
TOKENIZER_CONFIG_FILE = "tokenizer.json"
# The source side's own tokenizer (`TransformerSeq2SeqLMPreprocessor`'s
# ``source_tokenizer``): keras-hub names a tokenizer's asset folder after its
# config file.
SOURCE_TOKENIZER_CONFIG_FILE = "source_tokenizer.json"
PRESET_SOURCE_VOCABULARY_PATH = os.path.join("assets", "source_tokenizer", "vocabulary.spm")
MODEL_WEIGHTS_FILE = "model.weights.h5"
PRESET_METADATA_FILE = "metadata.json"
SHARDED_MODEL_WEIGHTS_FILE = "model.weights.json"
# A run directory may hold a keras-hub preset in this subdirectory.
RUN_PRESET_DIRNAME = "preset"


def is_preset_directory(directory):
    """True when ``directory`` holds a keras-hub preset (a ``config.json``
    with a ``registered_name``). An unreadable ``config.json`` is a
    ValueError naming it, not a silent "no preset"."""
    path = os.path.join(directory, PRESET_CONFIG_FILENAME)
    if not os.path.isfile(path):
        return False
    config = read_json(path, "preset file")
    return isinstance(config, dict) and "registered_name" in config


def is_train_config(config):
    """True for a saved `TrainConfig` (a JSON object of its fields), False
    for a serialized Keras object (a preset's backbone: ``class_name``)."""
    return isinstance(config, dict) and "class_name" not in config and "registered_name" not in config


def train_config_path(directory):
    """The saved `TrainConfig` of the run directory ``directory``:
    ``train_config.json``, else the ``config.json`` of a run of earlier
    versions (a `TrainConfig`, not a preset's backbone); None where there is
    neither. An unreadable ``config.json`` is a ValueError naming it."""
    path = os.path.join(directory, TRAIN_CONFIG_FILENAME)
    if os.path.isfile(path):
        return path
    legacy = os.path.join(directory, LEGACY_TRAIN_CONFIG_FILENAME)
    if os.path.isfile(legacy) and is_train_config(read_json(legacy, "run config")):
        return legacy
    return None
