"""Presets of the Transformer: the paper's architectures and trained models.

Architecture presets (`PRESETS`): the paper's base and big (Table 3) and two
CPU-sized ones, as constructor arguments (untrained). Trained presets: a
keras-hub preset directory (``save_to_preset``), a run directory of
``keras-transformer train``, or a name registered with
`register_trained_preset`; the checks here name the file that is missing or
wrong before any model is built.
"""

import glob
import inspect
import os

import keras
import sentencepiece as spm

from keras_transformer.models.transformer.transformer_preset_converters import (
    converted_model_type,
    converted_preset,
    removes_converted_presets,  # noqa: F401  (preset_lib.removes_converted_presets)
)
from keras_transformer.special_tokens import check_reserved_pieces
from keras_transformer.utils.file_io import (
    checksum_path,
    read_json,
    verify_checksum,
    write_checksum,
)
from keras_transformer.utils.run_files import (
    MODEL_FILENAME,
    MODEL_WEIGHTS_FILE,
    PRESET_SOURCE_VOCABULARY_PATH,
    RUN_PRESET_DIRNAME,
    SHARDED_MODEL_WEIGHTS_FILE,
    SOURCE_TOKENIZER_CONFIG_FILE,
    TOKENIZER_CONFIG_FILE,
    VOCABULARY_FILENAME,
    is_preset_directory,
)
from keras_transformer.utils.run_files import PRESET_CONFIG_FILENAME as CONFIG_FILE
from keras_transformer.utils.run_files import PRESET_VOCABULARY_PATH as TOKENIZER_ASSET

PRESETS = {
    # Trains in minutes on 2 CPU cores (the embedded default task, tests).
    "tiny": dict(
        vocabulary_size=8000,
        num_layers=2,
        d_model=128,
        num_heads=4,
        d_ff=512,
        dropout_rate=0.1,
    ),
    # A real translation model for CPU budgets (Multi30k in ~25 minutes).
    "small": dict(
        vocabulary_size=8000,
        num_layers=3,
        d_model=256,
        num_heads=4,
        d_ff=1024,
        dropout_rate=0.1,
    ),
    # The paper's Table 3 "base": 65M parameters with a 37,000-token vocabulary.
    "base": dict(
        vocabulary_size=37000,
        num_layers=6,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        dropout_rate=0.1,
    ),
    # The paper's Table 3 "big": 213M parameters.
    "big": dict(
        vocabulary_size=37000,
        num_layers=6,
        d_model=1024,
        num_heads=16,
        d_ff=4096,
        dropout_rate=0.3,
    ),
}


def constructor_argument_names(cls):
    """The keyword arguments of ``cls.__init__`` (what a preset's overrides may set)."""
    parameters = inspect.signature(cls.__init__).parameters
    return [name for name in parameters if name not in ("self", "kwargs")] + ["name"]


def resolve_preset(name, overrides=None, argument_names=None):
    """The constructor arguments of preset ``name`` with ``overrides`` applied.

    ``argument_names``: the names ``overrides`` may use (the model's
    constructor arguments, `constructor_argument_names`); None accepts any.
    """
    if name not in PRESETS:
        raise ValueError(
            f"Unknown preset {name!r}. Available presets: {sorted(PRESETS)}"
        )
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(argument_names or overrides))
    if unknown:
        raise ValueError(
            f"Unknown model argument(s) {unknown} for preset {name!r}. "
            f"Valid arguments: {sorted(argument_names)}"
        )
    return {**PRESETS[name], **overrides}


# The registered names of a preset's ``config.json``: the backbone of a
# task, or the `Transformer` (with its projection) of earlier versions.
BACKBONE_REGISTERED_NAMES = (
    "keras_transformer>TransformerBackbone",
    "keras_transformer>Transformer",
)


TRAINED_PRESETS = {}


def register_trained_preset(name, path, description=""):
    """Gives the trained preset directory ``path`` a name for `from_preset`.

    Args:
        name: str. Must not be an architecture preset name.
        path: str. A preset directory or a run directory.
        description: str. Shown by `list_presets`.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"A preset name must be a non-empty str. Received: {name!r}")
    if name in PRESETS:
        raise ValueError(
            f"{name!r} is an architecture preset; give the trained preset "
            f"another name. Architecture presets: {sorted(PRESETS)}"
        )
    if not os.path.isdir(path):
        raise ValueError(f"The trained preset {name!r} is not a directory: {path!r}")
    TRAINED_PRESETS[name] = {
        "path": os.path.abspath(path),
        "description": description,
    }


def list_presets(kind=None):
    """All presets by name: ``{"kind": "architecture" | "trained", ...}``.

    Args:
        kind: None (both), "architecture" or "trained".
    """
    if kind not in (None, "architecture", "trained"):
        raise ValueError(
            "kind must be None, 'architecture' or 'trained'. "
            f"Received: kind={kind!r}"
        )
    presets = {}
    if kind in (None, "architecture"):
        for name, arguments in PRESETS.items():
            presets[name] = {
                "kind": "architecture",
                "description": "untrained architecture (no weights, no vocabulary)",
                "config": dict(arguments),
            }
    if kind in (None, "trained"):
        for name, entry in TRAINED_PRESETS.items():
            presets[name] = {"kind": "trained", **entry}
    return presets


def resolve_trained_preset(preset):
    """The directory of a trained preset (a registered name or a path).

    Raises:
        ValueError: ``preset`` is an architecture preset name, or neither a
            registered name nor a directory.
    """
    if not isinstance(preset, (str, os.PathLike)):
        raise ValueError(f"A preset must be a str or a path. Received: {preset!r}")
    preset = os.fspath(preset)
    if preset in TRAINED_PRESETS:
        return TRAINED_PRESETS[preset]["path"]
    if preset in PRESETS:
        raise ValueError(
            f"{preset!r} is an architecture preset: an untrained Transformer "
            "without weights or vocabulary. Build it with "
            f"Transformer.from_preset({preset!r}, vocabulary_size=...), or load "
            "a trained preset directory (save_to_preset or a run directory)."
        )
    if "://" in preset:
        return preset  # A keras-hub handle (kaggle://, hf://, ...).
    if not os.path.isdir(preset):
        raise ValueError(
            f"Unknown preset {preset!r}: not a directory and not a registered "
            f"trained preset ({sorted(TRAINED_PRESETS) or 'none registered'}). "
            f"Architecture presets ({sorted(PRESETS)}) have no "
            "weights."
        )
    if converted_model_type(preset) is not None:
        return converted_preset(preset)  # A Hugging Face directory (OPUS-MT).
    if is_preset_directory(preset):
        return preset
    nested = os.path.join(preset, RUN_PRESET_DIRNAME)
    if is_preset_directory(nested):
        return nested  # A run directory with a preset/ inside.
    return preset


def _read_json(path):
    return read_json(path, "preset file")


def is_run_directory(directory):
    """A run directory of earlier versions: ``model.keras`` or ``vocab.spm``
    without a keras-hub preset's ``config.json`` (the run directories of
    this version are presets too, and load as presets)."""

    return (
        os.path.isdir(directory)
        and not is_preset_directory(directory)
        and (
            os.path.isfile(os.path.join(directory, MODEL_FILENAME))
            or os.path.isfile(os.path.join(directory, VOCABULARY_FILENAME))
        )
    )


def check_run_directory(directory):
    """Raises a ValueError naming the missing file of a run directory
    without preset files (`is_run_directory`)."""

    for filename, what in (
        (
            MODEL_FILENAME,
            f"no model weights: a finished run holds {CONFIG_FILE} and "
            f"{MODEL_WEIGHTS_FILE}, a run of earlier versions {MODEL_FILENAME}",
        ),
        (VOCABULARY_FILENAME, "no tokenizer"),
    ):
        path = os.path.join(directory, filename)
        if not os.path.isfile(path):
            raise ValueError(
                f"The run directory {directory!r} is not a trained preset: "
                f"{path!r} is missing ({what}). Has the run finished?"
            )


def write_weights_checksum(directory):
    """After keras-hub wrote the preset ``directory``: ``model.weights.h5``'s
    checksum beside it (every load compares them), or, for sharded weights,
    no stale one."""
    path = os.path.join(directory, MODEL_WEIGHTS_FILE)
    if os.path.isfile(path):
        write_checksum(path)
    elif os.path.isfile(checksum_path(path)):
        os.remove(checksum_path(path))


def check_preset_directory(directory, require_tokenizer=True):
    """Raises a ValueError naming the file when ``directory`` is no usable
    Transformer preset: no config, another architecture, no weights, weights
    that differ from their checksum (``model.weights.h5.sha256``), no
    tokenizer."""
    if "://" in directory:
        return  # Remote handles are checked by keras-hub while downloading.
    config_path = os.path.join(directory, CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise ValueError(
            f"{directory!r} is not a preset directory: {config_path!r} is "
            "missing (a preset, and a run directory of keras-transformer train, "
            "has config.json and model.weights.h5; a run directory of earlier "
            "versions has model.keras and vocab.spm)."
        )
    config = _read_json(config_path)
    registered = config.get("registered_name") if isinstance(config, dict) else None
    if registered not in BACKBONE_REGISTERED_NAMES:
        raise ValueError(
            f"{config_path!r} describes a {registered or 'non-keras-hub'} model, "
            f"not a keras_transformer Transformer (registered names "
            f"{list(BACKBONE_REGISTERED_NAMES)}): a preset of another architecture."
        )
    if not (
        os.path.isfile(os.path.join(directory, MODEL_WEIGHTS_FILE))
        or os.path.isfile(os.path.join(directory, SHARDED_MODEL_WEIGHTS_FILE))
        or glob.glob(os.path.join(directory, "model_*.weights.h5"))
    ):
        raise ValueError(
            f"The preset {directory!r} has no weights: "
            f"{os.path.join(directory, MODEL_WEIGHTS_FILE)!r} is missing."
        )
    if os.path.isfile(os.path.join(directory, MODEL_WEIGHTS_FILE)):
        # Before keras-hub reads it: a damaged HDF5 file loads without error.
        verify_checksum(os.path.join(directory, MODEL_WEIGHTS_FILE))
    if require_tokenizer:
        for filename in (TOKENIZER_CONFIG_FILE, TOKENIZER_ASSET):
            path = os.path.join(directory, filename)
            if not os.path.isfile(path):
                raise ValueError(
                    f"The preset {directory!r} has no tokenizer: {path!r} is "
                    "missing."
                )
        source_asset = source_vocabulary_asset(directory)
        if source_asset is not None and not os.path.isfile(source_asset):
            raise ValueError(
                f"The preset {directory!r} has a source tokenizer "
                f"({SOURCE_TOKENIZER_CONFIG_FILE}) without its vocabulary: "
                f"{source_asset!r} is missing."
            )


def source_vocabulary_asset(directory):
    """The path of a local preset's source SentencePiece model (the
    preprocessor's ``source_tokenizer``), or None where the preset has no
    ``source_tokenizer.json`` (one vocabulary for both sides)."""
    if not os.path.isfile(os.path.join(directory, SOURCE_TOKENIZER_CONFIG_FILE)):
        return None
    return os.path.join(directory, PRESET_SOURCE_VOCABULARY_PATH)


def load_family_preset_layer(cls, preset, config_file, **kwargs):
    """The tokenizer or preprocessor ``cls`` of ``config_file`` in the local
    preset directory ``preset`` when the preset's backbone is the family's
    other class, else None (then keras-hub's `from_preset` loads it).

    keras-hub's `from_preset` of a tokenizer or preprocessor looks for the
    registered subclass whose ``backbone_cls`` is the preset's backbone
    class. The family has two: `TransformerBackbone`, and `Transformer`,
    which the presets of earlier versions and of ``keras-transformer train``
    hold; one tokenizer and one preprocessor class serve both. ``kwargs``
    override the saved config, as in keras-hub.
    """
    if not isinstance(preset, str) or not os.path.isdir(preset):
        return None
    config_path = os.path.join(preset, CONFIG_FILE)
    layer_path = os.path.join(preset, config_file)
    if not (os.path.isfile(config_path) and os.path.isfile(layer_path)):
        return None
    config = _read_json(config_path)
    registered = config.get("registered_name") if isinstance(config, dict) else None
    own = keras.saving.get_registered_name(cls.backbone_cls)
    if registered not in BACKBONE_REGISTERED_NAMES or registered == own:
        return None
    layer_config = _read_json(layer_path)
    layer_config = dict(layer_config, config={**layer_config.get("config", {}), **kwargs})
    layer = keras.saving.deserialize_keras_object(layer_config)
    if not isinstance(layer, cls):
        raise ValueError(
            f"{layer_path!r} describes a {type(layer).__name__}, not a {cls.__name__}."
        )
    layer.load_preset_assets(preset)
    return layer


def saved_policy_map(directory):
    """The serialized ``DTypePolicyMap`` of the backbone saved in
    ``directory`` (a quantized model), else None (a float dtype, which
    loads as the current Keras dtype policy, or a remote preset).

    keras-hub's task loader passes such a saved map to the model verbatim;
    its `Backbone.from_preset` overrides it with the ``dtype`` argument,
    None by default, so a quantized backbone would be built in floats and
    its int8 weights would not load.
    """
    if "://" in directory:
        return None
    config = _read_json(os.path.join(directory, CONFIG_FILE))
    dtype = config.get("config", {}).get("dtype") if isinstance(config, dict) else None
    if isinstance(dtype, dict) and dtype.get("class_name") == "DTypePolicyMap":
        return dtype
    return None


def check_tokenizer_matches(tokenizer, backbone, source):
    """Raises a ValueError naming ``source`` when the vocabulary cannot be
    the model's: more pieces than output ids, or other reserved ids."""

    vocabulary = tokenizer.get_vocabulary()
    check_reserved_pieces(vocabulary, source=source)
    if len(vocabulary) > backbone.vocabulary_size:
        raise ValueError(
            f"{source} has {len(vocabulary)} pieces but the model has only "
            f"{backbone.vocabulary_size} output ids (vocabulary_size): they "
            "were not trained together."
        )
    if len(vocabulary) > backbone.source_vocabulary_size:
        raise ValueError(
            f"{source} has {len(vocabulary)} pieces but the model's encoder "
            f"embeds only {backbone.source_vocabulary_size} ids "
            "(source_vocabulary_size)."
        )


def check_vocabulary_file(path, model_config):
    """Raises a ValueError naming ``path`` when the SentencePiece model there
    is unreadable, lacks the reserved ids or has more pieces than the model
    (``model_config``: the Transformer's config) has ids."""


    if not os.path.isfile(path):
        raise ValueError(f"No tokenizer: {path!r} is missing.")
    processor = spm.SentencePieceProcessor()
    try:
        with open(path, "rb") as f:
            processor.LoadFromSerializedProto(f.read())
    except (OSError, RuntimeError) as error:
        raise ValueError(f"{path!r} is not a SentencePiece model: {error}") from error
    size = processor.get_piece_size()
    check_reserved_pieces(
        [processor.id_to_piece(i) for i in range(min(size, 4))], source=repr(path)
    )
    vocabulary_size = model_config.get("vocabulary_size")
    source_size = model_config.get("source_vocabulary_size") or vocabulary_size
    for name, limit in (
        ("vocabulary_size", vocabulary_size),
        ("source_vocabulary_size", source_size),
    ):
        if limit is not None and size > limit:
            raise ValueError(
                f"The tokenizer {path!r} has {size} pieces but the model has "
                f"{name}={limit}: they were not trained together."
            )
