"""The loop of the searches and the cache it carries.

`keras.ops.while_loop` with every shape fixed across iterations, so that a
search compiles under ``jax.jit`` and ``tf.function`` (a plain Python loop
on torch, where `keras.ops.while_loop` is one); `compiled_loop_bodies`
compiles the body of that Python loop; `cache_lengths` and the staged loop
grow a key/value cache while the hypotheses need room. `CacheFunctions`
names how a model's cache is tiled, reordered and grown; `length_penalty`
and `NEG_INF` are the scoring constants every search shares.
"""

import collections
import contextlib
import contextvars

import keras
import numpy as np
from keras import ops, tree

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


def tile_cache(cache, beam_size):
    """Default beam tiling: every leaf repeated ``beam_size`` times on axis 0."""
    return tree.map_structure(lambda x: ops.repeat(x, beam_size, axis=0), cache)


def gather_cache(cache, flat_indices):
    """Default cache reordering: every leaf gathered on axis 0."""
    return tree.map_structure(lambda x: ops.take(x, flat_indices, axis=0), cache)


class CacheFunctions(
    collections.namedtuple(
        "CacheFunctions",
        "reorder tile grow stages select",
        defaults=(gather_cache, tile_cache, None, None, None),
    )
):
    """How a search moves and grows the cache of ``tokens_to_logits``.

    Args:
        reorder: ``(cache, flat_indices (batch * beam_size,)) -> cache``:
            beam search's reordering after each step. Pass a function that
            skips leaves that are the same for every beam of an element
            (e.g. encoder keys/values) to save work. Defaults to
            `gather_cache` (every leaf gathered on axis 0).
        tile: ``(initial_cache, beam_size) -> cache`` with ``batch *
            beam_size`` rows per hypothesis leaf. A model whose per-sentence
            leaves serve all beams of a sentence (``tokens_to_logits`` then
            sees them with ``batch`` rows) may leave those untiled and
            unreordered. Defaults to `tile_cache` (every leaf repeated).
        grow, stages: optional growing cache (see `cache_lengths`): the
            initial cache is sized for ``stages[0]`` positions and
            ``grow(cache, length)`` pads it to each following stage's length
            (the last is the search's ``max_length``) when the search needs
            the room; beam search passes it the tiled, reordered cache.
            Defaults to None (one cache of ``max_length`` positions).
        select: optional ``(cache, sentence_indices) -> cache`` keeping
            the per-sentence leaves of the given batch rows (those that
            `tile` left untiled; hypothesis leaves are left to `reorder`).
            With it, beam search drops finished sentences from the batch
            where the batch dimension may change between steps (see
            `drops_finished_rows`). Defaults to None (every row decoded to
            the end of the search).
    """

    __slots__ = ()


# A function that compiles a loop and one that records a function's
# operations (a model step, the encoder and cache setup), set by
# `compiled_loop_bodies` (the torch backend with ``jit_compile``, see
# `backends.compile_for_backend` and `torch_steps`).
_loop_body_compiler = contextvars.ContextVar("loop_body_compiler", default=None)
_tracer = contextvars.ContextVar("tracer", default=None)


@contextlib.contextmanager
def compiled_loop_bodies(compile_loop, trace=None):
    """Within the context, the searches' loops run ``compile_loop(cond, body)``.

    For backends whose `keras.ops.while_loop` is a Python loop (torch): the
    loop stays in Python (its exit depends on the data) and each iteration
    runs ``compile_loop(cond, body)(state)``, which compiles the body and
    the condition as one step (`torch_steps.TorchStepCompiler.compile_loop`:
    every step but the first of a loop state of new shapes runs compiled).
    ``trace`` (optional, ``(name, function) -> function``) is what `traced`
    applies to a function of tensors (`torch_steps.TorchStepCompiler.trace`).
    """
    token = _loop_body_compiler.set(compile_loop)
    tracer_token = _tracer.set(trace)
    try:
        yield
    finally:
        _tracer.reset(tracer_token)
        _loop_body_compiler.reset(token)


# True while a function is traced for XLA (`fixed_shape_loops`).
_fixed_shapes = contextvars.ContextVar("fixed_shapes", default=False)


@contextlib.contextmanager
def fixed_shape_loops():
    """Within the context, a search whose ``max_length`` is a tensor runs
    one loop per cache stage, as with a Python int: for XLA, whose loops
    keep every shape fixed (`staged_while_loop` otherwise grows the cache
    inside one loop)."""
    token = _fixed_shapes.set(True)
    try:
        yield
    finally:
        _fixed_shapes.reset(token)


class RowHalving(collections.namedtuple("RowHalving", "done keep")):
    """How a search that halves its batch (`halves_finished_rows`) does it,
    as functions of tensors (for a `SearchSegment`):

    - ``done(state)``: bool ``(batch,)``, the sentences whose search is over;
    - ``keep(state, kept, dropped)``: the state on the batch rows ``kept``
      (`halved_rows` chooses them from ``done``, host-side).
    """

    __slots__ = ()


class SegmentPlan(collections.namedtuple("SegmentPlan", "halves stages")):
    """What a ``"probe"`` `SearchSegment` finds: whether the search halves
    its batch (a `RowHalving`) and its number of cache stages."""

    __slots__ = ()


class SearchSegment(collections.namedtuple("SearchSegment", "kind stage entry carried")):
    """One part of a search whose loops run one at a time, a host-side
    decision between each two (`halves_finished_rows` under JAX, where
    ``jax.jit`` compiles each part: `backends.jax_search_jit`).

    The search function runs whole within each part (what comes before the
    loops is traced again, and compiled away where unused);
    `staged_while_loop` does the part's work and ends it with `Suspended`,
    whose ``payload`` the part returns instead of the search's outputs:

    - ``kind="probe"``: nothing; the payload is a `SegmentPlan`.
    - ``kind="loop"``: the loop of cache stage ``stage`` from ``entry``:
      ``"first"`` the search's own initial state (stage 0), ``"grow"`` the
      loop state ``carried`` with its cache grown to the stage's length,
      ``"halve"`` ``carried = (state, kept, dropped)`` through
      `RowHalving.keep`. The payload is ``(state, done)`` after the loop
      (`RowHalving.done`).
    - ``kind="finish"``: the loops' final state is ``carried``; the search
      returns its outputs.
    """

    __slots__ = ()


class Suspended(Exception):
    """A `SearchSegment`'s end, raised inside the search function."""

    def __init__(self, payload):
        super().__init__("the end of a search segment")
        self.payload = payload


_segment = contextvars.ContextVar("segment", default=None)


@contextlib.contextmanager
def search_segment(segment):
    """Within the context, searches run the `SearchSegment` ``segment``."""
    token = _segment.set(segment)
    try:
        yield
    finally:
        _segment.reset(token)


def records_steps():
    """Whether the current `compiled_loop_bodies` context records model
    steps (`traced`): a recorded function reads the tensors it saw, other
    than its arguments, by reference at every later call."""
    return _tracer.get() is not None


def traced(name, function):
    """``function(*tensors)`` as the current `compiled_loop_bodies` context
    records it, one recording per ``name`` (hashable: every Python value
    the function depends on) and argument shapes; unchanged outside one,
    or without a ``trace``."""
    trace = _tracer.get()
    return function if trace is None else trace(name, function)


def traced_step(tokens_to_logits):
    """``tokens_to_logits(token_ids, cache, index)`` through `traced`."""
    return traced("step", tokens_to_logits)


def while_loop(cond, body, state, python_loop):
    """``state`` after running ``body`` while ``cond``: `keras.ops.while_loop`,
    a Python loop with ``python_loop``, or the compiled body of the current
    `compiled_loop_bodies` context."""
    if python_loop:
        while bool(ops.convert_to_numpy(cond(state))):
            state = body(state)
        return state
    compile_loop = _loop_body_compiler.get()
    if compile_loop is not None:
        return compile_loop(cond, body)(state)
    return ops.while_loop(cond, lambda s: (body(s),), (state,))[0]


def drops_finished_rows(batch, python_loop, cache_functions):
    """Whether a search drops its finished sentences from the batch.

    A batch row whose search is over (its best hypotheses can no longer
    change) costs a full decoding step until the last row ends, many of
    them on a request of sentences of mixed lengths (the serving benchmark,
    `benchmarks/serving_speed.py`). CTranslate2 removes finished
    sentences; so do the searches here where shapes may change from step
    to step: a TensorFlow graph whose batch dimension is dynamic (the
    SavedModel, the TensorFlow `Generator` without XLA). Torch's loop,
    eager or compiled, and JAX's, compiled one segment at a time, halve
    their batch instead (`halves_finished_rows`: each new batch shape
    costs a compilation or a kernel selection); XLA under TensorFlow, one
    compiled program of fixed shapes for the whole search, keeps every
    row. The cache must say how its per-sentence leaves are selected
    (``cache_functions.select``).
    """
    return (
        cache_functions.select is not None
        and ops.is_tensor(batch)
        and not python_loop
        and _loop_body_compiler.get() is None
        and not _fixed_shapes.get()
    )


# The fewest sentences a torch beam search halves its batch to (see
# `halves_finished_rows`): below this the rows' matrix products cost little
# beside a step's fixed work, and each smaller batch is one more compiled
# shape per cache stage.
FEWEST_HALVED_SENTENCES = 4


def halves_finished_rows(batch, python_loop, cache_functions):
    """Whether a search halves its batch as its sentences finish.

    Where the search's loop runs in Python (the torch backend, whose
    `keras.ops.while_loop` is a Python loop, eager or calling a compiled
    body, `compiled_loop_bodies`; JAX, whose compiled loops run one
    `SearchSegment` at a time), the batch cannot shrink at every step
    without a compilation (compiled) or a kernel selection (eager) per
    size, but it can at a few: the loop stops when at most half of its
    sentences are still searching, and the next loop runs on a batch of
    half the size (the searching sentences, padded with finished ones), down to
    `FEWEST_HALVED_SENTENCES`. Every size is a compiled shape reused by
    later batches: at most ``log2(batch / 4) + 1`` per cache stage. On
    requests of 32 Multi30k sentences in file order this decodes 0.62 of a
    fixed batch's sentence-steps, against 0.55 for dropping each sentence
    as it ends (`drops_finished_rows`;
    ``benchmarks/results/finished_rows_multi30k_small.md``).
    """
    return (
        cache_functions.select is not None
        and not python_loop
        and (keras.config.backend() == "torch" or _segment.get() is not None)
        and isinstance(batch, int)
        and batch >= 2 * FEWEST_HALVED_SENTENCES
    )


def halved_size(rows, searching):
    """The batch size a halving search (`halves_finished_rows`) continues
    with when ``searching`` of its ``rows`` sentences still search:
    ``rows`` halved while the half holds them all and at least
    `FEWEST_HALVED_SENTENCES`."""
    size = rows
    while size // 2 >= FEWEST_HALVED_SENTENCES and searching <= size // 2:
        size //= 2
    return size


def halved_rows(done):
    """The batch rows a halving search (`halves_finished_rows`) keeps and
    drops, host-side, between two loops: with ``done`` (bool ``(batch,)``,
    a numpy array or a tensor) the sentences whose search is over,
    ``(kept, dropped)`` int32 numpy arrays, every searching sentence kept
    (then finished ones as padding: their outputs cannot change any more,
    and they keep the loop's exit test true) up to `halved_size`, in
    batch order; None where the batch stays as it is."""
    done = np.asarray(ops.convert_to_numpy(done), dtype=bool)
    searching = int(np.sum(~done))
    size = halved_size(done.shape[0], searching)
    if not searching or size == done.shape[0]:
        return None
    order = np.argsort(done, kind="stable")  # searching sentences first
    return np.sort(order[:size]).astype("int32"), order[size:].astype("int32")


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


def staged_while_loop(cond, body, state, python_loop, cache_functions, halving=None):
    """`while_loop` through growing cache lengths (see `cache_lengths`).

    ``state["cache"]`` starts sized for ``cache_functions.stages[0]``; each
    stage runs while ``state["index"]`` (the position the next step writes)
    fits, then ``cache_functions.grow(cache, next_length)`` pads the cache
    for the next stage. Without ``grow`` one loop runs on the initial cache.
    Where ``max_length`` is a tensor (a TensorFlow graph, outside
    `fixed_shape_loops`) the stages run as one loop (`_growing_while_loop`).

    ``halving`` (optional `RowHalving`, a search that halves its batch,
    `halves_finished_rows`): whenever a loop of Python level stops, the
    rows that `halved_rows` keeps continue the same stage on a halved
    batch; where it keeps them all, the next stage follows. Within a
    `SearchSegment` (JAX), the segment runs instead of the loops and the
    host makes that choice between segments.
    """
    grow_cache, lengths = cache_functions.grow, cache_functions.stages
    segment = _segment.get()
    if segment is not None:
        return _run_segment(segment, cond, body, state, cache_functions, halving)

    def run(cond, state):
        state = while_loop(cond, body, state, python_loop)
        while halving is not None:
            rows = halved_rows(halving.done(state))
            if rows is None:
                break
            state = while_loop(cond, body, halving.keep(state, *rows), python_loop)
        return state

    if grow_cache is None:
        return run(cond, state)
    if not lengths:
        raise ValueError(
            "CacheFunctions.grow needs stages, the cache lengths from the "
            "initial cache's to max_length (see `cache_lengths`)."
        )
    if (
        ops.is_tensor(lengths[-1])
        and not python_loop
        and _loop_body_compiler.get() is None
        and not _fixed_shapes.get()
    ):
        return _growing_while_loop(cond, body, state, grow_cache, lengths)
    for stage, length in enumerate(lengths):
        if stage:
            state = dict(state, cache=grow_cache(state["cache"], length))

        def stage_cond(state, length=length):
            return ops.logical_and(cond(state), state["index"] < length)

        state = run(stage_cond, state)
    return state


def _run_segment(segment, cond, body, state, cache_functions, halving):
    """`staged_while_loop`'s part in ``segment`` (a `SearchSegment`)."""
    lengths = [None] if cache_functions.grow is None else cache_functions.stages
    if segment.kind == "probe":
        raise Suspended(SegmentPlan(halves=halving is not None, stages=len(lengths)))
    if segment.kind == "finish":
        return segment.carried
    if halving is None:
        raise ValueError("A search segment's loop runs only in a search that halves its batch.")
    length = lengths[segment.stage]
    if segment.entry == "grow":
        carried = segment.carried
        state = dict(carried, cache=cache_functions.grow(carried["cache"], length))
    elif segment.entry == "halve":
        state = halving.keep(*segment.carried)

    def stage_cond(state):
        if length is None:
            return cond(state)
        return ops.logical_and(cond(state), state["index"] < length)

    state = while_loop(stage_cond, body, state, python_loop=False)
    raise Suspended((state, halving.done(state)))


def _growing_while_loop(cond, body, state, grow_cache, lengths):
    """The staged loop as one loop, for a graph whose ``max_length`` is a
    tensor (a TensorFlow graph serving every buffer length, where the
    cache's length axis is dynamic): each step first grows the cache to
    the next stage's length when the position it writes is past the end.
    The same steps see the same cache lengths as in the staged loop (so
    the same outputs), but the graph holds the body once instead of once
    per stage: a shorter trace and a smaller SavedModel."""

    def next_length(length):
        # The first stage longer than ``length``, else the last.
        result = lengths[-1]
        for stage in reversed(lengths[:-1]):
            result = ops.where(length < stage, stage, result)
        return result

    def growing_cond(state, length):
        return ops.logical_and(cond(state), state["index"] < lengths[-1])

    def growing_body(state, length):
        full = state["index"] >= length
        length = ops.where(full, next_length(length), length)
        cache = ops.cond(
            full,
            lambda: grow_cache(state["cache"], length),
            lambda: state["cache"],
        )
        return body(dict(state, cache=cache)), length

    state, _ = ops.while_loop(growing_cond, growing_body, (state, lengths[0]))
    return state
