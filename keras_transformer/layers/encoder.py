"""One encoder layer (paper §3.1): self-attention and feed-forward."""

import keras

from keras_transformer.layers.transformer_layer import (
    ResidualBlock,
    TransformerLayerBase,
    make_layer_norm,
)


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerEncoderLayer(TransformerLayerBase):
    """Encoder layer: multi-head self-attention, then a feed-forward network.

    Each sub-layer is wrapped as ``LayerNorm(x + Dropout(Sublayer(x)))``
    (post-LN, the paper's §3.1 and §5.4) or, with
    ``normalization_position="pre"``, as ``x + Dropout(Sublayer(LayerNorm(x)))``
    (pre-LN, more stable for deep stacks; not the paper's; the model then
    adds a final LayerNorm after the stack).

    Args:
        d_model: int. Model width.
        num_heads: int. Attention heads; must divide d_model.
        d_ff: int. Feed-forward inner width.
        dropout_rate: float in [0, 1). Residual dropout P_drop. Defaults to 0.1.
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
        encoder_sequence: float ``(batch, length, d_model)``.
        encoder_padding_mask: optional boolean ``(batch, length)``, True on
            real tokens; padded keys are never attended to.
        encoder_attention_mask: optional boolean ``(batch, length,
            length)``, True where a position may attend to another (packed
            rows: the positions of its own sentence).
        return_attention_scores: bool. Also return the self-attention weights
            ``(batch, heads, length, length)``.

    Example:
    >>> layer = TransformerEncoderLayer(d_model=32, num_heads=4, d_ff=64)
    >>> layer(np.zeros((2, 7, 32), "float32")).shape
    (2, 7, 32)
    """

    def build(self, encoder_sequence_shape):
        shape = tuple(encoder_sequence_shape)
        self.self_attention = self._attention("self_attention", self_attention=True)
        self.self_attention.build(shape)
        self.feed_forward = self._feed_forward()
        self.feed_forward.build(shape)
        self.self_attention_norm = make_layer_norm(self, "self_attention_norm", shape)
        self.feed_forward_norm = make_layer_norm(self, "feed_forward_norm", shape)
        self.dropout = keras.layers.Dropout(
            self.dropout_rate, dtype=self.dtype_policy, name="dropout"
        )
        self._attention_block = ResidualBlock(
            self.self_attention_norm, self.dropout, self.normalization_position
        )
        self._feed_forward_block = ResidualBlock(
            self.feed_forward_norm, self.dropout, self.normalization_position
        )
        self.built = True

    def call(
        self,
        encoder_sequence,
        encoder_padding_mask=None,
        return_attention_scores=False,
        training=None,
        encoder_attention_mask=None,
    ):
        x, attention = self._attention_block.attend(
            encoder_sequence,
            self.self_attention,
            padding_mask=encoder_padding_mask,
            attention_mask=encoder_attention_mask,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        x = self._feed_forward_block.feed_forward(x, self.feed_forward, training)
        if return_attention_scores:
            return x, attention.attention_scores
        return x

    def compute_output_shape(self, encoder_sequence_shape):
        return encoder_sequence_shape
