"""The values of `TrainConfig` keys: the field helper with its CLI
metadata (`config_field`), the checks of single values, and the type check
of a value against a field's annotation (`check_type`, `ConfigTypeError`).

The fields and their metadata import neither Keras nor the models: the
command line's parser makes ``train``'s flags from them before it sets the
backend. The checks that need the model (`check_preset`,
`check_model_overrides`) import its module when a config is checked
(`MODEL_MODULES`, a table that ``tests/test_layering.py`` holds to the
package's layers like any import).
"""

import dataclasses
import functools
import importlib
import typing

from keras_transformer.special_tokens import RESERVED_PIECES, check_languages
from keras_transformer.utils.validation import (
    check_choice,
    check_int,
    check_number,
)

BACKENDS = ("tensorflow", "jax", "torch")
# `keras_transformer.training.distribution`'s kinds of multi-device training.
DISTRIBUTIONS = ("none", "data", "model", "multi-worker")
# A side of a corpus: a path or glob pattern, or a list of them.
Files = typing.Union[str, typing.List[str], None]
KEEP_BEST = ("bleu", "loss")
FINAL_MODELS = ("last", "best", "average")
BUCKETINGS = ("separate", "joint", "packed")
AUTO = "auto: depends on the data (default task or your files)"

# The modules of the model's presets and class, imported by the checks below.
MODEL_MODULES = {
    "presets": "keras_transformer.models.transformer.transformer_presets",
    "model": "keras_transformer.models.transformer.transformer",
}


def _model_module(role):
    return importlib.import_module(MODEL_MODULES[role])


def config_field(default, doc, check=None, **metadata):
    """A field with its one-line ``doc`` (the CLI's help), its value check
    and CLI metadata.

    Args:
        default: the default value.
        doc: str. One line: ``keras-transformer train --help`` and the
            reference in docs/training.md print it.
        check: a function ``(key, value)`` that raises a ValueError naming
            the key when the value is out of range (the type is checked from
            the annotation before). None: any value of the type.
        **metadata: ``flags`` (extra flag spellings), ``metavar``,
            ``cli=False`` (no flag; ``--set`` still works).
    """
    if check is not None:
        metadata["check"] = check
    return dataclasses.field(default=default, metadata=dict(metadata, doc=doc))


# --- value checks of single fields (``check`` metadata) ---


def positive(name, value):
    """None, or a finite number > 0 (counts of updates, tokens, minutes)."""
    if value is None:
        return
    check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive. Received: {name}={value!r}")


def int_at_least(minimum, allow_none=True):
    """An int >= ``minimum`` (or None, with ``allow_none``)."""
    return functools.partial(check_int, minimum=minimum, allow_none=allow_none)


def one_of(*choices):
    return functools.partial(check_choice, choices=choices)


def check_preset(name, value):
    presets = _model_module("presets").PRESETS
    if value is not None and value not in presets:
        raise ValueError(f"Unknown preset {value!r}. Available presets: {sorted(presets)}")


def check_model_overrides(name, value):
    """Keyword arguments of `Transformer`, the vocabulary size excepted."""
    for key in value:
        if not isinstance(key, str):
            raise ConfigTypeError(f"{name} keys must be str. Received: {key!r}")
    if "vocabulary_size" in value:
        raise ValueError(
            f"{name} must not set vocabulary_size: the model's vocabulary is the "
            "tokenizer's. Set the top-level vocabulary_size instead."
        )
    model = _model_module("model").Transformer
    valid = _model_module("presets").constructor_argument_names(model)
    unknown = sorted(set(value) - set(valid))
    if unknown:
        raise ValueError(
            f"Unknown model argument(s) in {name}: {unknown}. "
            f"Valid arguments: {sorted(valid)}"
        )


def check_vocabulary_size(name, value):
    """None, or more pieces than the reserved ones (PAD, UNK, BOS, EOS)."""
    if value is not None and value <= len(RESERVED_PIECES):
        raise ValueError(
            f"{name} must exceed the {len(RESERVED_PIECES)} reserved pieces. "
            f"Received: {name}={value}"
        )


def check_target_languages(name, value):
    if value is not None:
        check_languages(value, name)


def check_decay(name, value):
    """None, or a moving-average decay in (0, 1)."""
    if value is None:
        return
    check_number(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"{name} must be in (0, 1), e.g. 0.999, or null. Received: {name}={value}"
        )


def check_average_last_n(name, value):
    """None, a positive int, or a non-empty list of them."""
    candidates = value if isinstance(value, list) else [value]
    if not candidates or any(n is not None and n <= 0 for n in candidates):
        raise ValueError(
            f"{name} must be a positive int or a non-empty list of them. "
            f"Received: {name}={value!r}"
        )


def base_type(annotation):
    """``Optional[int]`` -> int; other annotations unchanged."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        return args[0]
    return annotation


def takes_list(annotation):
    """True when ``annotation`` is ``List[...]`` or a Union holding one."""
    if typing.get_origin(annotation) is list:
        return True
    if typing.get_origin(annotation) is typing.Union:
        return any(takes_list(a) for a in typing.get_args(annotation))
    return False


def _type_name(annotation):
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Union:
        return " or ".join(_type_name(a) for a in args)
    if typing.get_origin(annotation) is list:
        return f"a list of {_type_name(args[0])}"
    return "null" if annotation is type(None) else annotation.__name__


def _matches(value, annotation):
    if typing.get_origin(annotation) is typing.Union:
        return any(_matches(value, a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if typing.get_origin(annotation) is list:
        [item] = typing.get_args(annotation)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


class ConfigTypeError(TypeError, ValueError):
    """A config value of the wrong type: a TypeError, and a ValueError so
    that callers treating bad values as the user's (the CLI) report it as one."""


def check_type(name, value, annotation):
    if not _matches(value, annotation):
        raise ConfigTypeError(
            f"Config key {name!r} must be {_type_name(annotation)}. "
            f"Received: {value!r} ({type(value).__name__})"
        )
