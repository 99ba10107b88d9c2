"""Relative position representations (Shaw et al., 2018): which row of the
tables each (query, key) pair reads. The tables and their products live in
`keras_transformer.layers.attention.MultiHeadAttention`."""

from keras import ops


def check_max_relative_position(max_relative_position, self_attention=True):
    """``max_relative_position`` as an int >= 0 (0: no relative positions)."""
    if (
        isinstance(max_relative_position, bool)
        or not isinstance(max_relative_position, int)
        or max_relative_position < 0
    ):
        raise ValueError(
            "max_relative_position must be an int >= 0 (0: no relative "
            f"positions). Received: max_relative_position={max_relative_position!r}"
        )
    if max_relative_position and not self_attention:
        raise ValueError(
            "Relative positions are for self-attention only (Shaw et al., "
            "2018); encoder-decoder attention takes max_relative_position=0. "
            f"Received: max_relative_position={max_relative_position}"
        )
    return max_relative_position


def relative_position_ids(query_length, key_length, max_relative_position, query_start=0):
    """int32 ``(query_length, key_length)``: the row of the relative position
    tables for each (query, key) pair, ``clip(key - query, -m, m) + m``.

    Queries are at positions ``query_start ... query_start + query_length -
    1`` (a cached decoding step: the step's position), keys at ``0 ...
    key_length - 1`` (tensor2tensor's ``_generate_relative_positions_matrix``
    and CTranslate2's ``make_relative_positions``).
    """
    m = max_relative_position
    queries = ops.arange(query_length, dtype="int32") + ops.cast(query_start, "int32")
    keys = ops.arange(key_length, dtype="int32")
    return ops.clip(keys[None, :] - queries[:, None], -m, m) + m



def relative_logits(query, table, ids):
    """``q_i . a^K_ij``: float ``(batch, heads, queries, keys)`` for queries
    ``(batch, queries, heads, d)``, in the queries' dtype (tensor2tensor's
    ``_relative_attention_inner``)."""
    rows = ops.take(ops.cast(table, query.dtype), ids, axis=0)  # (t, s, d)
    return ops.einsum("bthd,tsd->bhts", query, rows)


def relative_values(weights, table, ids):
    """``sum_j w_ij a^V_ij``: ``(batch, queries, heads, d)`` for attention
    weights ``(batch, heads, queries, keys)``, in the weights' dtype."""
    rows = ops.take(ops.cast(table, weights.dtype), ids, axis=0)  # (t, s, d)
    return ops.einsum("bhts,tsd->bthd", weights, rows)
