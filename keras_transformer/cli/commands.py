"""The subcommands of ``keras-transformer``: each turns parsed arguments
into calls of the library (`train`, `prepare_corpus`, `Translator`,
`average_checkpoints`, `export_saved_model`, the CTranslate2 converter) and
prints the result.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

import keras

from keras_transformer.cli.parser import _train_flag_fields
from keras_transformer.convert import convert
from keras_transformer.data import (
    prepare_corpus,
    read_lines,
    read_parallel,
    write_lines,
)
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.export.ctranslate2_converter import (
    export_run_directory_to_ctranslate2,
)
from keras_transformer.export.saved_model import export_saved_model
from keras_transformer.models.transformer.transformer_loader import (
    locate_trained_model,
)
from keras_transformer.models.transformer.transformer_presets import PRESETS
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.special_tokens import target_language_ids
from keras_transformer.training.checkpoints import average_checkpoints
from keras_transformer.training.config import (
    TrainConfig,
    load_run_config,
    parse_overrides,
)
from keras_transformer.training.evaluation import (
    evaluate_translations,
    format_evaluation,
)
from keras_transformer.training.run_directory import RunDirectory
from keras_transformer.training.run_data import load_data
from keras_transformer.training.trainer import train
from keras_transformer.training.update_backup import SIGTERM_STOP
from keras_transformer.version import __version__


def _train_config(args):
    """The `TrainConfig` of ``train``: file, then flags, then --set."""
    if getattr(args, "_config", None) is not None:
        return args._config

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

    result = train(_train_config(args), overwrite=args.overwrite)
    if result.model_path is not None and result.stop_reason != SIGTERM_STOP:
        _fill_translate_cache(result.output_dir)
    if result.stop_reason == SIGTERM_STOP:
        # 128 + SIGTERM, as a shell reports a process that SIGTERM ended: the
        # run is unfinished (a scheduler should run the command again).
        return 128 + signal.SIGTERM
    return 1 if result.stop_reason == "NaN loss" else 0


# A sentence of a few pieces: its search has the shape of every sentence of
# up to 15 pieces (the Translator's first length bucket).
_WARM_UP_SENTENCE = "a"


def _fill_translate_cache(run_dir):
    """Runs ``keras-transformer translate --model-dir RUN_DIR`` once on one
    short sentence, under JAX with the on-disk compilation cache on
    (`keras_transformer.cli.main.enable_compilation_cache`), so that the
    first ``translate`` of the new model reads its compiled functions from
    the cache instead of compiling them.

    A child process runs ``translate`` exactly as the user will (its flag
    parsing, backend selection and cache settings) and takes the loaded
    model's memory with it when it ends. It uses ``translate``'s default flags (the run's
    beam size, alpha and length limit; batch size 1; the first length
    bucket). Nothing is done under another backend or without the cache;
    a model of several target languages is skipped (``translate`` needs
    ``--target-language`` there), and a failure is reported, not raised:
    the run is complete.
    """
    if keras.config.backend() != "jax":
        return
    import jax

    directory = jax.config.jax_compilation_cache_dir
    if not directory:
        return
    run_config = _run_config(run_dir)
    if run_config is not None and run_config.target_languages:
        return
    start = time.perf_counter()
    env = dict(os.environ, KERAS_BACKEND="jax", KERAS_TRANSFORMER_COMPILATION_CACHE=directory)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "keras_transformer", "translate", "--model-dir", run_dir],
        input=_WARM_UP_SENTENCE + "\n", env=env, capture_output=True, text=True,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no message"]
        print(f"Could not compile the translation of one sentence: {lines[-1]}")
        return
    print(
        f"Compiled the translation of one sentence into {directory} "
        f"({time.perf_counter() - start:.1f} s): `keras-transformer translate` of this "
        "model starts without compiling."
    )


def _check_model_dir(args):
    """Raises before any work when a ``--model-dir`` cannot hold a trained
    model, or when ``--weights`` does not give one weight per directory
    (what a directory holds is checked when the models load, after the
    options)."""
    for model_dir in args.model_dir:
        if not os.path.isdir(model_dir):
            what = "is not a directory" if os.path.exists(model_dir) else "does not exist"
            raise FileNotFoundError(
                f"--model-dir {model_dir!r} {what} (expected a run directory with "
                "model.keras and vocab.spm, or a preset written by save_to_preset)."
            )
    if args.weights is not None and len(args.weights) != len(args.model_dir):
        raise ValueError(
            f"--weights gives {len(args.weights)} weight(s) for "
            f"{len(args.model_dir)} --model-dir(s); give one per model."
        )


def _model_dirs(args):
    """The ``--model-dir`` value for the library: one path, or the list of
    an ensemble's."""
    return args.model_dir[0] if len(args.model_dir) == 1 else list(args.model_dir)


def _run_config(model_dir):
    """The `TrainConfig` of a run directory (``train_config.json``, or an
    older run's ``config.json``); None for a preset of ``save_to_preset``
    or a directory without one."""

    if RunDirectory(model_dir).saved_config_path() is not None:
        return load_run_config(model_dir)
    return None


def _preset_decoding_settings(model_dir):
    """The generation defaults a keras-hub preset saved (its task.json)."""
    files = locate_trained_model(model_dir)
    if files is None or files.kind != "preset":
        return {}
    return files.decoding_defaults()


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
        saved = _preset_decoding_settings(args.model_dir[0])
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


def _load_translator(args, **kwargs):
    """The `Translator` of ``--model-dir`` (an ensemble for several),
    ``--weights`` and ``--quantize``."""
    return Translator.from_directory(
        _model_dirs(args), weights=args.weights, quantize=args.quantize, **kwargs
    )


def _target_language(args, translator):
    """``--target-language`` for the `Translator`'s ``target_language``,
    checked against the model's languages; a ValueError naming the flag
    when it is missing for a multilingual model, names a language the model
    does not know, or is given to a model of one target language."""
    code = args.target_language
    if code is None:
        if translator.languages:
            raise ValueError(
                "--target-language is required: the model translates into "
                f"{', '.join(sorted(translator.languages))}."
            )
        return None
    target_language_ids(code, translator.languages, 1, name="--target-language")
    return code


class _IntoLanguage:
    """A `Translator` whose ``translate`` translates into one
    ``target_language`` (for `evaluate_translations`, which calls
    ``translate``); every other attribute is the translator's."""

    def __init__(self, translator, target_language):
        self._translator = translator
        self._target_language = target_language

    def translate(self, sentences, *args, **kwargs):
        return self._translator.translate(
            sentences, *args, target_language=self._target_language, **kwargs
        )

    def __getattr__(self, name):
        return getattr(self._translator, name)


def _run_translate(args):

    _check_model_dir(args)
    if args.output != "-":
        _check_output_file(args.output)
    run_config = _run_config(args.model_dir[0])
    options = _decode_options(args, run_config)
    prefixes = None
    if args.target_prefix is not None:
        prefixes = read_lines(args.target_prefix)
    if args.input != "-":
        lines = read_lines(args.input)
        _check_prefix_count(prefixes, lines)
    # Before reading stdin: a broken model (or --target-language) is
    # reported without waiting for it.
    translator = _load_translator(args)
    target_language = _target_language(args, translator)
    if args.input == "-":
        lines = _read_stdin()
        _check_prefix_count(prefixes, lines)
    constraints = None
    if args.constraints:
        lines, constraints = _split_constraints(lines)
    indices = [i for i, line in enumerate(lines) if line]
    batch_size = getattr(args, "batch_size", None)
    detailed = args.n_best is not None or args.print_alignment or args.format == "jsonl"
    result = translator.translate(
        [lines[i] for i in indices],
        options,
        batch_size=batch_size,
        target_prefix=None if prefixes is None else [prefixes[i] for i in indices],
        constraints=None if constraints is None else [constraints[i] for i in indices],
        return_scores=detailed,
        return_alignments=args.print_alignment,
        verbose=False if args.output == "-" else "auto",
        target_language=target_language,
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

    write_lines(path, lines)


def _split_constraints(lines):
    """fairseq's ``--constraints`` input: ``source<TAB>phrase<TAB>phrase...``
    per line -> ``(sources, phrases per line)``."""
    sources, constraints = [], []
    for line in lines:
        source, *phrases = line.split("\t")
        sources.append(source)
        constraints.append(phrases)
    return sources, constraints


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

    _check_model_dir(args)
    if args.output != "-":
        _check_output_file(args.output)
    # Every line is scored (an empty pair too), so outputs align with inputs.
    sources, targets = read_lines(args.src), read_lines(args.tgt)
    if len(sources) != len(targets):
        raise ValueError(
            f"--src has {len(sources)} lines but --tgt has {len(targets)}; "
            "they must be aligned line by line."
        )

    translator = _load_translator(args, max_source_length=args.max_source_length)
    totals = translator.score(
        sources,
        targets,
        return_token_scores=args.token_scores,
        target_language=_target_language(args, translator),
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

    if (args.src is None) != (args.ref is None):
        raise ValueError("--src and --ref go together.")
    if args.src is not None:
        sources, references, _ = read_parallel(args.src, args.ref)
        return sources, references, os.path.basename(args.src), False
    if run_config is None:
        raise ValueError(
            f"No train_config.json in {args.model_dir[0]!r} to find the test set; "
            "pass --src and --ref."
        )

    splits = load_data(run_config)
    for name in ("test", "valid"):
        if name in splits:
            label = "default task " + name if run_config.uses_default_task else name
            return (*splits[name], label, run_config.uses_default_task)
    raise ValueError(
        f"The run in {args.model_dir[0]!r} has no test or validation files; "
        "pass --src and --ref."
    )


def _run_evaluate(args):

    _check_model_dir(args)
    if args.output:
        _check_output_file(args.output)
    run_config = _run_config(args.model_dir[0])
    sources, references, name, default_task = _evaluation_data(args, run_config)
    if args.max_sentences is not None:
        sources = sources[: args.max_sentences]
        references = references[: args.max_sentences]
    translator = _load_translator(args)
    target_language = _target_language(args, translator)
    if target_language is not None:
        translator = _IntoLanguage(translator, target_language)
    evaluation = evaluate_translations(
        translator, sources, references, **_decoding_kwargs(args, run_config)
    )
    if args.output:

        write_lines(args.output, evaluation.hypotheses)
    print(format_evaluation(evaluation, name, exact_match=default_task, bleu=True))
    if default_task:
        print(
            "(Each German number is one word, so BLEU, which needs matching "
            "4-grams, says little here; exact match is the score to read.)"
        )
    return 0


def _run_average(args):

    checkpoints = args.checkpoints[0] if len(args.checkpoints) == 1 else args.checkpoints
    _, paths = average_checkpoints(checkpoints, output_path=args.output, last_n=args.last_n)
    print(f"Averaged {len(paths)} checkpoint(s):")
    for path in paths:
        print(f"  {path}")
    print(f"-> {args.output}")
    return 0


def _run_convert(args):
    convert(args.source_format, args.source, args.output_dir, overwrite=args.overwrite)
    print(f"Imported the {args.source_format} model {args.source} -> {args.output_dir}")
    return 0


def _run_export(args):
    _check_model_dir(args)
    run_config = _run_config(args.model_dir[0])
    model_dir = _model_dirs(args)
    if args.format == "ctranslate2":
        if len(args.model_dir) > 1:
            raise ValueError(
                "--format ctranslate2 exports one model; an ensemble of several "
                "--model-dir exports as --format saved_model."
            )

        if args.n_best is not None:
            raise ValueError(
                "--n-best applies to --format saved_model (CTranslate2 takes "
                "num_hypotheses at translation time)."
            )
        output_dir = os.path.join(args.export_dir, str(args.version))
        export_run_directory_to_ctranslate2(
            model_dir, output_dir, quantization=args.quantize
        )
        print(f"Exported {model_dir} -> {output_dir} (CTranslate2)")
        return 0

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

        DecodeOptions(beam_size=1, sampling=True, **sampling)
        kwargs["sampling"] = sampling
    if args.n_best is not None:
        kwargs["n_best"] = args.n_best
    if args.quantize is not None:
        kwargs["quantize"] = args.quantize
    if args.weights is not None:
        kwargs["weights"] = args.weights
    version_dir = export_saved_model(
        model_dir,
        args.export_dir,
        version=args.version,
        max_source_length=args.max_source_length,
        warmup=args.warmup,
        **kwargs,
    )
    print(f"Exported {' + '.join(args.model_dir)} -> {version_dir}")
    return 0


def _run_preprocess(args):
    corpus = prepare_corpus(
        args.train_src,
        args.train_tgt,
        args.output,
        vocabulary=args.vocabulary,
        vocabulary_size=args.vocabulary_size,
        shard_size=args.shard_size,
        seed=args.seed,
        languages=args.target_languages,
        language_tag=args.language_tag,
    )
    manifest = corpus.manifest
    size = sum(
        os.path.getsize(os.path.join(corpus.path, name)) for name in os.listdir(corpus.path)
    )
    print(
        f"Prepared corpus: {os.path.abspath(corpus.path)}\n"
        f"  {corpus.num_pairs} pairs ({manifest['num_skipped_empty']} of "
        f"{manifest['num_lines']} lines skipped: an empty side), "
        f"{corpus.num_shards} shard(s), {size / 1e6:.1f} MB, vocabulary of "
        f"{corpus.vocabulary_size} pieces\n"
        + (
            "  target languages: "
            + ", ".join(f"{lang} ({n} pairs)" for lang, n in corpus.language_pairs.items())
            + f"; tags on the {corpus.language_tag} side\n"
            if corpus.languages
            else ""
        )
        + f"  train on it with: keras-transformer train --train-corpus {corpus.path}"
        + (f" --language-tag {corpus.language_tag}" if corpus.languages else "")
    )
    return 0


def _run_info(args):


    print(f"keras-transformer {__version__}")
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
    "convert": _run_convert,
    "score": _run_score,
    "info": _run_info,
    "preprocess": _run_preprocess,
}
