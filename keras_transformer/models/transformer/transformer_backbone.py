"""`TransformerBackbone`: keras-hub's `Backbone` contract for `Transformer`.

`keras_transformer.Transformer` subclasses this class, which subclasses
`keras_hub.models.Backbone`, so the model is a keras-hub backbone
(``isinstance(model, keras_hub.models.Backbone)``, found by
``keras_hub.models.Backbone.from_preset(dir)``) with:

* ``from_preset(name_or_dir)``: an architecture preset ("tiny", "small",
  "base", "big": untrained, keyword arguments override its values) or a
  trained preset directory (keras-hub's layout or a run directory);
* ``presets``: both kinds, labelled (`keras_transformer.hub.presets`);
* ``save_to_preset(dir)``, ``enable_lora(rank)`` (on the attention
  projections; only the LoRA factors stay trainable), ``quantize("int8")``
  (keras), ``token_embedding``;
* ``get_config``: keras-hub's base config (with the quantization
  ``DTypePolicyMap`` after ``quantize``) that `Transformer` extends.

keras-hub is imported here, at model import time. Where it is not installed
(keras-hub needs TensorFlow Text, so e.g. a GPU machine without TensorFlow),
the base falls back to ``keras.Model``: the model builds, trains and
translates, and only the keras-hub methods (trained presets,
``save_to_preset``, ``enable_lora``) raise an ImportError saying so.
"""


import keras

from keras_transformer.models.transformer.transformer_loader import load_run_model
from keras_transformer.models.transformer.transformer_presets import (
    PRESETS as ARCHITECTURE_PRESETS,
)
from keras_transformer.models.transformer.transformer_presets import (
    constructor_argument_names,
    resolve_preset,
)
from keras_transformer.utils.private_apis import flatten_layers

try:
    from keras_hub.models import Backbone as _Base

    KERAS_HUB_AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only without keras-hub.
    _Base = keras.Model
    KERAS_HUB_AVAILABLE = False
from keras_transformer.models.transformer import (
    transformer_presets as preset_lib,
)
from keras_transformer.models.transformer.transformer_presets import (
    list_presets,
)

# The attention projections LoRA adapts (keras-hub's defaults are "query"
# and "value"; ours are fused: "qkv" in self-attention, "query" and
# "key_value" in encoder-decoder attention).
LORA_LAYER_NAMES = ("qkv", "query", "key_value")


def _require_keras_hub(what):
    if not KERAS_HUB_AVAILABLE:
        raise ImportError(
            f"{what} needs keras-hub (pip install keras-hub), which is not "
            "installed; the model itself works without it."
        )


class _classproperty(property):
    def __get__(self, _, owner):
        return self.fget(owner)


class TransformerBackbone(_Base):
    """Base class of `keras_transformer.Transformer`; see the module docstring."""

    def __init__(self, *args, dtype=None, **kwargs):
        super().__init__(*args, dtype=dtype, **kwargs)
        # keras-hub's Backbone sets the dtype policy (the functional
        # constructor does not); set it once only: setting a DTypePolicyMap
        # again would store the map inside itself.
        if not KERAS_HUB_AVAILABLE and dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)

    @_classproperty
    def presets(cls):
        """Architecture and trained presets by name (``kind`` tells which)."""

        return list_presets()

    @classmethod
    def from_preset(cls, preset, load_weights=True, **kwargs):
        """A model from an architecture preset or a trained preset directory.

        Args:
            preset: an architecture preset name ("tiny", "small", "base",
                "big"; untrained, ``kwargs`` override its constructor
                arguments, e.g. ``vocabulary_size``), or a trained preset:
                a directory written by ``save_to_preset`` or by
                ``keras-transformer train``, or a registered name.
            load_weights: bool. For trained presets: False builds the saved
                architecture with fresh weights.

        Raises:
            ValueError: unknown preset or argument, or (naming the file) a
                directory without weights or of another architecture.
        """
        if isinstance(preset, str) and preset in ARCHITECTURE_PRESETS:
            return cls(**resolve_preset(preset, kwargs, constructor_argument_names(cls)))
        _require_keras_hub("Loading a trained preset")

        directory = preset_lib.resolve_trained_preset(preset)
        if preset_lib.is_run_directory(directory):
            return load_run_model(directory, cls, load_weights, **kwargs)
        preset_lib.check_preset_directory(directory, require_tokenizer=False)
        return super().from_preset(directory, load_weights=load_weights, **kwargs)

    def save_to_preset(self, preset_dir, max_shard_size=10):
        """Writes ``config.json``, ``model.weights.h5`` and ``metadata.json``."""
        _require_keras_hub("save_to_preset")
        return super().save_to_preset(preset_dir, max_shard_size=max_shard_size)

    def default_lora_layer_names(self):
        return list(LORA_LAYER_NAMES)

    def enable_lora(self, rank, target_layer_names=None):
        """Freezes every weight and adds rank-``rank`` LoRA factors to the
        attention projections (`LORA_LAYER_NAMES`); only the factors train.

        keras-hub's `Backbone.enable_lora` leaves the biases of the adapted
        layers trainable (Keras' ``Dense.enable_lora`` freezes the kernel
        only); they are frozen here too.
        """
        _require_keras_hub("enable_lora")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise ValueError(f"rank must be a positive int. Received: rank={rank!r}")
        super().enable_lora(rank, target_layer_names=target_layer_names)
        adapted = [
            layer
            for layer in flatten_layers(self, include_self=False)
            if getattr(layer, "lora_enabled", False)
        ]
        for layer in adapted:
            if getattr(layer, "bias", None) is not None:
                layer.bias.trainable = False
        if not adapted:
            raise ValueError(
                "enable_lora found no layer named "
                f"{target_layer_names or list(LORA_LAYER_NAMES)} to adapt."
            )

    def get_config(self):
        # keras-hub's base config: name, trainable and the dtype, which after
        # `quantize` is a DTypePolicyMap of the quantized layers (so that a
        # quantized preset reloads quantized). Same keys without keras-hub.
        dtype = self.dtype_policy
        if not isinstance(dtype, keras.dtype_policies.DTypePolicyMap):
            policy_map = keras.dtype_policies.DTypePolicyMap()
            for layer in flatten_layers(self):
                if layer.quantization_mode is not None:
                    policy_map[layer.path] = layer.dtype_policy
            if len(policy_map) > 0:
                dtype = policy_map
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(dtype),
        }
