"""`TransformerBackbone`: the encoder-decoder Transformer (paper §3) as a
keras-hub backbone.

The concrete functional model: token ids in, hidden states out
(``encoder_sequence_output``, ``decoder_sequence_output``), as keras-hub's
`BartBackbone`. It holds the layers, among them the shared token embedding
(``token_embedding``) whose ``reverse=True`` call is the tied output
projection (§3.4) that the heads apply: `TransformerSeq2SeqLM` on the
decoder output, `Transformer` (the backbone with that projection, logits
out) in its graph, and the incremental-decoding interface
(`TransformerDecoding`) at each step.

keras-hub's `Backbone` is its base, imported here, at model import time:
``from_preset`` (architecture presets and trained preset directories),
``presets``, ``save_to_preset``, ``enable_lora(rank)``, ``quantize`` and
``get_config``. Where keras-hub is not installed (it needs TensorFlow Text,
so e.g. a GPU machine without TensorFlow), the base falls back to
``keras.Model``: the model builds, trains and translates, and only the
keras-hub methods (trained presets, ``save_to_preset``, ``enable_lora``)
raise an ImportError saying so.

Longer than the package's usual module because the class is one unit:
its constructor's layers, the building blocks the graph and decoding share,
packed rows, the keras-hub methods and the config.
"""

import keras
from keras import ops

from keras_transformer.layers.attention import with_legacy_projection_layout
from keras_transformer.layers.decoder import TransformerDecoderLayer
from keras_transformer.layers.embedding import TokenEmbedding
from keras_transformer.layers.encoder import TransformerEncoderLayer
from keras_transformer.layers.masks import (
    PaddingMask,
    padding_mask_from_ids,
    segment_attention_mask,
    segment_positions,
)
from keras_transformer.layers.position_schemes import position_scheme
from keras_transformer.layers.token_checks import TokenIdCheck
from keras_transformer.layers.transformer_layer import LAYER_NORM_EPSILON
from keras_transformer.models.token_id_checked_model import TokenIdCheckedModel
from keras_transformer.models.transformer import (
    transformer_presets as preset_lib,
)
from keras_transformer.models.transformer.transformer_decoding import (
    TransformerDecoding,
)
from keras_transformer.models.transformer.transformer_loader import load_run_model
from keras_transformer.models.transformer.transformer_presets import (
    PRESETS as ARCHITECTURE_PRESETS,
)
from keras_transformer.models.transformer.transformer_presets import (
    constructor_argument_names,
    list_presets,
    resolve_preset,
)
from keras_transformer.models.transformer.transformer_options import (
    OPTION_NAMES,
    architecture_config,
    check_architecture,
)
from keras_transformer.models.transformer.transformer_training import (
    TransformerTraining,
)
from keras_transformer.utils.file_io import check_loaded_weights
from keras_transformer.utils.private_apis import flatten_layers
from keras_transformer.utils.quantization import (
    INT8_INPUTS,
    int8_inputs_of,
    keep_float_inputs,
    quantize_with_package_default,
)
from keras_transformer.utils.validation import check_choice

try:
    from keras_hub.models import Backbone as _Base

    KERAS_HUB_AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only without keras-hub.
    _Base = keras.Model
    KERAS_HUB_AVAILABLE = False

TOKEN_INPUTS = ("encoder_token_ids", "decoder_token_ids")
SEGMENT_INPUTS = ("encoder_segment_ids", "decoder_segment_ids")

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


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerBackbone(
    TransformerTraining, TokenIdCheckedModel, TransformerDecoding, _Base
):
    """The Transformer of "Attention Is All You Need" (Vaswani et al., 2017)
    as a keras-hub backbone: token ids in, hidden states out.

    A functional `keras.Model` built from `keras.Input`s and a keras-hub
    `Backbone` (a plain `keras.Model` without keras-hub):
    ``get_config``/``from_config`` round-trip with the flat arguments below,
    ``.keras`` files and presets load under any backend, and
    ``from_preset`` takes an architecture preset ("tiny", "small", "base",
    "big"; untrained) or a trained preset directory; ``presets`` lists both.
    ``save_to_preset``, ``enable_lora(rank)``, ``quantize("int8")`` and
    ``token_embedding`` follow keras-hub.

    Inputs: a dict ``{"encoder_token_ids": int (batch, source_length),
    "decoder_token_ids": int (batch, target_length)}`` with padding id 0; the
    padding masks are derived from the ids. Outputs: a dict of hidden states
    (in the compute dtype), ``"encoder_sequence_output"`` ``(batch,
    source_length, d_model)`` and ``"decoder_sequence_output"`` ``(batch,
    target_length, d_model)``, after the final LayerNorm of a pre-LN model.
    Decoder inputs are the target shifted right (start token first);
    position i of the decoder output predicts the target token i through the
    tied output projection ``token_embedding(x, reverse=True)`` (``logits``,
    §3.4), which the heads apply: `TransformerSeq2SeqLM` (keras-hub's task)
    and `Transformer` (this backbone with the projection: logits out, the
    model of ``train`` and of ``.keras`` files). The incremental-decoding
    interface (`TransformerDecoding`: ``encode``, ``decode_step``, ...)
    returns logits too.

    Packed rows: the inputs dict may also hold ``"encoder_segment_ids"`` and
    ``"decoder_segment_ids"`` (int, the shapes of the token ids): several
    sentence pairs share a row, numbered 1, 2, ... in order on both sides
    (pair k's source and target both carry segment id k), each contiguous,
    with 0 on the padding after the last one (tensor2tensor's and flax's
    packing). Attention then stays inside a pair (source self-attention in
    its source, target self-attention causal in its target, encoder-decoder
    attention from its target to its source) and positions restart at 0 for
    each sentence, so the outputs of a packed pair equal those of the pair
    in a row of its own. `keras_transformer.data.make_dataset(...,
    bucketing="packed")` yields such batches.

    By default the model is the paper's: post-LN sub-layers, sinusoidal
    positions, one embedding matrix shared by encoder input, decoder input
    and pre-softmax projection, embeddings scaled by sqrt(d_model), residual
    dropout on each sub-layer output and on the embedding sums. There is no
    dropout on attention weights (the paper describes none).

    Args:
        vocabulary_size: int. Size of the (shared) vocabulary; the target
            vocabulary when ``share_embeddings=False``.
        num_layers: int. N, layers in the encoder and in the decoder.
        d_model: int. Model width.
        num_heads: int. h; must divide d_model.
        d_ff: int. Feed-forward inner width.
        dropout_rate: float in [0, 1). P_drop.
        share_embeddings: bool. Share one matrix between source and target
            embeddings (§3.4). False gives the encoder its own embedding of
            ``source_vocabulary_size`` ids (the decoder embedding stays tied
            to the output projection). Defaults to True.
        source_vocabulary_size: int. Only with ``share_embeddings=False``;
            defaults to ``vocabulary_size``.
        positional_encoding: "sinusoidal" (default, §3.5), "learned"
            (Table 3, row E) or "relative" (Shaw et al., 2018: relative
            position representations in every self-attention, and no
            absolute positions added to the embeddings, as in OpenNMT and
            CTranslate2; see `MultiHeadAttention`).
        max_length: int. Number of learned positions (only for "learned").
            Defaults to 1024.
        max_relative_position: int >= 1. Only for "relative": distances
            are clipped to ``[-m, m]`` (Shaw et al.'s k; CTranslate2's
            ``maximum_relative_position``). Defaults to 16. Saved in the
            config only for relative positions.
        normalization_position: "post" (default, the paper's) or "pre"
            (pre-LN; adds a final LayerNorm to the encoder and decoder).
        logits_dtype: dtype of the output projection's matmul and of the
            logits. Defaults to "float32" (float32 precision under mixed
            precision too); ``None`` uses the compute dtype.
        projection_layout: "head_major" (default) or "qkv_major": column
            order of the fused attention projections (see
            `MultiHeadAttention`; head-major lets model parallelism split
            along heads). Configs saved without this key load as
            "qkv_major", the layout they were trained with.
        activation: feed-forward inner activation, "relu" (default, the
            paper's), "swish" or "gelu" (exact, erf-based).
        layer_norm_epsilon: float > 0. Defaults to 1e-6 (Marian's models
            use 1e-5).
        sinusoid_layout: "interleaved" (default, the paper's sin/cos
            pairs) or "split" (all sines, then all cosines: Marian's and
            OPUS-MT's column order); only for sinusoidal positions.
        output_bias: bool. A learned bias on the logits (Marian's
            ``final_logits_bias``). Defaults to False (the paper's tied
            projection has none).
        int8_inputs: "int8" (default) or "float": what the int8 Dense
            layers of a quantized model (``dtype`` a ``DTypePolicyMap`` of
            int8 policies, as a quantized model's config saves it) do with
            their inputs. "float" keeps them in the compute dtype (the
            package's int8, `quantize`); "int8" quantizes them too (Keras'
            default int8, and the configs saved without this key). Saved
            in the config only as "float".

        dtype: dtype policy name or `keras.DTypePolicy`, e.g.
            "mixed_bfloat16". Logits are float32 in every policy.

    The defaults of ``activation``, ``layer_norm_epsilon``,
    ``sinusoid_layout`` and ``output_bias`` are the paper's; other values
    describe models trained elsewhere (`keras_transformer.convert`).

    Example:
    >>> backbone = TransformerBackbone.from_preset("tiny", vocabulary_size=100)
    >>> inputs = {"encoder_token_ids": np.array([[5, 6, 7, 0]]),
    ...           "decoder_token_ids": np.array([[2, 8, 9]])}
    >>> hidden = backbone(inputs)["decoder_sequence_output"]
    >>> hidden.shape
    (1, 3, 256)
    >>> backbone.logits(hidden).shape
    (1, 3, 100)

    References:
        Vaswani et al., 2017, "Attention Is All You Need", §3.
    """

    def __init__(
        self,
        vocabulary_size,
        num_layers=6,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        dropout_rate=0.1,
        share_embeddings=True,
        source_vocabulary_size=None,
        positional_encoding="sinusoidal",
        max_length=1024,
        normalization_position="post",
        logits_dtype="float32",
        projection_layout="head_major",
        activation="relu",
        layer_norm_epsilon=LAYER_NORM_EPSILON,
        sinusoid_layout="interleaved",
        output_bias=False,
        max_relative_position=16,
        int8_inputs="int8",
        dtype=None,
        **kwargs,
    ):
        # The architecture's options are this constructor's arguments
        # (keras-hub's explicit keywords), checked once, stored once and
        # saved by one rule each (`transformer_options`).
        arguments = locals()
        options = check_architecture({name: arguments[name] for name in OPTION_NAMES})
        check_choice("int8_inputs", int8_inputs, INT8_INPUTS)
        source_vocabulary_size = options["source_vocabulary_size"]
        # How positions enter: the registry's scheme of the option's value.
        scheme = position_scheme(positional_encoding)
        relative_position = 0
        if scheme.relative_attention:
            relative_position = options["max_relative_position"]

        # === Layers ===
        self.token_embedding = TokenEmbedding(
            vocabulary_size,
            d_model,
            logits_dtype=logits_dtype,
            output_bias=output_bias,
            dtype=dtype,
            name="token_embedding",
        )
        if share_embeddings:
            self.source_embedding = self.token_embedding
        else:
            self.source_embedding = TokenEmbedding(
                source_vocabulary_size,
                d_model,
                dtype=dtype,
                name="source_token_embedding",
            )

        self.encoder_position = self.decoder_position = None
        if scheme.embedding is not None:
            self.encoder_position = scheme.embedding(options, "encoder_position", dtype)
            self.decoder_position = scheme.embedding(options, "decoder_position", dtype)
        self.encoder_embedding_dropout = keras.layers.Dropout(
            dropout_rate, dtype=dtype, name="encoder_embedding_dropout"
        )
        self.decoder_embedding_dropout = keras.layers.Dropout(
            dropout_rate, dtype=dtype, name="decoder_embedding_dropout"
        )
        layer_args = dict(
            d_model=d_model,
            num_heads=num_heads,
            d_ff=d_ff,
            dropout_rate=dropout_rate,
            normalization_position=normalization_position,
            projection_layout=projection_layout,
            activation=activation,
            layer_norm_epsilon=layer_norm_epsilon,
            max_relative_position=relative_position,
            dtype=dtype,
        )
        self.encoder_layers = [
            TransformerEncoderLayer(**layer_args, name=f"encoder_layer_{i}")
            for i in range(num_layers)
        ]
        self.decoder_layers = [
            TransformerDecoderLayer(**layer_args, name=f"decoder_layer_{i}")
            for i in range(num_layers)
        ]
        self.encoder_final_norm = self.decoder_final_norm = None
        if normalization_position == "pre":
            self.encoder_final_norm = keras.layers.LayerNormalization(
                epsilon=layer_norm_epsilon, dtype=dtype, name="encoder_final_norm"
            )
            self.decoder_final_norm = keras.layers.LayerNormalization(
                epsilon=layer_norm_epsilon, dtype=dtype, name="decoder_final_norm"
            )

        # === Functional model ===
        encoder_input = keras.Input(
            shape=(None,), dtype="int32", name="encoder_token_ids"
        )
        decoder_input = keras.Input(
            shape=(None,), dtype="int32", name="decoder_token_ids"
        )
        # Ids outside the vocabulary raise instead of wrapping or giving NaN.
        self.encoder_token_ids_check = TokenIdCheck(
            source_vocabulary_size,
            input_name="encoder_token_ids",
            name="encoder_token_ids_check",
        )
        self.decoder_token_ids_check = TokenIdCheck(
            vocabulary_size,
            input_name="decoder_token_ids",
            name="decoder_token_ids_check",
        )
        encoder_token_ids = self.encoder_token_ids_check(encoder_input)
        decoder_token_ids = self.decoder_token_ids_check(decoder_input)
        encoder_padding_mask = PaddingMask(name="encoder_padding_mask")(
            encoder_token_ids
        )
        decoder_padding_mask = PaddingMask(name="decoder_padding_mask")(
            decoder_token_ids
        )
        encoder_output = self._encode(encoder_token_ids, encoder_padding_mask)
        decoder_output = self._decode(
            decoder_token_ids,
            decoder_padding_mask,
            encoder_output,
            encoder_padding_mask,
        )
        super().__init__(
            inputs={
                "encoder_token_ids": encoder_input,
                "decoder_token_ids": decoder_input,
            },
            outputs=self._sequence_outputs(encoder_output, decoder_output),
            dtype=dtype,
            **kwargs,
        )
        # keras-hub's Backbone sets the dtype policy (the functional
        # constructor does not); set it once only: setting a DTypePolicyMap
        # again would store the map inside itself.
        if not KERAS_HUB_AVAILABLE and dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)
        if int8_inputs == "float":
            # The layers were built from the dtype policies, which do not
            # say what int8 layers do with their inputs.
            keep_float_inputs(self)

        # === Config ===
        for name, value in options.items():
            setattr(self, name, value)
        self.logits_dtype = self.token_embedding.logits_dtype

    def __setattr__(self, name, value):
        # Under the torch backend, torch.nn.Module refuses sub-module
        # attributes before Model.__init__ runs; the layers are created first
        # (the functional graph needs them) and tracked by that graph, so a
        # plain setattr is enough until torch.nn.Module.__init__ has run
        # (it creates ``_modules``). Afterwards the normal path must run, or
        # torch would not see the parameters and ``zero_grad`` would let
        # gradients accumulate across steps.
        if keras.config.backend() == "torch" and "_modules" not in self.__dict__:
            return object.__setattr__(self, name, value)
        return super().__setattr__(name, value)

    # --- building blocks, shared by the functional graph and decoding ---

    def _encode(
        self,
        encoder_token_ids,
        encoder_padding_mask,
        training=None,
        attention_mask=None,
        positions=None,
    ):
        x = self._embed_source(encoder_token_ids, training, positions)
        for layer in self.encoder_layers:
            x = layer(
                x,
                encoder_padding_mask=encoder_padding_mask,
                encoder_attention_mask=attention_mask,
                training=training,
            )
        if self.encoder_final_norm is not None:
            x = self.encoder_final_norm(x)
        return x

    def _decode(
        self,
        decoder_token_ids,
        decoder_padding_mask,
        encoder_output,
        encoder_padding_mask,
        training=None,
        self_attention_mask=None,
        cross_attention_mask=None,
        positions=None,
    ):
        x = self._embed_target(
            decoder_token_ids, training=training, positions=positions
        )
        for layer in self.decoder_layers:
            x = layer(
                x,
                encoder_output,
                decoder_padding_mask=decoder_padding_mask,
                encoder_padding_mask=encoder_padding_mask,
                decoder_attention_mask=self_attention_mask,
                encoder_attention_mask=cross_attention_mask,
                training=training,
            )
        if self.decoder_final_norm is not None:
            x = self.decoder_final_norm(x)
        return x

    def _sequence_outputs(self, encoder_output, decoder_output):
        """The model's outputs: the backbone's hidden states (`Transformer`
        returns the logits instead)."""
        return {
            "encoder_sequence_output": encoder_output,
            "decoder_sequence_output": decoder_output,
        }

    def _embed_source(self, encoder_token_ids, training=None, positions=None):
        x = self.source_embedding(encoder_token_ids)
        if self.encoder_position is not None:  # None: the scheme adds none
            x = self.encoder_position(x, positions=positions)
        return self.encoder_embedding_dropout(x, training=training)

    def _embed_target(
        self, decoder_token_ids, start_index=0, training=None, positions=None
    ):
        x = self.token_embedding(decoder_token_ids)
        if self.decoder_position is not None:  # None: the scheme adds none
            x = self.decoder_position(x, start_index=start_index, positions=positions)
        return self.decoder_embedding_dropout(x, training=training)

    # --- packed rows: several sentence pairs per row ---

    def call(self, inputs, training=None, mask=None, **kwargs):
        if isinstance(inputs, dict) and any(key in inputs for key in SEGMENT_INPUTS):
            return self._packed_call(inputs, training=training)
        return super().call(inputs, training=training, mask=mask, **kwargs)

    def _packed_call(self, inputs, training=None):
        """The outputs for packed rows (see the class docstring, "Packed rows")."""
        expected = TOKEN_INPUTS + SEGMENT_INPUTS
        missing = [key for key in expected if key not in inputs]
        unknown = sorted(set(inputs) - set(expected))
        if missing or unknown:
            raise ValueError(
                f"Packed inputs are a dict with exactly the keys {expected}. "
                f"Missing: {missing}; unknown: {unknown}"
            )
        tensors = {key: ops.convert_to_tensor(inputs[key], "int32") for key in expected}
        for side in ("encoder", "decoder"):
            ids, segments = tensors[f"{side}_token_ids"], tensors[f"{side}_segment_ids"]
            same = all(
                a is None or b is None or a == b for a, b in zip(ids.shape, segments.shape)
            )
            if len(ids.shape) != 2 or len(segments.shape) != 2 or not same:
                raise ValueError(
                    f"{side}_segment_ids must have the shape of {side}_token_ids, "
                    f"(batch, length). Received: {side}_token_ids shape "
                    f"{tuple(ids.shape)}, {side}_segment_ids shape "
                    f"{tuple(segments.shape)}"
                )
        encoder_ids = self.encoder_token_ids_check(tensors["encoder_token_ids"])
        decoder_ids = self.decoder_token_ids_check(tensors["decoder_token_ids"])
        encoder_segments = tensors["encoder_segment_ids"]
        decoder_segments = tensors["decoder_segment_ids"]
        encoder_padding = padding_mask_from_ids(encoder_ids)
        encoder_output = self._encode(
            encoder_ids,
            encoder_padding,
            training=training,
            attention_mask=segment_attention_mask(encoder_segments, encoder_segments),
            positions=segment_positions(encoder_segments),
        )
        decoder_output = self._decode(
            decoder_ids,
            padding_mask_from_ids(decoder_ids),
            encoder_output,
            encoder_padding,
            training=training,
            self_attention_mask=segment_attention_mask(
                decoder_segments, decoder_segments
            ),
            cross_attention_mask=segment_attention_mask(
                decoder_segments, encoder_segments
            ),
            positions=segment_positions(decoder_segments),
        )
        return self._sequence_outputs(encoder_output, decoder_output)

    # --- keras-hub's Backbone ---

    @_classproperty
    def presets(cls):
        """Architecture and trained presets by name (``kind`` tells which)."""

        return list_presets()

    @classmethod
    @preset_lib.removes_converted_presets
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

        ``Transformer.from_preset`` of a preset that holds a
        `TransformerBackbone` (the backbone of a `TransformerSeq2SeqLM`)
        gives a `Transformer` with the same weights; a backbone's
        ``from_preset`` of a `Transformer` gives that `Transformer` (a
        backbone too).

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
        if kwargs.get("dtype") is None:
            # A quantized model reloads quantized (see `saved_policy_map`).
            kwargs["dtype"] = preset_lib.saved_policy_map(directory)
        model = super(TransformerBackbone, TransformerBackbone).from_preset(
            directory, load_weights=load_weights, **kwargs
        )
        if load_weights:  # keras-hub loaded them (checksum: check_preset_directory).
            check_loaded_weights(model.weights, f"{directory}/{preset_lib.MODEL_WEIGHTS_FILE}")
        if isinstance(model, cls):
            return model
        # The same constructor, layers and weight layout: only the head differs.
        converted = cls.from_config(model.get_config())
        converted.set_weights(model.get_weights())
        return converted

    def save_to_preset(self, preset_dir, max_shard_size=10):
        """Writes ``config.json``, ``model.weights.h5`` and ``metadata.json``."""
        _require_keras_hub("save_to_preset")
        super().save_to_preset(preset_dir, max_shard_size=max_shard_size)
        preset_lib.write_weights_checksum(preset_dir)

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

    def quantize(self, mode=None, config=None, **kwargs):
        """`keras.Model.quantize`, in place; ``"int8"`` without a
        ``config`` is the package's int8: int8 kernels, float inputs
        (`keras_transformer.utils.quantization`, which says why). Keras'
        own int8, inputs quantized too: ``keras.Model.quantize(model,
        "int8")``, or a ``config`` that names its weight quantizer. The
        config saves which one (``int8_inputs``), so a quantized preset or
        ``.keras`` file reloads as the same model."""
        quantize_with_package_default(super().quantize, mode, config, **kwargs)

    # --- configuration ---

    def get_config(self):
        # name, trainable and dtype (a DTypePolicyMap after `quantize`).
        config = self._base_config()
        config.update(
            architecture_config({name: getattr(self, name) for name in OPTION_NAMES})
        )
        if int8_inputs_of(self) == "float":
            config["int8_inputs"] = "float"
        return config

    @classmethod
    def from_config(cls, config):
        config = with_legacy_projection_layout(config)
        if "dtype" in config and isinstance(config["dtype"], dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)

    def _base_config(self):
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
