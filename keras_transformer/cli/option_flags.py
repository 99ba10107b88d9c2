"""The decoding flags of ``translate``, ``evaluate`` and ``export``, made
from the option definitions (`keras_transformer.options`): one flag per
option and command that the definition names, its type and checks, its help
with the default. Pure Python: building the parser imports neither Keras
nor TensorFlow.
"""

import argparse

from keras_transformer import options as decode_options


def flag(*names, **options):
    """One ``add_argument`` call, as data: ``(names, options)``."""
    return names, options


def option_type(option):
    """An argparse type for a decoding option: its type, then its own checks
    (`keras_transformer.options.check`): a bad value is a usage error naming
    the flag and the option. The rules between options are `DecodeOptions`'
    (checked before any model loads)."""
    parse = int if option.type is int else float

    def convert(text):
        try:
            value = parse(text)
        except ValueError:
            kind = "an integer" if option.type is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        try:
            return decode_options.check(option, value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = option.name  # argparse names the type in some errors
    return convert


def decoding_flags(command):
    """``command``'s decoding flags, made from `keras_transformer.options`.
    Their default is None: the command then takes the run's value, else the
    option's default."""
    flags = []
    for name, option in decode_options.cli_flags(command):
        if option.type is bool:
            flags.append(flag(name, dest=option.name, action="store_true", help=option.help))
        else:
            flags.append(flag(
                name, dest=option.name, type=option_type(option), metavar=option.metavar,
                help=decode_options.flag_help(option),
            ))
    return tuple(flags)
