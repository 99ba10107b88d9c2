"""The ``keras-transformer`` command (also ``python -m keras_transformer``).

Thin on purpose: it parses arguments, selects the Keras backend, and calls
library functions (`keras_transformer.training`, `Translator`,
`keras_transformer.checkpoints`, `keras_transformer.export`).

The backend comes from ``--backend``, else the training config's
``backend`` key, else ``KERAS_BACKEND``. Keras reads it once, when it is first
imported; when the requested backend differs from the one this process
already loaded, the command runs itself again in a fresh process with
``KERAS_BACKEND`` set.

Every failure ends in one line, ``keras-transformer <command>: error: ...``
naming the file or argument at fault, and a non-zero exit code (2 for bad
arguments or configs, 1 for everything else); ``--debug`` shows the
traceback instead.
"""

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import textwrap
import typing
import zipfile

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
    from keras_transformer.config import TrainConfig

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
    from keras_transformer.config import parse_value

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


# --- backend selection ---


def _requested_backend(args):
    backend = getattr(args, "backend", None)
    if backend is None and args.command == "train":
        backend = _train_config(args).backend
    return backend or os.environ.get("KERAS_BACKEND")


def _ensure_backend(backend, argv, replace_process):
    """Returns None when Keras runs on ``backend``, else the re-run's exit code.

    With ``replace_process`` (the real command line) the re-run replaces this
    process (``os.execve``); otherwise (``main(argv)`` called from Python) it
    runs as a child process.
    """
    if backend is None:
        return None
    if "keras" not in sys.modules:
        os.environ["KERAS_BACKEND"] = backend
        return None
    import keras

    if keras.config.backend() == backend:
        return None
    if os.environ.get(_REEXEC_MARKER):
        raise RuntimeError(
            f"Could not switch Keras to the {backend!r} backend (it runs on "
            f"{keras.config.backend()!r}); is ~/.keras/keras.json overriding it?"
        )
    env = dict(os.environ, KERAS_BACKEND=backend, **{_REEXEC_MARKER: "1"})
    command = [sys.executable, "-m", "keras_transformer", *argv]
    if replace_process:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, command, env)
    return subprocess.run(command, env=env).returncode


# --- commands ---


def _train_config(args):
    """The `TrainConfig` of ``train``: file, then flags, then --set."""
    if getattr(args, "_config", None) is not None:
        return args._config
    from keras_transformer.config import TrainConfig, parse_overrides

    config = TrainConfig.from_file(args.config) if args.config else TrainConfig()
    keys = [field.name for field in _train_flag_fields()]
    flags = {key: getattr(args, key) for key in keys if hasattr(args, key)}
    if "backend" in args:
        flags["backend"] = args.backend
    config = config.replace(**flags)
    config = parse_overrides(args.overrides, config)
    args._config = config
    return config


def _run_train(args):
    from keras_transformer.training import train

    result = train(_train_config(args), overwrite=args.overwrite)
    return 1 if result.stop_reason == "NaN loss" else 0


def _check_model_dir(model_dir):
    """Raises before any work when ``model_dir`` cannot hold a trained model
    (what it holds is checked when the model loads, after the options)."""
    if not os.path.isdir(model_dir):
        what = "is not a directory" if os.path.exists(model_dir) else "does not exist"
        raise FileNotFoundError(
            f"--model-dir {model_dir!r} {what} (expected a run directory with "
            "model.keras and vocab.spm, or a preset written by save_to_preset)."
        )


def _run_config(model_dir):
    """The `TrainConfig` of a run directory; None for a preset or a
    directory without config.json."""
    from keras_transformer.config import load_run_config
    from keras_transformer.run_directory import RunDirectory, locate_trained_model

    files = locate_trained_model(model_dir)
    if files is not None and files.kind != "run":
        return None
    if os.path.isfile(RunDirectory(model_dir).config_path):
        return load_run_config(model_dir)
    return None


def _preset_decoding_settings(model_dir):
    """The generation defaults a keras-hub preset saved (its task.json)."""
    from keras_transformer.hub.presets import TASK_CONFIG_FILE
    from keras_transformer.run_directory import locate_trained_model, read_json

    files = locate_trained_model(model_dir)
    if files is None or files.kind != "preset":
        return {}
    path = os.path.join(files.directory, TASK_CONFIG_FILE)
    if not os.path.isfile(path):
        return {}
    task = read_json(path, "preset file")
    config = task.get("config", {}) if isinstance(task, dict) else None
    if not isinstance(config, dict):
        raise ValueError(f"The preset file {path!r} holds no task config (a JSON object).")
    settings = dict(config.get("decode_options") or {})
    settings.update({k: config[k] for k in ("beam_size", "alpha", "max_extra_length") if k in config})
    return settings


def _check_output_file(path, flag="--output"):
    """Raises before any work when the output file ``path`` cannot be written."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{flag} {path!r} is a directory, not a file.")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{flag} {path!r}: the directory {directory!r} does not exist.")
    if not os.access(directory, os.W_OK) or (
        os.path.exists(path) and not os.access(path, os.W_OK)
    ):
        raise PermissionError(f"{flag} {path!r} is not writable.")


def _read_stdin():
    """Lines of stdin decoded as strict UTF-8 (an error names stdin)."""
    buffer = getattr(sys.stdin, "buffer", None)
    try:
        if buffer is not None:
            text = buffer.read().decode("utf-8")
        else:
            text = sys.stdin.read()
            text.encode("utf-8")  # Lone surrogates (surrogateescape) fail here.
    except UnicodeError as error:
        where = f" (byte {error.start})" if hasattr(error, "start") else ""
        raise ValueError(f"stdin is not UTF-8 text{where}: {error.reason}") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.strip() for line in lines]


def _decoding_kwargs(args, run_config):
    kwargs = {}
    saved = {}
    if run_config is None and getattr(args, "model_dir", None):
        saved = _preset_decoding_settings(args.model_dir)
    for key in ("beam_size", "alpha", "max_extra_length"):
        value = getattr(args, key)
        if value is None and run_config is not None:
            value = getattr(run_config, key)
        if value is None:
            value = saved.get(key)
        if value is not None:
            kwargs[key] = value
    if getattr(args, "batch_size", None) is not None:
        kwargs["batch_size"] = args.batch_size
    return kwargs


_SEARCH_FLAGS = ("min_length", "sampling", "temperature", "top_k", "top_p", "seed")


def _decode_options(args, run_config):
    """The `DecodeOptions` of the flags (and the run's settings), validated
    before any model is loaded; errors name the option."""
    from keras_transformer.decoding.options import DecodeOptions

    values = _decoding_kwargs(args, run_config)
    values.pop("batch_size", None)
    for key in _SEARCH_FLAGS:
        value = getattr(args, key, None)
        if value is not None and value is not False:
            values[key] = value
    if getattr(args, "sampling", False) and getattr(args, "beam_size", None) is None:
        values["beam_size"] = 1  # the run's beam size is for search
    n_best = getattr(args, "n_best", None)
    if n_best is not None:
        values["num_return"] = n_best
    return DecodeOptions(**values)


def _load_translator(model_dir, quantize=None):
    from keras_transformer.translator import Translator

    return Translator.from_directory(model_dir, quantize=quantize)


def _run_translate(args):
    from keras_transformer.data import read_lines

    _check_model_dir(args.model_dir)
    if args.output != "-":
        _check_output_file(args.output)
    run_config = _run_config(args.model_dir)
    options = _decode_options(args, run_config)
    prefixes = None
    if args.target_prefix is not None:
        prefixes = read_lines(args.target_prefix)
    if args.input != "-":
        lines = read_lines(args.input)
        _check_prefix_count(prefixes, lines)
    # Before reading stdin: a broken model is reported without waiting for it.
    translator = _load_translator(args.model_dir, args.quantize)
    if args.input == "-":
        lines = _read_stdin()
        _check_prefix_count(prefixes, lines)
    indices = [i for i, line in enumerate(lines) if line]
    batch_size = getattr(args, "batch_size", None)
    detailed = args.n_best is not None or args.print_alignment or args.format == "jsonl"
    result = translator.translate(
        [lines[i] for i in indices],
        options,
        batch_size=batch_size,
        target_prefix=None if prefixes is None else [prefixes[i] for i in indices],
        return_scores=detailed,
        return_alignments=args.print_alignment,
        verbose=False if args.output == "-" else "auto",
    )
    if detailed:
        outputs = _detailed_lines(args, translator, lines, indices, options, result)
    else:
        outputs = [""] * len(lines)
        for i, translation in zip(indices, result):
            outputs[i] = translation
    _write_output(args.output, outputs)
    return 0


def _write_output(path, lines):
    """Lines to stdout (``"-"``) or to ``path`` (gzip when it ends in .gz)."""
    if path == "-":
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
        return
    from keras_transformer.data import write_lines

    write_lines(path, lines)


def _check_prefix_count(prefixes, lines):
    if prefixes is not None and len(prefixes) != len(lines):
        raise ValueError(
            f"--target-prefix has {len(prefixes)} lines but the input has "
            f"{len(lines)}; give one prefix per input line."
        )


def _detailed_lines(args, translator, lines, indices, options, result):
    """fairseq-like ``H-``/``A-`` lines, or JSON lines, for every input line.

    ``H-<line>\t<score>\t<text>`` per hypothesis (best first; samples in
    order); with alignments ``A-<line>\t<src>-<tgt> ...`` after it (token
    indices from 0, EOS excluded on the target side). Empty input lines get
    no ``H-`` line (text) or ``"hypotheses": []`` (jsonl).
    """
    import json

    texts, scores = result[0], result[1]
    if args.print_alignment:
        aligned = result[2]
    else:
        aligned = [[None] * options.num_return for _ in texts]
    if options.num_return == 1:
        texts = [[t] for t in texts]
        scores = [[s] for s in scores]
        aligned = aligned if not args.print_alignment else [[a] for a in aligned]
    by_line = dict(zip(indices, zip(texts, scores, aligned)))
    outputs = []
    for i, line in enumerate(lines):
        hypotheses = []
        if i in by_line:
            for text, score, alignment in zip(*by_line[i]):
                pairs = None
                if alignment is not None:
                    pairs = [[int(s), t] for t, s in enumerate(alignment[:-1])]
                hypotheses.append((text, score, pairs))
        if args.format == "jsonl":
            record = {"id": i, "source": line, "hypotheses": []}
            for text, score, pairs in hypotheses:
                entry = {"text": text, "score": round(score, 6)}
                if pairs is not None:
                    entry["alignment"] = pairs
                record["hypotheses"].append(entry)
            outputs.append(json.dumps(record, ensure_ascii=False))
            continue
        for text, score, pairs in hypotheses:
            outputs.append(f"H-{i}\t{score:.6f}\t{text}")
            if pairs is not None:
                outputs.append(f"A-{i}\t" + " ".join(f"{s}-{t}" for s, t in pairs))
    return outputs


def _run_score(args):
    from keras_transformer.data import read_lines

    _check_model_dir(args.model_dir)
    if args.output != "-":
        _check_output_file(args.output)
    # Every line is scored (an empty pair too), so outputs align with inputs.
    sources, targets = read_lines(args.src), read_lines(args.tgt)
    if len(sources) != len(targets):
        raise ValueError(
            f"--src has {len(sources)} lines but --tgt has {len(targets)}; "
            "they must be aligned line by line."
        )
    from keras_transformer.translator import Translator

    translator = Translator.from_directory(
        args.model_dir, max_source_length=args.max_source_length, quantize=args.quantize
    )
    totals = translator.score(
        sources, targets, return_token_scores=args.token_scores
    )
    outputs = []
    if args.token_scores:
        totals, token_scores = totals
        for total, row in zip(totals, token_scores):
            outputs.append(f"{total:.6f}\t" + " ".join(f"{v:.6f}" for v in row))
    else:
        outputs = [f"{total:.6f}" for total in totals]
    _write_output(args.output, outputs)
    return 0


def _evaluation_data(args, run_config):
    """``(sources, references, name, is_default_task)``."""
    from keras_transformer.data import read_parallel

    if (args.src is None) != (args.ref is None):
        raise ValueError("--src and --ref go together.")
    if args.src is not None:
        sources, references, _ = read_parallel(args.src, args.ref)
        return sources, references, os.path.basename(args.src), False
    if run_config is None:
        raise ValueError(
            f"No config.json in {args.model_dir!r} to find the test set; "
            "pass --src and --ref."
        )
    from keras_transformer.training import load_data

    splits = load_data(run_config)
    for name in ("test", "valid"):
        if name in splits:
            label = "default task " + name if run_config.uses_default_task else name
            return (*splits[name], label, run_config.uses_default_task)
    raise ValueError(
        f"The run in {args.model_dir!r} has no test or validation files; "
        "pass --src and --ref."
    )


def _run_evaluate(args):
    from keras_transformer.evaluation import evaluate_translations, format_evaluation

    _check_model_dir(args.model_dir)
    if args.output:
        _check_output_file(args.output)
    run_config = _run_config(args.model_dir)
    sources, references, name, default_task = _evaluation_data(args, run_config)
    if args.max_sentences is not None:
        sources = sources[: args.max_sentences]
        references = references[: args.max_sentences]
    translator = _load_translator(args.model_dir, args.quantize)
    evaluation = evaluate_translations(
        translator, sources, references, **_decoding_kwargs(args, run_config)
    )
    if args.output:
        from keras_transformer.data import write_lines

        write_lines(args.output, evaluation.hypotheses)
    print(format_evaluation(evaluation, name, exact_match=default_task, bleu=True))
    if default_task:
        print(
            "(Each German number is one word, so BLEU, which needs matching "
            "4-grams, says little here; exact match is the score to read.)"
        )
    return 0


def _run_average(args):
    from keras_transformer.checkpoints import average_checkpoints

    checkpoints = args.checkpoints[0] if len(args.checkpoints) == 1 else args.checkpoints
    _, paths = average_checkpoints(checkpoints, output_path=args.output, last_n=args.last_n)
    print(f"Averaged {len(paths)} checkpoint(s):")
    for path in paths:
        print(f"  {path}")
    print(f"-> {args.output}")
    return 0


def _run_export(args):
    _check_model_dir(args.model_dir)
    run_config = _run_config(args.model_dir)
    if args.format == "ctranslate2":
        from keras_transformer.ctranslate2_export import (
            export_run_directory_to_ctranslate2,
        )

        if args.n_best is not None:
            raise ValueError(
                "--n-best applies to --format saved_model (CTranslate2 takes "
                "num_hypotheses at translation time)."
            )
        output_dir = os.path.join(args.export_dir, str(args.version))
        export_run_directory_to_ctranslate2(
            args.model_dir, output_dir, quantization=args.quantize
        )
        print(f"Exported {args.model_dir} -> {output_dir} (CTranslate2)")
        return 0
    from keras_transformer.export import export_saved_model

    kwargs = _decoding_kwargs(args, run_config)
    # --temperature/--top-k/--top-p set the translate_sample signature's
    # filters; its seed comes with each request.
    sampling = {
        key: getattr(args, key)
        for key in ("temperature", "top_k", "top_p")
        if getattr(args, key, None) is not None
    }
    search_args = argparse.Namespace(**{**vars(args), **{key: None for key in sampling}})
    # Validated (names the flag) before the export starts.
    _decode_options(search_args, run_config).replace(max_source_length=args.max_source_length)
    if sampling:
        from keras_transformer.decoding.options import DecodeOptions

        DecodeOptions(beam_size=1, sampling=True, **sampling)
        kwargs["sampling"] = sampling
    if args.n_best is not None:
        kwargs["n_best"] = args.n_best
    if args.quantize is not None:
        kwargs["quantize"] = args.quantize
    version_dir = export_saved_model(
        args.model_dir,
        args.export_dir,
        version=args.version,
        max_source_length=args.max_source_length,
        warmup=args.warmup,
        **kwargs,
    )
    print(f"Exported {args.model_dir} -> {version_dir}")
    return 0


def _run_info(args):
    import keras

    import keras_transformer
    from keras_transformer.presets import PRESETS

    print(f"keras-transformer {keras_transformer.__version__}")
    print(f"keras {keras.__version__}, backend: {keras.config.backend()}")
    print("presets:")
    for name, values in PRESETS.items():
        print(f"  {name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    return 0


_COMMANDS = {
    "train": _run_train,
    "translate": _run_translate,
    "evaluate": _run_evaluate,
    "average-checkpoints": _run_average,
    "export": _run_export,
    "score": _run_score,
    "info": _run_info,
}


# Errors a user can cause (bad files, arguments, directories): their message
# is the whole story. Anything else is reported as an internal error.
_USER_ERRORS = (ValueError, OSError, zipfile.BadZipFile, RuntimeError, EOFError)


def _error_message(error):
    """The error as one line (user errors: their message; others: type and message)."""
    if isinstance(error, _USER_ERRORS):
        message = str(error) or type(error).__name__
    else:
        message = f"internal error: {type(error).__name__}: {error}"
    message = " ".join(message.split())
    return message if len(message) <= 2000 else message[:2000] + " ..."


def main(argv=None):
    """Runs the command line ``argv`` (default: ``sys.argv[1:]``); returns its exit code.

    Errors end in one line on stderr and ``SystemExit`` with code 2 (bad
    arguments or configuration) or 1; ``--debug`` (or the environment
    variable ``KERAS_TRANSFORMER_TRACEBACK=1``) re-raises them instead.
    """
    replace_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = getattr(args, "debug", False) or bool(
        os.environ.get("KERAS_TRANSFORMER_TRACEBACK")
    )
    prefix = f"keras-transformer {args.command}: error: "
    hint = "" if debug else " (--debug shows the traceback)"
    try:
        # Configuration errors (unknown keys, wrong types) stop here.
        backend = _requested_backend(args)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except Exception as error:
        if debug:
            raise
        parser.exit(2, f"{prefix}{_error_message(error)}\n")
    try:
        code = _ensure_backend(backend, argv, replace_process)
        if code is not None:
            return code
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except Exception as error:
        if debug:
            raise
        message = _error_message(error)
        if not isinstance(error, _USER_ERRORS):
            message += hint
        parser.exit(1, f"{prefix}{message}\n")


if __name__ == "__main__":
    sys.exit(main())
