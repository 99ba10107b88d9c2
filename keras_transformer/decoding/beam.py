"""Batched beam search over a ``tokens_to_logits`` function, with the GNMT
length penalty, early stopping and optional lexical constraints
(`constraints`); the conventions are `search`'s. The candidates of a step
come from `blocked_top_k`, an exact top-k in two small stages; `beam_rows`
writes the outputs of sentences that leave the batch.
"""

from keras import ops

from keras_transformer.decoding.beam_rows import (
    SENTENCE_ROWS,
    drop_finished_rows,
    empty_outputs,
    keep_rows,
    reorder_hypotheses,
    write_outputs,
)
from keras_transformer.decoding.constraints import (
    constrained_candidates,
    constraint_phrases,
    constraints_met,
    initial_constraint_state,
    next_live_in_order,
)
from keras_transformer.decoding.logits_processors import StepContext, step_scores
from keras_transformer.decoding.options import SearchInputs, SearchRequest
from keras_transformer.decoding.search_loop import (
    NEG_INF,
    CacheFunctions,
    RowHalving,
    drops_finished_rows,
    halved_size,
    halves_finished_rows,
    length_penalty,
    staged_while_loop,
)
from keras_transformer.decoding.search_step import (
    batch_size_of,
    check_alpha,
    check_search_arguments,
    flat_gather,
    prefix_arguments,
    row_max_lengths,
)
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID


def _block_length(length, target=64):
    """The divisor of ``length`` in [32, 128] closest to ``target``, or None."""
    divisors = [d for d in range(32, 129) if length % d == 0]
    return min(divisors, key=lambda d: abs(d - target)) if divisors else None


def blocked_top_k(x, n):
    """``ops.top_k(x, n)`` over the last axis, exact, in two small top-ks.

    The last axis is cut into equal blocks (of 32-128 entries, a divisor of
    its length); the ``n`` best entries lie in the ``n`` blocks with the
    largest maxima (a block whose maximum is not among those ``n`` has ``n``
    larger entries elsewhere), so a top-k over the block maxima, then one
    over those ``n`` blocks' entries, gives the result. A max-reduction
    replaces most of a full top-k, which is a sorting custom call on a JAX
    CPU (measurements: ``benchmarks/decode_kernels.py``,
    `benchmarks/README.md`). Falls back to
    ``ops.top_k`` when no block length divides the axis (no padding, so
    every index is a real one). Returns ``(values, int32 indices)``; among
    equal entries another one than ``ops.top_k``'s may come out.
    """
    length = x.shape[-1]
    block = _block_length(length) if isinstance(length, int) else None
    if block is None or length // block <= n:
        values, indices = ops.top_k(x, n)
        return values, ops.cast(indices, "int32")
    lead = tuple(ops.shape(x)[:-1])
    blocks = length // block
    x = ops.reshape(x, (-1, blocks, block))  # (rows, blocks, block)
    _, best_blocks = ops.top_k(ops.amax(x, axis=-1), n)  # (rows, n)
    best_blocks = ops.cast(best_blocks, "int32")
    # The n blocks of each row as one gather of rows of (rows * blocks,
    # block): a take_along_axis on the block axis is, under TensorFlow, a
    # transpose of all of x.
    rows = ops.shape(x)[0]
    flat_blocks = best_blocks + ops.arange(rows, dtype="int32")[:, None] * blocks
    entries = ops.take(
        ops.reshape(x, (-1, block)), ops.reshape(flat_blocks, (-1,)), axis=0
    )  # (rows * n, block)
    values, slots = ops.top_k(ops.reshape(entries, (-1, n * block)), n)
    slots = ops.cast(slots, "int32")
    indices = ops.take_along_axis(best_blocks, slots // block, axis=-1)
    indices = indices * block + slots % block
    return ops.reshape(values, lead + (n,)), ops.reshape(indices, lead + (n,))


def top_candidates(candidates, n, vocabulary_size):
    """The ``n`` best of ``candidates`` ``(batch, k, vocab)`` per batch element:
    ``(log_probs, beams, tokens)``, each ``(batch, n)``, best first.

    Two exact stages when the vocabulary allows: each beam's ``n`` best
    (`blocked_top_k`), then the ``n`` best of those ``k * n`` (the overall
    best ``n`` are among them). One top-k over ``k * vocab`` per element
    is a sizeable part of a JAX step on CPU; the blocked first stage
    replaces most of it.
    Equal candidates may come out in another order where a backend's top-k
    is not stable.
    """
    batch = ops.shape(candidates)[0]
    if not isinstance(vocabulary_size, int) or vocabulary_size < 4 * n:
        top_log_probs, top_indices = ops.top_k(
            ops.reshape(candidates, (batch, -1)), n
        )
        top_indices = ops.cast(top_indices, "int32")
        return top_log_probs, top_indices // vocabulary_size, top_indices % vocabulary_size
    beam_log_probs, beam_tokens = blocked_top_k(candidates, n)  # (batch, k, n)
    top_log_probs, slots = ops.top_k(ops.reshape(beam_log_probs, (batch, -1)), n)
    slots = ops.cast(slots, "int32")
    tokens = ops.take_along_axis(ops.reshape(beam_tokens, (batch, -1)), slots, axis=1)
    return top_log_probs, slots // n, tokens


def _initial_beam_state(cache, batch, k, max_length):
    """Beam search's loop state before the first step: ``k`` beams of BOS
    per sentence, only the first live, none finished; ``cache`` tiled."""
    sequences = ops.concatenate(
        [
            ops.full((batch, k, 1), BOS_ID, dtype="int32"),
            ops.full((batch, k, max_length), PAD_ID, dtype="int32"),
        ],
        axis=2,
    )
    # Only the first beam is live at the start, so the first step expands a
    # single hypothesis instead of k copies of it.
    first_beam = ops.arange(k, dtype="int32")[None, :] == 0
    live_log_probs = ops.where(
        first_beam, 0.0, ops.full((batch, k), NEG_INF, dtype="float32")
    )
    return {
        "index": ops.convert_to_tensor(0, "int32"),
        "live_sequences": sequences,  # (batch, k, max_length + 1)
        "live_log_probs": live_log_probs,  # (batch, k)
        "finished_sequences": sequences,
        "finished_scores": ops.full((batch, k), NEG_INF, dtype="float32"),
        "finished": ops.zeros((batch, k), dtype="bool"),
        "cache": cache,
    }


def next_live(top_log_probs, top_sequences, top_beams, ends, k):
    """Beam search's live hypotheses after a step: the best ``k`` of the
    ``2k`` top candidates that do not end with EOS. Returns ``({
    "live_sequences", "live_log_probs"}, parent_beams (batch, k))``."""
    live_candidates = ops.where(ends, NEG_INF, top_log_probs)
    live_log_probs, live_slots = ops.top_k(live_candidates, k)
    live_slots = ops.cast(live_slots, "int32")
    live = {
        "live_sequences": flat_gather(top_sequences, live_slots),
        "live_log_probs": live_log_probs,
    }
    return live, flat_gather(top_beams, live_slots)


def _merge_finished(state, top_log_probs, top_sequences, ends, penalty, k):
    """Beam search's finished hypotheses after a step: the EOS candidates
    ranked within the best ``k`` (fairseq's rule, so that beam size 1 is
    greedy search), scored ``log_prob / penalty`` and merged into the ``k``
    best finished so far. Returns the state's ``finished_*`` entries."""
    real = top_log_probs > 0.5 * NEG_INF
    in_beam = ops.arange(2 * k, dtype="int32")[None, :] < k
    new_finished = ops.logical_and(ops.logical_and(ends, real), in_beam)
    new_scores = ops.where(new_finished, top_log_probs / penalty, NEG_INF)
    all_scores = ops.concatenate([state["finished_scores"], new_scores], axis=1)
    all_finished = ops.concatenate([state["finished"], new_finished], axis=1)
    all_sequences = ops.concatenate([state["finished_sequences"], top_sequences], axis=1)
    finished_scores, finished_slots = ops.top_k(all_scores, k)
    finished_slots = ops.cast(finished_slots, "int32")
    return {
        "finished_sequences": flat_gather(all_sequences, finished_slots),
        "finished_scores": finished_scores,
        "finished": flat_gather(all_finished, finished_slots),
    }


def beam_search(
    tokens_to_logits,
    initial_cache,
    max_length,
    request=None,
    inputs=None,
    cache_functions=None,
):
    """Batched beam search with the GNMT length penalty and early stopping.

    The standard formulation (tensor2tensor, flax examples/wmt): ``beam_size``
    live hypotheses and ``beam_size`` finished ones per batch element. Each
    step scores the ``beam_size * vocab`` extensions of the live hypotheses,
    keeps the best ``2 * beam_size``; those ending with EOS and ranked within
    the best ``beam_size`` become finished candidates (score = log-prob /
    length penalty; the rank condition is fairseq's, and makes beam size 1
    with ``alpha=0`` exactly greedy search) and the best ``beam_size`` that
    do not end with EOS stay live. A batch element is done when its
    ``num_return``-th best finished score is at least the best live
    log-prob divided by the penalty at its maximum length (the best any live
    hypothesis can still reach: log-probs only decrease and, for
    ``alpha >= 0``, the penalty grows with length), or when it reached its
    maximum length. The loop ends when every element is done.

    Args:
        tokens_to_logits: ``(token_ids (batch * beam_size, 1), cache, index)
            -> (logits (batch * beam_size, vocab), cache)``.
        initial_cache: nest of tensors with ``batch`` as their first axis;
            tiled to ``batch * beam_size`` rows here.
        max_length: int (see the `search` module docstring). Buffer size;
            most tokens generated.
        request: a `SearchRequest`; beam search reads ``beam_size`` (static;
            the paper's 4 by default), ``num_return`` (hypotheses returned
            per batch element, best first; at most ``beam_size``) and
            ``python_loop`` (a Python loop instead of
            `keras.ops.while_loop`). Defaults to ``SearchRequest()``.
        inputs: a `SearchInputs`: ``alpha`` (length-penalty exponent,
            ``>= 0``; may be a tensor; the paper's 0.6 by default),
            ``min_length``, ``max_lengths``, the forced prefixes (while a
            prefix is forced the single live beam of the first step stays
            single, so the beam never holds copies of the prefix),
            ``constraint_ids`` and ``batch_size``. ``constraint_ids``
            (optional int ``(batch, phrases, phrase_length)``, PAD-padded)
            are target phrases that every finished hypothesis of a batch
            element must contain, each as contiguous tokens (a row of PAD is
            no phrase): lexically constrained decoding with dynamic beam
            allocation (`constraints`); None runs the unconstrained search.
            Defaults to ``SearchInputs()``.
        cache_functions: a `CacheFunctions`: how the cache is tiled to
            ``batch * beam_size`` rows, reordered after each step and grown
            (``grow`` receives the tiled, reordered cache). Defaults to
            ``CacheFunctions()`` (every leaf tiled and gathered; no
            growing).

    Returns:
        ``(sequences, scores)``: int32 ``(batch, num_return, max_length)``
        (EOS included, PAD after it) and float32 ``(batch, num_return)``. An
        empty slot (fewer finished hypotheses than ``num_return``, possible
        only with tiny vocabularies) has score ``-inf``.

    Example:
    >>> def tokens_to_logits(ids, cache, index):  # always predicts EOS
    ...     return ops.one_hot(ops.full((4,), 3), 8) * 10.0, cache
    >>> ids, scores = beam_search(tokens_to_logits, {}, 5,
    ...                           inputs=SearchInputs(batch_size=1))
    >>> ops.convert_to_numpy(ids).tolist()
    [[[3, 0, 0, 0, 0]]]

    References:
        Wu et al., 2016, "Google's Neural Machine Translation System", §7.
        Vaswani et al., 2017, §6.1 (beam size 4, alpha 0.6).
        Post & Vilar, 2018, "Fast Lexically Constrained Decoding with Dynamic
        Beam Allocation for Neural Machine Translation".
    """
    request = SearchRequest() if request is None else request
    inputs = SearchInputs() if inputs is None else inputs
    cache_functions = CacheFunctions() if cache_functions is None else cache_functions
    k, num_return, alpha = request.beam_size, request.num_return, inputs.alpha
    check_search_arguments(max_length, k, num_return)
    check_alpha(alpha)
    batch = batch_size_of(initial_cache, inputs.batch_size)
    row_max = row_max_lengths(inputs.max_lengths, batch, max_length)
    prefix_ids, prefix_lengths = prefix_arguments(
        inputs.prefix_ids, inputs.prefix_lengths, batch
    )
    max_penalty = length_penalty(row_max, alpha)  # (batch,)
    positions = ops.arange(max_length + 1, dtype="int32")
    state = _initial_beam_state(cache_functions.tile(initial_cache, k), batch, k, max_length)
    phrases = None
    if inputs.constraint_ids is not None:
        phrases = constraint_phrases(inputs.constraint_ids)
        state = dict(state, **initial_constraint_state(phrases, batch, k))
    # Per-sentence values: captured by the loop, or, where finished
    # sentences leave the batch, carried (and compacted) in its state.
    rows = {"row_max": row_max, "max_penalty": max_penalty}
    if prefix_ids is not None:
        rows.update(prefix_ids=prefix_ids, prefix_lengths=prefix_lengths)
    compact = phrases is None and drops_finished_rows(
        batch, request.python_loop, cache_functions
    )
    halve = (
        phrases is None
        and not compact
        and halves_finished_rows(batch, request.python_loop, cache_functions)
    )
    # Whether the per-sentence values and the outputs are in the state.
    carried = compact or halve
    if carried:
        state = dict(
            state, **rows, rows=ops.arange(batch, dtype="int32"),
            **empty_outputs(batch, num_return, max_length),
        )

    def per_sentence(state):
        return {name: state[name] for name in rows} if carried else rows

    def done_rows(state):
        current = per_sentence(state)
        # finished_scores are sorted, best first.
        nth_best = state["finished_scores"][:, num_return - 1]
        has_n = state["finished"][:, num_return - 1]
        # Live log-probs are <= 0, so the best score a live hypothesis can
        # reach divides by the largest penalty among its reachable lengths
        # (index + 1 ... row_max). For alpha >= 0 that is row_max's; taking
        # the maximum keeps the bound right for an alpha that could not be
        # checked (a traced tensor).
        reachable_penalty = ops.maximum(
            current["max_penalty"], length_penalty(state["index"] + 1, alpha)
        )
        # `ops.amax`, not `ops.max`: Keras' torch `max` inspects its
        # result's ``.values`` in Python, which breaks torch.compile's graph
        # (the compiled torch step computes this test too).
        best_reachable = (
            ops.amax(state["live_log_probs"], axis=1) / reachable_penalty
        )
        bound_met = ops.logical_and(has_n, nth_best >= best_reachable)
        return ops.logical_or(bound_met, state["index"] >= current["row_max"])

    def cond(state):
        if compact:
            # Finished sentences have left the batch.
            return ops.logical_and(
                state["index"] < max_length, ops.shape(state["rows"])[0] > 0
            )
        done = done_rows(state)
        running = ops.logical_and(
            state["index"] < max_length, ops.logical_not(ops.all(done))
        )
        n = ops.shape(done)[0]
        if halve and halved_size(n, n // 2) < n:
            # Stop (for `halved_rows`) once half the batch holds the
            # searching sentences.
            searching = ops.sum(ops.cast(ops.logical_not(done), "int32"))
            running = ops.logical_and(running, searching > n // 2)
        return running

    def body(state):
        index = state["index"]
        current = per_sentence(state)
        n = ops.shape(state["live_log_probs"])[0] if carried else batch
        live_sequences = state["live_sequences"]
        last = ops.reshape(ops.take(live_sequences, index, axis=2), (-1, 1))
        logits, cache = tokens_to_logits(last, state["cache"], index)
        context = StepContext(
            request, inputs, index, ops.reshape(live_sequences, (n * k, -1)),
            current["row_max"], current.get("prefix_ids"), current.get("prefix_lengths"),
            # EOS only once every constraint is met.
            eos_allowed=None if phrases is None else constraints_met(state, phrases),
        )
        # The options' processors on the log-probabilities, as Hugging
        # Face's beam search: the hypotheses' scores add the processed values.
        log_probs, selectable = step_scores(logits, (n, k), context, on_logits=False)
        vocabulary_size = ops.shape(log_probs)[-1]
        # Candidate = live hypothesis + one token: (batch, k, vocab).
        candidates = state["live_log_probs"][:, :, None] + selectable
        top_log_probs, top_beams, top_tokens = top_candidates(
            candidates, 2 * k, vocabulary_size
        )  # (batch, 2k) each
        constraint_state = {}
        if phrases is not None:
            top_log_probs, top_beams, top_tokens, top_met, top_progress = (
                constrained_candidates(
                    state, candidates, phrases, top_log_probs, top_beams, top_tokens, k
                )
            )
        top_sequences = ops.where(
            ops.equal(positions, index + 1)[None, None, :],
            top_tokens[:, :, None],
            flat_gather(live_sequences, top_beams),
        )  # (batch, 2k, max_length + 1)
        ends = ops.equal(top_tokens, EOS_ID)
        if phrases is None:
            live, parent_beams = next_live(
                top_log_probs, top_sequences, top_beams, ends, k
            )
        else:
            live, parent_beams, constraint_state = next_live_in_order(
                top_log_probs, top_sequences, top_beams, ends, top_met, top_progress, k
            )
        finished = _merge_finished(
            state, top_log_probs, top_sequences, ends,
            length_penalty(index + 1, alpha), k,
        )
        new_state = {"index": index + 1, **live, **finished, **constraint_state}
        if carried:
            new_state.update(
                {name: state[name] for name in state if name not in new_state}
            )
        if compact:
            return drop_finished_rows(
                new_state, cache, parent_beams, done_rows(new_state), k, num_return,
                cache_functions,
            )
        sentences = ops.arange(n, dtype="int32")
        return dict(
            new_state,
            cache=reorder_hypotheses(cache_functions, cache, parent_beams, sentences, k),
        )

    def keep(state, kept, dropped):
        return keep_rows(state, kept, dropped, k, num_return, cache_functions)

    state = staged_while_loop(
        cond, body, state, request.python_loop, cache_functions,
        halving=RowHalving(done_rows, keep) if halve else None,
    )
    if carried:
        # Sentences still in the batch when the buffer ran out.
        state = write_outputs(state, ops.arange(ops.shape(state["rows"])[0]), num_return)
        return state["output_sequences"][:, :, 1:], state["output_scores"]
    finished = state["finished"][:, :num_return]
    scores = ops.where(
        finished, state["finished_scores"][:, :num_return], float("-inf")
    )
    sequences = state["finished_sequences"][:, :num_return, 1:]
    return sequences, scores
