"""Score processors that every search applies at each step, before it masks
the tokens a step may not choose (`search_step.select_mask`) and forces
prefixes (`search_step.force_prefix`).

Each processor takes the step's scores ``(rows, vocab)`` float32 and the
hypotheses so far, ``sequences`` ``(rows, width)`` int32 (the start token
at column 0, the token fed to this step at column ``index``, PAD after),
and returns new scores. `process_scores` applies the ones a request enables
(`SearchRequest.no_repeat_ngram_size`, ``penalize_repetition``), so that
with none enabled a step has no extra op. Greedy search and sampling call it
on the logits, beam search on the log-probabilities (Hugging Face's
``generate`` does the same, and these options have its semantics).

Everything is `keras.ops` with static shapes apart from the rows, so the
processors compile under XLA, in TensorFlow graphs (the SavedModel, where
the rows shrink as sentences finish) and under ``torch.compile``.
"""

from keras import ops

from keras_transformer.decoding.search_loop import NEG_INF
from keras_transformer.special_tokens import PAD_ID


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
    width = ops.shape(sequences)[1]
    padded = ops.pad(sequences, ((0, 0), (0, size - 1)), constant_values=PAD_ID)
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
