"""The ``keras-transformer`` argument parser: one subparser per command.

The ``train`` flags are generated from `TrainConfig`'s field metadata (its
``doc`` and ``flags``), so that the parser, the config files and the
reference in ``docs/training.md`` cannot disagree.
"""

import argparse
import dataclasses
import math
import textwrap
import typing

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
default task or on your own files; the run's config.json records them.
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
    return parent


def build_parser():
    """The argument parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="keras-transformer",
        description='Train, run and export the Transformer of "Attention Is All '
        'You Need" (Keras 3: TensorFlow, JAX or PyTorch backend).',
        parents=[_backend_parent()],
    )
    commands = parser.add_subparsers(dest="command", metavar="command")
    commands.required = True
    parent = [_backend_parent()]
    formatter = argparse.RawDescriptionHelpFormatter

    train = commands.add_parser(
        "train",
        parents=parent,
        help="train a model (with no data arguments: the built-in default task)",
        description=_wrap(
            "Train a Transformer and score it. With no data arguments it "
            "learns the built-in English -> German number-words task in a few "
            "minutes on a CPU."
        ),
        epilog=_TRAIN_EPILOG,
        formatter_class=formatter,
    )
    train.add_argument("--config", metavar="FILE", help="YAML or JSON training config")
    _add_train_flags(train)
    train.add_argument(
        "--overwrite",
        action="store_true",
        help="when --output-dir holds a finished run, another run or other "
        "files, move it aside to DIR.old-<timestamp> and start afresh "
        "(default: refuse)",
    )
    train.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any config key (YAML value); model_overrides.KEY=VALUE "
        "sets a model argument. Repeatable.",
    )

    translate = commands.add_parser(
        "translate",
        parents=parent,
        help="translate a file or stdin, one sentence per line, to stdout",
        description=_wrap(
            "Translate one sentence per line with beam search. Empty "
            "lines stay empty, so the output aligns with the input."
        ),
        epilog="example:\n  echo 'twenty-one' | keras-transformer translate "
        "--model-dir runs/numbers",
        formatter_class=formatter,
    )
    _add_model_dir(translate)
    translate.add_argument(
        "--input", default="-", metavar="FILE", help="input file (plain or gzip); '-' is stdin"
    )
    translate.add_argument(
        "--output", default="-", metavar="FILE", help="output file; '-' is stdout"
    )
    _add_decoding_flags(translate)
    _add_search_flags(translate)
    translate.add_argument(
        "--n-best",
        type=_positive_int,
        metavar="K",
        help="print the K best hypotheses (K samples with --sampling) as "
        "fairseq-like 'H-<line>\\t<score>\\t<text>' lines (at most the beam size)",
    )
    translate.add_argument(
        "--format",
        choices=("text", "jsonl"),
        default="text",
        help="text (default: one translation per line, or H-/A- lines with "
        "--n-best/--print-alignment) or jsonl (one JSON object per input line)",
    )
    translate.add_argument(
        "--target-prefix",
        metavar="FILE",
        help="one target prefix per input line: each translation starts with it",
    )
    translate.add_argument(
        "--print-alignment",
        action="store_true",
        help="after each hypothesis an 'A-<line>\\t<src>-<tgt> ...' line: for "
        "each output token (subwords, EOS excluded) the source token its "
        "cross-attention (last layer, mean over heads) weighs most",
    )
    _add_quantize_flag(translate)

    evaluate = commands.add_parser(
        "evaluate",
        parents=parent,
        help="BLEU (cased detokenized and lowercased tokenized) on a test set",
        description=_wrap(
            "Translate a test set and print sacreBLEU's cased "
            "detokenized BLEU and lowercased tokenized BLEU with their signatures "
            "(and exact match for the default task). Without --src/--ref it uses "
            "the run's test (else validation) files, or the default task's test "
            "split."
        ),
        epilog="example:\n  keras-transformer evaluate --model-dir runs/multi30k "
        "--src test_2016_flickr.en.gz --ref test_2016_flickr.de.gz",
        formatter_class=formatter,
    )
    _add_model_dir(evaluate)
    evaluate.add_argument("--src", metavar="FILE", help="source file")
    evaluate.add_argument("--ref", metavar="FILE", help="reference file, aligned with --src")
    evaluate.add_argument("--output", metavar="FILE", help="also write the translations here")
    evaluate.add_argument(
        "--max-sentences",
        type=_positive_int,
        metavar="N",
        help="score only the first N sentences",
    )
    _add_decoding_flags(evaluate)
    _add_quantize_flag(evaluate)

    score = commands.add_parser(
        "score",
        parents=parent,
        help="forced decoding: the log-probability of given translations",
        description=_wrap(
            "Score sentence pairs with the model: for each line of --src and "
            "the same line of --tgt, print the total log-probability of the "
            "target (its subword tokens and EOS) given the source, without "
            "length penalty."
        ),
        epilog="example:\n  keras-transformer score --model-dir runs/numbers "
        "--src test.en --tgt test.de",
        formatter_class=formatter,
    )
    _add_model_dir(score)
    score.add_argument("--src", required=True, metavar="FILE", help="source file")
    score.add_argument(
        "--tgt", required=True, metavar="FILE", help="target file, aligned with --src"
    )
    score.add_argument(
        "--output", default="-", metavar="FILE", help="output file; '-' is stdout"
    )
    score.add_argument(
        "--token-scores",
        action="store_true",
        help="after the total, a tab and each token's log-probability",
    )
    score.add_argument(
        "--max-source-length",
        type=_positive_int,
        default=256,
        metavar="N",
        help="longest source in tokens, EOS included (default: 256)",
    )
    _add_quantize_flag(score)

    average = commands.add_parser(
        "average-checkpoints",
        parents=parent,
        help="average the weights of the last N checkpoints (paper: 5)",
        description=_wrap(
            "Average the weights of the newest N checkpoints into one "
            "model. Given a run's checkpoints/ directory and an output directory, "
            "the run's vocab.spm is copied along so the result translates."
        ),
        epilog="example:\n  keras-transformer average-checkpoints "
        "runs/multi30k/checkpoints --last-n 5 --output runs/multi30k-avg",
        formatter_class=formatter,
    )
    average.add_argument(
        "checkpoints", nargs="+", help="a checkpoint directory, or files oldest first"
    )
    average.add_argument(
        "--last-n", type=_positive_int, default=5, metavar="N", help="default: 5"
    )
    average.add_argument(
        "--output", required=True, metavar="PATH", help="output directory or .keras file"
    )

    export = commands.add_parser(
        "export",
        parents=parent,
        help="export a trained model as a SavedModel for TF Serving",
        description=_wrap(
            "Export a run directory (model.keras + vocab.spm) as a TensorFlow "
            "SavedModel for TF Serving that maps strings to translations (beam "
            "search inside). Works from any backend: the export itself runs "
            "under TensorFlow."
        ),
        epilog="example (writes exported/multi30k/1):\n  keras-transformer export "
        "--model-dir runs/multi30k --export-dir exported/multi30k",
        formatter_class=formatter,
    )
    _add_model_dir(export)
    export.add_argument(
        "--export-dir",
        required=True,
        metavar="DIR",
        help="base directory; the SavedModel goes to DIR/VERSION",
    )
    export.add_argument(
        "--version", type=_positive_int, default=1, metavar="N", help="default: 1"
    )
    export.add_argument(
        "--max-source-length",
        type=_positive_int,
        default=256,
        metavar="N",
        help="longest source in tokens (default: 256)",
    )
    export.add_argument(
        "--no-warmup",
        dest="warmup",
        action="store_false",
        help="do not write TF Serving warmup requests",
    )
    export.add_argument(
        "--format",
        choices=("saved_model", "ctranslate2"),
        default="saved_model",
        help="saved_model (TF Serving, default) or ctranslate2 (needs the "
        "optional ctranslate2 package; written to DIR/VERSION)",
    )
    export.add_argument(
        "--n-best",
        type=_positive_int,
        metavar="K",
        help="hypotheses per sentence of the SavedModel's translate_nbest "
        "signature (default: the beam size)",
    )
    _add_decoding_flags(export, batch_size=False)
    for flag, kind, metavar, what in (
        ("--temperature", float, "X", "temperature > 0"),
        ("--top-k", int, "K", "sampling among the K most probable tokens"),
        ("--top-p", float, "P", "nucleus sampling: the smallest set with probability >= P"),
    ):
        export.add_argument(
            flag, type=kind, metavar=metavar,
            help=f"the translate_sample signature's {what} (its seed is a request input)",
        )
    _add_quantize_flag(export)

    commands.add_parser(
        "info",
        parents=parent,
        help="print the version, the backend and the presets",
        description="Print the package version, the active Keras backend and "
        "the model presets.",
    )
    return parser


def _train_flag_fields():
    """The `TrainConfig` fields that have a ``train`` flag (all but
    ``cli=False`` ones: ``model_overrides``, set with ``--set``, and
    ``backend``, the ``--backend`` flag)."""

    return [f for f in dataclasses.fields(TrainConfig) if f.metadata.get("cli", True)]


def _add_train_flags(parser):
    """One flag per `TrainConfig` field, made from the field itself.

    ``--name-with-dashes`` (and the spellings in the field's ``flags``
    metadata), its ``doc`` metadata and default (unless null, which the doc
    explains) as help. Text fields take
    the text as is; the others read it as ``--set`` does (YAML: ``3``,
    ``0.5``, ``true``, ``null``), and `TrainConfig` checks the type, so a
    bad value is reported with the key's name.
    """
    for field in _train_flag_fields():
        names = ["--" + field.name.replace("_", "-"), *field.metadata.get("flags", ())]
        text_field = field.type in (str, typing.Optional[str])
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
        parser.add_argument(
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


def _add_model_dir(parser):
    parser.add_argument(
        "--model-dir",
        required=True,
        metavar="DIR",
        help="a trained model: a run directory (model.keras + vocab.spm, a "
        "train --output-dir) or a preset written by save_to_preset",
    )


def _add_decoding_flags(parser, batch_size=True):
    parser.add_argument(
        "--beam-size",
        type=_positive_int,
        metavar="N",
        help="beam size (default: the run's, else 4)",
    )
    parser.add_argument(
        "--alpha",
        type=_non_negative_float,
        metavar="X",
        help="length penalty (default: the run's, else 0.6)",
    )
    parser.add_argument(
        "--max-extra-length",
        type=_positive_int,
        metavar="N",
        help="output length limit = source length + N (default: the run's, else 50)",
    )
    if batch_size:
        parser.add_argument(
            "--batch-size",
            type=_positive_int,
            metavar="N",
            help="sentences per batch (default: 32)",
        )


def _add_search_flags(parser):
    parser.add_argument(
        "--min-length",
        type=int,
        metavar="N",
        help="EOS is forbidden before N output tokens (default: 0)",
    )
    parser.add_argument(
        "--sampling",
        action="store_true",
        help="draw tokens from the model's distribution (needs --beam-size 1)",
    )
    parser.add_argument(
        "--temperature", type=float, metavar="X", help="sampling temperature > 0"
    )
    parser.add_argument(
        "--top-k", type=int, metavar="K", help="sample among the K most probable tokens"
    )
    parser.add_argument(
        "--top-p",
        type=float,
        metavar="P",
        help="sample from the smallest set of tokens with probability >= P (nucleus)",
    )
    parser.add_argument(
        "--seed", type=int, metavar="N", help="sampling seed (same seed, same samples)"
    )


def _add_quantize_flag(parser):
    parser.add_argument(
        "--quantize",
        choices=("int8",),
        help="quantize the model's kernels to int8 (Keras' Model.quantize)",
    )
