"""Forced decoding: the model's view of given target sequences.

One teacher-forced pass of the decoder over a known target gives, for every
target token, its log-probability (scoring: ``Translator.score``, the
SavedModel's ``score`` signature) and the decoder's cross-attention
(alignments). For a hypothesis the search produced, the pass sees exactly
the prefixes the search saw, so its log-probabilities are the search's (up
to float rounding) and its attention is the attention the search used: the
search itself never has to carry attention weights through its loop.

An `Ensemble` scores with its mixture of the models' probabilities, and
aligns with the weighted mean of its models' cross-attention.

All in `keras.ops`; compile with `backends.compile_for_backend`.
"""

from keras import ops

from keras_transformer.decoding.ensemble import members
from keras_transformer.special_tokens import BOS_ID, PAD_ID


def shift_right(target_token_ids):
    """Decoder inputs for targets: BOS, then the targets without the last."""
    target_token_ids = ops.cast(target_token_ids, "int32")
    batch = ops.shape(target_token_ids)[0]
    bos = ops.full((batch, 1), BOS_ID, dtype="int32")
    return ops.concatenate([bos, target_token_ids[:, :-1]], axis=1)


def token_log_probs(model, encoder_token_ids, target_token_ids):
    """float32 ``(batch, target_length)``: log P(y_t | y_<t, x), 0 at PAD.

    Args:
        model: a `keras_transformer.Transformer` or an `Ensemble`.
        encoder_token_ids: int ``(batch, source_length)``, EOS-terminated,
            PAD-padded (what the search's encoder gets).
        target_token_ids: int ``(batch, target_length)``: each row the
            target tokens, EOS included, then PAD.
    """
    target_token_ids = ops.cast(target_token_ids, "int32")
    encoder_output, encoder_padding_mask = model.encode(encoder_token_ids)
    logits = model.decode(shift_right(target_token_ids), encoder_output, encoder_padding_mask)
    log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
    picked = ops.take_along_axis(log_probs, target_token_ids[..., None], axis=-1)[..., 0]
    return ops.where(ops.equal(target_token_ids, PAD_ID), 0.0, picked)


def alignments(model, encoder_token_ids, target_token_ids, layer=-1):
    """int32 ``(batch, target_length)``: for each target token, the source
    position its cross-attention (decoder layer ``layer``, averaged over
    heads) weighs most; -1 at PAD. As fairseq's ``--print-alignment``.

    For an `Ensemble`, the weighted mean over its models of each model's
    layer ``layer`` (fairseq averages its models' attention too).
    """
    target_token_ids = ops.cast(target_token_ids, "int32")
    decoder_token_ids = shift_right(target_token_ids)
    weights = 0.0
    for member, weight in members(model):
        scores = member.attention_scores(encoder_token_ids, decoder_token_ids)
        # (batch, target_length, source_length), averaged over heads.
        attention = ops.cast(scores["decoder_cross_attention"][layer], "float32")
        weights = weights + weight * ops.mean(attention, axis=1)
    best = ops.cast(ops.argmax(weights, axis=-1), "int32")
    return ops.where(ops.equal(target_token_ids, PAD_ID), -1, best)
