"""Batched greedy search (and, with a ``choose_token``, sampling) over a
``tokens_to_logits`` function; the conventions are `search`'s."""

from keras import ops

from keras_transformer.decoding.logits_processors import StepContext, step_scores
from keras_transformer.decoding.options import SearchInputs, SearchRequest
from keras_transformer.decoding.search_loop import (
    CacheFunctions,
    length_penalty,
    staged_while_loop,
)
from keras_transformer.decoding.search_step import (
    batch_size_of,
    check_search_arguments,
    prefix_arguments,
    row_max_lengths,
)
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID


def greedy_search(
    tokens_to_logits,
    initial_cache,
    max_length,
    request=None,
    inputs=None,
    cache_functions=None,
    choose_token=None,
):
    """Batched greedy search: the most probable token at every step.

    Stops when every batch element has produced EOS (or reached its maximum
    length). See the `search` module docstring for the conventions. With
    ``choose_token`` the token of each step is whatever that function picks
    from the selectable log-probabilities (sampling reuses the search so).

    Args:
        tokens_to_logits: ``(token_ids (batch, 1), cache, index) -> (logits
            (batch, vocab), cache)``.
        initial_cache: nest of tensors with ``batch`` as their first axis.
        max_length: int (see the `search` module docstring). Buffer size;
            most tokens generated.
        request: a `SearchRequest`; greedy search reads its
            ``python_loop`` (a Python loop instead of
            `keras.ops.while_loop`). Defaults to ``SearchRequest()``.
        inputs: a `SearchInputs`: ``max_lengths``, ``min_length``,
            ``alpha`` (for the scores only; it does not change greedy
            choices), the forced prefixes and ``batch_size``. Defaults to
            ``SearchInputs(alpha=0.0)``.
        cache_functions: a `CacheFunctions`; greedy search reads its
            growing cache (``grow``, ``stages``). Defaults to
            ``CacheFunctions()`` (no growing).
        choose_token: optional ``(selectable (batch, vocab), index) -> int32
            (batch,)``. ``selectable`` is the float32 log-softmax with the
            forbidden tokens at ``NEG_INF``. Defaults to the argmax.

    Returns:
        ``(sequences, scores)``: int32 ``(batch, max_length)`` (EOS included,
        PAD after it) and float32 ``(batch,)`` equal to the summed
        log-probability divided by ``length_penalty(|Y|, alpha)``.

    Example:
    >>> def tokens_to_logits(ids, cache, index):  # always predicts EOS
    ...     return ops.one_hot(ops.full((1,), 3), 8) * 10.0, cache
    >>> ids, scores = greedy_search(tokens_to_logits, {}, 5,
    ...                             inputs=SearchInputs(batch_size=1))
    >>> ops.convert_to_numpy(ids).tolist()
    [[3, 0, 0, 0, 0]]
    """
    request = SearchRequest() if request is None else request
    inputs = SearchInputs(alpha=0.0) if inputs is None else inputs
    cache_functions = CacheFunctions() if cache_functions is None else cache_functions
    check_search_arguments(max_length)
    batch = batch_size_of(initial_cache, inputs.batch_size)
    row_max = row_max_lengths(inputs.max_lengths, batch, max_length)
    prefix_ids, prefix_lengths = prefix_arguments(
        inputs.prefix_ids, inputs.prefix_lengths, batch
    )
    positions = ops.arange(max_length + 1, dtype="int32")
    state = {
        "index": ops.convert_to_tensor(0, "int32"),
        "sequences": ops.concatenate(
            [
                ops.full((batch, 1), BOS_ID, dtype="int32"),
                ops.full((batch, max_length), PAD_ID, dtype="int32"),
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
        context = StepContext(
            request, inputs, index, state["sequences"], row_max, prefix_ids, prefix_lengths
        )
        # The options' processors on the logits, as Hugging Face's greedy
        # search and sampling.
        log_probs, selectable = step_scores(logits, (batch,), context, on_logits=True)
        if choose_token is None:
            token = ops.cast(ops.argmax(selectable, axis=-1), "int32")
        else:
            token = ops.cast(choose_token(selectable, index), "int32")
        done = state["done"]
        token = ops.where(done, PAD_ID, token)
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
            "done": ops.logical_or(done, ops.equal(token, EOS_ID)),
            "cache": cache,
        }

    state = staged_while_loop(cond, body, state, request.python_loop, cache_functions)
    scores = state["log_probs"] / length_penalty(state["lengths"], inputs.alpha)
    return state["sequences"][:, 1:], scores
