"""Lexically constrained beam search (Post & Vilar, 2018): the phrases
every finished hypothesis must contain, each hypothesis' progress through
them, and the candidates and dynamic beam allocation of each step.

`beam.beam_search` calls these when it is given ``constraint_ids``; they
keep a ``live_met`` ``(batch, k, T)`` and ``live_progress`` ``(batch, k)``
entry in its loop state.

References:
    Post & Vilar, 2018, "Fast Lexically Constrained Decoding with Dynamic
    Beam Allocation for Neural Machine Translation".
"""

from keras import ops

from keras_transformer.decoding.search_loop import NEG_INF
from keras_transformer.decoding.search_step import flat_gather
from keras_transformer.special_tokens import PAD_ID


def constraint_phrases(constraint_ids, pad_id=PAD_ID):
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


def initial_constraint_state(phrases, batch, k):
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
        phrases: from `constraint_phrases`.
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
        flat_gather(met, beams),
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
        flat_gather(new_met, chosen),
        ops.take_along_axis(new_progress, chosen, axis=1),
    )


def next_live_in_order(top_log_probs, top_sequences, top_beams, ends, top_met,
                        top_progress, k):
    """`beam.next_live` for constrained search: the first ``k`` candidates in
    allocation order (`constrained_candidates`) that do not end with EOS,
    with their constraint state."""
    positions = ops.cast(ops.arange(2 * k, dtype="int32"), "float32")[None, :]
    priority = ops.where(ends, -4.0 * k - positions, -positions)
    _, live_slots = ops.top_k(priority, k)
    live_slots = ops.cast(live_slots, "int32")
    live = {
        "live_sequences": flat_gather(top_sequences, live_slots),
        "live_log_probs": ops.take_along_axis(
            ops.where(ends, NEG_INF, top_log_probs), live_slots, axis=1
        ),
    }
    constraint_state = {
        "live_met": flat_gather(top_met, live_slots),
        "live_progress": ops.take_along_axis(top_progress, live_slots, axis=1),
    }
    return live, ops.take_along_axis(top_beams, live_slots, axis=1), constraint_state


def constraints_met(state, phrases):
    """bool ``(batch, k)``: whether each live hypothesis has met all its
    constraint tokens (EOS may end it only then)."""
    return ops.equal(
        ops.sum(ops.cast(state["live_met"], "int32"), axis=2),
        phrases["total"][:, None],
    )
