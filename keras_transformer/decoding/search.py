"""Batched greedy and beam search over a ``tokens_to_logits`` function.

The searches know nothing about the model. As in flax ``examples/wmt``, the
model is a function

    tokens_to_logits(token_ids, cache, index) -> (logits, cache)

that takes the last token of every hypothesis ``token_ids`` (int32
``(rows, 1)``), a cache (any nest of tensors whose leaves are row-major, i.e.
have ``rows`` as their first axis) and the position ``index`` (an int32 scalar;
the start token sits at position 0), and returns the float logits of the next
token ``(rows, vocabulary_size)`` and the updated cache. Beam search tiles the
initial cache ``beam_size`` times (rows = ``batch * beam_size``, beams of one
batch element adjacent) and reorders it after each step with ``reorder_cache``
(by default a gather of every leaf on axis 0).

Conventions shared by both searches:

* Hypotheses start with ``bos_id`` (not returned) and end with ``eos_id``
  (returned). ``|Y|`` counts the generated tokens, the final EOS included.
* ``max_length`` sizes the buffers: at most that many tokens are generated.
  A Python int (static); in TensorFlow graphs it may also be a scalar int
  tensor (e.g. from a ``None`` dimension), which lets one traced graph serve
  every buffer length. ``max_lengths`` (optional, int ``(batch,)``, at most
  ``max_length``) caps each batch element: its last allowed token is forced to
  be EOS (as fairseq does), so every returned hypothesis ends with EOS.
* ``min_length`` (an int scalar): EOS is forbidden before that many tokens.
  PAD and BOS are never generated.
* ``prefix_ids`` (optional int ``(batch, P)``, ``P >= 1``) with
  ``prefix_lengths`` (int ``(batch,)``, each at most ``P`` and below the
  row's maximum length) force the first ``prefix_lengths[b]`` tokens of
  every hypothesis of batch element ``b``: at those steps only the prefix
  token is selectable (its log-probability counts as any token's), then the
  search continues as usual. Rows may have prefixes of different lengths
  (0: no prefix).
* ``constraint_ids`` (beam search only; optional int ``(batch, phrases,
  phrase_length)``, PAD-padded) are target phrases that every finished
  hypothesis contains, each as contiguous tokens (Post & Vilar, 2018; see
  `constrained_candidates`). Without them the search is the unconstrained
  one.
* Scores are ``log P(Y | x) / lp(Y)`` with the GNMT length penalty
  ``lp(Y) = ((5 + |Y|) / 6) ** alpha`` (Wu et al., 2016). ``log P`` is the sum
  of the model's log-softmax (float32) over the generated tokens, EOS
  included; forbidding tokens affects which tokens are chosen, never their
  log-probabilities.
* The loop is `keras.ops.while_loop` with every shape fixed across
  iterations, so it compiles under ``jax.jit`` and ``tf.function`` (a plain
  Python loop on torch, where `keras.ops.while_loop` is one).
  ``python_loop=True`` runs a Python loop on any backend, with a concrete
  ``index`` passed to ``tokens_to_logits``.
"""

import contextlib
import contextvars

from keras import ops, tree

from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID
from keras_transformer.utils.validation import check_int

# Log-probability of forbidden tokens and empty hypothesis slots. Finite, so
# that sums and differences never produce NaN.
NEG_INF = -1.0e9


def length_penalty(length, alpha):
    """The GNMT length penalty ``((5 + length) / 6) ** alpha``.

    Args:
        length: int or int tensor. Number of generated tokens, EOS included.
        alpha: float or float scalar tensor. ``0`` disables the penalty.

    Returns:
        float32 tensor of the shape of ``length``.
    """
    length = ops.cast(length, "float32")
    alpha = ops.cast(alpha, "float32")
    return ops.power((5.0 + length) / 6.0, alpha)


# A function that compiles a loop body and one that records a model step,
# set by `compiled_loop_bodies` (the torch backend with ``jit_compile``, see
# `backends.compile_for_backend` and `torch_steps`).
_loop_body_compiler = contextvars.ContextVar("loop_body_compiler", default=None)
_step_tracer = contextvars.ContextVar("step_tracer", default=None)


@contextlib.contextmanager
def compiled_loop_bodies(compile_body, trace_step=None):
    """Within the context, the searches' loops run ``compile_body(body)``.

    For backends whose `keras.ops.while_loop` is a Python loop (torch): the
    loop stays in Python (its exit depends on the data) and each iteration
    calls the compiled body. The first iteration runs uncompiled: a Keras
    layer's first call sets attributes that a compiler's guards would see
    change, and the live and finished sequences start as one tensor; each
    would cost a recompilation. ``trace_step`` (optional) is what
    `traced_step` applies to a model's ``tokens_to_logits``.
    """
    token = _loop_body_compiler.set(compile_body)
    tracer_token = _step_tracer.set(trace_step)
    try:
        yield
    finally:
        _step_tracer.reset(tracer_token)
        _loop_body_compiler.reset(token)


def traced_step(tokens_to_logits):
    """``tokens_to_logits`` as the current `compiled_loop_bodies` context
    records it (unchanged outside one, or without a ``trace_step``)."""
    trace_step = _step_tracer.get()
    return tokens_to_logits if trace_step is None else trace_step(tokens_to_logits)


def _while_loop(cond, body, state, python_loop):
    if python_loop:
        while bool(ops.convert_to_numpy(cond(state))):
            state = body(state)
        return state
    compile_body = _loop_body_compiler.get()
    if compile_body is not None:
        if not bool(ops.convert_to_numpy(cond(state))):
            return state
        state = body(state)
        body = compile_body(body)
    return ops.while_loop(cond, lambda s: (body(s),), (state,))[0]


def cache_lengths(max_length, first=16):
    """Buffer lengths a growing cache passes through, the last ``max_length``.

    A cached step reads (and beam search reorders) the whole key/value
    buffer, used or not, so a buffer sized for the longest allowed output
    (the source length + 50 by default) costs several times what the
    outputs need: most translations end within a few tokens of the source's
    length. The searches therefore start with a ``first``-position buffer
    and double it while the longest hypothesis still needs room (and while
    the next doubling is at most half of ``max_length``; after that it jumps
    to ``max_length``). Each length is a separate compiled loop (more
    compilation, once per shape) in exchange for cheaper steps while the
    outputs are short (measurements: `benchmarks/README.md`,
    `benchmarks/decode_speed.py`).

    ``max_length`` may be a scalar tensor (a TensorFlow graph serving every
    buffer length); the stages are then ``min(first, L)``, ``min(2 * first,
    L)`` and ``L``, a stage that adds no room running no step.
    """
    if ops.is_tensor(max_length):
        return [ops.minimum(first, max_length), ops.minimum(2 * first, max_length),
                max_length]
    lengths = []
    length = first
    while length <= max_length // 2:
        lengths.append(length)
        length *= 2
    return lengths + [max_length]


def _staged_while_loop(cond, body, state, python_loop, grow_cache, lengths):
    """`_while_loop` through growing cache lengths (see `cache_lengths`).

    ``state["cache"]`` starts sized for ``lengths[0]``; each stage runs while
    ``state["index"]`` (the position the next step writes) fits, then
    ``grow_cache(cache, next_length)`` pads the cache for the next stage.
    Without ``grow_cache`` one loop runs on the initial cache.
    """
    if grow_cache is None:
        return _while_loop(cond, body, state, python_loop)
    if not lengths:
        raise ValueError(
            "grow_cache needs cache_stages, the cache lengths from the initial "
            "cache's to max_length (see `cache_lengths`)."
        )
    for stage, length in enumerate(lengths):
        if stage:
            state = dict(state, cache=grow_cache(state["cache"], length))

        def stage_cond(state, length=length):
            return ops.logical_and(cond(state), state["index"] < length)

        state = _while_loop(stage_cond, body, state, python_loop)
    return state


def _check_search_arguments(max_length, beam_size=1, num_return=1):
    check_int("beam_size", beam_size)
    check_int("num_return", num_return)
    if not ops.is_tensor(max_length):  # a dynamic length in TF graphs
        check_int("max_length", max_length)
    if num_return > beam_size:
        raise ValueError(
            "num_return cannot exceed beam_size. Received: "
            f"num_return={num_return}, beam_size={beam_size}"
        )


def _check_alpha(alpha):
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


def _batch_size(cache, batch_size):
    if batch_size is not None:
        return batch_size
    leaves = tree.flatten(cache)
    if not leaves:
        raise ValueError("Pass `batch_size` when the cache has no tensors.")
    return ops.shape(leaves[0])[0]


def _row_max_lengths(max_lengths, batch_size, max_length):
    if max_lengths is None:
        return ops.full((batch_size,), max_length, dtype="int32")
    max_lengths = ops.cast(ops.convert_to_tensor(max_lengths), "int32")
    return ops.clip(max_lengths, 1, max_length)


def _select_mask(
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


def _force_prefix(selectable, log_probs, index, prefix_ids, prefix_lengths):
    """At steps inside a row's prefix, only the prefix token is selectable.

    ``selectable`` and ``log_probs`` are ``(batch, ..., vocab)``; the forced
    token keeps its log-probability even where `_select_mask` forbade it.
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


def _prefix_arguments(prefix_ids, prefix_lengths, batch):
    if prefix_ids is None:
        if prefix_lengths is not None:
            raise ValueError("prefix_lengths needs prefix_ids.")
        return None, None
    prefix_ids = ops.cast(ops.convert_to_tensor(prefix_ids), "int32")
    if prefix_lengths is None:
        prefix_lengths = ops.full((batch,), ops.shape(prefix_ids)[1], dtype="int32")
    return prefix_ids, ops.cast(ops.convert_to_tensor(prefix_lengths), "int32")


def _log_softmax(logits, rows):
    # Keep the vocabulary dimension static where it is (a TF graph would
    # lose it with -1; sampling needs it).
    vocabulary_size = logits.shape[-1] or -1
    logits = ops.reshape(ops.cast(logits, "float32"), (rows, vocabulary_size))
    return ops.log_softmax(logits, axis=-1)


def greedy_search(
    tokens_to_logits,
    initial_cache,
    max_length,
    max_lengths=None,
    min_length=0,
    alpha=0.0,
    batch_size=None,
    bos_id=BOS_ID,
    eos_id=EOS_ID,
    pad_id=PAD_ID,
    python_loop=False,
    prefix_ids=None,
    prefix_lengths=None,
    choose_token=None,
    grow_cache=None,
    cache_stages=None,
):
    """Batched greedy search: the most probable token at every step.

    Stops when every batch element has produced EOS (or reached its maximum
    length). See the module docstring for the conventions. With
    ``choose_token`` the token of each step is whatever that function picks
    from the selectable log-probabilities (sampling reuses the search so).

    Args:
        tokens_to_logits: ``(token_ids (batch, 1), cache, index) -> (logits
            (batch, vocab), cache)``.
        initial_cache: nest of tensors with ``batch`` as their first axis.
        max_length: int (see the module docstring). Buffer size; most
            tokens generated.
        max_lengths: optional int ``(batch,)``; per-element maximum.
        min_length: int scalar. EOS is forbidden before this length.
        alpha: float scalar. Length-penalty exponent used for the scores only
            (it does not change greedy choices). Defaults to 0.
        batch_size: int. Defaults to the first axis of the first cache leaf.
        bos_id, eos_id, pad_id: special token ids.
        python_loop: bool. Use a Python loop instead of
            `keras.ops.while_loop`.
        prefix_ids, prefix_lengths: optional forced prefixes (see the module
            docstring).
        choose_token: optional ``(selectable (batch, vocab), index) -> int32
            (batch,)``. ``selectable`` is the float32 log-softmax with the
            forbidden tokens at ``NEG_INF``. Defaults to the argmax.
        grow_cache, cache_stages: optional growing cache (see
            `cache_lengths`): ``initial_cache`` is sized for
            ``cache_stages[0]`` positions and ``grow_cache(cache, length)``
            pads it to each following stage's length (the last is
            ``max_length``) when the search needs the room.

    Returns:
        ``(sequences, scores)``: int32 ``(batch, max_length)`` (EOS included,
        PAD after it) and float32 ``(batch,)`` equal to the summed
        log-probability divided by ``length_penalty(|Y|, alpha)``.

    Example:
    >>> def tokens_to_logits(ids, cache, index):  # always predicts EOS
    ...     return ops.one_hot(ops.full((1,), 3), 8) * 10.0, cache
    >>> ids, scores = greedy_search(tokens_to_logits, {}, 5, batch_size=1)
    >>> ops.convert_to_numpy(ids).tolist()
    [[3, 0, 0, 0, 0]]
    """
    _check_search_arguments(max_length)
    batch = _batch_size(initial_cache, batch_size)
    row_max = _row_max_lengths(max_lengths, batch, max_length)
    prefix_ids, prefix_lengths = _prefix_arguments(prefix_ids, prefix_lengths, batch)
    positions = ops.arange(max_length + 1, dtype="int32")
    state = {
        "index": ops.convert_to_tensor(0, "int32"),
        "sequences": ops.concatenate(
            [
                ops.full((batch, 1), bos_id, dtype="int32"),
                ops.full((batch, max_length), pad_id, dtype="int32"),
            ],
            axis=1,
        ),
        "log_probs": ops.zeros((batch,), dtype="float32"),
        "lengths": ops.zeros((batch,), dtype="int32"),
        "done": ops.zeros((batch,), dtype="bool"),
        "cache": initial_cache,
    }

    def cond(state):
        return ops.logical_and(
            state["index"] < max_length, ops.logical_not(ops.all(state["done"]))
        )

    def body(state):
        index = state["index"]
        last = ops.take(state["sequences"], index, axis=1)[:, None]
        logits, cache = tokens_to_logits(last, state["cache"], index)
        log_probs = _log_softmax(logits, batch)  # (batch, vocab)
        selectable = _select_mask(
            log_probs, index + 1, min_length, row_max, eos_id, (pad_id, bos_id)
        )
        selectable = _force_prefix(
            selectable, log_probs, index, prefix_ids, prefix_lengths
        )
        if choose_token is None:
            token = ops.cast(ops.argmax(selectable, axis=-1), "int32")
        else:
            token = ops.cast(choose_token(selectable, index), "int32")
        done = state["done"]
        token = ops.where(done, pad_id, token)
        token_log_prob = ops.take_along_axis(
            log_probs, ops.maximum(token, 0)[:, None], axis=-1
        )[:, 0]
        sequences = ops.where(
            ops.equal(positions, index + 1)[None, :],
            token[:, None],
            state["sequences"],
        )
        return {
            "index": index + 1,
            "sequences": sequences,
            "log_probs": state["log_probs"]
            + ops.where(done, 0.0, token_log_prob),
            "lengths": state["lengths"] + ops.cast(ops.logical_not(done), "int32"),
            "done": ops.logical_or(done, ops.equal(token, eos_id)),
            "cache": cache,
        }

    state = _staged_while_loop(
        cond, body, state, python_loop, grow_cache, cache_stages
    )
    scores = state["log_probs"] / length_penalty(state["lengths"], alpha)
    return state["sequences"][:, 1:], scores


def _flat_gather(x, indices):
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


def tile_cache(cache, beam_size):
    """Default beam tiling: every leaf repeated ``beam_size`` times on axis 0."""
    return tree.map_structure(lambda x: ops.repeat(x, beam_size, axis=0), cache)


def gather_cache(cache, flat_indices):
    """Default cache reordering: every leaf gathered on axis 0."""
    return tree.map_structure(lambda x: ops.take(x, flat_indices, axis=0), cache)


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
    x = ops.reshape(x, lead + (length // block, block))
    _, best_blocks = ops.top_k(ops.amax(x, axis=-1), n)  # (..., n)
    best_blocks = ops.cast(best_blocks, "int32")
    entries = ops.take_along_axis(x, best_blocks[..., None], axis=-2)  # (..., n, block)
    values, slots = ops.top_k(ops.reshape(entries, lead + (n * block,)), n)
    slots = ops.cast(slots, "int32")
    indices = ops.take_along_axis(best_blocks, slots // block, axis=-1)
    return values, indices * block + slots % block


def _top_candidates(candidates, n, vocabulary_size):
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


def _initial_beam_state(cache, batch, k, max_length, bos_id, pad_id):
    """Beam search's loop state before the first step: ``k`` beams of BOS
    per sentence, only the first live, none finished; ``cache`` tiled."""
    sequences = ops.concatenate(
        [
            ops.full((batch, k, 1), bos_id, dtype="int32"),
            ops.full((batch, k, max_length), pad_id, dtype="int32"),
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


def _next_live(top_log_probs, top_sequences, top_beams, ends, k):
    """Beam search's live hypotheses after a step: the best ``k`` of the
    ``2k`` top candidates that do not end with EOS. Returns ``({
    "live_sequences", "live_log_probs"}, parent_beams (batch, k))``."""
    live_candidates = ops.where(ends, NEG_INF, top_log_probs)
    live_log_probs, live_slots = ops.top_k(live_candidates, k)
    live_slots = ops.cast(live_slots, "int32")
    live = {
        "live_sequences": _flat_gather(top_sequences, live_slots),
        "live_log_probs": live_log_probs,
    }
    return live, _flat_gather(top_beams, live_slots)


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
        "finished_sequences": _flat_gather(all_sequences, finished_slots),
        "finished_scores": finished_scores,
        "finished": _flat_gather(all_finished, finished_slots),
    }


def _constraint_phrases(constraint_ids, pad_id):
    """Constraint phrases ``(batch, phrases, phrase_length)`` as flat
    ``(batch, T)`` token slots (``T = phrases * phrase_length``): each
    slot's token, whether it holds one (``valid``), starts or ends its
    phrase, the phrase it belongs to (``(T,)``), and the number of valid
    slots per batch element (``total``)."""
    ids = ops.cast(ops.convert_to_tensor(constraint_ids), "int32")
    shape = ops.shape(ids)
    batch, count, width = shape[0], shape[1], shape[2]
    valid = ops.not_equal(ids, pad_id)
    next_valid = ops.concatenate(
        [valid[:, :, 1:], ops.zeros((batch, count, 1), dtype="bool")], axis=2
    )
    first = ops.equal(ops.arange(width, dtype="int32"), 0)[None, None, :]
    phrase = ops.broadcast_to(ops.arange(count, dtype="int32")[:, None], (count, width))
    return {
        "tokens": ops.reshape(ids, (batch, -1)),
        "valid": ops.reshape(valid, (batch, -1)),
        "start": ops.reshape(ops.logical_and(valid, first), (batch, -1)),
        "last": ops.reshape(
            ops.cast(ops.logical_and(valid, ops.logical_not(next_valid)), "int32"),
            (batch, -1),
        ),
        "phrase": ops.reshape(phrase, (-1,)),
        "total": ops.sum(ops.cast(valid, "int32"), axis=(1, 2)),
    }


def _initial_constraint_state(phrases, batch, k):
    """No constraint token met, no phrase in progress (-1)."""
    slots = ops.shape(phrases["tokens"])[1]
    return {
        "live_met": ops.zeros((batch, k, slots), dtype="bool"),
        "live_progress": ops.full((batch, k), -1, dtype="int32"),
    }


def _advance_constraints(phrases, met, progress, tokens):
    """Constraint state after appending ``tokens`` ``(batch, n)`` to
    hypotheses with state ``met`` ``(batch, n, T)`` and ``progress``
    ``(batch, n)`` (the slot of the next token of the phrase in progress,
    or -1).

    A token that continues the phrase in progress meets its slot; any
    other token abandons that phrase (its slots are unmet again, so a
    phrase counts only when produced contiguously) and may then start the
    first unmet phrase that begins with it.
    """
    slots = ops.arange(ops.shape(met)[2], dtype="int32")[None, None, :]
    in_progress = progress >= 0
    current = ops.maximum(progress, 0)
    expected = ops.take_along_axis(phrases["tokens"], current, axis=1)
    continues = ops.logical_and(in_progress, ops.equal(tokens, expected))
    abandons = ops.logical_and(in_progress, ops.logical_not(continues))
    current_phrase = ops.take(phrases["phrase"], current, axis=0)  # (batch, n)
    in_current = ops.equal(phrases["phrase"][None, None, :], current_phrase[:, :, None])
    met = ops.logical_and(
        met, ops.logical_not(ops.logical_and(abandons[:, :, None], in_current))
    )
    met = ops.logical_or(
        met, ops.logical_and(continues[:, :, None], ops.equal(slots, progress[:, :, None]))
    )
    can_start = ops.logical_and(
        ops.logical_and(
            ops.logical_not(continues)[:, :, None], phrases["start"][:, None, :]
        ),
        ops.logical_and(
            ops.logical_not(met),
            ops.equal(phrases["tokens"][:, None, :], tokens[:, :, None]),
        ),
    )
    start = ops.cast(ops.argmax(ops.cast(can_start, "int32"), axis=2), "int32")
    starts = ops.any(can_start, axis=2)
    met = ops.logical_or(
        met, ops.logical_and(starts[:, :, None], ops.equal(slots, start[:, :, None]))
    )
    current_last = ops.take_along_axis(phrases["last"], current, axis=1) > 0
    start_last = ops.take_along_axis(phrases["last"], start, axis=1) > 0
    progress = ops.where(
        continues,
        ops.where(current_last, -1, progress + 1),
        ops.where(starts, ops.where(start_last, -1, start + 1), -1),
    )
    return met, ops.cast(progress, "int32")


def constrained_candidates(state, candidates, phrases, top_log_probs, top_beams,
                           top_tokens, k):
    """Post & Vilar's (2018) candidates and dynamic beam allocation.

    Candidates: the ``2k`` best extensions (``top_*``), each live
    hypothesis' best token, and for each live hypothesis the next token of
    its phrase in progress or, with none in progress, the first token of
    each of its unmet phrases; duplicates count once. Each candidate's
    constraint state follows (`_advance_constraints`). The beam is then
    divided into banks by the number of constraint tokens met and filled
    bank by bank, in turn: each bank's best, from the bank with the most
    tokens met down, then each bank's second best, and so on, so that the
    slots of an empty bank go to the others (fairseq's order).

    Args:
        state: beam search's loop state (``live_met``, ``live_progress``).
        candidates: float32 ``(batch, k, vocab)``: live log-probs plus the
            selectable log-probs of each token.
        phrases: from `_constraint_phrases`.
        top_log_probs, top_beams, top_tokens: ``(batch, 2k)``, the best
            extensions.
        k: the beam size.

    Returns:
        ``(log_probs, beams, tokens, met, progress)``: the first ``2k``
        candidates in allocation order (``(batch, 2k)``; ``met`` is
        ``(batch, 2k, T)``).
    """
    batch = ops.shape(candidates)[0]
    tokens_by_slot = phrases["tokens"]
    slots = ops.shape(tokens_by_slot)[1]
    met, progress = state["live_met"], state["live_progress"]
    beam_ids = ops.broadcast_to(ops.arange(k, dtype="int32")[None, :], (batch, k))
    best_log_probs = ops.amax(candidates, axis=2)
    best_tokens = ops.cast(ops.argmax(candidates, axis=2), "int32")
    allowed = ops.logical_or(
        ops.logical_and(
            ops.logical_and((progress < 0)[:, :, None], phrases["start"][:, None, :]),
            ops.logical_not(met),
        ),
        ops.equal(ops.arange(slots, dtype="int32")[None, None, :], progress[:, :, None]),
    )
    slot_tokens = ops.broadcast_to(tokens_by_slot[:, None, :], (batch, k, slots))
    slot_log_probs = ops.where(
        allowed, ops.take_along_axis(candidates, slot_tokens, axis=2), NEG_INF
    )
    slot_beams = ops.broadcast_to(beam_ids[:, :, None], (batch, k, slots))
    log_probs = ops.concatenate(
        [top_log_probs, best_log_probs, ops.reshape(slot_log_probs, (batch, -1))], axis=1
    )
    beams = ops.concatenate(
        [ops.cast(top_beams, "int32"), beam_ids, ops.reshape(slot_beams, (batch, -1))],
        axis=1,
    )
    tokens = ops.concatenate(
        [ops.cast(top_tokens, "int32"), best_tokens, ops.reshape(slot_tokens, (batch, -1))],
        axis=1,
    )
    n = ops.shape(log_probs)[1]
    order = ops.arange(n, dtype="int32")
    before = order[None, :] < order[:, None]  # (i, j): j comes before i
    valid = log_probs > 0.5 * NEG_INF
    same = ops.logical_and(
        ops.equal(beams[:, :, None], beams[:, None, :]),
        ops.equal(tokens[:, :, None], tokens[:, None, :]),
    )
    duplicate = ops.any(
        ops.logical_and(ops.logical_and(same, before[None]), valid[:, None, :]), axis=2
    )
    log_probs = ops.where(duplicate, NEG_INF, log_probs)
    valid = log_probs > 0.5 * NEG_INF
    new_met, new_progress = _advance_constraints(
        phrases,
        _flat_gather(met, beams),
        ops.take_along_axis(progress, beams, axis=1),
        tokens,
    )
    count = ops.sum(ops.cast(new_met, "int32"), axis=2)  # (batch, n)
    # Rank of each candidate within its bank (same count), best first.
    better = ops.logical_or(
        log_probs[:, None, :] > log_probs[:, :, None],
        ops.logical_and(
            ops.equal(log_probs[:, None, :], log_probs[:, :, None]), before[None]
        ),
    )
    rank = ops.sum(
        ops.cast(
            ops.logical_and(
                ops.logical_and(better, valid[:, None, :]),
                ops.equal(count[:, None, :], count[:, :, None]),
            ),
            "int32",
        ),
        axis=2,
    )
    # The banks in turn: by rank in the bank, then from the most tokens met.
    key = ops.cast(rank * (slots + 1) + (slots - count), "float32")
    key = ops.where(valid, key, 1.0e8 + ops.cast(order, "float32")[None, :])
    _, chosen = ops.top_k(-key, 2 * k)
    chosen = ops.cast(chosen, "int32")
    return (
        ops.take_along_axis(log_probs, chosen, axis=1),
        ops.take_along_axis(beams, chosen, axis=1),
        ops.take_along_axis(tokens, chosen, axis=1),
        _flat_gather(new_met, chosen),
        ops.take_along_axis(new_progress, chosen, axis=1),
    )


def _next_live_in_order(top_log_probs, top_sequences, top_beams, ends, top_met,
                        top_progress, k):
    """`_next_live` for constrained search: the first ``k`` candidates in
    allocation order (`constrained_candidates`) that do not end with EOS,
    with their constraint state."""
    positions = ops.cast(ops.arange(2 * k, dtype="int32"), "float32")[None, :]
    priority = ops.where(ends, -4.0 * k - positions, -positions)
    _, live_slots = ops.top_k(priority, k)
    live_slots = ops.cast(live_slots, "int32")
    live = {
        "live_sequences": _flat_gather(top_sequences, live_slots),
        "live_log_probs": ops.take_along_axis(
            ops.where(ends, NEG_INF, top_log_probs), live_slots, axis=1
        ),
    }
    constraint_state = {
        "live_met": _flat_gather(top_met, live_slots),
        "live_progress": ops.take_along_axis(top_progress, live_slots, axis=1),
    }
    return live, ops.take_along_axis(top_beams, live_slots, axis=1), constraint_state


def beam_search(
    tokens_to_logits,
    initial_cache,
    max_length,
    beam_size=4,
    alpha=0.6,
    num_return=1,
    max_lengths=None,
    min_length=0,
    batch_size=None,
    reorder_cache=gather_cache,
    tile_cache=tile_cache,
    bos_id=BOS_ID,
    eos_id=EOS_ID,
    pad_id=PAD_ID,
    python_loop=False,
    prefix_ids=None,
    prefix_lengths=None,
    grow_cache=None,
    cache_stages=None,
    constraint_ids=None,
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
        max_length: int (see the module docstring). Buffer size; most
            tokens generated.
        beam_size: int. Static. Defaults to 4 (the paper's).
        alpha: float scalar (may be a tensor). Length-penalty exponent,
            ``alpha >= 0``. Defaults to 0.6 (the paper's).
        num_return: int. Hypotheses returned per batch element, best first;
            at most ``beam_size``. Defaults to 1.
        max_lengths: optional int ``(batch,)``; per-element maximum length.
        min_length: int scalar. EOS is forbidden before this length.
        batch_size: int. Defaults to the first axis of the first cache leaf.
        reorder_cache: ``(cache, flat_indices (batch * beam_size,)) ->
            cache``. Pass a function that skips leaves that are the same for
            every beam of an element (e.g. encoder keys/values) to save work.
        tile_cache: ``(initial_cache, beam_size) -> cache`` with ``batch *
            beam_size`` rows per hypothesis leaf. The default repeats every
            leaf; a model whose per-sentence leaves serve all beams of a
            sentence (`tokens_to_logits` then sees them with ``batch``
            rows) may leave those untiled and unreordered.
        bos_id, eos_id, pad_id: special token ids.
        python_loop: bool. Use a Python loop instead of
            `keras.ops.while_loop`.
        prefix_ids, prefix_lengths: optional forced prefixes (see the module
            docstring). While a prefix is forced the single live beam of the
            first step stays single (the other beams stay at ``NEG_INF``), so
            the beam never holds copies of the prefix.
        grow_cache, cache_stages: optional growing cache, as in
            `greedy_search` (``initial_cache`` sized for ``cache_stages[0]``;
            ``grow_cache`` receives the tiled, reordered cache).
        constraint_ids: optional int ``(batch, phrases, phrase_length)``,
            PAD-padded: target phrases that every finished hypothesis of a
            batch element must contain, each as contiguous tokens (a row of
            PAD is no phrase). Lexically constrained decoding with dynamic
            beam allocation (Post & Vilar, 2018; see
            `constrained_candidates`). None (the default) runs the
            unconstrained search.

    Returns:
        ``(sequences, scores)``: int32 ``(batch, num_return, max_length)``
        (EOS included, PAD after it) and float32 ``(batch, num_return)``. An
        empty slot (fewer finished hypotheses than ``num_return``, possible
        only with tiny vocabularies) has score ``-inf``.

    Example:
    >>> def tokens_to_logits(ids, cache, index):  # always predicts EOS
    ...     return ops.one_hot(ops.full((4,), 3), 8) * 10.0, cache
    >>> ids, scores = beam_search(tokens_to_logits, {}, 5, batch_size=1)
    >>> ops.convert_to_numpy(ids).tolist()
    [[[3, 0, 0, 0, 0]]]

    References:
        Wu et al., 2016, "Google's Neural Machine Translation System", §7.
        Vaswani et al., 2017, §6.1 (beam size 4, alpha 0.6).
        Post & Vilar, 2018, "Fast Lexically Constrained Decoding with Dynamic
        Beam Allocation for Neural Machine Translation".
    """
    _check_search_arguments(max_length, beam_size, num_return)
    _check_alpha(alpha)
    k = beam_size
    batch = _batch_size(initial_cache, batch_size)
    row_max = _row_max_lengths(max_lengths, batch, max_length)
    prefix_ids, prefix_lengths = _prefix_arguments(prefix_ids, prefix_lengths, batch)
    max_penalty = length_penalty(row_max, alpha)  # (batch,)
    positions = ops.arange(max_length + 1, dtype="int32")
    state = _initial_beam_state(
        tile_cache(initial_cache, k), batch, k, max_length, bos_id, pad_id
    )
    phrases = None
    if constraint_ids is not None:
        phrases = _constraint_phrases(constraint_ids, pad_id)
        state = dict(state, **_initial_constraint_state(phrases, batch, k))

    def done_rows(state):
        # finished_scores are sorted, best first.
        nth_best = state["finished_scores"][:, num_return - 1]
        has_n = state["finished"][:, num_return - 1]
        # Live log-probs are <= 0, so the best score a live hypothesis can
        # reach divides by the largest penalty among its reachable lengths
        # (index + 1 ... row_max). For alpha >= 0 that is row_max's; taking
        # the maximum keeps the bound right for an alpha that could not be
        # checked (a traced tensor).
        reachable_penalty = ops.maximum(
            max_penalty, length_penalty(state["index"] + 1, alpha)
        )
        best_reachable = (
            ops.max(state["live_log_probs"], axis=1) / reachable_penalty
        )
        bound_met = ops.logical_and(has_n, nth_best >= best_reachable)
        return ops.logical_or(bound_met, state["index"] >= row_max)

    def cond(state):
        return ops.logical_and(
            state["index"] < max_length, ops.logical_not(ops.all(done_rows(state)))
        )

    def body(state):
        index = state["index"]
        live_sequences = state["live_sequences"]
        last = ops.reshape(ops.take(live_sequences, index, axis=2), (-1, 1))
        logits, cache = tokens_to_logits(last, state["cache"], index)
        log_probs = ops.reshape(_log_softmax(logits, batch * k), (batch, k, -1))
        vocabulary_size = ops.shape(log_probs)[-1]
        selectable = _select_mask(
            log_probs, index + 1, min_length, row_max, eos_id, (pad_id, bos_id)
        )
        if phrases is not None:
            # EOS only once every constraint is met.
            all_met = ops.equal(
                ops.sum(ops.cast(state["live_met"], "int32"), axis=2),
                phrases["total"][:, None],
            )
            is_eos = ops.equal(ops.arange(vocabulary_size, dtype="int32"), eos_id)
            selectable = ops.where(
                ops.logical_and(ops.logical_not(all_met)[:, :, None], is_eos),
                NEG_INF, selectable,
            )
        selectable = _force_prefix(
            selectable, log_probs, index, prefix_ids, prefix_lengths
        )
        # Candidate = live hypothesis + one token: (batch, k, vocab).
        candidates = state["live_log_probs"][:, :, None] + selectable
        top_log_probs, top_beams, top_tokens = _top_candidates(
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
            _flat_gather(live_sequences, top_beams),
        )  # (batch, 2k, max_length + 1)
        ends = ops.equal(top_tokens, eos_id)
        if phrases is None:
            live, parent_beams = _next_live(
                top_log_probs, top_sequences, top_beams, ends, k
            )
        else:
            live, parent_beams, constraint_state = _next_live_in_order(
                top_log_probs, top_sequences, top_beams, ends, top_met, top_progress, k
            )
        flat_parents = ops.reshape(
            parent_beams + ops.arange(batch, dtype="int32")[:, None] * k, (-1,)
        )
        finished = _merge_finished(
            state, top_log_probs, top_sequences, ends,
            length_penalty(index + 1, alpha), k,
        )
        return {
            "index": index + 1,
            **live,
            **finished,
            **constraint_state,
            "cache": reorder_cache(cache, flat_parents),
        }

    state = _staged_while_loop(
        cond, body, state, python_loop, grow_cache, cache_stages
    )
    finished = state["finished"][:, :num_return]
    scores = ops.where(
        finished, state["finished_scores"][:, :num_return], float("-inf")
    )
    sequences = state["finished_sequences"][:, :num_return, 1:]
    return sequences, scores
