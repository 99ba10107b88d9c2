"""Presets in other formats, converted on load: a registry of converters by
Hugging Face ``model_type``.

``TransformerSeq2SeqLM.from_preset(directory)`` and keras-hub's
``Seq2SeqLM.from_preset(directory)`` take a Hugging Face directory whose
``config.json`` names a registered ``model_type`` (``"marian"``: OPUS-MT),
as keras-hub converts BART on load. The converters live in
`keras_transformer.convert`, a layer above the models; each registers
itself here when imported (``import keras_transformer`` imports them), so
this module imports none. keras-hub's own Transformers loader, which knows
no ``marian``, is extended through
`keras_transformer.utils.private_apis.add_transformers_preset_converter`.

A conversion writes a keras-hub preset (the importer's run directory) into
a cache directory named after the source's path, file sizes and times, and
later loads of the same files reuse it.
"""

import hashlib
import json
import os
import shutil
import tempfile

from keras_transformer.utils.private_apis import add_transformers_preset_converter

# {model_type: convert(source_dir, output_dir)}: writes a preset directory.
CONVERTERS = {}
CACHE_DIR = os.path.join(tempfile.gettempdir(), "keras_transformer_converted_presets")


def register_preset_converter(model_type, convert):
    """Registers ``convert(source_dir, output_dir)`` for Hugging Face
    directories whose ``config.json`` has this ``model_type``."""
    CONVERTERS[model_type] = convert


def converted_model_type(directory):
    """The registered ``model_type`` of the Hugging Face ``directory``, or
    None (another format, a keras-hub preset, no ``config.json``)."""
    path = os.path.join(os.fspath(directory), "config.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict) or "registered_name" in config:
        return None
    model_type = config.get("model_type")
    return model_type if model_type in CONVERTERS else None


def _cache_key(directory):
    digest = hashlib.sha256(os.path.abspath(directory).encode())
    for name in sorted(os.listdir(directory)):
        status = os.stat(os.path.join(directory, name))
        digest.update(f"{name}:{status.st_size}:{status.st_mtime_ns}".encode())
    return digest.hexdigest()[:20]


def converted_preset(directory):
    """``directory`` itself, or for a Hugging Face directory of a registered
    ``model_type`` the keras-hub preset it converts to (cached)."""
    model_type = converted_model_type(directory)
    if model_type is None:
        return directory
    output = os.path.join(CACHE_DIR, f"{model_type}-{_cache_key(directory)}")
    if os.path.isdir(output):
        return output
    os.makedirs(CACHE_DIR, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".converting-", dir=CACHE_DIR)
    try:
        CONVERTERS[model_type](directory, staging)
        os.rename(staging, output)
    except OSError:
        if not os.path.isdir(output):  # another process converted it first
            raise
        shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return output


def is_registered(model_type):
    return model_type in CONVERTERS


add_transformers_preset_converter(is_registered, converted_preset)
