"""The ``keras-transformer`` argument parser, made from data.

`COMMANDS` lists the subcommands, each with its help, description, example
and flags (``(names, add_argument options)`` pairs); `build_parser` turns
the table into an `argparse` parser. The ``train`` flags are generated from
`TrainConfig`'s field metadata (its ``doc``, ``flags`` and ``metavar``), so
that the parser, config files and the reference in ``docs/training.md``
cannot disagree.
"""

import argparse
import dataclasses
import math
import textwrap
import typing

from keras_transformer import options as decode_options
from keras_transformer.cli.option_flags import decoding_flags, option_type
from keras_transformer.cli.option_flags import flag as _flag
from keras_transformer.training.config import TrainConfig, parse_value

BACKENDS = ("tensorflow", "jax", "torch")


_REEXEC_MARKER = "KERAS_TRANSFORMER_CLI_REEXEC"


_TRAIN_EPILOG = """\
examples:
  keras-transformer train                      # the built-in number-words task
  keras-transformer train --backend jax --output-dir runs/numbers
  keras-transformer train --train-src train.en.gz --train-tgt train.de.gz \\
      --valid-src val.en.gz --valid-tgt val.de.gz --output-dir runs/multi30k
  keras-transformer train --config multi30k.yaml --set model_overrides.num_layers=4

Precedence: --config file, then explicit flags, then --set. Unknown keys are
errors. Fields left unset ("auto") depend on whether you train on the
default task or on your own files; the run's train_config.json records them.
Run the same command again to resume an interrupted run. A run directory
holds one run: a finished run, a run with other settings or other files there
are refused; --overwrite moves them aside to DIR.old-<timestamp> first.
"""


def _positive_int(text):
    """An argparse type: an int >= 1 (the message names the argument)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _non_negative_float(text):
    """An argparse type: a finite float >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _positive_float(text):
    """An argparse type: a finite float > 0."""
    value = _non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


# Flags several subcommands share.
MODEL_DIR = _flag(
    "--model-dir", required=True, action="extend", nargs="+", metavar="DIR",
    help="a trained model: a run directory (a train or convert --output-dir) "
    "or a preset written by save_to_preset. Several "
    "(--model-dir A B, or --model-dir repeated) decode as an ensemble: models "
    "sharing one vocab.spm, their next-token probabilities averaged at every "
    "step; the decoding defaults are the first directory's",
)
WEIGHTS = _flag(
    "--weights", type=_positive_float, nargs="+", metavar="W",
    help="an ensemble's weights, one per --model-dir, normalized (default: equal)",
)
BATCH_SIZE = _flag(
    "--batch-size", type=_positive_int, metavar="N", help="sentences per batch (default: 32)"
)


QUANTIZE = _flag(
    "--quantize", choices=("int8",),
    help="quantize the model's Dense kernels to int8; their inputs stay in the compute dtype",
)
OUTPUT = _flag("--output", default="-", metavar="FILE", help="output file; '-' is stdout")
TARGET_LANGUAGE = _flag(
    "--target-language", metavar="CODE",
    help="the language to translate into (e.g. de), one for every line: "
    "required by a model trained with several target languages (its "
    "vocabulary's language tags), refused by one of a single target language",
)
MAX_SOURCE_LENGTH = _flag(
    "--max-source-length", type=option_type(decode_options.BY_NAME["max_source_length"]),
    default=decode_options.DEFAULTS["max_source_length"], metavar="N",
    help=decode_options.flag_help(decode_options.BY_NAME["max_source_length"], from_run=False),
)


def _train_flags():
    return (
        _flag("--config", metavar="FILE", help="YAML or JSON training config"),
        *_config_flags(),
        _flag("--overwrite", action="store_true",
              help="when --output-dir holds a finished run, another run or other "
              "files, move it aside to DIR.old-<timestamp> and start afresh "
              "(default: refuse)"),
        _flag("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
              help="override any config key (YAML value); model_overrides.KEY=VALUE "
              "sets a model argument. Repeatable."),
    )


def _translate_flags():
    return (
        MODEL_DIR,
        WEIGHTS,
        _flag("--input", default="-", metavar="FILE",
              help="input file (plain or gzip); '-' is stdin"),
        OUTPUT,
        *decoding_flags("translate"),
        BATCH_SIZE,
        _flag("--format", choices=("text", "jsonl"), default="text",
              help="text (default: one translation per line, or H-/A- lines with "
              "--n-best/--print-alignment) or jsonl (one JSON object per input line)"),
        _flag("--target-prefix", metavar="FILE",
              help="one target prefix per input line: each translation starts with it"),
        _flag("--constraints", action="store_true",
              help="lexically constrained decoding (fairseq's input form): each input "
              "line is the source, then tab-separated target phrases that the "
              "translation must contain (Post & Vilar, 2018; beam or greedy search)"),
        _flag("--print-alignment", action="store_true",
              help="after each hypothesis an 'A-<line>\\t<src>-<tgt> ...' line: for "
              "each output token (subwords, EOS excluded) the source token its "
              "cross-attention (last layer, mean over heads) weighs most"),
        TARGET_LANGUAGE,
        QUANTIZE,
    )


def _evaluate_flags():
    return (
        MODEL_DIR,
        WEIGHTS,
        _flag("--src", metavar="FILE", help="source file"),
        _flag("--ref", metavar="FILE", help="reference file, aligned with --src"),
        _flag("--output", metavar="FILE", help="also write the translations here"),
        _flag("--max-sentences", type=_positive_int, metavar="N",
              help="score only the first N sentences"),
        *decoding_flags("evaluate"),
        BATCH_SIZE,
        TARGET_LANGUAGE,
        QUANTIZE,
    )


def _score_flags():
    return (
        MODEL_DIR,
        WEIGHTS,
        _flag("--src", required=True, metavar="FILE", help="source file"),
        _flag("--tgt", required=True, metavar="FILE", help="target file, aligned with --src"),
        OUTPUT,
        _flag("--token-scores", action="store_true",
              help="after the total, a tab and each token's log-probability"),
        MAX_SOURCE_LENGTH,
        TARGET_LANGUAGE,
        QUANTIZE,
    )


def _average_flags():
    return (
        _flag("checkpoints", nargs="+", help="a checkpoint directory, or files oldest first"),
        _flag("--last-n", type=_positive_int, default=5, metavar="N", help="default: 5"),
        _flag("--output", required=True, metavar="PATH", help="output directory or .keras file"),
    )


def _convert_flags():
    return (
        _flag("--from", dest="source_format", required=True, choices=("marian",),
              help="the checkpoint's format: marian (Hugging Face Marian/OPUS-MT)"),
        _flag("source", metavar="SRC",
              help="the checkpoint directory (config.json, model.safetensors or "
              "pytorch_model.bin, source.spm, target.spm, vocab.json)"),
        _flag("--output-dir", required=True, metavar="RUN",
              help="the run directory to write"),
        _flag("--overwrite", action="store_true",
              help="move an existing RUN aside (RUN.old-<timestamp>) first"),
    )  # fmt: skip


def _export_flags():
    return (
        MODEL_DIR,
        WEIGHTS,
        _flag("--export-dir", required=True, metavar="DIR",
              help="base directory; the SavedModel goes to DIR/VERSION"),
        _flag("--version", type=_positive_int, default=1, metavar="N", help="default: 1"),
        MAX_SOURCE_LENGTH,
        _flag("--no-warmup", dest="warmup", action="store_false",
              help="do not write TF Serving warmup requests"),
        _flag("--format", choices=("saved_model", "ctranslate2", "transformers"),
              default="saved_model",
              help="saved_model (TF Serving, default), ctranslate2 (needs the "
              "optional ctranslate2 package; written to DIR/VERSION) or transformers "
              "(a Hugging Face MarianMTModel directory, written to DIR itself)"),
        _flag("--n-best", type=_positive_int, metavar="K",
              help="hypotheses per sentence of the SavedModel's translate_nbest "
              "signature (default: the beam size)"),
        # The beam-search signatures' settings; --temperature/--top-k/--top-p
        # are the translate_sample signature's filters (its seed is a
        # request input).
        *decoding_flags("export"),
        QUANTIZE,
        _flag("--parallel-searches", type=_positive_int, metavar="N",
              help="SavedModel: a request's sentences are searched in N groups at once, "
              "on TensorFlow's inter-op threads; 1 for a TF Serving whose "
              "--tensorflow_inter_op_parallelism is 1 (default: "
              f"{decode_options.PARALLEL_SEARCHES})"),
    )


def _preprocess_flags():
    return (
        _flag("--train-src", nargs="+", required=True, metavar="FILE",
              help="the source side: files (plain or gzip) or glob patterns, "
              "read in the order given"),
        _flag("--train-tgt", nargs="+", required=True, metavar="FILE",
              help="the target side: as many files, in the same order"),
        _flag("--output", required=True, metavar="DIR",
              help="the directory of the prepared corpus"),
        _flag("--vocabulary", metavar="PATH", exclusive_group="vocabulary",
              help="encode with this SentencePiece model (a vocab.spm, or a "
              "directory holding one, such as a run directory)"),
        _flag("--vocabulary-size", type=_positive_int, metavar="N",
              exclusive_group="vocabulary",
              help="learn a shared BPE vocabulary of N pieces from the corpus"),
        _flag("--shard-size", type=_positive_int, default=250_000, metavar="N",
              help="input lines per shard (default: 250000)"),
        _flag("--seed", type=int, default=0, metavar="N",
              help="seed of the sentence sample the vocabulary is learned from "
              "(default: 0)"),
        _flag("--target-languages", nargs="+", metavar="LANG",
              help="one model for several target languages: the target language "
              "of each pair of files (after glob expansion, in order); the "
              "vocabulary reserves a tag piece per language"),
        _flag("--language-tag", choices=("source", "target"), default="source",
              help="where each pair's language tag goes: the source's first token "
              "(as Marian) or the target's (forced when decoding) (default: source)"),
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Command:
    """A subcommand: its name, one-line help, description, example and flags."""

    name: str
    help: str
    description: str
    epilog: str = None
    flags: typing.Callable = tuple


COMMANDS = (
    Command(
        "train",
        "train a model (with no data arguments: the built-in default task)",
        "Train a Transformer and score it. With no data arguments it learns the "
        "built-in English -> German number-words task in a few minutes on a CPU.",
        _TRAIN_EPILOG,
        _train_flags,
    ),
    Command(
        "translate",
        "translate a file or stdin, one sentence per line, to stdout",
        "Translate one sentence per line with beam search. Empty lines stay "
        "empty, so the output aligns with the input.",
        "example:\n  echo 'twenty-one' | keras-transformer translate --model-dir runs/numbers",
        _translate_flags,
    ),
    Command(
        "evaluate",
        "BLEU (cased detokenized and lowercased tokenized) on a test set",
        "Translate a test set and print sacreBLEU's cased detokenized BLEU and "
        "lowercased tokenized BLEU with their signatures (and exact match for the "
        "default task). Without --src/--ref it uses the run's test (else "
        "validation) files, or the default task's test split.",
        "example:\n  keras-transformer evaluate --model-dir runs/multi30k "
        "--src test_2016_flickr.en.gz --ref test_2016_flickr.de.gz",
        _evaluate_flags,
    ),
    Command(
        "score",
        "forced decoding: the log-probability of given translations",
        "Score sentence pairs with the model: for each line of --src and the same "
        "line of --tgt, print the total log-probability of the target (its "
        "subword tokens and EOS) given the source, without length penalty.",
        "example:\n  keras-transformer score --model-dir runs/numbers --src test.en --tgt test.de",
        _score_flags,
    ),
    Command(
        "average-checkpoints",
        "average the weights of the last N checkpoints (paper: 5)",
        "Average the weights of the newest N checkpoints into one model. Given a "
        "run's checkpoints/ directory and an output directory, the output gets the "
        "model as a keras-hub preset with the run's vocab.spm, so it translates, "
        "exports and continues training (--init-from).",
        "example:\n  keras-transformer average-checkpoints runs/multi30k/checkpoints "
        "--last-n 5 --output runs/multi30k-avg",
        _average_flags,
    ),
    Command(
        "export",
        "export a trained model as a SavedModel for TF Serving",
        "Export a run directory (train or convert --output-dir) as a TensorFlow "
        "SavedModel for TF Serving that maps strings to translations (beam search "
        "inside). Works from any backend: the export itself runs under TensorFlow.",
        "example (writes exported/multi30k/1):\n  keras-transformer export "
        "--model-dir runs/multi30k --export-dir exported/multi30k",
        _export_flags,
    ),
    Command(
        "convert",
        "import a model trained elsewhere (Marian/OPUS-MT) as a run directory",
        "Import a Hugging Face Marian (OPUS-MT) checkpoint directory as a run "
        "directory that translate, evaluate, score and export take. Another "
        "format or an architecture outside the paper's family is refused, "
        "naming what is missing, before any weight is read.",
        "example:\n  keras-transformer convert --from marian opus-mt-en-de "
        "--output-dir runs/opus-mt-en-de\n  echo 'Hello.' | keras-transformer "
        "translate --model-dir runs/opus-mt-en-de",
        _convert_flags,
    ),
    Command(
        "preprocess",
        "tokenize a parallel corpus once into binary shards for training",
        "Tokenize a parallel corpus into a prepared corpus: the token ids in "
        "memory-mapped shards and their vocabulary, which training streams in "
        "bounded memory whatever the corpus size. The vocabulary is learned "
        "from the corpus (--vocabulary-size) or given (--vocabulary). Run the "
        "same command again to resume an interrupted preparation; a finished "
        "one is reused as it is.",
        "example:\n  keras-transformer preprocess --train-src 'wmt14/*.en.gz' "
        "--train-tgt 'wmt14/*.de.gz' \\\n      --vocabulary-size 37000 --output "
        "data/wmt14\n  keras-transformer train --train-corpus data/wmt14 ...",
        _preprocess_flags,
    ),
    Command(
        "info",
        "print the version, the backend and the presets",
        "Print the package version, the active Keras backend and the model presets.",
    ),
)


def _backend_parent():
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--backend",
        choices=BACKENDS,
        default=argparse.SUPPRESS,
        help="Keras backend (default: KERAS_BACKEND, or the config's backend)",
    )
    parent.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an error instead of a one-line message",
    )
    parent.add_argument(
        "--tf-log",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show TensorFlow's native log lines (hidden by default, as with "
        "TF_CPP_MIN_LOG_LEVEL=3; train's --verbose is Keras' progress output)",
    )
    return parent


def build_parser():
    """The argument parser: one subparser per entry of `COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="keras-transformer",
        description='Train, run and export the Transformer of "Attention Is All '
        'You Need" (Keras 3: TensorFlow, JAX or PyTorch backend).',
        parents=[_backend_parent()],
    )
    subparsers = parser.add_subparsers(dest="command", metavar="command")
    subparsers.required = True
    for command in COMMANDS:
        subparser = subparsers.add_parser(
            command.name,
            parents=[_backend_parent()],
            help=command.help,
            description=_wrap(command.description),
            epilog=command.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        groups = {}  # Flags of which exactly one must be given.
        for names, options in command.flags():
            group = options.pop("exclusive_group", None)
            if group is not None and group not in groups:
                groups[group] = subparser.add_mutually_exclusive_group(required=True)
            (groups[group] if group else subparser).add_argument(*names, **options)
    return parser


def _train_flag_fields():
    """The `TrainConfig` fields that have a ``train`` flag (all but
    ``cli=False`` ones: ``model_overrides``, set with ``--set``, and
    ``backend``, the ``--backend`` flag)."""

    return [f for f in dataclasses.fields(TrainConfig) if f.metadata.get("cli", True)]


def _config_flags():
    """One flag per `TrainConfig` field (yielded), made from the field itself.

    ``--name-with-dashes`` (and the spellings in the field's ``flags``
    metadata), its ``doc`` metadata and default (unless null, which the doc
    explains) as help. Text fields (and fields marked ``cli_text``, such as
    the data files: a path or glob pattern per flag) take the text as is; the others read it as ``--set`` does (YAML: ``3``,
    ``0.5``, ``true``, ``null``), and `TrainConfig` checks the type, so a
    bad value is reported with the key's name.
    """
    for field in _train_flag_fields():
        names = ["--" + field.name.replace("_", "-"), *field.metadata.get("flags", ())]
        text_field = field.type in (str, typing.Optional[str]) or field.metadata.get("cli_text")
        if text_field:
            kind, metavar = str, "NAME"
            if field.name.endswith(("_src", "_tgt")):
                metavar = "FILE"
        else:
            kind = _config_value(field.name)
            metavar = {int: "N", float: "X", typing.Optional[int]: "N",
                       typing.Optional[float]: "X"}.get(field.type, "VALUE")  # fmt: skip
        metavar = field.metadata.get("metavar", metavar)
        text = field.metadata.get("doc", field.name).replace("%", "%%")
        if field.default not in (None, dataclasses.MISSING) and "auto: " not in text:
            text += f" (default: {_yaml_text(field.default)})"
        yield _flag(
            *names, dest=field.name, type=kind, default=argparse.SUPPRESS,
            help=text, metavar=metavar,
        )  # fmt: skip


def _config_value(key):
    """An argparse type: the flag's text as the value of config key ``key``."""

    def convert(text):
        return parse_value(key, text)

    convert.__name__ = key  # argparse names it in its messages.
    return convert


def _yaml_text(value):
    """A default as a config file spells it (true, 0.1, text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _wrap(text):
    return textwrap.fill(text, width=78)


