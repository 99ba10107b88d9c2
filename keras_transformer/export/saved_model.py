"""SavedModel export for TF Serving: strings in, translations out.

The exported graph holds the whole translator: SentencePiece tokenization
(tensorflow-text ops), the encoder, cached beam search (`keras.ops` traced
by the TensorFlow backend into a `tf.while_loop`) and detokenization. The
server needs TensorFlow and tensorflow-text's ops, nothing from Keras or this
package.

Whatever backend trained the model, the export runs under the TensorFlow
backend: a ``.keras`` file holds backend-independent weights, so under JAX
or PyTorch `export_saved_model` runs the export in a subprocess with
``KERAS_BACKEND=tensorflow`` (``python -m keras_transformer.export``) that
reloads the file and exports it. (Keras'
own JAX export goes through jax2tf and cannot carry tensorflow-text ops;
its torch export needs torch-xla.)

Layout written (what TF Serving expects)::

    <export_dir>/<version>/saved_model.pb
                          /variables/...
                          /assets/vocab.spm
                          /assets.extra/tf_serving_warmup_requests

Signatures:

- ``serving_default``: ``sentences`` string ``[None]`` ->
  ``translations`` string ``[None]`` and ``scores`` float32 ``[None]``.
- ``translate_nbest``: ``sentences`` string ``[None]`` ->
  ``translations`` string ``[None, k]`` and ``scores`` float32 ``[None, k]``,
  best first (``k`` fixed at export: ``n_best``, default the beam size).
- ``translate_token_ids``: ``token_ids`` int32 ``[None, None]`` (padded
  with 0, no BOS/EOS needed) -> ``token_ids`` int32 ``[None, None]``
  (EOS-terminated, 0-padded) and ``scores``. Ids outside
  ``[0, vocabulary_size)`` fail the request with ``INVALID_ARGUMENT``
  "token_ids contains id ... outside [0, V)".
- ``translate_prefix``: ``sources`` and ``prefixes`` string ``[None]``
  -> ``translations``, ``scores``: each output starts with its prefix ("" for
  none), then the beam search continues (``Translator.translate(...,
  target_prefix=...)``). A prefix that leaves no room for EOS fails the
  request with ``INVALID_ARGUMENT``.
- ``translate_constrained``: ``sources`` string ``[None]`` and
  ``constraints`` string ``[None, None]`` (per source, its target phrases;
  "" pads a row) -> ``translations``, ``scores``: every output contains each
  phrase, its tokens contiguous (``Translator.translate(...,
  constraints=...)``, beam search). Constraints longer than the output
  allows (EOS included), or a number of rows that differs from the
  sources', fail the request with ``INVALID_ARGUMENT``.
- ``translate_sample``: ``sentences`` string ``[None]`` and ``seed`` int32
  scalar -> ``translations``, ``scores``: one sample per sentence
  (temperature, top-k, top-p fixed at export), the samples of
  ``Translator.translate(sentences, sampling=True, seed=seed, ...)``.
- ``score``: ``sources`` and ``targets`` string ``[None]`` -> ``scores``
  float32 ``[None]``: each pair's total log-probability of the target
  (EOS included), no length penalty, as `Translator.score`.

A multilingual model (a vocabulary with language tags, ``<2de>``, see
`keras_transformer.special_tokens`) exports the same signatures, and each
one that takes text (all but ``translate_token_ids``) also takes
``target_language``, a string ``[None]`` input with one language code per
sentence (``"de"``), after its other inputs. The graph maps each code to
its tag id and puts it where the model was trained to find it
(``language_tag``, recorded in ``export_config.json``): the first source
token (``"source"``), or the first output token, forced (``"target"``;
before the prefix of ``translate_prefix``; it counts in the scores and
reads as nothing), as ``Translator.translate(..., target_language=...)``.
An unknown code, or not one code per sentence, fails the request with
``INVALID_ARGUMENT``. ``translate_token_ids`` takes no
``target_language``: its ids carry their tag already (the tag id first,
for ``language_tag="source"``; with ``"target"`` it decodes without a
forced tag). Blank sentences still give "" with score 0.

An ensemble (several model directories sharing one ``vocab.spm``) exports
into one SavedModel with the same signatures, each running the
`keras_transformer.decoding.Ensemble` in one search, as
``Translator.from_directory([...])`` does.

Each signature is a method of
`keras_transformer.export.saved_model_signatures.SignatureBuilder`, and
runs the `Translator`'s code: `prepare_sources` (the same
truncation, EOS placement and learned-position caps), `generate` via
`decode_token_ids`, `token_log_probs`. Blank strings translate to "" with
score 0, and empty batches give empty outputs, in every signature.
"""

import json
import os
import subprocess
import sys

import keras

from keras_transformer.decoding.ensemble import check_weights, members
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.decoding.sources import check_vocabulary
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_models,
    load_models,
    model_directories,
)
from keras_transformer.models.transformer.transformer_tokenizer import load_tokenizers
from keras_transformer.options import PARALLEL_SEARCHES
from keras_transformer.special_tokens import (
    check_language_tag_position,
    language_tag_ids,
)
from keras_transformer.utils.dependencies import require
from keras_transformer.utils.private_apis import stored_cast_reads
from keras_transformer.utils.quantization import quantize_int8
from keras_transformer.utils.validation import check_choice, check_int

if keras.config.backend() == "tensorflow":
    from keras_transformer.export.saved_model_signatures import SignatureBuilder
    from keras_transformer.utils.tensorflow_devices import tf

    try:
        from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2
    except ImportError:  # `require` below names it when an export starts.
        model_pb2 = predict_pb2 = prediction_log_pb2 = None
else:  # The export runs in a TensorFlow-backend child process (below).
    tf = SignatureBuilder = model_pb2 = predict_pb2 = prediction_log_pb2 = None

WARMUP_SENTENCES = ("A man is running.", "Two dogs play in the snow.", "")


_SAMPLING_KEYS = ("temperature", "top_k", "top_p")


def _export_options(options):
    """The export's `DecodeOptions`, its n-best size and the
    ``translate_sample`` signature's options, from ``options`` (a dict of
    `DecodeOptions` fields plus ``n_best`` and ``sampling``; all validated,
    errors naming the option)."""
    options = dict(options)
    n_best = options.pop("n_best", None)
    parallel_searches = check_int(
        "parallel_searches", options.pop("parallel_searches", PARALLEL_SEARCHES)
    )
    sampling = dict(options.pop("sampling", None) or {})
    decode = DecodeOptions.from_dict(options)
    if n_best is None:
        n_best = decode.beam_size
    decode.replace(num_return=n_best)  # n_best <= beam_size, named if not
    unknown = sorted(set(sampling) - set(_SAMPLING_KEYS))
    if unknown:
        raise ValueError(
            f"Unknown sampling setting(s) {unknown}; the sampling signature "
            f"takes {list(_SAMPLING_KEYS)}."
        )
    sampling = {k: v for k, v in sampling.items() if v is not None}
    sample_options = decode.replace(beam_size=1, sampling=True, **sampling)
    return decode, n_best, sample_options, parallel_searches


def _build_module(builder, vocabulary_path):
    """A `tf.Module` holding the model, tokenizer and vocabulary asset (and
    a multilingual model's language table) of ``builder`` (a
    `SignatureBuilder`), and its signatures' concrete functions (name ->
    function): all run the `Translator`'s code."""
    model, tokenizer = builder.model, builder.tokenizer
    source_tokenizer = builder.source_tokenizer
    if source_tokenizer is tokenizer:
        source_tokenizer = None
    # The module holds what the signatures capture; the signature functions
    # are not its attributes: tf.saved_model.save re-traces every
    # tf.function attribute of the saved object in its save context (each
    # search graph a second time), while concrete functions passed as
    # signatures are saved as they are.
    module = tf.Module(name="translator")
    models = [member for member, _ in members(model)]
    module.tokenizer = tokenizer
    if source_tokenizer is not None:
        # The sources' own SentencePiece model (an imported Marian model).
        module.source_tokenizer = source_tokenizer
    # Copied to <version>/assets/ for clients that tokenize themselves (the
    # graph's tokenizer holds the same model).
    module.vocabulary_file = tf.saved_model.Asset(vocabulary_path)
    # The model's variables (TF variables under the TensorFlow backend),
    # not the Keras model: saving the model object as well stored every
    # weight a second time, under its Keras variables' own entries.
    module.model_variables = [v.value for member in models for v in member.weights]
    if builder.language_table is not None:
        # A resource the signatures capture: saved with the module.
        module.language_table = builder.language_table
    # The searches read a mixed-precision model's kernels from copies in
    # the compute dtype, saved with the module, rather than casting every
    # kernel at every request.
    with stored_cast_reads(models) as copies:
        functions = builder.concrete_functions()
    module.cast_weights = [copy.value for copy in copies]
    return module, functions


def _warmup_value(name, spec, sentences, token_ids, language, options):
    """The warm-up request's value of a signature input (``name``, its
    ``spec``): the warm-up sentences as sources, sentences and targets, no
    prefix and no constraint (an empty string is none), the sentences'
    token ids, ``language`` for each sentence, seed 0, and the export's own
    value of a runtime option."""
    count = len(sentences)
    values = {
        "sentences": sentences,
        "sources": sentences,
        "targets": sentences,
        "prefixes": [""] * count,
        "constraints": [[""]] * count,
        "target_language": [language] * count,
        "token_ids": token_ids,
        "seed": 0,
    }
    if name in values:
        value = values[name]
    else:  # a runtime option of translate_options (SAVED_MODEL_INPUTS)
        value = getattr(options, name)
    return tf.make_tensor_proto(value, dtype=spec.dtype)


def _write_warmup_requests(version_dir, signatures, tokenizer, options, language=None):
    """Writes ``assets.extra/tf_serving_warmup_requests``, which TF Serving
    replays when it loads the model: ``serving_default`` on the first of
    `WARMUP_SENTENCES`, then a request of all of them to every signature
    (``signatures``: name -> concrete function). A signature's first request
    in a server process instantiates its graph, which TensorFlow's graph
    optimizer rewrites first: several CPU-seconds for each signature
    (``benchmarks/README.md``, "The first request of each signature"), paid
    at load rather than by the first client of each signature.
    ``tokenizer`` gives the token ids of ``translate_token_ids``,
    ``options`` (the export's `DecodeOptions`) the values of
    ``translate_options``' inputs, ``language`` a multilingual model's
    ``target_language``."""
    directory = os.path.join(version_dir, "assets.extra")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "tf_serving_warmup_requests")
    sentences = list(WARMUP_SENTENCES)
    # Token ids of the non-blank sentences, 0-padded.
    encoded = tokenizer.encode([text for text in sentences if text])
    width = max(len(ids) for ids in encoded)
    token_ids = [ids + [0] * (width - len(ids)) for ids in encoded]
    requests = [("serving_default", sentences[:1])]
    requests += [(name, sentences) for name in sorted(signatures, key=_warmup_order)]
    with tf.io.TFRecordWriter(path) as writer:
        for name, batch in requests:
            request = predict_pb2.PredictRequest(
                model_spec=model_pb2.ModelSpec(signature_name=name)
            )
            # The signature's inputs: TensorSpecs named as the request's keys
            # (a method's unused default, a single-language model's
            # target_language, is None).
            specs = tf.nest.flatten(signatures[name].structured_input_signature)
            for spec in (spec for spec in specs if isinstance(spec, tf.TensorSpec)):
                request.inputs[spec.name].CopyFrom(
                    _warmup_value(spec.name, spec, batch, token_ids, language, options)
                )
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)
            )
            writer.write(log.SerializeToString())
    return path


def _warmup_order(name):
    """``serving_default`` first, then the other signatures by name."""
    return (name != "serving_default", name)


def _check_new_version(version_dir):
    if os.path.exists(version_dir):
        raise FileExistsError(
            f"{version_dir} exists; TF Serving versions are immutable. Choose "
            "another --version or remove it."
        )


def _export_here(
    model_dir, export_dir, version, warmup, quantize, weights, language_tag, options,
):
    """`export_saved_model`'s work, under the TensorFlow backend; ``options``
    is its dict of decoding options."""
    options, n_best, sample_options, parallel_searches = _export_options(options)
    # Run directories or keras-hub presets; errors name the file (a
    # corrupt model.weights.h5, ...) or, for an ensemble, the
    # directories whose vocabularies differ.
    found = find_trained_models(model_dir)
    model = load_models(found, weights)
    files = found[0]
    tokenizer, source_tokenizer = load_tokenizers(files)
    # The `Translator`'s rule and message.
    check_vocabulary(tokenizer.vocabulary_size, model.vocabulary_size)
    languages = language_tag_ids(tokenizer.proto)
    if language_tag is None:
        # As `Translator.from_directory`: the first model's run config.
        language_tag = files.language_tag()
    language_tag = check_language_tag_position(language_tag)
    if quantize is not None:
        quantize_int8(model)
    vocabulary_path = files.vocabulary_path
    version_dir = os.path.join(export_dir, str(version))
    _check_new_version(version_dir)
    builder = SignatureBuilder(
        model, tokenizer, options, n_best, sample_options, language_tag=language_tag,
        source_tokenizer=source_tokenizer, parallel_searches=parallel_searches,
    )
    module, signatures = _build_module(builder, vocabulary_path)
    # No custom gradients: serving never differentiates, and tracing them
    # would only lengthen the save.
    save_options = tf.saved_model.SaveOptions(experimental_custom_gradients=False)
    tf.saved_model.save(module, version_dir, signatures=signatures, options=save_options)
    if warmup:
        _write_warmup_requests(
            version_dir, signatures,
            tokenizer if source_tokenizer is None else source_tokenizer, options,
            language=min(languages) if languages else None,
        )
    metadata = {
        "beam_size": options.beam_size,
        "alpha": options.alpha,
        "max_extra_length": options.max_extra_length,
        "max_source_length": options.max_source_length,
        "n_best": n_best,
        "parallel_searches": parallel_searches,
        "quantize": quantize,
        "decode_options": options.to_dict(),
        "sample_options": sample_options.to_dict(),
        "model_dir": _absolute(model_dir),
        "weights": [weight for _, weight in members(model)],
        "tensorflow": tf.__version__,
        "signatures": sorted(signatures),
    }
    if languages:
        metadata["languages"] = dict(sorted(languages.items()))
        metadata["language_tag"] = language_tag
    os.makedirs(os.path.join(version_dir, "assets.extra"), exist_ok=True)
    with open(os.path.join(version_dir, "assets.extra", "export_config.json"), "w") as f:
        json.dump(metadata, f, indent=2)
    return version_dir


def _absolute(model_dir):
    """The absolute path of ``model_dir``, or a list of them (an ensemble)."""
    if isinstance(model_dir, (str, bytes, os.PathLike)):
        return os.path.abspath(model_dir)
    return [os.path.abspath(directory) for directory in model_dir]


def export_saved_model(
    model_dir,
    export_dir,
    version=1,
    warmup=True,
    quantize=None,
    weights=None,
    language_tag=None,
    **options,
):
    """Exports the trained model in ``model_dir`` (a run directory of
    ``keras-transformer train`` or a keras-hub preset written by
    ``save_to_preset``) as a TF Serving SavedModel in
    ``<export_dir>/<version>``.

    A list of directories exports an ensemble of their models (they must
    share one ``vocab.spm``; ``weights``: one number > 0 per directory,
    normalized, equal by default) into one SavedModel with every signature,
    each decoding with the ensemble as `Translator.from_directory` does.

    ``options``: the decoding options fixed in the signatures, any
    `DecodeOptions` field (``beam_size``, ``alpha``, ``max_extra_length``,
    ``max_source_length``, ``min_length``, ``no_repeat_ngram_size``,
    ``repetition_penalty``, ...; `keras_transformer.options` defines them),
    validated as such; ``translate_options`` takes the runtime ones
    (``alpha``, ``min_length``, ``repetition_penalty``) with each request
    instead. Two more keys: ``n_best`` (default: the beam size, at most the
    beam size) fixes the ``k`` of the ``translate_nbest`` signature;
    ``sampling``, a dict with ``temperature``, ``top_k``, ``top_p`` for the
    ``translate_sample`` signature (default: plain sampling from the
    model's distribution); ``parallel_searches`` (default 2, see
    `keras_transformer.options.PARALLEL_SEARCHES`): a request's sentences
    are searched in this many groups at once, on TensorFlow's inter-op
    threads (1: one search per request, for a server that gives each
    request one thread).
    ``quantize="int8"`` quantizes the model the package's way before
    export (`keras_transformer.utils.quantization.quantize_int8`: int8
    kernels, inputs in the compute dtype; TensorFlow's CPU build has no
    fast int8 x int8 matmul).

    A multilingual model's signatures take ``target_language`` (see the
    module's docstring). ``language_tag`` (``"source"`` or ``"target"``)
    says where the model finds its language tag; default: its run's
    ``train_config.json`` or its preset's ``task.json`` (the first
    directory's, for an ensemble), else
    ``"source"``, as `Translator.from_directory` reads it. The export
    records it (and the languages) in ``export_config.json``.

    Works under every Keras backend: outside TensorFlow it runs the export in
    a subprocess with ``KERAS_BACKEND=tensorflow``. Returns the version
    directory.

    Raises:
        MissingDependencyError: (an ImportError) before any work, when
            TensorFlow, TensorFlow Text or the TF Serving API is not
            installed.
    """
    require(
        "The SavedModel export",
        ("tensorflow", "tensorflow_text", "tensorflow_serving"),
        "tensorflow tensorflow-text tensorflow-serving-api; `keras-transformer export "
        "--format ctranslate2` needs none of them",
    )
    _export_options(options)
    check_choice("quantize", quantize, (None, "int8"))
    if language_tag is not None:
        check_language_tag_position(language_tag)
    directories = model_directories(model_dir)
    check_weights(weights, len(directories))

    # Every directory holds a model; an ensemble's share one vocabulary.
    files = find_trained_models(directories)[0]
    if not os.path.isfile(files.vocabulary_path):
        raise FileNotFoundError(
            f"{files.vocabulary_path} not found: export needs the model's "
            "vocabulary (a run directory of `keras-transformer train` and a "
            "preset hold assets/tokenizer/vocabulary.spm; a run directory of "
            "earlier versions, vocab.spm)."
        )
    version = check_int("version", version)
    # Before any work (the export itself checks again).
    _check_new_version(os.path.join(export_dir, str(version)))
    if os.path.exists(export_dir) and not os.path.isdir(export_dir):
        raise NotADirectoryError(f"The export directory {export_dir!r} is a file.")
    if not isinstance(model_dir, (str, bytes, os.PathLike)):
        model_dir = directories  # JSON-encodable for the child process
    # One JSON object across the process boundary, by name.
    args = {
        "model_dir": model_dir, "export_dir": export_dir, "version": version,
        "warmup": warmup, "quantize": quantize, "weights": weights,
        "language_tag": language_tag, "options": options,
    }
    if keras.config.backend() == "tensorflow":
        return _export_here(**args)
    return _export_in_subprocess(args)


# The child's stderr line that reports an error it raised.
_CHILD_ERROR = "keras-transformer export child error: "


def _export_in_subprocess(args):
    """`_export_here(**args)` in a child process with
    ``KERAS_BACKEND=tensorflow`` (`run_child`, via ``python -m
    keras_transformer.export``); returns the version directory it prints."""
    env = dict(os.environ, KERAS_BACKEND="tensorflow")
    result = subprocess.run(
        [sys.executable, "-m", "keras_transformer.export", json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        errors = [
            line[len(_CHILD_ERROR):]
            for line in result.stderr.splitlines()
            if line.startswith(_CHILD_ERROR)
        ]
        if errors:
            raise RuntimeError(f"Export under the TensorFlow backend failed: {errors[-1]}")
        raise RuntimeError(
            "Export under the TensorFlow backend failed:\n" + result.stderr[-4000:]
        )
    return result.stdout.strip().splitlines()[-1]


def run_child(argv):
    """The child process of `_export_in_subprocess`: exports with the
    JSON-encoded arguments ``argv[0]`` (an object) and prints the version directory; an
    error becomes one `_CHILD_ERROR` line on stderr and exit status 1 (the
    traceback instead with ``KERAS_TRANSFORMER_TRACEBACK`` set)."""
    try:
        print(_export_here(**json.loads(argv[0])))
    except Exception as error:
        if os.environ.get("KERAS_TRANSFORMER_TRACEBACK"):
            raise
        message = " ".join(str(error).split())
        print(f"{_CHILD_ERROR}{type(error).__name__}: {message}", file=sys.stderr)
        sys.exit(1)
