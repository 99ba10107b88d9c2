"""How positions enter a Transformer: a registry keyed by the value of the
backbone's ``positional_encoding`` option.

Each `PositionScheme` says which layer adds positions to a stack's
embeddings (or none), whether the self-attention layers add relative
positions, which architecture options it reads (the others are neither
checked nor saved for it) and how many positions a model of it decodes.
The backbone builds its layers from the scheme of its option's value, the
option's valid values are the registry's keys, and the decode's length
limit comes from ``positions_option``; an exporter maps each scheme its format
can represent and refuses the others by name.

A new scheme: `register_position_scheme` here (or in an extension), and,
where it needs one, its option in
`keras_transformer.models.transformer.transformer_options`.
"""

import dataclasses
import typing

from keras_transformer.layers.positional_encoding import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
)
from keras_transformer.utils.validation import check_choice


@dataclasses.dataclass(frozen=True)
class PositionScheme:
    """One value of ``positional_encoding``.

    Args:
        name: the option's value.
        embedding: ``(options, name, dtype) -> layer``: the layer that adds
            positions to a stack's embeddings (``options``: the backbone's
            checked architecture options; ``name``: ``"encoder_position"``
            or ``"decoder_position"``), or None: nothing is added.
        relative_attention: the self-attention layers add relative position
            representations (Shaw et al., 2018) clipped to the option
            ``max_relative_position``.
        options: the architecture options this scheme reads beyond the
            common ones (checked, and saved where `WHEN_USED`, only for it).
        positions_option: the option that holds how many positions a model
            of this scheme decodes, or None: they never run out.
    """

    name: str
    embedding: typing.Optional[typing.Callable] = None
    relative_attention: bool = False
    options: tuple = ()
    positions_option: typing.Optional[str] = None


POSITION_SCHEMES = {}


def register_position_scheme(scheme):
    """Adds ``scheme`` (a `PositionScheme`) under its name; returns it."""
    if scheme.name in POSITION_SCHEMES:
        raise ValueError(f"A position scheme named {scheme.name!r} is registered already.")
    POSITION_SCHEMES[scheme.name] = scheme
    return scheme


def position_scheme(name):
    """The registered `PositionScheme` named ``name``."""
    return POSITION_SCHEMES[check_choice("positional_encoding", name, tuple(POSITION_SCHEMES))]


# §3.5 of the paper: sinusoids added to the embeddings.
register_position_scheme(PositionScheme(
    "sinusoidal",
    embedding=lambda options, name, dtype: SinusoidalPositionalEncoding(
        layout=options["sinusoid_layout"], dtype=dtype, name=name
    ),
))
# Table 3, row E: one learned vector per position, ``max_length`` of them.
register_position_scheme(PositionScheme(
    "learned",
    embedding=lambda options, name, dtype: LearnedPositionalEmbedding(
        options["max_length"], dtype=dtype, name=name
    ),
    options=("max_length",),
    positions_option="max_length",
))
# Shaw et al., 2018: positions enter in the self-attention only (OpenNMT's
# and CTranslate2's relative positions: nothing added to the embeddings).
register_position_scheme(PositionScheme(
    "relative", relative_attention=True, options=("max_relative_position",)
))
