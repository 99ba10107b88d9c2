"""Argument checks with one wording, Keras' own: ``"<name> must be ...
Received: <name>=<value>"``.

Every public function and constructor of the package checks its arguments
with these before any expensive work, so that a bad value is an error naming
the argument, never a traceback from deep inside a computation.
"""

import math
import numbers


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _fail(name, requirement, value):
    raise ValueError(f"{name} must be {requirement}. Received: {name}={value!r}")


def check_int(name, value, minimum=1, maximum=None, allow_none=False):
    """Returns ``value`` if it is an int in ``[minimum, maximum]`` (or None
    with ``allow_none``); else raises a ValueError naming ``name``.

    The default ``minimum=1`` is "a positive int".
    """
    if value is None and allow_none:
        return value
    if _is_int(value) and value >= minimum and (maximum is None or value <= maximum):
        return int(value)
    if maximum is not None:
        requirement = f"an int in [{minimum}, {maximum}]"
    elif minimum == 1:
        requirement = "a positive int"
    elif minimum == 0:
        requirement = "a non-negative int"
    else:
        requirement = f"an int >= {minimum}"
    if allow_none:
        requirement += " or None"
    _fail(name, requirement, value)


def check_number(name, value, minimum=None, maximum=None, include_maximum=True,
                 allow_none=False):
    """Returns ``value`` as a float if it is a finite number in the range
    (``[minimum, maximum]``, or ``[minimum, maximum)`` with
    ``include_maximum=False``); else raises a ValueError naming ``name``."""
    if value is None and allow_none:
        return value
    valid = _is_number(value) and math.isfinite(value)
    if valid and minimum is not None:
        valid = value >= minimum
    if valid and maximum is not None:
        valid = value <= maximum if include_maximum else value < maximum
    if valid:
        return float(value)
    if minimum is not None and maximum is not None:
        bracket = "]" if include_maximum else ")"
        requirement = f"a number in [{minimum}, {maximum}{bracket}"
    elif minimum is not None:
        requirement = f"a number >= {minimum}"
    elif maximum is not None:
        requirement = f"a number {'<=' if include_maximum else '<'} {maximum}"
    else:
        requirement = "a finite number"
    if allow_none:
        requirement += " or None"
    _fail(name, requirement, value)


def check_rate(name, value):
    """A probability-like rate in [0, 1) (dropout, label smoothing)."""
    return check_number(name, value, minimum=0, maximum=1, include_maximum=False)


def check_choice(name, value, choices):
    """Returns ``value`` if it is one of ``choices``; else a ValueError
    naming ``name`` and listing the choices."""
    if value in choices:
        return value
    _fail(name, f"one of {tuple(choices)}", value)
