"""Source preparation shared by `Translator` and the SavedModel graph.

One function, in `keras.ops`, turns PAD-padded source token ids (no BOS, no
EOS) into what the encoder and the search get: the ids truncated to
``max_source_length - 1`` tokens with EOS appended, and each row's output
limit (source tokens without EOS + ``max_extra_length``, EOS included,
capped at the positions a learned-position model has). `Translator` runs it
eagerly on each padded batch; the export traces it into the serving graph:
the same truncation, caps and EOS placement in both.
"""

from keras import ops

from keras_transformer.decoding.ensemble import members
from keras_transformer.layers.position_schemes import position_scheme
from keras_transformer.special_tokens import EOS_ID, PAD_ID


def check_vocabulary(tokenizer_size, model_size):
    """The one vocabulary rule: a tokenizer with at most the model's ids.

    (A model may have more output ids than the tokenizer has pieces, e.g. a
    vocabulary padded to a multiple of 8; those decode as UNK.)
    """
    if tokenizer_size > model_size:
        raise ValueError(
            f"The tokenizer has {tokenizer_size} pieces but the model only "
            f"{model_size} output ids; they were not trained together."
        )


def model_max_positions(model):
    """Positions a model decodes: the option that its position scheme names
    (`PositionScheme.positions_option`, a learned-position `Transformer`'s
    ``max_length``; the smallest among an `Ensemble`'s models); None where
    positions never run out (sinusoidal, relative)."""
    limits = []
    for member, _ in members(model):
        option = position_scheme(member.positional_encoding).positions_option
        if option is not None:
            limits.append(getattr(member, option))
    return min(limits) if limits else None


def source_limit(max_source_length, max_positions=None):
    """Longest source (tokens, EOS included) the encoder gets."""
    if max_positions is not None:
        return min(max_source_length, max_positions)
    return max_source_length


def prepare_sources(token_ids, max_source_length, max_extra_length, max_positions=None):
    """Encoder ids with EOS and per-row output limits.

    Args:
        token_ids: int ``(batch, length)``: each row's ids from position 0,
            then PAD (0). No BOS, no EOS. ``length`` may be 0.
        max_source_length: int >= 2. Longest source in tokens, EOS
            included; longer rows keep their first ``max_source_length - 1``
            tokens.
        max_extra_length: int >= 1. Output limit = source tokens (EOS
            excluded) + this.
        max_positions: int or None. A learned-position model's
            ``max_length``: caps the source and the output limits.

    Returns:
        ``(encoder_token_ids, output_limits)``: int32 ``(batch, length' + 1)``
        (``length' = min(length, max_source_length - 1)``), EOS after each
        row's last token, and int32 ``(batch,)``.
    """
    limit = source_limit(max_source_length, max_positions)
    token_ids = ops.cast(token_ids, "int32")[:, : limit - 1]
    lengths = ops.sum(ops.cast(ops.not_equal(token_ids, PAD_ID), "int32"), axis=1)
    padded = ops.pad(token_ids, [[0, 0], [0, 1]], constant_values=PAD_ID)
    positions = ops.arange(ops.shape(padded)[1], dtype="int32")
    encoder_ids = ops.where(
        ops.equal(positions[None, :], lengths[:, None]), EOS_ID, padded
    )
    output_limits = lengths + max_extra_length
    if max_positions is not None:
        output_limits = ops.minimum(output_limits, max_positions)
    return ops.cast(encoder_ids, "int32"), ops.cast(output_limits, "int32")
