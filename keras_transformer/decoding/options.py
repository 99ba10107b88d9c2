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

from keras_transformer.options import DEFAULTS, OPTIONS
from keras_transformer.options import check as check_option
from keras_transformer.utils.validation import check_choice, check_int

SEARCHES = ("auto", "beam", "greedy", "sample")


def _check_sampling_filters(temperature, top_k, top_p):
    for name, value in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p)):
        check_option(name, value)


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
        no_repeat_ngram_size: int >= 0. No n-gram of this many tokens
            occurs twice in an output: a token that would repeat one is
            forbidden (Hugging Face's ``no_repeat_ngram_size``; the start
            token counts as the output's first). Defaults to 0 (off).
        repetition_penalty: float > 0. A token already in the output (start
            token included) has its score divided by this where positive
            and multiplied where negative (Hugging Face's
            ``repetition_penalty``, CTRL's): greedy search and sampling
            penalize the logits, beam search the log-probabilities, as
            Hugging Face does. Defaults to 1.0 (off).

    Each option's definition (default, checks, flag, SavedModel and
    CTranslate2 mapping) is in `keras_transformer.options`.

    Example:

    ```python
    options = DecodeOptions(beam_size=5, alpha=1.0)
    sampled = options.replace(beam_size=1, sampling=True, top_p=0.9, seed=7)
    ```
    """

    beam_size: int = DEFAULTS["beam_size"]
    alpha: float = DEFAULTS["alpha"]
    max_extra_length: int = DEFAULTS["max_extra_length"]
    min_length: int = DEFAULTS["min_length"]
    num_return: int = DEFAULTS["num_return"]
    max_source_length: int = DEFAULTS["max_source_length"]
    sampling: bool = DEFAULTS["sampling"]
    temperature: float = DEFAULTS["temperature"]
    top_k: int = DEFAULTS["top_k"]
    top_p: float = DEFAULTS["top_p"]
    seed: int = DEFAULTS["seed"]
    no_repeat_ngram_size: int = DEFAULTS["no_repeat_ngram_size"]
    repetition_penalty: float = DEFAULTS["repetition_penalty"]

    def __post_init__(self):
        # Each value against its definition (`keras_transformer.options`),
        # then the rules between options.
        for option in OPTIONS:
            check_option(option, getattr(self, option.name))
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
                for name in ("temperature", "top_k", "top_p", "seed")
                if getattr(self, name) != DEFAULTS[name]
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
        no_repeat_ngram_size: int >= 0, as in `DecodeOptions` (0: off).
        penalize_repetition: bool. Apply `SearchInputs.repetition_penalty`
            (a runtime value); False leaves the step without it.
    """

    search: str = "auto"
    beam_size: int = DEFAULTS["beam_size"]
    num_return: int = DEFAULTS["num_return"]
    temperature: float = DEFAULTS["temperature"]
    top_k: int = DEFAULTS["top_k"]
    top_p: float = DEFAULTS["top_p"]
    use_cache: bool = True
    cache_growth: int = 16
    python_loop: bool = False
    decode_fn: object = None
    prefix_multiple: int = None
    constrained: bool = False
    no_repeat_ngram_size: int = DEFAULTS["no_repeat_ngram_size"]
    penalize_repetition: bool = False

    def __post_init__(self):
        check_choice("search", self.search, SEARCHES)
        check_option("no_repeat_ngram_size", self.no_repeat_ngram_size)
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

    max_source_length: int = DEFAULTS["max_source_length"]
    max_extra_length: int = DEFAULTS["max_extra_length"]
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
            no_repeat_ngram_size=options.no_repeat_ngram_size,
            penalize_repetition=options.repetition_penalty != 1.0,
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
        repetition_penalty: float scalar > 0 (see `DecodeOptions`), read
            where the request's ``penalize_repetition`` is set. Defaults to
            1.0.
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

    alpha: object = DEFAULTS["alpha"]
    min_length: object = DEFAULTS["min_length"]
    repetition_penalty: object = DEFAULTS["repetition_penalty"]
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
