"""`write_preset_files`: a trained `Transformer` as a keras-hub preset,
written without keras-hub.

``keras-transformer train`` writes these files into the run directory, so
that a run directory is also a keras-hub preset:
``keras_hub.models.Seq2SeqLM.from_preset(run_dir)``,
`TransformerSeq2SeqLM.from_preset` and `Translator.from_directory` read the
same files. They are the files `TransformerSeq2SeqLM.save_to_preset` writes
(keras-hub's ``KerasPresetSaver``), with the same JSON::

    config.json              the backbone: a `TransformerBackbone` (hidden
                             states out) with the model's config
    model.weights.h5         its weights, without the optimizer's state (a
                             `Transformer` and its backbone save the same
                             weights file)
    metadata.json            versions, parameter count, date, tasks
    tokenizer.json           the `TransformerTokenizer`
    assets/tokenizer/vocabulary.spm
    source_tokenizer.json    where the sources have a SentencePiece model
    assets/source_tokenizer/vocabulary.spm   of their own
    preprocessor.json        the `TransformerSeq2SeqLMPreprocessor`
    task.json                the `TransformerSeq2SeqLM`: its generation
                             defaults and ``language_tag``

keras-hub needs TensorFlow Text, which a JAX or PyTorch installation may
lack; the configs here are therefore written from the classes' registered
names, as keras-hub's ``keras.saving.serialize_keras_object`` writes them
(a test compares them with ``save_to_preset``'s where keras-hub is
installed). Every file is written atomically (`keras_transformer.utils.
file_io`); ``config.json`` last, so a directory whose ``config.json``
names a backbone holds the other files too.
"""

import datetime
import importlib.metadata
import os

import keras

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.models.transformer.transformer_tokenizer import (
    TransformerTokenizer,
)
from keras_transformer.utils.file_io import (
    atomic_write_bytes,
    atomic_write_json,
    read_json,
    save_weights,
)
from keras_transformer.utils.run_files import (
    MODEL_WEIGHTS_FILE,
    PRESET_CONFIG_FILENAME,
    PRESET_METADATA_FILE,
    PRESET_SOURCE_VOCABULARY_PATH,
    PRESET_VOCABULARY_PATH,
    PREPROCESSOR_CONFIG_FILE,
    SOURCE_TOKENIZER_CONFIG_FILE,
    TASK_CONFIG_FILE,
    TOKENIZER_CONFIG_FILE,
)

# The task's and the preprocessor's modules and registered names: their
# classes subclass keras-hub's, so they are named here, not imported.
PACKAGE = "keras_transformer"
TASK_MODULE = "keras_transformer.models.transformer.transformer_seq_2_seq_lm"
TASK_CLASS = "TransformerSeq2SeqLM"
PREPROCESSOR_MODULE = "keras_transformer.models.transformer.transformer_seq_2_seq_lm_preprocessor"
PREPROCESSOR_CLASS = "TransformerSeq2SeqLMPreprocessor"
# keras-hub's names of the layers (`keras.backend.uid`-free: one of each).
TASK_NAME = "transformer_seq2_seq_lm"
PREPROCESSOR_NAME = "transformer_seq2_seq_lm_preprocessor"
TOKENIZER_NAME = "transformer_tokenizer"
SOURCE_TOKENIZER_NAME = "source_transformer_tokenizer"
# The keras-hub task base class of the family (metadata.json's ``tasks``).
TASKS = ["Seq2SeqLM"]
# keras-hub's `KerasPresetSaver` indents its JSON by 4.
JSON_INDENT = 4


def _serialized(module, class_name, config):
    return {
        "module": module,
        "class_name": class_name,
        "config": config,
        "registered_name": f"{PACKAGE}>{class_name}",
    }


def _without_build_config(config):
    """``config`` without ``build_config``/``compile_config`` at any depth
    (keras-hub's ``KerasPresetSaver`` drops them)."""
    if isinstance(config, dict):
        return {
            key: _without_build_config(value)
            for key, value in config.items()
            if key not in ("build_config", "compile_config")
        }
    return config


def backbone_config(model):
    """The ``config.json`` of ``model`` (a `Transformer` or a
    `TransformerBackbone`): a serialized `TransformerBackbone` with the
    model's config, as ``TransformerBackbone.save_to_preset`` writes it."""
    if not isinstance(model, TransformerBackbone):
        raise ValueError(
            "A preset's backbone must be a keras_transformer Transformer or "
            f"TransformerBackbone. Received: {type(model).__name__}"
        )
    serialized = _without_build_config(keras.saving.serialize_keras_object(model))
    return dict(
        serialized,
        module=TransformerBackbone.__module__,
        class_name=TransformerBackbone.__name__,
        registered_name=keras.saving.get_registered_name(TransformerBackbone),
    )


def tokenizer_config(config_file=TOKENIZER_CONFIG_FILE, name=TOKENIZER_NAME):
    """The ``tokenizer.json`` (or ``source_tokenizer.json``) of a
    `TransformerTokenizer`: keras-hub's `SentencePieceTokenizer` config,
    whose vocabulary is the preset asset, not the JSON (``proto`` None)."""
    return {
        "module": TransformerTokenizer.__module__,
        "class_name": TransformerTokenizer.__name__,
        "config": {
            "name": name,
            "trainable": True,
            "dtype": keras.dtype_policies.serialize(keras.DTypePolicy("int32")),
            "config_file": config_file,
            "proto": None,
            "sequence_length": None,
            "add_bos": False,
            "add_eos": False,
        },
        "registered_name": keras.saving.get_registered_name(TransformerTokenizer),
    }


def preprocessor_config(sequence_length, source_tokenizer=False):
    """The ``preprocessor.json`` of a `TransformerSeq2SeqLMPreprocessor` of
    ``sequence_length`` tokens per side (with a ``source_tokenizer`` of its
    own where ``source_tokenizer``)."""
    config = {
        "name": PREPROCESSOR_NAME,
        "trainable": True,
        "dtype": keras.dtype_policies.serialize(keras.DTypePolicy("float32")),
        "tokenizer": tokenizer_config(),
        "config_file": PREPROCESSOR_CONFIG_FILE,
        "encoder_sequence_length": sequence_length,
        "decoder_sequence_length": sequence_length,
    }
    if source_tokenizer:
        config["source_tokenizer"] = tokenizer_config(
            SOURCE_TOKENIZER_CONFIG_FILE, SOURCE_TOKENIZER_NAME
        )
    return _serialized(PREPROCESSOR_MODULE, PREPROCESSOR_CLASS, config)


def task_config(backbone, preprocessor, decode_options, batch_size=32, language_tag="source"):
    """The ``task.json`` of a `TransformerSeq2SeqLM`: the backbone's and
    the preprocessor's configs and the generation defaults."""
    return _serialized(
        TASK_MODULE,
        TASK_CLASS,
        {
            "backbone": backbone,
            "preprocessor": preprocessor,
            "name": TASK_NAME,
            "decode_options": decode_options.to_dict(),
            "batch_size": batch_size,
            "language_tag": language_tag,
        },
    )


def metadata(model):
    """keras-hub's ``metadata.json``."""
    try:
        keras_hub_version = importlib.metadata.version("keras-hub")
    except importlib.metadata.PackageNotFoundError:
        keras_hub_version = None
    return {
        "keras_version": keras.version(),
        "keras_hub_version": keras_hub_version,
        "parameter_count": model.count_params(),
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        "tasks": list(TASKS),
    }


def _uncompiled_copy(model):
    """A `TransformerBackbone` with ``model``'s config and weights, without
    an optimizer (the same weights file as ``model``'s, less its state)."""
    backbone = TransformerBackbone.from_config(model.get_config())
    backbone.set_weights(model.get_weights())
    return backbone


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_preset_files(
    directory,
    model,
    vocabulary_path,
    source_vocabulary_path=None,
    decode_options=None,
    language_tag="source",
    sequence_length=128,
    batch_size=32,
):
    """Writes the keras-hub preset of ``model`` into ``directory`` (see the
    module docstring), beside whatever else is there.

    Args:
        directory: the preset (or run) directory.
        model: the trained `Transformer` (or `TransformerBackbone`).
        vocabulary_path: its SentencePiece model (``vocab.spm``).
        source_vocabulary_path: the sources' own SentencePiece model, or
            None where both sides share ``vocabulary_path``.
        decode_options: a `DecodeOptions` (or dict of its fields): the
            task's generation defaults. Defaults to `DecodeOptions()`.
        language_tag: ``"source"`` or ``"target"`` (where a multilingual
            model finds its language tag).
        sequence_length: int. The preprocessor's tokens per side.
        batch_size: int. The task's generation batch size.

    Returns:
        ``directory``.
    """
    if decode_options is None:
        decode_options = DecodeOptions()
    elif isinstance(decode_options, dict):
        decode_options = DecodeOptions.from_dict(decode_options)
    backbone = backbone_config(model)
    preprocessor = preprocessor_config(sequence_length, source_vocabulary_path is not None)
    task = task_config(backbone, preprocessor, decode_options, batch_size, language_tag)

    def join(name):
        return os.path.join(directory, name)

    def write_json(name, value):
        atomic_write_json(join(name), value, indent=JSON_INDENT)

    # The weights alone, as keras-hub saves an uncompiled backbone's: the
    # trained model's file would hold its optimizer's state too.
    save_weights(_uncompiled_copy(model), join(MODEL_WEIGHTS_FILE))
    atomic_write_bytes(join(PRESET_VOCABULARY_PATH), _read_bytes(vocabulary_path))
    write_json(TOKENIZER_CONFIG_FILE, tokenizer_config())
    if source_vocabulary_path is not None:
        atomic_write_bytes(
            join(PRESET_SOURCE_VOCABULARY_PATH), _read_bytes(source_vocabulary_path)
        )
        write_json(SOURCE_TOKENIZER_CONFIG_FILE, preprocessor["config"]["source_tokenizer"])
    write_json(PREPROCESSOR_CONFIG_FILE, preprocessor)
    write_json(TASK_CONFIG_FILE, task)
    write_json(PRESET_METADATA_FILE, metadata(model))
    # Last: a backbone config.json says the preset is complete.
    write_json(PRESET_CONFIG_FILENAME, backbone)
    return directory


def replace_preset_model(directory, model):
    """Replaces the model of the preset in ``directory`` by ``model`` (its
    weights, and its backbone config in ``config.json`` and ``task.json``),
    keeping the tokenizers, the preprocessor and the generation defaults:
    the model of a run directory replaced by an average of its
    checkpoints (``average-checkpoints``).

    Returns:
        ``directory``.
    """
    backbone = backbone_config(model)
    save_weights(_uncompiled_copy(model), os.path.join(directory, MODEL_WEIGHTS_FILE))
    task_path = os.path.join(directory, TASK_CONFIG_FILE)
    if os.path.isfile(task_path):
        task = read_json(task_path, "preset file")
        if isinstance(task, dict) and isinstance(task.get("config"), dict):
            task["config"]["backbone"] = backbone
            atomic_write_json(task_path, task, indent=JSON_INDENT)
    atomic_write_json(
        os.path.join(directory, PRESET_METADATA_FILE), metadata(model), indent=JSON_INDENT
    )
    atomic_write_json(
        os.path.join(directory, PRESET_CONFIG_FILENAME), backbone, indent=JSON_INDENT
    )
    return directory
