"""What every search does before its first step: resolve its arguments
(batch size, per-row limits, prefixes). `flat_gather` reorders
per-sentence hypotheses. The scores of each step are `logits_processors`'.
"""

from keras import ops, tree

from keras_transformer.utils.validation import check_int

def check_search_arguments(max_length, beam_size=1, num_return=1):
    check_int("beam_size", beam_size)
    check_int("num_return", num_return)
    if not ops.is_tensor(max_length):  # a dynamic length in TF graphs
        check_int("max_length", max_length)
    if num_return > beam_size:
        raise ValueError(
            "num_return cannot exceed beam_size. Received: "
            f"num_return={num_return}, beam_size={beam_size}"
        )


def check_alpha(alpha):
    """Raises for a negative ``alpha``, a Python number or a concrete tensor.

    Inside a compiled graph (a traced tensor) the value is unknown; the
    early-stopping bound of `beam_search` is written to hold for any alpha.
    """
    try:
        value = ops.convert_to_numpy(alpha)
    except Exception:  # a traced / symbolic tensor
        return
    if value.ndim:
        raise ValueError(
            f"alpha must be a scalar. Received: alpha with shape {value.shape}"
        )
    if not value >= 0:  # also NaN
        raise ValueError(f"alpha must be >= 0. Received: alpha={alpha!r}")


def batch_size_of(cache, batch_size):
    if batch_size is not None:
        return batch_size
    leaves = tree.flatten(cache)
    if not leaves:
        raise ValueError("Pass `batch_size` when the cache has no tensors.")
    return ops.shape(leaves[0])[0]


def row_max_lengths(max_lengths, batch_size, max_length):
    if max_lengths is None:
        return ops.full((batch_size,), max_length, dtype="int32")
    max_lengths = ops.cast(ops.convert_to_tensor(max_lengths), "int32")
    return ops.clip(max_lengths, 1, max_length)


def prefix_arguments(prefix_ids, prefix_lengths, batch):
    if prefix_ids is None:
        if prefix_lengths is not None:
            raise ValueError("prefix_lengths needs prefix_ids.")
        return None, None
    prefix_ids = ops.cast(ops.convert_to_tensor(prefix_ids), "int32")
    if prefix_lengths is None:
        prefix_lengths = ops.full((batch,), ops.shape(prefix_ids)[1], dtype="int32")
    return prefix_ids, ops.cast(ops.convert_to_tensor(prefix_lengths), "int32")


def flat_gather(x, indices):
    """``x[b, indices[b, j]]``: ``x`` is ``(batch, m, ...)``, indices ``(batch, n)``.

    One gather on the flattened leading axes (portable across backends).
    """
    shape = ops.shape(x)
    batch, m = shape[0], shape[1]
    n = ops.shape(indices)[1]
    offsets = ops.arange(batch, dtype="int32")[:, None] * m
    flat_indices = ops.reshape(ops.cast(indices, "int32") + offsets, (-1,))
    rest = tuple(shape[2:])
    flat = ops.reshape(x, (-1,) + rest)
    gathered = ops.take(flat, flat_indices, axis=0)
    return ops.reshape(gathered, (batch, n) + rest)

