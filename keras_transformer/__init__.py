"""keras_transformer: the Transformer of "Attention Is All You Need" in Keras 3.

Runs on the TensorFlow, JAX and PyTorch backends (``KERAS_BACKEND``).

The package imports its modules on first use (``kt.Transformer`` imports
`keras_transformer.model`), so that `keras_transformer.config` and
`keras_transformer.presets` import without Keras: the command line reads a
training config and picks the backend before Keras is imported.

Keras finds the package's classes (the model, its layers, the loss, the
metric, the schedule) by name when it loads a ``.keras`` file; they are
registered as soon as Keras is imported, whatever the order:
``import keras; import keras_transformer``, ``import keras_transformer;
import keras`` or a first use of a Keras-using part of the package (an
import hook on ``keras`` registers them when Keras' own import finishes).
`register_keras_serializables()` does it explicitly.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types

__version__ = "0.1.0"

# Public name -> the submodule that defines it.
_EXPORTS = {
    "BOS_ID": "special_tokens",
    "EOS_ID": "special_tokens",
    "PAD_ID": "special_tokens",
    "UNK_ID": "special_tokens",
    "LabelSmoothedCrossEntropy": "losses",
    "MaskedTokenAccuracy": "metrics",
    "PRESETS": "presets",
    "TrainConfig": "config",
    "Transformer": "model",
    "TransformerSchedule": "schedules",
    "transformer_optimizer": "schedules",
    "Translator": "translator",
    "average_checkpoints": "checkpoints",
    "train": "training",
    # The keras-hub family (keras_transformer/hub/): the package imports
    # where keras-hub is not installed.
    "TransformerSeq2SeqLM": "hub",
    "TransformerSeq2SeqLMPreprocessor": "hub",
    "TransformerTokenizer": "hub",
}
_SUBPACKAGES = ("layers",)

# The modules whose import registers every class a saved Transformer (and
# its compile config) refers to; `model` imports the layers.
_SERIALIZABLE_MODULES = ("model", "losses", "metrics", "schedules")
_registered = False


def register_keras_serializables():
    """Registers the package's Keras classes, so that ``.keras`` files load.

    Imports `keras_transformer.model` (and its layers), `losses`, `metrics`
    and `schedules`, whose classes are decorated with
    ``keras.saving.register_keras_serializable``. Usually automatic (see the
    package docstring); calling it again does nothing.
    """
    global _registered
    if _registered:
        return
    _registered = True
    try:
        for name in _SERIALIZABLE_MODULES:
            importlib.import_module(f"{__name__}.{name}")
    except BaseException:
        _registered = False
        raise


def _register_when_safe():
    """`register_keras_serializables` once Keras is loaded and no module of
    this package is half-imported (importing `model` from inside another of
    its imports could meet a partly initialized module)."""
    if _registered or "keras" not in sys.modules:
        return
    for name, module in list(sys.modules.items()):
        if name == __name__ or name.startswith(__name__ + "."):
            if getattr(getattr(module, "__spec__", None), "_initializing", False):
                return
    register_keras_serializables()


class _Package(types.ModuleType):
    """This package's module type: Python sets each submodule as an attribute
    of the package when its import finishes, the moment to register."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, types.ModuleType):
            _register_when_safe()


def __getattr__(name):
    if name in _EXPORTS:
        module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(module, name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "BOS_ID",
    "EOS_ID",
    "LabelSmoothedCrossEntropy",
    "MaskedTokenAccuracy",
    "PAD_ID",
    "PRESETS",
    "TrainConfig",
    "Transformer",
    "TransformerSeq2SeqLM",
    "TransformerSeq2SeqLMPreprocessor",
    "TransformerSchedule",
    "TransformerTokenizer",
    "Translator",
    "UNK_ID",
    "average_checkpoints",
    "layers",
    "register_keras_serializables",
    "train",
    "transformer_optimizer",
]

class _RegisterAfterKeras(importlib.abc.MetaPathFinder):
    """Registers the package's classes when ``import keras`` finishes
    (``import keras_transformer`` came first, then ``import keras``, then
    ``keras.saving.load_model``): a post-import hook, which Python has no
    public API for, made of a one-shot finder that wraps Keras' loader."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "keras":
            return None
        _remove_keras_hook()
        spec = importlib.util.find_spec("keras")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            # Keras is complete here; registering imports `model`, which
            # imports `keras` again and gets this module.
            _register_when_safe()

        spec.loader.exec_module = exec_and_register
        return spec


def _remove_keras_hook():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterKeras)]


sys.modules[__name__].__class__ = _Package
if "keras" in sys.modules:
    # Keras came first (``import keras; import keras_transformer``): register
    # now, as an eager package would.
    register_keras_serializables()
elif not any(isinstance(f, _RegisterAfterKeras) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterKeras())
