"""The residual wrapper around every sub-layer (paper §3.1 and §5.4)."""

import keras

from keras_transformer.layers.attention import (
    MultiHeadAttention,
    check_max_relative_position,
    with_legacy_projection_layout,
)
from keras_transformer.layers.feed_forward import PositionwiseFeedForward

NORMALIZATION_POSITIONS = ("post", "pre")
LAYER_NORM_EPSILON = 1e-6


def check_normalization_position(normalization_position):
    if normalization_position not in NORMALIZATION_POSITIONS:
        raise ValueError(
            "normalization_position must be 'post' (the paper's "
            "LayerNorm(x + Dropout(Sublayer(x)))) or 'pre' "
            "(x + Dropout(Sublayer(LayerNorm(x)))). Received: "
            f"normalization_position={normalization_position!r}"
        )


class ResidualBlock:
    """LayerNorm and Dropout around one sub-layer, post-LN or pre-LN.

    A plain helper object owned by the encoder/decoder layer (not a Keras
    layer): it holds references to the owner's LayerNormalization and Dropout
    sublayers so that their weights are tracked by the owner.
    """

    def __init__(self, layer_norm, dropout, normalization_position):
        self.layer_norm = layer_norm
        self.dropout = dropout
        self.pre = normalization_position == "pre"

    def sublayer_input(self, x):
        return self.layer_norm(x) if self.pre else x

    def output(self, x, sublayer_output, training=None):
        y = x + self.dropout(sublayer_output, training=training)
        return y if self.pre else self.layer_norm(y)

    def attend(self, x, attention, training=None, **kwargs):
        """``x`` through the `MultiHeadAttention` ``attention`` (called with
        ``kwargs``) and this block: the new ``x`` and the attention's
        `AttentionOutput`."""
        result = attention(self.sublayer_input(x), training=training, **kwargs)
        return self.output(x, result.outputs, training), result

    def feed_forward(self, x, feed_forward, training=None):
        """``x`` through the feed-forward sub-layer and this block."""
        return self.output(x, feed_forward(self.sublayer_input(x)), training)


def make_layer_norm(owner, name, shape):
    layer_norm = keras.layers.LayerNormalization(
        epsilon=owner.layer_norm_epsilon, dtype=owner.dtype_policy, name=name
    )
    layer_norm.build(shape)
    return layer_norm


class TransformerLayerBase(keras.layers.Layer):
    """Constructor arguments, validation and config shared by the encoder and
    decoder layers (see `TransformerEncoderLayer` for the arguments)."""

    def __init__(
        self,
        d_model,
        num_heads,
        d_ff,
        dropout_rate=0.1,
        normalization_position="post",
        projection_layout="head_major",
        activation="relu",
        layer_norm_epsilon=LAYER_NORM_EPSILON,
        max_relative_position=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_normalization_position(normalization_position)
        self.max_relative_position = check_max_relative_position(max_relative_position)
        if not isinstance(layer_norm_epsilon, (int, float)) or not layer_norm_epsilon > 0:
            raise ValueError(
                "layer_norm_epsilon must be a number > 0. Received: "
                f"layer_norm_epsilon={layer_norm_epsilon!r}"
            )
        if not 0.0 <= dropout_rate < 1.0:
            raise ValueError(
                f"dropout_rate must be in [0, 1). Received: dropout_rate={dropout_rate}"
            )
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.d_ff = int(d_ff)
        self.dropout_rate = float(dropout_rate)
        self.normalization_position = normalization_position
        self.projection_layout = projection_layout
        self.activation = activation
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        # Fail at construction, not at build, on bad sizes.
        MultiHeadAttention(
            self.d_model, self.num_heads, projection_layout=projection_layout
        )
        PositionwiseFeedForward(self.d_model, self.d_ff, activation=activation)
        keras.activations.get(activation)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "d_model": self.d_model,
                "num_heads": self.num_heads,
                "d_ff": self.d_ff,
                "dropout_rate": self.dropout_rate,
                "normalization_position": self.normalization_position,
                "projection_layout": self.projection_layout,
                "activation": self.activation,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        if self.max_relative_position:
            # Only where used: the configs of other models stay as they were.
            config["max_relative_position"] = self.max_relative_position
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(with_legacy_projection_layout(config))

    def _feed_forward(self):
        return PositionwiseFeedForward(
            self.d_model,
            self.d_ff,
            activation=self.activation,
            dtype=self.dtype_policy,
            name="feed_forward",
        )

    def _attention(self, name, self_attention):
        return MultiHeadAttention(
            self.d_model,
            self.num_heads,
            self_attention=self_attention,
            projection_layout=self.projection_layout,
            # Relative positions (Shaw et al.) are self-attention's only.
            max_relative_position=self.max_relative_position if self_attention else 0,
            dtype=self.dtype_policy,
            name=name,
        )
