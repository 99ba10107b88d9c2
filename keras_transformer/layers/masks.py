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


def merge_attention_masks(padding_mask=None, causal=None, attention_mask=None):
    """Combine a key padding mask ``(B, S)``, a causal mask ``(T, S)`` and a
    per-query attention mask ``(B, T, S)``.

    Returns a boolean mask broadcastable to ``(B, heads, T, S)``, or None when
    none is given.
    """
    masks = []
    if padding_mask is not None:
        masks.append(ops.cast(padding_mask, "bool")[:, None, None, :])
    if attention_mask is not None:
        masks.append(ops.cast(attention_mask, "bool")[:, None, :, :])
    if causal is not None:
        masks.append(causal[None, None, :, :])
    if not masks:
        return None
    mask = masks[0]
    for other in masks[1:]:
        mask = ops.logical_and(mask, other)
    return mask


# Packed rows (several sentences, or sentence pairs, in one row): each token
# carries a *segment id*, 1, 2, ... for the row's sentences in order (each
# sentence contiguous) and 0 on the padding after the last one. Attention
# stays inside a sentence and positions restart at 0 for each sentence, so a
# packed row computes what its sentences would compute in rows of their own.


def segment_attention_mask(query_segment_ids, key_segment_ids):
    """Boolean ``(batch, query_length, key_length)``: True where the query and
    the key are in the same segment and the key is not padding (segment 0)."""
    query = ops.convert_to_tensor(query_segment_ids, "int32")[:, :, None]
    key = ops.convert_to_tensor(key_segment_ids, "int32")[:, None, :]
    return ops.logical_and(ops.equal(query, key), ops.not_equal(key, 0))


def segment_positions(segment_ids):
    """Int32 ``(batch, length)``: each token's position inside its segment.

    A token's segment starts after every token of an earlier (smaller,
    non-zero) segment id, so its position is its index minus their number:
    one ``(length, length)`` comparison per row, which for packed rows (tens
    to a few hundred tokens) costs little beside the attention itself.
    Padding (segment 0) gets its own index, a harmless value: it is masked.
    """
    segment_ids = ops.convert_to_tensor(segment_ids, "int32")
    earlier = ops.logical_and(
        ops.less(segment_ids[:, None, :], segment_ids[:, :, None]),
        ops.greater(segment_ids[:, None, :], 0),
    )
    index = ops.arange(ops.shape(segment_ids)[1], dtype="int32")[None, :]
    return index - ops.sum(ops.cast(earlier, "int32"), axis=-1)


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
