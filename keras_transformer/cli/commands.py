"""The subcommands of ``keras-transformer``: each turns parsed arguments
into calls of the library (`train`, `prepare_corpus`, `Translator`,
`average_checkpoints`, `export_saved_model`, the CTranslate2 converter) and
prints the result. ``train`` lives in `keras_transformer.cli.train_command`,
``translate`` and ``score`` in `keras_transformer.cli.translate_commands`,
and the flags of the commands that load a model in
`keras_transformer.cli.model_flags`; `_COMMANDS` names them all.
"""

import os

import keras

from keras_transformer.cli.model_flags import (
    _check_model_dir,
    _check_output_file,
    _decoding_kwargs,
    _load_translator,
    _model_dirs,
    _run_config,
    _target_language,
)
from keras_transformer.cli.train_command import _run_train
from keras_transformer.cli.translate_commands import _run_score, _run_translate
from keras_transformer.convert import convert
from keras_transformer.data import prepare_corpus, read_parallel, write_lines
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.export.ctranslate2_converter import (
    export_run_directory_to_ctranslate2,
)
from keras_transformer.export.saved_model import export_saved_model
from keras_transformer.export.transformers_exporter import export_to_transformers
from keras_transformer.models.transformer.transformer_presets import PRESETS
from keras_transformer.training.checkpoints import average_checkpoints
from keras_transformer.training.evaluation import (
    evaluate_translations,
    format_evaluation,
)
from keras_transformer.training.run_data import load_data
from keras_transformer.version import __version__


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
    if args.format != "saved_model" and args.parallel_searches is not None:
        raise ValueError(
            f"--parallel-searches applies to --format saved_model, not {args.format} "
            "(a CTranslate2 translator takes inter_threads when it loads the model)."
        )
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
    kwargs.pop("batch_size", None)
    if args.format == "transformers":
        # The run's decoding defaults and the flags: generation_config.json.
        export_to_transformers(model_dir, args.export_dir, decode_options=kwargs)
        print(f"Exported {model_dir} -> {args.export_dir} (Hugging Face Marian)")
        return 0
    # --temperature/--top-k/--top-p set the translate_sample signature's
    # filters; its seed comes with each request.
    sampling = {key: kwargs.pop(key) for key in _SAMPLING_FLAGS if key in kwargs}
    # Validated (names the option) before the export starts.
    options = DecodeOptions(**kwargs)
    if sampling:
        DecodeOptions(beam_size=1, sampling=True, **sampling)
        kwargs["sampling"] = sampling
    if args.n_best is not None:
        options.replace(num_return=args.n_best)
        kwargs["n_best"] = args.n_best
    for key in ("quantize", "weights", "parallel_searches"):
        if getattr(args, key) is not None:
            kwargs[key] = getattr(args, key)
    version_dir = export_saved_model(
        model_dir, args.export_dir, version=args.version, warmup=args.warmup, **kwargs
    )
    print(f"Exported {' + '.join(args.model_dir)} -> {version_dir}")
    return 0


# The export flags that set the translate_sample signature's filters.
_SAMPLING_FLAGS = ("temperature", "top_k", "top_p")


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
