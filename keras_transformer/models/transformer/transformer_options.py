"""The architecture's options, defined once.

One `ArchitectureOption` per constructor argument of `TransformerBackbone`
(and so of `Transformer` and of a training config's ``model_overrides``):
its name, its default, the check its values pass and when its config key is
saved. `check_architecture` is the one validation (each option's check, then
the checks between options), `architecture_config` the config's keys; the
backbone's constructor keeps keras-hub's explicit keyword arguments, whose
defaults ``tests/models/transformer/test_transformer_options.py`` holds
equal to these.

A new option: one row here, its argument in the backbone's constructor, and
the layer that uses it.
"""

import dataclasses
import typing

from keras_transformer.layers.attention import check_projection_layout
from keras_transformer.layers.position_schemes import position_scheme
from keras_transformer.layers.positional_encoding import check_sinusoid_layout
from keras_transformer.layers.relative_positions import check_max_relative_position
from keras_transformer.layers.transformer_layer import (
    LAYER_NORM_EPSILON,
    check_normalization_position,
)
from keras_transformer.utils.validation import check_int, check_rate

# When an option's key is in the config.
ALWAYS = "always"
# Only where it differs from the default: the options of models trained
# elsewhere, so that the paper's configs keep the keys they always had.
NOT_DEFAULT = "not default"
# Only where the option is used (`ArchitectureOption.used`).
WHEN_USED = "when used"

REQUIRED = object()  # no default: the caller gives it


def _checked_by(check):
    """A check of ours that returns nothing, as ``(name, value) -> value``."""

    def checked(name, value):
        check(value)
        return value

    return checked


def _positive_int(name, value):
    return check_int(name, value)


def _relative_position(name, value):
    return check_max_relative_position(check_int(name, value))


@dataclasses.dataclass(frozen=True)
class ArchitectureOption:
    """One constructor argument of the backbone.

    Args:
        name: the argument and config key.
        default: its default (`REQUIRED`: none).
        check: ``(name, value) -> value`` (the value as stored, e.g. an int
            for an integral float) raising a ValueError naming ``name``;
            None: checked by the layer that takes it.
        saved: `ALWAYS`, `NOT_DEFAULT` or `WHEN_USED`.
        used: ``options -> bool``, whether the value matters for these
            options (checked and, with `WHEN_USED`, saved only then); None:
            always.
    """

    name: str
    default: typing.Any
    check: typing.Optional[typing.Callable] = None
    saved: str = ALWAYS
    used: typing.Optional[typing.Callable] = None

    def is_used(self, options):
        return self.used is None or self.used(options)


def _read_by_position_scheme(name):
    """``used`` of an option that only some position schemes read
    (`PositionScheme.options`)."""

    def used(options):
        return name in position_scheme(options["positional_encoding"]).options

    return used


ARCHITECTURE_OPTIONS = (
    ArchitectureOption("vocabulary_size", REQUIRED, _positive_int),
    ArchitectureOption("num_layers", 6, _positive_int),
    ArchitectureOption("d_model", 512, _positive_int),
    ArchitectureOption("num_heads", 8, _positive_int),
    ArchitectureOption("d_ff", 2048, _positive_int),
    ArchitectureOption("dropout_rate", 0.1, check_rate),
    ArchitectureOption("share_embeddings", True, lambda name, value: bool(value)),
    # Checked with share_embeddings (`check_architecture`).
    ArchitectureOption("source_vocabulary_size", None),
    ArchitectureOption(
        "positional_encoding",
        "sinusoidal",
        lambda name, value: position_scheme(value).name,
    ),
    ArchitectureOption(
        "max_length", 1024, _positive_int, used=_read_by_position_scheme("max_length")
    ),
    ArchitectureOption(
        "normalization_position", "post", _checked_by(check_normalization_position)
    ),
    # Normalized by the token embedding (`TokenEmbedding(logits_dtype=...)`).
    ArchitectureOption("logits_dtype", "float32"),
    ArchitectureOption(
        "projection_layout", "head_major", _checked_by(check_projection_layout)
    ),
    # Checked by the feed-forward layer and the transformer layers.
    ArchitectureOption("activation", "relu", saved=NOT_DEFAULT),
    ArchitectureOption("layer_norm_epsilon", LAYER_NORM_EPSILON, saved=NOT_DEFAULT),
    ArchitectureOption(
        "sinusoid_layout",
        "interleaved",
        lambda name, value: check_sinusoid_layout(value, name),
        saved=NOT_DEFAULT,
    ),
    ArchitectureOption(
        "output_bias", False, lambda name, value: bool(value), saved=NOT_DEFAULT
    ),
    ArchitectureOption(
        "max_relative_position", 16, _relative_position, saved=WHEN_USED,
        used=_read_by_position_scheme("max_relative_position"),
    ),
)
OPTION_NAMES = tuple(option.name for option in ARCHITECTURE_OPTIONS)


def check_architecture(options):
    """The one validation of a backbone's options (a dict with every name of
    `OPTION_NAMES`): each option's check where the option is used, then the
    checks between options. Returns the checked values, with
    ``source_vocabulary_size`` resolved (``vocabulary_size`` by default)."""
    options = dict(options)
    for option in ARCHITECTURE_OPTIONS:
        if option.check is not None and option.is_used(options):
            options[option.name] = option.check(option.name, options[option.name])
    if options["d_model"] % options["num_heads"]:
        raise ValueError(
            "d_model must be divisible by num_heads (d_k = d_model / h). "
            f"Received: d_model={options['d_model']}, num_heads={options['num_heads']}"
        )
    vocabulary_size = options["vocabulary_size"]
    source_vocabulary_size = options["source_vocabulary_size"]
    if options["share_embeddings"] and source_vocabulary_size not in (None, vocabulary_size):
        raise ValueError(
            "source_vocabulary_size differs from vocabulary_size, which "
            "needs share_embeddings=False. Received: "
            f"vocabulary_size={vocabulary_size}, "
            f"source_vocabulary_size={source_vocabulary_size}"
        )
    options["source_vocabulary_size"] = check_int(
        "source_vocabulary_size", source_vocabulary_size or vocabulary_size
    )
    return options


def architecture_config(options):
    """The config keys of these options (see `ArchitectureOption.saved`)."""
    config = {}
    for option in ARCHITECTURE_OPTIONS:
        value = options[option.name]
        if (
            option.saved == ALWAYS
            or (option.saved == NOT_DEFAULT and value != option.default)
            or (option.saved == WHEN_USED and option.is_used(options))
        ):
            config[option.name] = value
    return config
