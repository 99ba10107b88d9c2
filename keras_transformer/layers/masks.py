"""Mask helpers shared by the attention, encoder and decoder layers.

Conventions: a *padding mask* is a boolean tensor ``(batch, length)`` that is
True on real tokens; an *attention mask* is a boolean tensor broadcastable to
``(batch, num_heads, query_length, key_length)`` that is True where a query may
attend to a key.
"""

import keras
from keras import ops

from keras_transformer.special_tokens import PAD_ID


def padding_mask_from_ids(token_ids, pad_id=PAD_ID):
    """Boolean ``(batch, length)`` mask, True where ``token_ids != pad_id``."""
    return ops.not_equal(token_ids, pad_id)


def causal_mask(query_length, key_length, query_offset=0):
    """Boolean ``(query_length, key_length)`` mask, True where key <= query.

    ``query_offset`` is the absolute position of the first query, used by
    cached decoding where the queries are the last positions of the keys.
    """
    query_positions = ops.arange(query_length, dtype="int32") + ops.cast(
        query_offset, "int32"
    )
    key_positions = ops.arange(key_length, dtype="int32")
    return ops.greater_equal(
        ops.expand_dims(query_positions, 1), ops.expand_dims(key_positions, 0)
    )


def merge_attention_masks(padding_mask=None, causal=None):
    """Combine a key padding mask ``(B, S)`` and a causal mask ``(T, S)``.

    Returns a boolean mask broadcastable to ``(B, heads, T, S)``, or None when
    neither is given.
    """
    mask = None
    if padding_mask is not None:
        mask = ops.cast(padding_mask, "bool")[:, None, None, :]
    if causal is not None:
        causal = causal[None, None, :, :]
        mask = causal if mask is None else ops.logical_and(mask, causal)
    return mask


@keras.saving.register_keras_serializable(package="keras_transformer")
class PaddingMask(keras.layers.Layer):
    """Derives the boolean padding mask ``token_ids != pad_id``.

    A layer (not a Lambda) so that the functional `Transformer` computes its
    masks from the token ids inside the graph and still loads with
    ``safe_mode=True``.

    Args:
        pad_id: int. The padding token id. Defaults to 0.

    Example:
    >>> PaddingMask()(np.array([[5, 7, 0]])).numpy().tolist()
    [[True, True, False]]
    """

    def __init__(self, pad_id=PAD_ID, **kwargs):
        super().__init__(**kwargs)
        self.pad_id = pad_id
        self.supports_masking = False

    def call(self, token_ids):
        return padding_mask_from_ids(token_ids, self.pad_id)

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, token_ids):
        return keras.KerasTensor(token_ids.shape, dtype="bool")

    def get_config(self):
        config = super().get_config()
        config.update({"pad_id": self.pad_id})
        return config
