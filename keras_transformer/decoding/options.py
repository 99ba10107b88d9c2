"""The options of a search: `DecodeOptions` (what a user chooses),
`SearchRequest` / `StaticDecode` (what shapes a compiled search) and
`SearchInputs` (the runtime values a compiled search takes).

`DecodeOptions` is one frozen object that carries the search settings from
wherever a user sets them (the Python API, the CLI's flags, a config file,
`export`) to the one decode path. It is validated when it is made, so a bad
value is reported before any model is loaded or any function compiled, with
the argument's name.

`SearchRequest` holds the Python values that `generate` turns into a graph
(search kind, beam size, number of returns, sampling filters, how the model
is stepped); it is hashable, so a compiled function can be kept per request.
The runtime values (alpha, min_length, the sampling seed, prefixes, lengths)
are not part of it: they are tensors, and changing them reuses the compiled
function; `SearchInputs` carries them. `StaticDecode` adds the
source-preparation lengths.

This module imports nothing from Keras: the CLI can validate flags before
choosing and importing a backend.
"""

import dataclasses

from keras_transformer.utils.validation import check_choice, check_int, check_number

SEARCHES = ("auto", "beam", "greedy", "sample")


def _check_above_zero(name, value, maximum=None):
    """A finite number in ``(0, maximum]``: `check_number`, whose ranges
    include their minimum, then the exclusive bound of zero."""
    check_number(name, value, minimum=0, maximum=maximum)
    if value == 0:
        upper = "" if maximum is None else f" and <= {maximum}"
        raise ValueError(f"{name} must be a number > 0{upper}. Received: {name}={value!r}")


def _check_sampling_filters(temperature, top_k, top_p):
    _check_above_zero("temperature", temperature)
    check_int("top_k", top_k, allow_none=True)
    _check_above_zero("top_p", top_p, maximum=1)


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
        for name, minimum in (
            ("beam_size", 1),
            ("max_extra_length", 1),
            ("min_length", 0),
            ("num_return", 1),
            ("max_source_length", 2),
        ):
            check_int(name, getattr(self, name), minimum=minimum)
        check_number("alpha", self.alpha, minimum=0)
        # A strict bool: check_choice would let 0 and 1 through. A
        # ValueError, as for every other option.
        if not isinstance(self.sampling, bool):
            raise ValueError(  # noqa: TRY004
                f"sampling must be True or False. Received: sampling={self.sampling!r}"
            )
        _check_sampling_filters(self.temperature, self.top_k, self.top_p)
        check_int("seed", self.seed, minimum=0, allow_none=True)
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


@dataclasses.dataclass(frozen=True)
class SearchRequest:
    """The static part of a `generate` call: Python values that shape its graph.

    A frozen, hashable dataclass rather than a `DecodeOptions`: a compiled
    search is kept per request, so the request holds only what the graph
    depends on. `DecodeOptions` also holds alpha, min_length and the seed,
    which a compiled search takes as tensors (a new value must not recompile),
    and the source lengths, which `generate` does not use; it has no way to
    ask for beam search with one beam or for uncached decoding.

    Args:
        search: "beam", "greedy" (needs ``beam_size=1``), "sample" (needs
            ``beam_size=1``) or "auto" (greedy for ``beam_size=1``, beam
            otherwise). Defaults to "auto".
        beam_size: int >= 1. Defaults to 4.
        num_return: int >= 1. Hypotheses per sentence (beam search: at most
            ``beam_size``; sampling: independent samples). Defaults to 1.
        temperature, top_k, top_p: sampling filters, as in `DecodeOptions`.
        use_cache: bool. Incremental decoding with key/value caches (True)
            or the decoder re-run on the whole prefix every step (False).
        cache_growth: int >= 1 or None. The cached searches start with a
            key/value buffer of this many positions and grow it in stages
            (`search.cache_lengths`); None: one buffer of the output
            length from the start. Defaults to 16.
        python_loop: bool. A Python loop instead of `keras.ops.while_loop`.
        decode_fn, prefix_multiple: uncached decoding only, see
            `cache.uncached_tokens_to_logits`.
        constrained: bool. Lexically constrained beam search (`generate`'s
            ``constraint_ids``); False keeps the unconstrained search.
    """

    search: str = "auto"
    beam_size: int = 4
    num_return: int = 1
    temperature: float = 1.0
    top_k: int = None
    top_p: float = 1.0
    use_cache: bool = True
    cache_growth: int = 16
    python_loop: bool = False
    decode_fn: object = None
    prefix_multiple: int = None
    constrained: bool = False

    def __post_init__(self):
        check_choice("search", self.search, SEARCHES)
        check_int("beam_size", self.beam_size)
        check_int("num_return", self.num_return)
        if self.search in ("greedy", "sample") and self.beam_size != 1:
            raise ValueError(
                f"{self.search.capitalize()} search has no beams. "
                f"Received: beam_size={self.beam_size}"
            )
        _check_sampling_filters(self.temperature, self.top_k, self.top_p)
        check_int("cache_growth", self.cache_growth, allow_none=True)
        check_int("prefix_multiple", self.prefix_multiple, allow_none=True)
        if self.constrained and self.kind == "sample":
            raise ValueError(
                "constraints need a search (beam or greedy), not sampling. "
                "Received: constraints with search='sample'"
            )

    @property
    def kind(self):
        """The search that runs: "sample", "greedy" or "beam" ("auto" resolved)."""
        if self.search == "auto":
            return "greedy" if self.beam_size == 1 else "beam"
        return self.search


@dataclasses.dataclass(frozen=True)
class StaticDecode(SearchRequest):
    """A `SearchRequest` plus the lengths that `sources.prepare_sources`
    uses: everything static about decoding raw source ids
    (`generate.decode_token_ids`, one compiled function each)."""

    max_source_length: int = 256
    max_extra_length: int = 50
    max_positions: int = None

    @classmethod
    def from_options(cls, options, max_positions=None, **request):
        """The static part of ``options`` (a `DecodeOptions`); ``request``
        sets the other `SearchRequest` fields (``use_cache``, ...)."""
        return cls(
            search=options.search,
            beam_size=options.beam_size,
            num_return=options.num_return,
            temperature=float(options.temperature),
            top_k=options.top_k,
            top_p=float(options.top_p),
            max_source_length=options.max_source_length,
            max_extra_length=options.max_extra_length,
            max_positions=max_positions,
            **request,
        )


@dataclasses.dataclass(frozen=True, eq=False)
class SearchInputs:
    """The runtime part of a search: values a compiled search takes as
    arguments (tensors, or Python numbers outside a compiled function).

    Apart from `SearchRequest` because a compiled search is kept per request
    (a hashable key), while changing one of these must reuse it. The
    searches (`beam_search`, `greedy_search`) read ``alpha`` to
    ``constraint_ids`` and ``batch_size``; `generate` also ``seed`` and
    ``row_ids``.

    Args:
        alpha: float scalar. GNMT length-penalty exponent, ``>= 0``.
            Defaults to 0.6 (the paper's).
        min_length: int scalar. EOS is forbidden before this many tokens.
            Defaults to 0.
        max_lengths: optional int ``(batch,)``: each row's maximum output
            length (its last allowed token is EOS). Defaults to None (the
            search's ``max_length``).
        prefix_ids, prefix_lengths: optional int ``(batch, P >= 1)`` and
            ``(batch,)``: forced target prefixes (see `search`). Defaults
            to None.
        constraint_ids: optional int ``(batch, phrases, phrase_length)``,
            PAD-padded: target phrases every output must contain (beam
            search only; see `beam_search`). Defaults to None.
        seed: int scalar. Sampling only. Defaults to 0.
        row_ids: optional int ``(batch,)``. Sampling only: each sentence's
            id (see `generate`). Defaults to the row positions.
        batch_size: int or None. Needed only when the search's cache has
            no tensors; defaults to the first axis of its first leaf.
    """

    alpha: object = 0.6
    min_length: object = 0
    max_lengths: object = None
    prefix_ids: object = None
    prefix_lengths: object = None
    constraint_ids: object = None
    seed: object = 0
    row_ids: object = None
    batch_size: int = None

    def replace(self, **changes):
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)
