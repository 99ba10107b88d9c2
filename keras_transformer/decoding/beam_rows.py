"""The batch rows of a beam search: its sentences' outputs, written as
each leaves the batch, and the two ways a search stops decoding finished
sentences (`search_loop.drops_finished_rows` and
`search_loop.halves_finished_rows`).

The state is `beam.beam_search`'s: ``(batch, k, ...)`` entries per
sentence, the cache's hypothesis leaves ``batch * k`` rows, and, where
sentences leave the batch, ``rows`` (each batch row's sentence) and the
outputs.
"""

from keras import ops

from keras_transformer.special_tokens import PAD_ID


def empty_outputs(batch, num_return, max_length):
    """The returned hypotheses of every sentence, written as each sentence
    leaves the batch (`drop_finished_rows`)."""
    return {
        "output_sequences": ops.full((batch, num_return, max_length + 1), PAD_ID, "int32"),
        "output_scores": ops.full((batch, num_return), float("-inf"), "float32"),
    }


def write_outputs(state, slots, num_return):
    """``state`` with the returned hypotheses of its batch rows ``slots``
    written to their sentences' rows of the outputs."""
    targets = ops.take(state["rows"], slots, axis=0)[:, None]
    finished = ops.take(state["finished"][:, :num_return], slots, axis=0)
    scores = ops.where(
        finished, ops.take(state["finished_scores"][:, :num_return], slots, axis=0),
        float("-inf"),
    )
    sequences = ops.take(state["finished_sequences"][:, :num_return], slots, axis=0)
    return dict(
        state,
        output_sequences=ops.scatter_update(state["output_sequences"], targets, sequences),
        output_scores=ops.scatter_update(state["output_scores"], targets, scores),
    )


# The state's entries with one row per sentence of the batch; the
# hypotheses' leaves of the cache follow `CacheFunctions.reorder`.
SENTENCE_ROWS = (
    "live_sequences", "live_log_probs", "finished_sequences", "finished_scores",
    "finished", "row_max", "max_penalty", "prefix_ids", "prefix_lengths", "rows",
)


def reorder_hypotheses(cache_functions, cache, parent_beams, sentences, k):
    """The cache's hypothesis rows of the batch rows ``sentences``, each
    sentence's ``k`` in the order of their parents ``parent_beams``
    (``(len(sentences), k)``): beam search's reordering after a step."""
    flat = ops.reshape(parent_beams + sentences[:, None] * k, (-1,))
    return cache_functions.reorder(cache, flat)


def _keep_sentences(state, cache, parent_beams, kept, k, cache_functions):
    """``state`` on its batch rows ``kept`` only: every per-sentence entry
    gathered, and the cache with the per-sentence leaves of ``kept``
    (``cache_functions.select``) and their sentences' hypothesis rows in
    the order of ``parent_beams`` (``(len(kept), k)``)."""
    state = dict(state)
    for name in SENTENCE_ROWS:
        if name in state:
            state[name] = ops.take(state[name], kept, axis=0)
    state["cache"] = reorder_hypotheses(
        cache_functions, cache_functions.select(cache, kept), parent_beams, kept, k
    )
    return state


def drop_finished_rows(state, cache, parent_beams, done, k, num_return, cache_functions):
    """The next step's state without the sentences that are ``done``.

    Their returned hypotheses are written out (`write_outputs`); the other
    rows, every per-sentence entry and the cache are gathered, the cache's
    hypothesis leaves in the same gather as beam search's reordering, so
    that a step where no sentence ended costs what it costs without this.
    A finished sentence's hypotheses cannot change any more (`done_rows`'s
    bound), so the outputs are those of decoding every row to the end.
    """
    def keep_all():
        sentences = ops.arange(ops.shape(done)[0], dtype="int32")
        return dict(
            state, cache=reorder_hypotheses(cache_functions, cache, parent_beams, sentences, k)
        )

    def drop():
        (ended,) = ops.nonzero(done)
        (kept,) = ops.nonzero(ops.logical_not(done))
        return _keep_sentences(
            write_outputs(state, ended, num_return), cache,
            ops.take(parent_beams, kept, axis=0), kept, k, cache_functions,
        )

    return ops.cond(ops.any(done), drop, keep_all)


def keep_rows(state, kept, dropped, k, num_return, cache_functions):
    """``state`` on its batch rows ``kept`` (`search_loop.halved_rows`):
    the outputs of the ``dropped`` ones written first; the cache's rows
    follow their sentences (it is already in the order of the last step's
    parents)."""
    kept = ops.convert_to_tensor(kept, "int32")
    dropped = ops.convert_to_tensor(dropped, "int32")
    size = ops.shape(kept)[0]
    in_order = ops.zeros((size, k), "int32") + ops.arange(k, dtype="int32")[None, :]
    return _keep_sentences(
        write_outputs(state, dropped, num_return), state["cache"], in_order, kept, k,
        cache_functions,
    )

