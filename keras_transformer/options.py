"""Every decoding option, defined once.

One `Option` per setting of a search: its name, type, default, help text,
the checks its values must pass, whether it is compiled into the search (a
new value compiles a new search) or a runtime value (a tensor input of the
compiled search), how the SavedModel takes it, and how it maps to
CTranslate2. Everything else is made from this table:

- `keras_transformer.decoding.DecodeOptions`' fields, defaults and checks
  (hence `Translator.translate`'s and the keras-hub task's keywords);
- the ``translate``, ``evaluate`` and ``export`` flags (`cli_flags`);
- the run's decoding defaults (a training config's keys named like the
  options, `RUN_DEFAULTS`);
- the compiled searches' runtime tensor inputs (`RUNTIME`), the SavedModel's
  ``translate_options`` signature's inputs and the export's fixed arguments;
- the CTranslate2 translator's keyword arguments (`Option.ctranslate2`).

Pure Python: the CLI builds its parser (and answers ``--help``) from it
without importing Keras or TensorFlow.
"""

import dataclasses

from keras_transformer.utils.validation import check_int, check_number

# Where an option reaches the SavedModel.
SAVED_MODEL_INPUT = "input"  # a request input of ``translate_options`` (and fixed at export)
SAVED_MODEL_FIXED = "fixed"  # an export argument: fixed in the exported graphs

# Not a decoding option (the outputs do not depend on it): the SavedModel
# searches a request's sentences in this many groups at once, one per
# inter-op thread, since one search of a batch keeps about one core busy
# (TensorFlow runs a decoding step's small ops one at a time; figures in
# docs/serving.md). ``export --parallel-searches`` sets it.
PARALLEL_SEARCHES = 2


@dataclasses.dataclass(frozen=True)
class Option:
    """One decoding option.

    Args:
        name: the `DecodeOptions` field, keyword and config key.
        type: int, float or bool.
        default: the value when nobody sets it.
        help: one line for ``--help`` (the default is appended).
        minimum: the smallest valid value (ints and floats), or None.
        above_minimum: the minimum itself is invalid (``> minimum``).
        maximum: the largest valid value, or None.
        allow_none: None is a valid value (meaning "off").
        compiled: a new value compiles a new search (the value shapes the
            graph); False: a runtime tensor of the compiled search.
        flag: the CLI flag, or None (the option has no flag, see ``why``).
        metavar: the flag's metavar.
        commands: the subcommands with the flag.
        run_default: a training config key of the same name holds the run's
            default (used by ``translate``/``evaluate``/``export`` of the run).
        saved_model: `SAVED_MODEL_INPUT`, `SAVED_MODEL_FIXED`, or a sentence
            saying why the SavedModel does not take it.
        ctranslate2: the keyword of CTranslate2's ``translate_batch`` that
            carries it, or a sentence saying why none does (read by
            `CTranslate2Translator`).
    """

    name: str
    type: type
    default: object
    help: str
    minimum: object = None
    above_minimum: bool = False
    maximum: object = None
    allow_none: bool = False
    compiled: bool = True
    flag: str = None
    metavar: str = "N"
    commands: tuple = ("translate", "evaluate", "export")
    run_default: bool = False
    saved_model: str = SAVED_MODEL_FIXED
    ctranslate2: str = None

    @property
    def dtype(self):
        """The tensor dtype of a runtime option."""
        return "float32" if self.type is float else "int32"


_SAMPLING_ONLY = ("translate",)

OPTIONS = (
    Option(
        "beam_size", int, 4, "beam size; 1 is greedy search", minimum=1,
        flag="--beam-size", run_default=True, ctranslate2="beam_size",
    ),
    Option(
        "alpha", float, 0.6,
        "length penalty: scores are log P / ((5 + |Y|) / 6) ** alpha", minimum=0,
        compiled=False, flag="--alpha", metavar="X", run_default=True,
        saved_model=SAVED_MODEL_INPUT, ctranslate2="length_penalty",
    ),
    Option(
        "max_extra_length", int, 50, "output length limit = source length + N", minimum=1,
        flag="--max-extra-length", run_default=True, ctranslate2="max_decoding_length",
    ),
    Option(
        "min_length", int, 0, "EOS is forbidden before N output tokens", minimum=0,
        compiled=False, flag="--min-length", run_default=True,
        saved_model=SAVED_MODEL_INPUT, ctranslate2="min_decoding_length",
    ),
    Option(
        "no_repeat_ngram_size", int, 0,
        "no n-gram of this many tokens occurs twice in an output (0: off; "
        "Hugging Face's no_repeat_ngram_size)", minimum=0,
        flag="--no-repeat-ngram-size", run_default=True, ctranslate2="no_repeat_ngram_size",
    ),
    Option(
        "repetition_penalty", float, 1.0,
        "scores of tokens already in the output are divided by X (multiplied "
        "where negative; 1: off; Hugging Face's repetition_penalty)", minimum=0,
        above_minimum=True, compiled=False, flag="--repetition-penalty", metavar="X",
        run_default=True, saved_model=SAVED_MODEL_INPUT, ctranslate2="repetition_penalty",
    ),
    Option(
        "num_return", int, 1,
        "print the K best hypotheses (K samples with --sampling) as fairseq-like "
        "'H-<line>\\t<score>\\t<text>' lines (at most the beam size)", minimum=1,
        flag="--n-best", metavar="K", commands=("translate",),
        saved_model="the translate_nbest signature returns --n-best hypotheses",
        ctranslate2="num_hypotheses",
    ),
    Option(
        "max_source_length", int, 256,
        "sources longer than this many tokens (EOS included) are truncated", minimum=2,
        ctranslate2="max_input_length",
    ),
    Option(
        "sampling", bool, False,
        "draw tokens from the model's distribution (needs beam size 1)",
        flag="--sampling", commands=_SAMPLING_ONLY,
        saved_model="the translate_sample signature samples",
        ctranslate2="sampling_topk",
    ),
    Option(
        "temperature", float, 1.0, "sampling: logits are divided by X", minimum=0,
        above_minimum=True, flag="--temperature", metavar="X",
        commands=(*_SAMPLING_ONLY, "export"), ctranslate2="sampling_temperature",
    ),
    Option(
        "top_k", int, None, "sampling: only the K most probable tokens", minimum=1,
        allow_none=True, flag="--top-k", metavar="K",
        commands=(*_SAMPLING_ONLY, "export"), ctranslate2="sampling_topk",
    ),
    Option(
        "top_p", float, 1.0,
        "sampling: the smallest set of tokens with probability >= P (nucleus)",
        minimum=0, above_minimum=True, maximum=1, flag="--top-p", metavar="P",
        commands=(*_SAMPLING_ONLY, "export"), ctranslate2="sampling_topp",
    ),
    Option(
        "seed", int, None, "sampling seed: the same seed gives the same samples", minimum=0,
        allow_none=True, compiled=False, flag="--seed", commands=_SAMPLING_ONLY,
        saved_model="a request input of translate_sample",
        ctranslate2="none per call: CTranslate2 seeds its sampling once per process "
        "(ctranslate2.set_random_seed)",
    ),
)

BY_NAME = {option.name: option for option in OPTIONS}
DEFAULTS = {option.name: option.default for option in OPTIONS}
# The options a run keeps among its decoding defaults (training config keys).
RUN_DEFAULTS = tuple(option.name for option in OPTIONS if option.run_default)
# Runtime values of a compiled search, in the order of its tensor inputs.
RUNTIME = tuple(
    option.name for option in OPTIONS if not option.compiled and option.name != "seed"
)
# The request inputs of the SavedModel's ``translate_options`` signature.
SAVED_MODEL_INPUTS = tuple(
    option.name for option in OPTIONS if option.saved_model == SAVED_MODEL_INPUT
)


def check(option, value):
    """Raises a ValueError naming ``option`` (an `Option` or its name) when
    ``value`` is not one of its valid values (`keras_transformer.utils.
    validation`'s wording); returns ``value``."""
    option = BY_NAME[option] if isinstance(option, str) else option
    name = option.name
    if option.type is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False. Received: {name}={value!r}")
        return value
    if option.type is int:
        return check_int(
            name, value, minimum=option.minimum, maximum=option.maximum,
            allow_none=option.allow_none,
        )
    check_number(name, value, minimum=option.minimum, maximum=option.maximum,
                 allow_none=option.allow_none)
    if option.above_minimum and value == option.minimum:
        upper = "" if option.maximum is None else f" and <= {option.maximum}"
        raise ValueError(
            f"{name} must be a number > {option.minimum}{upper}. Received: {name}={value!r}"
        )
    return value


def cli_flags(command):
    """``[(flag, option)]`` of ``command``'s decoding flags, in table order."""
    return [
        (option.flag, option) for option in OPTIONS
        if option.flag is not None and command in option.commands
    ]


def flag_help(option, from_run=True):
    """The ``--help`` text of ``option``'s flag, its default included."""
    if option.type is bool:
        return option.help
    default = "off" if option.default is None else option.default
    where = "the run's, else " if from_run and option.run_default else ""
    return f"{option.help} (default: {where}{default})"
