"""`DecodeOptions`: every decoding choice, validated once.

One frozen object carries the search settings from wherever a user sets them
(the Python API, the CLI's flags, a config file, `export`) to the one decode
path. It is validated when it is made, so a bad value is reported before any
model is loaded or any function compiled, with the argument's name.

It imports nothing from Keras: the CLI can validate flags before choosing and
importing a backend.
"""

import dataclasses
import math
import numbers


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class DecodeOptions:
    """How to search for translations.

    Args:
        beam_size: int >= 1. Beam width; 1 is greedy search (or sampling,
            with ``sampling=True``). Defaults to 4 (the paper).
        alpha: float >= 0. GNMT length-penalty exponent: scores are
            ``log P(Y|x) / ((5 + |Y|) / 6) ** alpha``. Defaults to 0.6.
        max_extra_length: int >= 1. An output holds at most the source length
            (tokens, EOS excluded) plus this many tokens, EOS included.
            Defaults to 50.
        min_length: int >= 0. EOS is forbidden before this many tokens.
            Defaults to 0.
        num_return: int >= 1. Hypotheses returned per sentence, best first:
            at most ``beam_size`` for beam search; with sampling, this many
            independent samples. Defaults to 1.
        max_source_length: int >= 2. Sources longer than this many tokens
            (EOS included) are truncated, EOS kept. Defaults to 256.
        sampling: bool. Draw each token from the model's distribution
            (needs ``beam_size=1``) instead of searching. Defaults to False.
        temperature: float > 0. Sampling: logits are divided by it.
            Defaults to 1.0.
        top_k: int >= 1 or None. Sampling: only the k most probable tokens.
            Defaults to None (all).
        top_p: float in (0, 1]. Sampling: only the smallest set of most
            probable tokens whose probability reaches ``top_p`` (nucleus).
            Combinable with ``top_k``. Defaults to 1.0 (all).
        seed: int >= 0 or None. Sampling: the same seed gives the same
            samples on the same backend. Defaults to None (a fresh seed).

    Example:

    ```python
    options = DecodeOptions(beam_size=5, alpha=1.0)
    sampled = options.replace(beam_size=1, sampling=True, top_p=0.9, seed=7)
    ```
    """

    beam_size: int = 4
    alpha: float = 0.6
    max_extra_length: int = 50
    min_length: int = 0
    num_return: int = 1
    max_source_length: int = 256
    sampling: bool = False
    temperature: float = 1.0
    top_k: int = None
    top_p: float = 1.0
    seed: int = None

    def __post_init__(self):
        def fail(name, requirement):
            raise ValueError(
                f"{name} must be {requirement}. "
                f"Received: {name}={getattr(self, name)!r}"
            )

        for name, minimum in (
            ("beam_size", 1),
            ("max_extra_length", 1),
            ("min_length", 0),
            ("num_return", 1),
            ("max_source_length", 2),
        ):
            value = getattr(self, name)
            if not _is_int(value) or value < minimum:
                fail(name, f"an int >= {minimum}")
        if not _is_real(self.alpha) or not math.isfinite(self.alpha) or self.alpha < 0:
            fail("alpha", "a finite number >= 0")
        if not isinstance(self.sampling, bool):
            fail("sampling", "True or False")
        if not _is_real(self.temperature) or not (
            math.isfinite(self.temperature) and self.temperature > 0
        ):
            fail("temperature", "a finite number > 0")
        if self.top_k is not None and (not _is_int(self.top_k) or self.top_k < 1):
            fail("top_k", "None or an int >= 1")
        if not _is_real(self.top_p) or not 0 < self.top_p <= 1:
            fail("top_p", "a number in (0, 1]")
        if self.seed is not None and (not _is_int(self.seed) or self.seed < 0):
            fail("seed", "None or an int >= 0")
        if self.sampling:
            if self.beam_size != 1:
                raise ValueError(
                    "Sampling draws tokens instead of searching beams: use "
                    "beam_size=1 with sampling=True (num_return=k gives k "
                    f"samples). Received: beam_size={self.beam_size}"
                )
        else:
            changed = [
                f"{name}={getattr(self, name)!r}"
                for name, default in (
                    ("temperature", 1.0),
                    ("top_k", None),
                    ("top_p", 1.0),
                    ("seed", None),
                )
                if getattr(self, name) != default
            ]
            if changed:
                raise ValueError(
                    f"{', '.join(changed)} only apply with sampling=True; "
                    "pass sampling=True or leave them at their defaults."
                )
            if self.num_return > self.beam_size:
                raise ValueError(
                    "num_return cannot exceed beam_size (a beam holds "
                    f"beam_size hypotheses). Received: num_return="
                    f"{self.num_return}, beam_size={self.beam_size}"
                )

    @property
    def search(self):
        """``"sample"``, ``"greedy"`` or ``"beam"``."""
        if self.sampling:
            return "sample"
        return "greedy" if self.beam_size == 1 else "beam"

    def replace(self, **changes):
        """A copy with ``changes`` applied (and validated)."""
        _check_names(changes)
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, values):
        """Build from a dict (e.g. a config file); unknown keys are refused."""
        values = dict(values)
        _check_names(values)
        return cls(**values)

    def to_dict(self):
        return dataclasses.asdict(self)


def _check_names(values):
    known = {field.name for field in dataclasses.fields(DecodeOptions)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"Unknown decode option(s) {unknown}. Valid options: {sorted(known)}"
        )
