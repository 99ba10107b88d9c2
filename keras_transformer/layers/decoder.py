"""One decoder layer (paper §3.1): masked self-attention, encoder-decoder
attention and feed-forward."""

import keras

from keras_transformer.layers.transformer_layer import (
    ResidualBlock,
    TransformerLayerBase,
    make_layer_norm,
)


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerDecoderLayer(TransformerLayerBase):
    """Decoder layer: masked self-attention, encoder-decoder attention, FFN.

    Self-attention is always causal (position i sees positions <= i, §3.2.3);
    the decoder padding mask is combined with it. Encoder-decoder attention
    never attends to padded source positions. Residual wrapping is post-LN
    (the paper's) or pre-LN, as in `TransformerEncoderLayer`.

    Incremental decoding: pass ``self_attention_cache`` (``(batch, 2,
    heads, max_length, head_dim)``), ``cross_attention_cache`` (from
    `MultiHeadAttention.compute_key_value_cache` of the cross-attention on the
    encoder output) and ``cache_index``; the layer then processes only the new
    tokens and returns ``(outputs, updated_self_attention_cache)``. With a
    cache, ``decoder_padding_mask`` covers the cache positions (``(batch,
    max_length)``, True on real tokens), so that padding fed earlier (e.g.
    inside a forced prefix) stays masked as it is without a cache.

    Args:
        d_model: int. Model width.
        num_heads: int. Attention heads; must divide d_model.
        d_ff: int. Feed-forward inner width.
        dropout_rate: float in [0, 1). Residual dropout. Defaults to 0.1.
        normalization_position: "post" (default, the paper's) or "pre".
        projection_layout: "head_major" (default) or "qkv_major", the column
            order of the fused attention projections (see
            `MultiHeadAttention`).
        activation: the feed-forward inner activation. Defaults to "relu"
            (the paper's); "swish" and "gelu" are those of other models
            (OPUS-MT uses "swish").
        layer_norm_epsilon: float > 0. Defaults to 1e-6.
        max_relative_position: int >= 0. Relative position representations
            in the self-attention (see `MultiHeadAttention`); 0 (default)
            for none.

    Call arguments:
        decoder_sequence: float ``(batch, target_length, d_model)``.
        encoder_sequence: float ``(batch, source_length, d_model)``; not
            needed when ``cross_attention_cache`` is given.
        decoder_padding_mask: optional boolean ``(batch, target_length)``;
            ``(batch, max_length)`` with a cache.
        encoder_padding_mask: optional boolean ``(batch, source_length)``.
        decoder_attention_mask: optional boolean ``(batch, target_length,
            target_length)`` for self-attention, combined with the causal
            mask (packed rows: the positions of the query's own sentence).
        encoder_attention_mask: optional boolean ``(batch, target_length,
            source_length)`` for encoder-decoder attention (packed rows: the
            source of the query's own pair).
        self_attention_cache, cross_attention_cache, cache_index: see above.
        return_attention_scores: bool. Also return a dict with the
            ``"self_attention"`` and ``"cross_attention"`` weights.

    Example:
    >>> layer = TransformerDecoderLayer(d_model=32, num_heads=4, d_ff=64)
    >>> y = np.zeros((2, 5, 32), "float32"); x = np.zeros((2, 7, 32), "float32")
    >>> layer(y, x).shape
    (2, 5, 32)
    """

    def build(self, decoder_sequence_shape, encoder_sequence_shape=None):
        shape = tuple(decoder_sequence_shape)
        if encoder_sequence_shape is None:
            encoder_sequence_shape = shape
        self.self_attention = self._attention("self_attention", self_attention=True)
        self.self_attention.build(shape)
        self.cross_attention = self._attention("cross_attention", self_attention=False)
        self.cross_attention.build(shape, tuple(encoder_sequence_shape))
        self.feed_forward = self._feed_forward()
        self.feed_forward.build(shape)
        self.self_attention_norm = make_layer_norm(self, "self_attention_norm", shape)
        self.cross_attention_norm = make_layer_norm(
            self, "cross_attention_norm", shape
        )
        self.feed_forward_norm = make_layer_norm(self, "feed_forward_norm", shape)
        self.dropout = keras.layers.Dropout(
            self.dropout_rate, dtype=self.dtype_policy, name="dropout"
        )
        position = self.normalization_position
        self._self_block = ResidualBlock(
            self.self_attention_norm, self.dropout, position
        )
        self._cross_block = ResidualBlock(
            self.cross_attention_norm, self.dropout, position
        )
        self._feed_forward_block = ResidualBlock(
            self.feed_forward_norm, self.dropout, position
        )
        self.built = True

    def call(
        self,
        decoder_sequence,
        encoder_sequence=None,
        decoder_padding_mask=None,
        encoder_padding_mask=None,
        self_attention_cache=None,
        cross_attention_cache=None,
        cache_index=None,
        return_attention_scores=False,
        training=None,
        decoder_attention_mask=None,
        encoder_attention_mask=None,
    ):
        use_cache = self_attention_cache is not None
        if use_cache and cross_attention_cache is None:
            raise ValueError(
                "Cached decoding needs both self_attention_cache and "
                "cross_attention_cache."
            )
        x, self_attention = self._self_block.attend(
            decoder_sequence,
            self.self_attention,
            padding_mask=decoder_padding_mask,
            attention_mask=decoder_attention_mask,
            use_causal_mask=True,
            cache=self_attention_cache,
            cache_index=cache_index,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        x, cross_attention = self._cross_block.attend(
            x,
            self.cross_attention,
            key_value=encoder_sequence,
            padding_mask=encoder_padding_mask,
            attention_mask=encoder_attention_mask,
            cache=cross_attention_cache,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        x = self._feed_forward_block.feed_forward(x, self.feed_forward, training)

        outputs = (x,)
        if return_attention_scores:
            outputs += ({
                "self_attention": self_attention.attention_scores,
                "cross_attention": cross_attention.attention_scores,
            },)
        if use_cache:
            outputs += (self_attention.cache,)
        return outputs[0] if len(outputs) == 1 else outputs

    def compute_output_shape(self, decoder_sequence_shape, encoder_sequence_shape=None):
        return decoder_sequence_shape
