"""The encoder-decoder Transformer as a functional `keras.Model` (paper §3)."""

import keras
from keras import ops

from keras_transformer.layers.attention import (
    check_projection_layout,
    with_legacy_projection_layout,
)
from keras_transformer.layers.decoder import TransformerDecoderLayer
from keras_transformer.layers.embedding import TokenEmbedding
from keras_transformer.layers.encoder import TransformerEncoderLayer
from keras_transformer.layers.masks import (
    PaddingMask,
    padding_mask_from_ids,
    segment_attention_mask,
    segment_positions,
)
from keras_transformer.layers.positional_encoding import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    check_sinusoid_layout,
)
from keras_transformer.layers.token_checks import TokenIdCheck, TokenIdCheckedModel
from keras_transformer.layers.transformer_layer import (
    LAYER_NORM_EPSILON,
    check_normalization_position,
)
from keras_transformer.models.transformer.torch_train_step import (
    compiled_by_default,
    make_compiled_train_function,
)
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.utils.private_apis import (
    AutoJitCompileChoice,
    portable_optimizer_modules,
)
from keras_transformer.utils.validation import check_choice, check_int, check_rate

POSITIONAL_ENCODINGS = ("sinusoidal", "learned")
TOKEN_INPUTS = ("encoder_token_ids", "decoder_token_ids")
SEGMENT_INPUTS = ("encoder_segment_ids", "decoder_segment_ids")


def _check_arguments(
    vocabulary_size, num_layers, d_model, num_heads, d_ff, dropout_rate,
    share_embeddings, source_vocabulary_size, positional_encoding, max_length,
    normalization_position, projection_layout,
):
    """Checks `Transformer`'s arguments; returns the source vocabulary size."""
    for name, value in (
        ("vocabulary_size", vocabulary_size),
        ("num_layers", num_layers),
        ("d_model", d_model),
        ("num_heads", num_heads),
        ("d_ff", d_ff),
    ):
        check_int(name, value)
    if d_model % num_heads:
        raise ValueError(
            "d_model must be divisible by num_heads (d_k = d_model / h). "
            f"Received: d_model={d_model}, num_heads={num_heads}"
        )
    check_rate("dropout_rate", dropout_rate)
    check_choice("positional_encoding", positional_encoding, POSITIONAL_ENCODINGS)
    check_normalization_position(normalization_position)
    check_projection_layout(projection_layout)
    if share_embeddings and source_vocabulary_size not in (None, vocabulary_size):
        raise ValueError(
            "source_vocabulary_size differs from vocabulary_size, which "
            "needs share_embeddings=False. Received: "
            f"vocabulary_size={vocabulary_size}, "
            f"source_vocabulary_size={source_vocabulary_size}"
        )
    source_vocabulary_size = source_vocabulary_size or vocabulary_size
    check_int("source_vocabulary_size", source_vocabulary_size)
    if positional_encoding == "learned":
        check_int("max_length", max_length)
    return source_vocabulary_size


@keras.saving.register_keras_serializable(package="keras_transformer")
class Transformer(AutoJitCompileChoice, TokenIdCheckedModel, TransformerBackbone):
    """The Transformer of "Attention Is All You Need" (Vaswani et al., 2017).

    A functional `keras.Model` built from `keras.Input`s and a keras-hub
    `Backbone` (`keras_transformer.hub.backbone.TransformerBackbone`):
    ``get_config``/``from_config`` round-trip with the flat arguments below,
    ``.keras`` files and presets load under any backend, and
    ``from_preset`` takes an architecture preset ("tiny", "small", "base",
    "big"; untrained) or a trained preset directory; ``presets`` lists both.
    ``save_to_preset``, ``enable_lora(rank)``, ``quantize("int8")`` and
    ``token_embedding`` follow keras-hub.

    Inputs: a dict ``{"encoder_token_ids": int (batch, source_length),
    "decoder_token_ids": int (batch, target_length)}`` with padding id 0; the
    padding masks are derived from the ids. Output: float32 logits
    ``(batch, target_length, vocabulary_size)``. Decoder inputs are the target
    shifted right (start token first); position i of the output predicts the
    target token i.

    Packed rows: the inputs dict may also hold ``"encoder_segment_ids"`` and
    ``"decoder_segment_ids"`` (int, the shapes of the token ids): several
    sentence pairs share a row, numbered 1, 2, ... in order on both sides
    (pair k's source and target both carry segment id k), each contiguous,
    with 0 on the padding after the last one (tensor2tensor's and flax's
    packing). Attention then stays inside a pair (source self-attention in
    its source, target self-attention causal in its target, encoder-decoder
    attention from its target to its source) and positions restart at 0 for
    each sentence, so the logits of a packed pair equal those of the pair
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
        positional_encoding: "sinusoidal" (default, §3.5) or "learned"
            (Table 3, row E).
        max_length: int. Number of learned positions (only for "learned").
            Defaults to 1024.
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

    The defaults of the last four are the paper's; other values describe
    models trained elsewhere (`keras_transformer.models.transformer.
    convert_marian`).
        dtype: dtype policy name or `keras.DTypePolicy`, e.g.
            "mixed_bfloat16". Logits are float32 in every policy.

    Example:
    >>> model = Transformer.from_preset("tiny", vocabulary_size=100)
    >>> inputs = {"encoder_token_ids": np.array([[5, 6, 7, 0]]),
    ...           "decoder_token_ids": np.array([[2, 8, 9]])}
    >>> model(inputs).shape
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
        dtype=None,
        **kwargs,
    ):
        check_sinusoid_layout(sinusoid_layout)
        source_vocabulary_size = _check_arguments(
            vocabulary_size, num_layers, d_model, num_heads, d_ff, dropout_rate,
            share_embeddings, source_vocabulary_size, positional_encoding, max_length,
            normalization_position, projection_layout,
        )

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

        def position_layer(name):
            if positional_encoding == "learned":
                return LearnedPositionalEmbedding(max_length, dtype=dtype, name=name)
            return SinusoidalPositionalEncoding(
                layout=sinusoid_layout, dtype=dtype, name=name
            )

        self.encoder_position = position_layer("encoder_position")
        self.decoder_position = position_layer("decoder_position")
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
        logits = self._decode(
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
            outputs=logits,
            dtype=dtype,
            **kwargs,
        )

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_ff = d_ff
        self.dropout_rate = float(dropout_rate)
        self.share_embeddings = bool(share_embeddings)
        self.source_vocabulary_size = source_vocabulary_size
        self.positional_encoding = positional_encoding
        self.max_length = max_length
        self.normalization_position = normalization_position
        self.logits_dtype = self.token_embedding.logits_dtype
        self.projection_layout = projection_layout
        self.activation = activation
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.sinusoid_layout = sinusoid_layout
        self.output_bias = bool(output_bias)

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
        x = self.source_embedding(encoder_token_ids)
        x = self.encoder_position(x, positions=positions)
        x = self.encoder_embedding_dropout(x, training=training)
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
        return self.token_embedding(x, reverse=True)

    def _embed_target(
        self, decoder_token_ids, start_index=0, training=None, positions=None
    ):
        x = self.token_embedding(decoder_token_ids)
        x = self.decoder_position(x, start_index=start_index, positions=positions)
        return self.decoder_embedding_dropout(x, training=training)

    # --- packed rows: several sentence pairs per row ---

    def call(self, inputs, training=None, mask=None, **kwargs):
        if isinstance(inputs, dict) and any(key in inputs for key in SEGMENT_INPUTS):
            return self._packed_call(inputs, training=training)
        return super().call(inputs, training=training, mask=mask, **kwargs)

    def _packed_call(self, inputs, training=None):
        """Logits for packed rows (see the class docstring, "Packed rows")."""
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
        return self._decode(
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

    # --- the incremental-decoding interface used by keras_transformer.decoding ---

    def encode(self, encoder_token_ids, training=False):
        """Runs the encoder once. Returns ``(encoder_output, encoder_padding_mask)``."""
        encoder_token_ids = ops.convert_to_tensor(encoder_token_ids, "int32")
        mask = padding_mask_from_ids(encoder_token_ids)
        return self._encode(encoder_token_ids, mask, training=training), mask

    def build_cache(self, encoder_output, encoder_padding_mask, max_length):
        """The decoding cache for a batch, with every leaf batch-major.

        Returns a dict:
        - ``"self_attention"``: a tuple (one per decoder layer) of zero tensors
          ``(batch, 2, num_heads, max_length, head_dim)`` that decoding fills
          one position per step;
        - ``"cross_attention"``: a tuple of the encoder-decoder keys/values
          ``(batch, 2, num_heads, source_length, head_dim)``, computed once;
        - ``"encoder_padding_mask"``: ``(batch, source_length)``;
        - ``"decoder_padding_mask"``: boolean ``(batch, max_length)``, False
          where a padding token was fed (`decode_step` writes it), so that
          padding inside a forced prefix is masked as in `decode`.
        Beam search reorders hypotheses by gathering every leaf on axis 0.
        """
        batch = ops.shape(encoder_output)[0]
        head_dim = self.d_model // self.num_heads
        shape = (batch, 2, self.num_heads, max_length, head_dim)
        dtype = self.decoder_layers[0].compute_dtype
        return {
            "self_attention": tuple(
                ops.zeros(shape, dtype=dtype) for _ in self.decoder_layers
            ),
            "cross_attention": tuple(
                layer.cross_attention.compute_key_value_cache(encoder_output)
                for layer in self.decoder_layers
            ),
            "encoder_padding_mask": encoder_padding_mask,
            "decoder_padding_mask": ops.ones((batch, max_length), dtype="bool"),
        }

    def grow_cache(self, cache, max_length):
        """``cache`` (from `build_cache`) with room for ``max_length`` positions.

        The self-attention buffers are padded with zeros and the decoder
        padding mask with True after the positions already there (a no-op
        when they already have ``max_length``); the searches grow the cache
        in stages (`keras_transformer.decoding.search.cache_lengths`).
        """
        current = ops.shape(cache["decoder_padding_mask"])[1]
        extra = max_length - current
        return dict(
            cache,
            self_attention=tuple(
                ops.pad(x, [[0, 0], [0, 0], [0, 0], [0, extra], [0, 0]])
                for x in cache["self_attention"]
            ),
            decoder_padding_mask=ops.pad(
                cache["decoder_padding_mask"], [[0, 0], [0, extra]],
                constant_values=True,
            ),
        )

    def decode_step(self, decoder_token_ids, cache, cache_index):
        """Decodes the tokens at positions ``cache_index ...`` using the cache.

        Args:
            decoder_token_ids: int ``(batch, steps)``, usually one step.
            cache: from `build_cache` (or a previous step).
            cache_index: int scalar, the position of the first token.

        Returns:
            ``(logits, cache)``: float32 logits ``(batch, steps,
            vocabulary_size)`` and the updated cache.
        """
        decoder_token_ids = ops.convert_to_tensor(decoder_token_ids, "int32")
        decoder_padding_mask = ops.slice_update(
            cache["decoder_padding_mask"],
            [0, cache_index],
            padding_mask_from_ids(decoder_token_ids),
        )
        x = self._embed_target(decoder_token_ids, start_index=cache_index)
        new_self_caches = []
        for layer, self_cache, cross_cache in zip(
            self.decoder_layers, cache["self_attention"], cache["cross_attention"]
        ):
            x, self_cache = layer(
                x,
                decoder_padding_mask=decoder_padding_mask,
                encoder_padding_mask=cache["encoder_padding_mask"],
                self_attention_cache=self_cache,
                cross_attention_cache=cross_cache,
                cache_index=cache_index,
            )
            new_self_caches.append(self_cache)
        if self.decoder_final_norm is not None:
            x = self.decoder_final_norm(x)
        logits = self.token_embedding(x, reverse=True)
        cache = dict(
            cache,
            self_attention=tuple(new_self_caches),
            decoder_padding_mask=decoder_padding_mask,
        )
        return logits, cache

    def decode(self, decoder_token_ids, encoder_output, encoder_padding_mask):
        """Full (uncached) decoder pass: float32 logits for every position."""
        decoder_token_ids = ops.convert_to_tensor(decoder_token_ids, "int32")
        return self._decode(
            decoder_token_ids,
            padding_mask_from_ids(decoder_token_ids),
            encoder_output,
            encoder_padding_mask,
        )

    def attention_scores(self, encoder_token_ids, decoder_token_ids):
        """Attention weights of every layer and head, for plotting.

        Returns a dict of lists (one entry per layer) of float32 tensors
        ``(batch, heads, query_length, key_length)``: ``"encoder_self_attention"``,
        ``"decoder_self_attention"`` and ``"decoder_cross_attention"``.
        """
        encoder_token_ids = ops.convert_to_tensor(encoder_token_ids, "int32")
        decoder_token_ids = ops.convert_to_tensor(decoder_token_ids, "int32")
        encoder_mask = padding_mask_from_ids(encoder_token_ids)
        decoder_mask = padding_mask_from_ids(decoder_token_ids)
        scores = {
            "encoder_self_attention": [],
            "decoder_self_attention": [],
            "decoder_cross_attention": [],
        }
        x = self.encoder_embedding_dropout(
            self.encoder_position(self.source_embedding(encoder_token_ids))
        )
        for layer in self.encoder_layers:
            x, layer_scores = layer(
                x, encoder_padding_mask=encoder_mask, return_attention_scores=True
            )
            scores["encoder_self_attention"].append(layer_scores)
        if self.encoder_final_norm is not None:
            x = self.encoder_final_norm(x)
        y = self._embed_target(decoder_token_ids)
        for layer in self.decoder_layers:
            y, layer_scores = layer(
                y,
                x,
                decoder_padding_mask=decoder_mask,
                encoder_padding_mask=encoder_mask,
                return_attention_scores=True,
            )
            scores["decoder_self_attention"].append(layer_scores["self_attention"])
            scores["decoder_cross_attention"].append(layer_scores["cross_attention"])
        return scores

    # --- training under PyTorch ---

    def make_train_function(self, force=False):
        # With jit_compile under PyTorch, the step is the package's compiled
        # one (models/transformer/torch_train_step.py) instead of Keras'
        # torch.compile of its train_step, which breaks into dozens of graphs.
        built = force or self.train_function is None
        result = super().make_train_function(force)
        if built and self._torch_compiled():
            compiled = make_compiled_train_function(self)
            if compiled is not None:
                self.train_function = compiled
            else:
                self.train_function = self._eager_torch_function(self.train_step)
        return result

    def make_test_function(self, force=False):
        # Evaluation and prediction stay eager under PyTorch: Keras'
        # torch.compile of them has the graph breaks of its training step.
        built = force or self.test_function is None
        result = super().make_test_function(force)
        if built and self._torch_compiled():
            self.test_function = self._eager_torch_function(self.test_step, no_grad=True)
        return result

    def make_predict_function(self, force=False):
        built = force or self.predict_function is None
        super().make_predict_function(force)
        if built and self._torch_compiled():
            self.predict_function = self._eager_torch_function(
                self.predict_step, no_grad=True
            )
        return self.predict_function

    def auto_jit_compile(self):
        # Keras resolves jit_compile="auto" to eager under PyTorch; the
        # package's compiled step is the "auto" choice where it pays
        # (`compiled_by_default`). Other backends keep Keras' choice.
        if keras.config.backend() == "torch":
            return compiled_by_default()
        return super().auto_jit_compile()

    def _torch_compiled(self):
        return keras.config.backend() == "torch" and bool(self.jit_compile)

    @staticmethod
    def _eager_torch_function(step, no_grad=False):
        import torch

        def function(data):
            if no_grad:
                with torch.no_grad():
                    return step(data[0])
            return step(data[0])

        return function

    # --- configuration ---

    def get_compile_config(self):
        # An optimizer saved under one backend reloads under any other
        # (see `portable_optimizer_modules`).
        config = portable_optimizer_modules(super().get_compile_config())
        # Keras records `jit_compile` resolved for the saving backend ("auto"
        # -> True under JAX, False under torch), so JAX's True made a torch
        # reload train through torch.compile (over a minute of compilation on
        # 2 cores before the first step) and torch's False a JAX reload train
        # without jit. A value that is this backend's "auto" choice is saved
        # as "auto", so the loading backend makes its own; any other value
        # (jit_compile=False under JAX, ...) is kept. (Overriding `compile`
        # to remember the argument would stop Keras from compiling a loaded
        # model: `compile_from_config` skips models with their own compile.)
        if config and config.get("jit_compile") == self.auto_jit_compile():
            config["jit_compile"] = "auto"
        return config

    def get_config(self):
        # name, trainable and dtype (a DTypePolicyMap after `quantize`).
        config = super().get_config()
        config.update({
            "vocabulary_size": self.vocabulary_size,
            "num_layers": self.num_layers,
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "d_ff": self.d_ff,
            "dropout_rate": self.dropout_rate,
            "share_embeddings": self.share_embeddings,
            "source_vocabulary_size": self.source_vocabulary_size,
            "positional_encoding": self.positional_encoding,
            "max_length": self.max_length,
            "normalization_position": self.normalization_position,
            "logits_dtype": self.logits_dtype,
            "projection_layout": self.projection_layout,
        })
        # The options of models trained elsewhere, saved only where they
        # differ from the paper's, so that the paper's configs stay as
        # they were.
        for key, default in (
            ("activation", "relu"),
            ("layer_norm_epsilon", LAYER_NORM_EPSILON),
            ("sinusoid_layout", "interleaved"),
            ("output_bias", False),
        ):
            if getattr(self, key) != default:
                config[key] = getattr(self, key)
        return config

    @classmethod
    def from_config(cls, config):
        config = with_legacy_projection_layout(config)
        if "dtype" in config and isinstance(config["dtype"], dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)
