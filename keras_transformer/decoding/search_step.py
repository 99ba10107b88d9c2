"""What every search does at each step and before the first: resolve its
arguments (batch size, per-row limits, prefixes) and mask the tokens a step
may not choose (`select_mask`, `force_prefix`). `flat_gather` reorders
per-sentence hypotheses.
"""

from keras import ops, tree

from keras_transformer.decoding.search_loop import NEG_INF
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


def select_mask(
    log_probs, next_length, min_length, row_max_lengths, eos_id, forbidden_ids
):
    """Log-probs used for choosing tokens: forbidden ones set to NEG_INF.

    ``log_probs`` is ``(batch, ..., vocab)``; ``next_length`` (scalar) is the
    length the hypotheses will have after this token; ``row_max_lengths`` is
    ``(batch,)``.
    """
    vocabulary_size = ops.shape(log_probs)[-1]
    vocab = ops.arange(vocabulary_size, dtype="int32")
    is_eos = ops.equal(vocab, eos_id)
    forbidden = ops.zeros_like(is_eos)
    for token in forbidden_ids:
        forbidden = ops.logical_or(forbidden, ops.equal(vocab, token))
    # EOS before min_length is forbidden ...
    forbidden = ops.logical_or(
        forbidden, ops.logical_and(is_eos, next_length < min_length)
    )
    extra_dims = len(log_probs.shape) - 2
    at_max = ops.greater_equal(next_length, row_max_lengths)
    at_max = ops.reshape(at_max, (-1,) + (1,) * (extra_dims + 1))
    # ... and at a row's last allowed position only EOS is allowed.
    forbidden = ops.logical_or(
        forbidden, ops.logical_and(at_max, ops.logical_not(is_eos))
    )
    return ops.where(forbidden, NEG_INF, log_probs)


def force_prefix(selectable, log_probs, index, prefix_ids, prefix_lengths):
    """At steps inside a row's prefix, only the prefix token is selectable.

    ``selectable`` and ``log_probs`` are ``(batch, ..., vocab)``; the forced
    token keeps its log-probability even where `select_mask` forbade it.
    """
    if prefix_ids is None:
        return selectable
    width = ops.shape(prefix_ids)[1]
    column = ops.minimum(index, width - 1)
    token = ops.take(prefix_ids, column, axis=1)  # (batch,)
    forcing = index < prefix_lengths  # (batch,)
    extra_dims = len(log_probs.shape) - 2
    shape = (-1,) + (1,) * (extra_dims + 1)
    vocab = ops.arange(ops.shape(log_probs)[-1], dtype="int32")
    is_token = ops.equal(vocab, ops.reshape(token, shape))
    forced = ops.where(is_token, log_probs, NEG_INF)
    return ops.where(ops.reshape(forcing, shape), forced, selectable)


def prefix_arguments(prefix_ids, prefix_lengths, batch):
    if prefix_ids is None:
        if prefix_lengths is not None:
            raise ValueError("prefix_lengths needs prefix_ids.")
        return None, None
    prefix_ids = ops.cast(ops.convert_to_tensor(prefix_ids), "int32")
    if prefix_lengths is None:
        prefix_lengths = ops.full((batch,), ops.shape(prefix_ids)[1], dtype="int32")
    return prefix_ids, ops.cast(ops.convert_to_tensor(prefix_lengths), "int32")


def logits_rows(logits, rows):
    """``logits`` as float32 ``(rows, vocab)``."""
    # Keep the vocabulary dimension static where it is (a TF graph would
    # lose it with -1; sampling needs it).
    vocabulary_size = logits.shape[-1] or -1
    return ops.reshape(ops.cast(logits, "float32"), (rows, vocabulary_size))


def log_softmax_rows(logits, rows):
    return ops.log_softmax(logits_rows(logits, rows), axis=-1)


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

