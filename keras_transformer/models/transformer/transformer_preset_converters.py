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
a temporary directory (``tempfile``'s: ``$TMPDIR``), removed once the model
is loaded: at the end of the ``from_preset`` that converted it (see
`removes_converted_presets`; keras-hub's ``from_preset``: when it drops its
loader, as it returns), or at the latest when the process exits. Nothing
is cached: each load converts again (to load an OPUS-MT model often,
convert it once with ``keras-transformer convert --from marian`` and load
the run directory).
"""

import atexit
import functools
import json
import os
import shutil
import tempfile
import threading

from keras_transformer.utils.private_apis import add_transformers_preset_converter

# {model_type: convert(source_dir, output_dir)}: writes a preset directory.
CONVERTERS = {}
# Per thread, the stack of open `removes_converted_presets` scopes: each the
# list of the temporary presets converted within it.
_SCOPES = threading.local()
# Those converted outside any scope, removed at exit if nothing removed them.
_UNSCOPED = set()


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


def remove_converted_preset(directory):
    """Removes a temporary preset of `converted_preset`."""
    _UNSCOPED.discard(directory)
    shutil.rmtree(directory, ignore_errors=True)


@atexit.register
def remove_unscoped_presets():
    for directory in list(_UNSCOPED):
        remove_converted_preset(directory)


def converted_preset(directory):
    """``directory`` itself, or for a Hugging Face directory of a registered
    ``model_type`` the keras-hub preset it converts to: a new temporary
    directory, removed when the innermost open `removes_converted_presets`
    scope of this thread ends; outside any, by the caller
    (`remove_converted_preset`; keras-hub's loader: when it is collected) or
    when the process exits."""
    model_type = converted_model_type(directory)
    if model_type is None:
        return directory
    output = tempfile.mkdtemp(prefix=f"keras_transformer_{model_type}_")
    try:
        CONVERTERS[model_type](directory, output)
    except BaseException:
        remove_converted_preset(output)
        raise
    scopes = getattr(_SCOPES, "stack", None)
    if scopes:
        scopes[-1].append(output)
    else:
        _UNSCOPED.add(output)
    return output


def removes_converted_presets(load):
    """Decorates a ``from_preset``: the presets `converted_preset` writes
    during the call are removed when it returns or raises (the model holds
    its weights and tokenizers in memory by then)."""

    @functools.wraps(load)
    def wrapper(*args, **kwargs):
        scopes = _SCOPES.__dict__.setdefault("stack", [])
        scopes.append([])
        try:
            return load(*args, **kwargs)
        finally:
            for output in scopes.pop():
                remove_converted_preset(output)

    return wrapper


def is_registered(model_type):
    return model_type in CONVERTERS


add_transformers_preset_converter(is_registered, converted_preset, remove_converted_preset)
