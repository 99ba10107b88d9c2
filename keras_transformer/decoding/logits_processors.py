"""The scores of a search step, for greedy search, beam search and sampling
alike: `step_scores` turns the model's logits into the step's
log-probabilities and the scores the search chooses from, through one chain
of processors, in this order:

1. the options' processors (`process_scores`), each applied only when the
   request enables it, so that a step without them has no extra op:
   ``repetition_penalty`` (`penalize_repetition`) and
   ``no_repeat_ngram_size`` (`no_repeat_ngram`), with Hugging Face's
   semantics: greedy search and sampling apply them to the logits, beam
   search to the log-probabilities (whose sum the hypotheses' scores are);
2. the log-softmax;
3. the forbidden tokens, the minimum length and each row's length limit
   (`select_mask`);
4. beam search's lexical constraints: no EOS before every constraint is
   met (``eos_allowed``);
5. the forced prefixes (`force_prefix`).

Sampling then filters and draws from what this returns
(`sampling.sample_tokens`), greedy search takes the argmax, beam search the
top candidates. Each processor takes scores ``(rows, vocab)`` (or
``(batch, beams, vocab)``) float32; the options' processors also take the
hypotheses so far, ``sequences`` ``(rows, width)`` int32 (the start token at
column 0, the token fed to this step at column ``index``, PAD after).

Everything is `keras.ops` with static shapes apart from the rows, so the
processors compile under XLA, in TensorFlow graphs (the SavedModel, where
the rows shrink as sentences finish) and under ``torch.compile``.
"""

import dataclasses

from keras import ops

from keras_transformer.decoding.search_loop import NEG_INF
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID


def _row_indices(sequences, columns):
    """``(rows * width, 2)`` int32 of ``(row, columns[row, j])``."""
    rows = ops.zeros_like(columns) + ops.arange(ops.shape(sequences)[0], dtype="int32")[:, None]
    return ops.stack([ops.reshape(rows, (-1,)), ops.reshape(columns, (-1,))], axis=1)


def penalize_repetition(scores, sequences, index, penalty):
    """Hugging Face's ``repetition_penalty`` (CTRL, Keskar et al., 2019):
    each token among ``sequences[:, :index + 1]`` has its score divided by
    ``penalty`` where positive, multiplied where negative.

    The scores of the tokens in the sequences are gathered, penalized and
    written back (a scatter of ``rows * width`` values, not a
    ``(rows, width, vocab)`` one-hot). A token written twice gets the same
    value twice. Columns after ``index`` hold PAD, which no search chooses,
    so their write is harmless.
    """
    del index  # PAD fills the columns not written yet
    penalty = ops.cast(penalty, scores.dtype)
    gathered = ops.take_along_axis(scores, sequences, axis=1)
    penalized = ops.where(gathered < 0, gathered * penalty, gathered / penalty)
    return ops.scatter_update(
        scores, _row_indices(sequences, sequences), ops.reshape(penalized, (-1,))
    )


def no_repeat_ngram(scores, sequences, index, size):
    """Hugging Face's ``no_repeat_ngram_size``: a token that would complete
    an n-gram (``n = size``) already in ``sequences[:, :index + 1]`` gets
    ``NEG_INF``.

    For every start ``j`` of an n-gram wholly written (``j + size - 1 <=
    index``), the n-gram's first ``size - 1`` tokens are compared with the
    last ``size - 1`` tokens; where they are equal, its last token is
    banned. ``size`` is static: ``size - 1`` comparisons of the sequences
    with themselves, shifted.
    """
    # Padded with size - 1 PAD columns, so that every shifted window has the
    # sequences' width (a tensor in a TensorFlow graph of dynamic length).
    # A concatenation, not `ops.pad`: Keras' `pad` creates a named operation
    # at each call, whose name counter torch.compile's guards would see
    # change at every step (one recompilation per step).
    width = ops.shape(sequences)[1]
    columns = ops.full_like(sequences[:, :1], PAD_ID)
    padded = ops.concatenate([sequences] + [columns] * (size - 1), axis=1)
    starts = ops.arange(width, dtype="int32")
    match = ops.less_equal(starts, index - size + 1)[None, :]  # (1, width)
    for shift in range(size - 1):
        column = ops.maximum(index - size + 2 + shift, 0)
        last = ops.take(sequences, column, axis=1)[:, None]  # (rows, 1)
        match = ops.logical_and(match, ops.equal(padded[:, shift:shift + width], last))
    # Unmatched starts write NEG_INF on PAD, which is never chosen anyway:
    # every write is the same value, whatever the order of duplicates.
    banned = ops.where(match, padded[:, size - 1:size - 1 + width], PAD_ID)
    values = ops.full_like(ops.cast(banned, scores.dtype), NEG_INF)
    values = ops.reshape(values, (-1,))
    return ops.scatter_update(scores, _row_indices(sequences, banned), values)


def process_scores(scores, sequences, index, request, inputs):
    """The processors that ``request`` (a `SearchRequest`) enables, in
    Hugging Face's order (repetition penalty, then n-gram bans), on
    ``scores`` ``(rows, vocab)``; ``inputs`` (a `SearchInputs`) holds the
    runtime ``repetition_penalty``."""
    if request.penalize_repetition:
        scores = penalize_repetition(scores, sequences, index, inputs.repetition_penalty)
    if request.no_repeat_ngram_size:
        scores = no_repeat_ngram(scores, sequences, index, request.no_repeat_ngram_size)
    return scores


def enabled(request):
    """Whether ``request`` enables any processor."""
    return bool(request.penalize_repetition or request.no_repeat_ngram_size)


def logits_rows(logits, rows):
    """``logits`` as float32 ``(rows, vocab)``."""
    # Keep the vocabulary dimension static where it is (a TF graph would
    # lose it with -1; sampling needs it).
    vocabulary_size = logits.shape[-1] or -1
    return ops.reshape(ops.cast(logits, "float32"), (rows, vocabulary_size))


def log_softmax_rows(logits, rows):
    return ops.log_softmax(logits_rows(logits, rows), axis=-1)


def forbidden_tokens(vocab, next_length, min_length, row_max_lengths, eos_id,
                     forbidden_ids, extra_dims):
    """Bool ``(batch, 1, ..., vocab)``: the tokens a row may not choose.

    ``vocab`` is ``arange(vocab)``; ``next_length`` (scalar) is the length
    the hypotheses will have after this token; ``row_max_lengths`` is
    ``(batch,)``; ``extra_dims`` the score axes between batch and vocab.
    """
    is_eos = ops.equal(vocab, eos_id)
    forbidden = ops.zeros_like(is_eos)
    for token in forbidden_ids:
        forbidden = ops.logical_or(forbidden, ops.equal(vocab, token))
    # EOS before min_length is forbidden ...
    forbidden = ops.logical_or(
        forbidden, ops.logical_and(is_eos, next_length < min_length)
    )
    at_max = ops.greater_equal(next_length, row_max_lengths)
    at_max = ops.reshape(at_max, (-1,) + (1,) * (extra_dims + 1))
    # ... and at a row's last allowed position only EOS is allowed.
    return ops.logical_or(forbidden, ops.logical_and(at_max, ops.logical_not(is_eos)))


def forced_prefix_mask(banned, vocab, index, prefix_ids, prefix_lengths, extra_dims):
    """``banned`` where a row is inside its prefix: every token but the
    prefix's (which stays selectable even where ``banned`` forbade it)."""
    if prefix_ids is None:
        return banned
    width = ops.shape(prefix_ids)[1]
    column = ops.minimum(index, width - 1)
    token = ops.take(prefix_ids, column, axis=1)  # (batch,)
    forcing = index < prefix_lengths  # (batch,)
    shape = (-1,) + (1,) * (extra_dims + 1)
    not_token = ops.not_equal(vocab, ops.reshape(token, shape))
    return ops.where(ops.reshape(forcing, shape), not_token, banned)


@dataclasses.dataclass(frozen=True, eq=False)
class StepContext:
    """What a step's processors read besides the logits.

    Args:
        request: the `SearchRequest` (which options are enabled).
        inputs: the `SearchInputs` (``min_length``, ``repetition_penalty``).
        index: int scalar. The step: the fed token's column.
        sequences: int32 ``(rows, width)``: the hypotheses so far, one row
            per score row.
        row_max: int32 ``(batch,)``: each sentence's maximum output length.
        prefix_ids, prefix_lengths: the forced prefixes (or None).
        eos_allowed: optional bool ``(batch, beams)``: False where EOS may
            not end the hypothesis yet (unmet constraints).
    """

    request: object
    inputs: object
    index: object
    sequences: object
    row_max: object
    prefix_ids: object = None
    prefix_lengths: object = None
    eos_allowed: object = None


def step_scores(logits, shape, context, on_logits):
    """``(log_probs, selectable)``, both float32 ``shape + (vocab,)``:
    the step's log-probabilities (after the options' processors) and the
    scores to choose from (forbidden tokens at ``NEG_INF``, prefixes
    forced). ``shape`` is ``(batch,)`` or ``(batch, beams)``; ``on_logits``:
    the options' processors act on the logits (greedy search, sampling)
    rather than on the log-probabilities (beam search)."""
    rows = shape[0] if len(shape) == 1 else shape[0] * shape[1]
    scores = logits_rows(logits, rows)
    processed = enabled(context.request)
    if processed and on_logits:
        scores = process_scores(
            scores, context.sequences, context.index, context.request, context.inputs
        )
    log_probs = ops.log_softmax(scores, axis=-1)
    if processed and not on_logits:
        log_probs = process_scores(
            log_probs, context.sequences, context.index, context.request, context.inputs
        )
    if len(shape) > 1:
        # The vocabulary static where it is: beam search's two-stage top-k
        # needs it (`beam.top_candidates`).
        log_probs = ops.reshape(log_probs, (*shape, log_probs.shape[-1] or -1))
    # The forbidden tokens and the forced prefixes as one mask of (batch,
    # 1, vocab) (or (batch, beams, vocab) with constraints), then one select
    # over the (batch, beams, vocab) scores rather than one per rule.
    extra_dims = len(shape) - 1
    vocab = ops.arange(ops.shape(log_probs)[-1], dtype="int32")
    banned = forbidden_tokens(
        vocab, context.index + 1, context.inputs.min_length, context.row_max, EOS_ID,
        (PAD_ID, BOS_ID), extra_dims,
    )
    if context.eos_allowed is not None:
        banned = ops.logical_or(
            banned,
            ops.logical_and(
                ops.logical_not(context.eos_allowed)[..., None], ops.equal(vocab, EOS_ID)
            ),
        )
    banned = forced_prefix_mask(
        banned, vocab, context.index, context.prefix_ids, context.prefix_lengths, extra_dims
    )
    return log_probs, ops.where(banned, NEG_INF, log_probs)
