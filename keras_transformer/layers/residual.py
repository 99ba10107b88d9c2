"""The residual wrapper around every sub-layer (paper §3.1 and §5.4)."""

import keras

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


def make_layer_norm(owner, name, shape):
    layer_norm = keras.layers.LayerNormalization(
        epsilon=LAYER_NORM_EPSILON, dtype=owner.dtype_policy, name=name
    )
    layer_norm.build(shape)
    return layer_norm
