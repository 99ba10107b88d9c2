"""Key/value caches of incremental decoding, as the model-agnostic searches see them.

`cached_tokens_to_logits` wraps a `Transformer`'s ``decode_step`` as the
``tokens_to_logits(tokens, cache, index)`` function of `beam_search` and
`greedy_search`; the reorder and tile functions move a cache with its
hypotheses; the uncached variants recompute the decoder over the prefix.
"""

from keras import ops, tree

from keras_transformer.special_tokens import PAD_ID


def cached_tokens_to_logits(model):
    """``tokens_to_logits`` for `beam_search` using the model's cache."""

    def tokens_to_logits(token_ids, cache, index):
        logits, cache = model.decode_step(token_ids, cache, index)
        return logits[:, -1], cache  # (rows, vocabulary_size)

    return tokens_to_logits


def _map_hypothesis_leaves(cache, function):
    """``function`` applied to the per-hypothesis leaves of a `Transformer`
    cache (the self-attention buffers and the decoder padding mask); the
    encoder parts (keys/values, padding mask) are per sentence, unchanged.
    An `Ensemble`'s cache is a tuple of its models' caches: each is mapped."""
    if isinstance(cache, (tuple, list)):
        return tuple(_map_hypothesis_leaves(member, function) for member in cache)
    return dict(
        cache,
        self_attention=tuple(function(x) for x in cache["self_attention"]),
        decoder_padding_mask=function(cache["decoder_padding_mask"]),
    )


def reorder_transformer_cache(cache, flat_indices):
    """Reorders only the per-hypothesis leaves (`_map_hypothesis_leaves`)."""
    return _map_hypothesis_leaves(
        cache, lambda x: ops.take(x, flat_indices, axis=0)
    )


def select_transformer_sentences(cache, sentence_indices):
    """Keeps the per-sentence leaves (encoder-decoder keys/values, encoder
    padding mask) of the batch rows ``sentence_indices``: a beam search
    that drops finished sentences (`CacheFunctions.select`). An
    `Ensemble`'s cache is a tuple of its models' caches: each is selected."""
    if isinstance(cache, (tuple, list)):
        return tuple(select_transformer_sentences(member, sentence_indices) for member in cache)
    return dict(
        cache,
        cross_attention=tuple(
            ops.take(x, sentence_indices, axis=0) for x in cache["cross_attention"]
        ),
        encoder_padding_mask=ops.take(cache["encoder_padding_mask"], sentence_indices, axis=0),
    )


def tile_transformer_cache(cache, beam_size):
    """Tiles only the per-hypothesis leaves for beam search: the encoder-decoder
    keys/values and the encoder padding mask stay one row per sentence,
    shared by its beams (`MultiHeadAttention` groups the beams' queries), so
    each step reads a beam-size times smaller cross-attention cache."""
    return _map_hypothesis_leaves(
        cache, lambda x: ops.repeat(x, beam_size, axis=0)
    )


def uncached_initial_cache(encoder_output, encoder_padding_mask, max_length):
    """State of `uncached_tokens_to_logits`: the tokens so far, PAD-filled.
    ``encoder_output`` may be a tuple (an `Ensemble`'s, one per model)."""
    batch = ops.shape(tree.flatten(encoder_output)[0])[0]
    return {
        "token_ids": ops.full((batch, max_length), PAD_ID, dtype="int32"),
        "encoder_output": encoder_output,
        "encoder_padding_mask": encoder_padding_mask,
    }


def reorder_uncached_cache(cache, flat_indices):
    """Reorders only the tokens (the encoder output is per sentence)."""
    return dict(cache, token_ids=ops.take(cache["token_ids"], flat_indices, axis=0))


def uncached_tokens_to_logits(model, decode_fn=None, prefix_multiple=None):
    """``tokens_to_logits`` that re-runs the full decoder on the prefix.

    The "cache" only stores the tokens fed so far (see
    `uncached_initial_cache`). By default the decoder runs over the whole
    fixed-size buffer (positions after ``index`` are PAD and masked), which
    works inside a compiled loop. With ``prefix_multiple`` (needs
    ``python_loop=True`` in the search, so that ``index`` is concrete) it runs
    on the prefix only, padded up to a multiple of ``prefix_multiple``, via
    ``decode_fn(token_ids, encoder_output, encoder_padding_mask)`` (e.g. a
    jitted `Transformer.decode`; defaults to ``model.decode``).
    """
    decode_fn = decode_fn or model.decode

    def tokens_to_logits(token_ids, cache, index):
        buffer = ops.slice_update(
            cache["token_ids"], [0, index], ops.cast(token_ids, "int32")
        )
        cache = dict(cache, token_ids=buffer)
        if prefix_multiple:
            position = int(ops.convert_to_numpy(index))
            length = -(-(position + 1) // prefix_multiple) * prefix_multiple
            length = min(length, buffer.shape[1])
            logits = decode_fn(
                buffer[:, :length],
                cache["encoder_output"],
                cache["encoder_padding_mask"],
            )
            return logits[:, position], cache
        logits = decode_fn(
            buffer, cache["encoder_output"], cache["encoder_padding_mask"]
        )
        return ops.take(logits, index, axis=1), cache

    return tokens_to_logits
