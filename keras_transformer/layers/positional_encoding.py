"""Sinusoidal positional encoding (paper §3.5) and learned positions (Table 3, E)."""

import keras
from keras import ops

# Column orders of the sinusoid: the paper's sin/cos pairs, or every sine
# first and every cosine after them (Marian, OPUS-MT and Hugging Face's
# `MarianSinusoidalPositionalEmbedding`).
SINUSOID_LAYOUTS = ("interleaved", "split")


def check_sinusoid_layout(layout, name="sinusoid_layout"):
    if layout not in SINUSOID_LAYOUTS:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, SINUSOID_LAYOUTS))}. "
            f"Received: {name}={layout!r}"
        )
    return layout


def sinusoidal_encoding(positions, d_model, dtype="float32", layout="interleaved"):
    """The paper's encoding for a 1-D tensor of (float) positions.

    PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),
    PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
    Returns ``(len(positions), d_model)``; computed on the fly, so any length
    works (no table to overflow).

    ``layout="split"`` puts the same values in another column order: the
    ``ceil(d_model / 2)`` sines first, then the cosines (Marian's and
    OPUS-MT's order; fairseq also splits, but with other frequencies).
    """
    check_sinusoid_layout(layout, "layout")
    positions = ops.cast(positions, "float32")
    # 2i for i in [0, d_model / 2)
    two_i = ops.arange(0, d_model, 2, dtype="float32")
    inverse_frequency = ops.power(10000.0, -two_i / float(d_model))
    angles = positions[:, None] * inverse_frequency[None, :]  # (time, d/2)
    if layout == "split":
        encoding = ops.concatenate([ops.sin(angles), ops.cos(angles)], axis=-1)
    else:
        # Interleave so that even columns are sin and odd columns are cos.
        encoding = ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1)
        encoding = ops.reshape(encoding, (-1, 2 * ops.shape(two_i)[0]))
    if d_model % 2:
        if layout == "split":
            # ceil(d/2) sines, floor(d/2) cosines.
            half = (d_model + 1) // 2
            encoding = ops.concatenate(
                [encoding[:, :half], encoding[:, half : half + d_model // 2]], axis=-1
            )
        else:
            encoding = encoding[:, :d_model]
    return ops.cast(encoding, dtype)


@keras.saving.register_keras_serializable(package="keras_transformer")
class SinusoidalPositionalEncoding(keras.layers.Layer):
    """Adds the paper's sinusoidal positional encoding to the embeddings.

    Given embeddings ``(batch, length, d_model)`` it returns them plus the
    encoding of positions ``start_index ... start_index + length - 1``.
    Computed on the fly, so any sequence length works (no table to overflow).
    ``start_index`` is used by cached decoding.

    Args:
        layout: "interleaved" (default, the paper's sin/cos pairs) or
            "split" (all sines, then all cosines: Marian's order; see
            `sinusoidal_encoding`). ``d_model`` is read from the inputs'
            last dimension.

    Call arguments:
        inputs: float tensor ``(batch, length, d_model)``.
        start_index: int scalar (tensor or Python int). Position of the first
            element. Defaults to 0.
        positions: optional int ``(batch, length)``: each element's own
            position (packed rows, `keras_transformer.layers.masks.
            segment_positions`); replaces ``start_index``.

    Example:
    >>> x = np.zeros((2, 10, 16), "float32")
    >>> SinusoidalPositionalEncoding()(x).shape
    (2, 10, 16)

    References:
        Vaswani et al., 2017, §3.5.
    """

    def __init__(self, layout="interleaved", **kwargs):
        super().__init__(**kwargs)
        self.layout = check_sinusoid_layout(layout, "layout")

    def call(self, inputs, start_index=0, positions=None):
        d_model = inputs.shape[-1]
        if positions is not None:
            # Per-token positions (packed rows): (batch, length).
            encoding = sinusoidal_encoding(
                ops.reshape(positions, (-1,)), d_model, self.compute_dtype, self.layout
            )
            return inputs + ops.reshape(encoding, ops.shape(inputs))
        length = ops.shape(inputs)[1]
        positions = ops.arange(length, dtype="float32") + ops.cast(
            start_index, "float32"
        )
        encoding = sinusoidal_encoding(
            positions, d_model, self.compute_dtype, self.layout
        )
        return inputs + encoding[None]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"layout": self.layout})
        return config


@keras.saving.register_keras_serializable(package="keras_transformer")
class LearnedPositionalEmbedding(keras.layers.Layer):
    """Adds learned position embeddings (the paper's Table 3, row E).

    Returns the inputs plus the learned embeddings of positions
    ``start_index ... start_index + length - 1``. Positions are limited to
    ``max_length``; longer inputs raise an error when shapes are known and
    are clipped to the last position inside compiled graphs.

    Args:
        max_length: int. Number of positions with a learned vector.
        initializer: initializer for the table. Defaults to
            "glorot_uniform".

    Call arguments:
        inputs: float tensor ``(batch, length, d_model)``.
        start_index: int scalar. Defaults to 0.
        positions: optional int ``(batch, length)``: each element's own
            position (packed rows); replaces ``start_index``.

    Example:
    >>> LearnedPositionalEmbedding(max_length=64)(np.zeros((2, 10, 16))).shape
    (2, 10, 16)
    """

    def __init__(self, max_length, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        if max_length is None or max_length <= 0:
            raise ValueError(
                f"max_length must be a positive int. Received: max_length={max_length}"
            )
        self.max_length = int(max_length)
        self.initializer = keras.initializers.get(initializer)

    def build(self, inputs_shape):
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_length, inputs_shape[-1]),
            initializer=self.initializer,
        )
        self.built = True

    def call(self, inputs, start_index=0, positions=None):
        if positions is not None:
            # Per-token positions (packed rows): (batch, length).
            positions = ops.minimum(ops.cast(positions, "int32"), self.max_length - 1)
            embeddings = ops.take(self.position_embeddings, positions, axis=0)
            return inputs + ops.cast(embeddings, self.compute_dtype)
        length = inputs.shape[1]
        if isinstance(length, int) and isinstance(start_index, int):
            if start_index + length > self.max_length:
                raise ValueError(
                    f"Sequence of length {length} (starting at {start_index}) "
                    f"is longer than max_length={self.max_length} of the "
                    "learned position embeddings."
                )
        length = ops.shape(inputs)[1]
        positions = ops.arange(length, dtype="int32") + ops.cast(
            start_index, "int32"
        )
        positions = ops.minimum(positions, self.max_length - 1)
        embeddings = ops.take(self.position_embeddings, positions, axis=0)
        return inputs + ops.cast(embeddings, self.compute_dtype)[None]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "max_length": self.max_length,
                "initializer": keras.initializers.serialize(self.initializer),
            }
        )
        return config
