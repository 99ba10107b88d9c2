"""SavedModel export for TF Serving: strings in, translations out.

The exported graph holds the whole translator: SentencePiece tokenization
(tensorflow-text ops), the encoder, cached beam search (`keras.ops` traced
by the TensorFlow backend into a `tf.while_loop`) and detokenization. The
server needs TensorFlow and tensorflow-text's ops, nothing from Keras or this
package.

Whatever backend trained the model, the export runs under the TensorFlow
backend: a ``.keras`` file holds backend-independent weights, so under JAX
or PyTorch `export_saved_model` re-runs itself in a subprocess with
``KERAS_BACKEND=tensorflow`` that reloads the file and exports it. (Keras'
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
- ``translate_sample``: ``sentences`` string ``[None]`` and ``seed`` int32
  scalar -> ``translations``, ``scores``: one sample per sentence
  (temperature, top-k, top-p fixed at export), the samples of
  ``Translator.translate(sentences, sampling=True, seed=seed, ...)``.
- ``score``: ``sources`` and ``targets`` string ``[None]`` -> ``scores``
  float32 ``[None]``: each pair's total log-probability of the target
  (EOS included), no length penalty, as `Translator.score`.

Every signature runs the `Translator`'s code: `prepare_sources` (the same
truncation, EOS placement and learned-position caps), `generate` via
`decode_token_ids`, `token_log_probs`. Blank strings translate to "" with
score 0, and empty batches give empty outputs, in every signature.
"""

import functools
import json
import os
import subprocess
import sys

import keras
import tensorflow as tf
from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2

from keras_transformer.decoding.forced import token_log_probs
from keras_transformer.decoding.generate import StaticDecode, decode_token_ids
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.decoding.sources import (
    check_vocabulary,
    prepare_sources,
    source_limit,
)
from keras_transformer.layers.token_checks import check_token_ids
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_model,
)
from keras_transformer.special_tokens import PAD_ID, UNK_ID

WARMUP_SENTENCES = ("A man is running.", "Two dogs play in the snow.", "")


_SAMPLING_KEYS = ("temperature", "top_k", "top_p")


def _export_options(beam_size, alpha, max_extra_length, max_source_length, n_best, sampling=None):
    """The export's `DecodeOptions`, its n-best size and the
    ``translate_sample`` signature's options (all validated, errors naming
    the option)."""

    options = DecodeOptions(
        beam_size=beam_size,
        alpha=alpha,
        max_extra_length=max_extra_length,
        max_source_length=max_source_length,
    )
    if n_best is None:
        n_best = options.beam_size
    options.replace(num_return=n_best)  # n_best <= beam_size, named if not
    sampling = dict(sampling or {})
    unknown = sorted(set(sampling) - set(_SAMPLING_KEYS))
    if unknown:
        raise ValueError(
            f"Unknown sampling setting(s) {unknown}; the sampling signature "
            f"takes {list(_SAMPLING_KEYS)}."
        )
    sampling = {k: v for k, v in sampling.items() if v is not None}
    sample_options = options.replace(beam_size=1, sampling=True, **sampling)
    return options, n_best, sample_options


def _build_module(model, tokenizer, vocabulary_path, options, n_best, sample_options):
    """A `tf.Module` holding the model, tokenizer and vocabulary asset, and
    its signatures' concrete functions (name -> function), which all run
    `decode_token_ids` / `prepare_sources` / `token_log_probs`: the
    `Translator`'s code."""


    max_positions = model.max_length if model.positional_encoding == "learned" else None
    keep = source_limit(options.max_source_length, max_positions) - 1
    best = StaticDecode.from_options(options.replace(num_return=1), max_positions)
    nbest = StaticDecode.from_options(options.replace(num_return=n_best), max_positions)
    sample = StaticDecode.from_options(sample_options, max_positions)
    tokenizer_size = tokenizer.vocabulary_size

    def decode(token_ids, static, seed=None, prefix_ids=None, prefix_lengths=None):
        # token_ids: int32 (batch, length), 0-padded, no EOS. prefix_ids:
        # (batch, P) forced output prefixes, prefix_lengths (batch,).
        batch = tf.shape(token_ids)[0]
        if prefix_ids is None:
            prefix_ids = tf.zeros([batch, 1], tf.int32)
            prefix_lengths = tf.zeros([batch], tf.int32)
        if seed is None:
            seed = tf.constant(0, tf.int32)
        width = tf.minimum(tf.shape(token_ids)[1], keep)
        # The output buffer: the longest source's limit (prepare_sources
        # gives each row its own).
        max_length = width + options.max_extra_length
        if max_positions is not None:
            max_length = tf.minimum(max_length, max_positions)

        def run():
            sequences, scores = decode_token_ids(
                model,
                token_ids,
                tf.fill([batch], tf.int32.max),
                max_length,
                tf.constant(options.alpha, tf.float32),
                tf.constant(options.min_length, tf.int32),
                seed,
                tf.range(batch, dtype=tf.int32),  # sampling: as Translator's row ids
                prefix_ids,
                prefix_lengths,
                static,
            )
            return tf.cast(sequences, tf.int32), tf.cast(scores, tf.float32)

        def empty():
            k = static.num_return
            return tf.zeros([0, k, 1], tf.int32), tf.zeros([0, k], tf.float32)

        return tf.cond(batch > 0, run, empty)

    def detokenize(sequences):
        # Model ids the tokenizer lacks (a padded vocabulary) read as UNK,
        # as in `Translator`.
        sequences = tf.where(sequences < tokenizer_size, sequences, UNK_ID)
        return tokenizer.detokenize(sequences)

    def best_of(sequences, scores, blank):
        # The best hypothesis of each row; blank inputs: "" with score 0.
        translations = tf.where(blank, tf.constant(""), detokenize(sequences[:, 0]))
        scores = tf.where(blank, tf.zeros_like(scores[:, 0]), scores[:, 0])
        return {"translations": translations, "scores": scores}

    # The module holds what the signatures capture (model, tokenizer,
    # vocabulary asset); the signature functions are not its attributes:
    # tf.saved_model.save re-traces every tf.function attribute of the saved
    # object in its save context (each search graph traced twice, about 40% of the
    # export's time), while concrete functions passed as signatures are
    # saved as they are.
    # Without AutoGraph: the decode code's control flow is explicit
    # (`keras.ops.while_loop`, `tf.cond`), so converting every function it
    # calls only cost time (the export took 34.5 s with it, 28.9 s without,
    # on the test model on 2 cores); a Python `if` on a tensor fails loudly.
    graph_function = functools.partial(tf.function, autograph=False)

    module = tf.Module(name="translator")
    module.model = model
    module.tokenizer = tokenizer
    # Copied to <version>/assets/ for clients that tokenize themselves (the
    # graph's tokenizer holds the same model).
    module.vocabulary_file = tf.saved_model.Asset(vocabulary_path)
    # Variables for TF's object graph (the model's are TF variables under
    # the TensorFlow backend).
    module.model_variables = [v.value for v in model.weights]

    def pieces(sentences):
        tokenized = tokenizer.tokenize(sentences)
        token_ids = tf.cast(tokenized.to_tensor(default_value=PAD_ID), tf.int32)
        # "" and whitespace-only inputs have no tokens.
        return token_ids, tf.equal(tokenized.row_lengths(), 0)

    @graph_function(input_signature=[tf.TensorSpec([None], tf.string, name="sentences")])
    def serve(sentences):
        token_ids, blank = pieces(sentences)
        sequences, scores = decode(token_ids, best)
        return best_of(sequences, scores, blank)

    @graph_function(input_signature=[tf.TensorSpec([None], tf.string, name="sentences")])
    def serve_nbest(sentences):
        token_ids, blank = pieces(sentences)
        sequences, scores = decode(token_ids, nbest)  # (batch, k, L)
        shape = tf.shape(sequences)
        flat = tf.reshape(sequences, [shape[0] * n_best, shape[2]])
        translations = tf.reshape(detokenize(flat), [shape[0], n_best])
        translations = tf.where(blank[:, None], tf.constant(""), translations)
        scores = tf.where(blank[:, None], tf.zeros_like(scores), scores)
        return {"translations": translations, "scores": scores}

    @graph_function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="sources"),
            tf.TensorSpec([None], tf.string, name="prefixes"),
        ]
    )
    def serve_prefix(sources, prefixes):
        # Each output starts with its prefix's tokens ("" for none), then
        # the beam search continues, as Translator(target_prefix=...).
        token_ids, blank = pieces(sources)
        prefix_pieces = tokenizer.tokenize(prefixes)
        tf.debugging.assert_equal(
            tf.shape(token_ids)[0], prefix_pieces.nrows(out_type=tf.int32),
            message="translate_prefix needs one prefix per source",
        )
        prefix_lengths = tf.cast(prefix_pieces.row_lengths(), tf.int32)
        prefix_ids = tf.cast(prefix_pieces.to_tensor(default_value=PAD_ID), tf.int32)
        prefix_ids = tf.pad(prefix_ids, [[0, 0], [0, 1]])  # at least 1 column
        _, limits = prepare_sources(
            token_ids, options.max_source_length, options.max_extra_length, max_positions
        )
        tf.debugging.assert_less(
            prefix_lengths, tf.cast(limits, tf.int32),
            message="a prefix leaves no room for EOS in its output "
            "(raise --max-extra-length at export or shorten the prefix)",
        )
        sequences, scores = decode(token_ids, best, prefix_ids=prefix_ids, prefix_lengths=prefix_lengths)
        return best_of(sequences, scores, blank)

    @graph_function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="sentences"),
            tf.TensorSpec([], tf.int32, name="seed"),
        ]
    )
    def serve_sample(sentences, seed):
        # One sample per sentence (temperature/top_k/top_p fixed at
        # export); the same seed gives Translator.translate(sentences,
        # sampling=True, seed=seed)'s samples.
        token_ids, blank = pieces(sentences)
        tf.debugging.assert_non_negative(seed, message="seed must be >= 0")
        sequences, scores = decode(token_ids, sample, seed=seed)
        return best_of(sequences, scores, blank)

    @graph_function(input_signature=[tf.TensorSpec([None, None], tf.int32, name="token_ids")])
    def serve_token_ids(token_ids):
        # Out-of-range ids would wrap (-1 reads the last embedding row):
        # fail with an error naming the vocabulary size instead.
        token_ids = check_token_ids(
            token_ids, model.vocabulary_size, "token_ids"
        )
        sequences, scores = decode(token_ids, best)
        return {"token_ids": sequences[:, 0], "scores": scores[:, 0]}

    @graph_function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="sources"),
            tf.TensorSpec([None], tf.string, name="targets"),
        ]
    )
    def serve_score(sources, targets):
        # Forced decoding, as `Translator.score`: total log P(target +
        # EOS | source), no length penalty. Blank targets score EOS.
        source_ids, _ = pieces(sources)
        target_ids, _ = pieces(targets)
        tf.debugging.assert_equal(
            tf.shape(source_ids)[0], tf.shape(target_ids)[0],
            message="score needs one target per source",
        )
        encoder_ids, _ = prepare_sources(
            source_ids, options.max_source_length, 1, max_positions
        )
        # EOS after each target: prepare_sources' EOS placement, no cut.
        targets_eos, _ = prepare_sources(target_ids, tf.int32.max, 1)
        if max_positions is not None:
            tf.debugging.assert_less_equal(
                tf.shape(targets_eos)[1], max_positions,
                message=f"a target is longer than the model's {max_positions} "
                "learned positions",
            )

        def run():
            log_probs = token_log_probs(model, encoder_ids, targets_eos)
            return tf.reduce_sum(tf.cast(log_probs, tf.float32), axis=1)

        def empty():
            return tf.zeros([0], tf.float32)

        scores = tf.cond(tf.shape(source_ids)[0] > 0, run, empty)
        return {"scores": scores}

    signatures = {
        "serving_default": serve,
        "translate_nbest": serve_nbest,
        "translate_token_ids": serve_token_ids,
        "translate_prefix": serve_prefix,
        "translate_sample": serve_sample,
        "score": serve_score,
    }
    return module, {name: f.get_concrete_function() for name, f in signatures.items()}


def _write_warmup_requests(version_dir, signature_name="serving_default"):

    directory = os.path.join(version_dir, "assets.extra")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "tf_serving_warmup_requests")
    with tf.io.TFRecordWriter(path) as writer:
        for batch in (list(WARMUP_SENTENCES[:1]), list(WARMUP_SENTENCES)):
            request = predict_pb2.PredictRequest(
                model_spec=model_pb2.ModelSpec(signature_name=signature_name)
            )
            request.inputs["sentences"].CopyFrom(tf.make_tensor_proto(batch, dtype=tf.string))
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)
            )
            writer.write(log.SerializeToString())
    return path


def _check_new_version(version_dir):
    if os.path.exists(version_dir):
        raise FileExistsError(
            f"{version_dir} exists; TF Serving versions are immutable. Choose "
            "another --version or remove it."
        )


def _export_here(
    model_dir, export_dir, version, beam_size, alpha, max_extra_length,
    max_source_length, warmup, n_best=None, quantize=None, sampling=None,
):


    options, n_best, sample_options = _export_options(
        beam_size, alpha, max_extra_length, max_source_length, n_best, sampling
    )
    # A run directory or a keras-hub preset; errors name the file (a
    # truncated or corrupt model.keras, ...).
    files = find_trained_model(model_dir)
    model = files.load_model(compile=False)
    tokenizer = files.load_tokenizer()
    # The `Translator`'s rule and message.
    check_vocabulary(tokenizer.vocabulary_size, model.vocabulary_size)
    if quantize is not None:
        model.quantize(quantize)
    vocabulary_path = files.vocabulary_path
    version_dir = os.path.join(export_dir, str(version))
    _check_new_version(version_dir)
    module, signatures = _build_module(
        model, tokenizer, vocabulary_path, options, n_best, sample_options
    )
    # No custom gradients: serving never differentiates, and tracing them
    # took about a quarter of the save (8 of 13 s for the test model).
    save_options = tf.saved_model.SaveOptions(experimental_custom_gradients=False)
    tf.saved_model.save(module, version_dir, signatures=signatures, options=save_options)
    if warmup:
        _write_warmup_requests(version_dir)
    metadata = {
        "beam_size": beam_size,
        "alpha": alpha,
        "max_extra_length": max_extra_length,
        "max_source_length": max_source_length,
        "n_best": n_best,
        "quantize": quantize,
        "decode_options": options.to_dict(),
        "sample_options": sample_options.to_dict(),
        "model_dir": os.path.abspath(model_dir),
        "tensorflow": tf.__version__,
        "signatures": sorted(signatures),
    }
    os.makedirs(os.path.join(version_dir, "assets.extra"), exist_ok=True)
    with open(os.path.join(version_dir, "assets.extra", "export_config.json"), "w") as f:
        json.dump(metadata, f, indent=2)
    return version_dir


def export_saved_model(
    model_dir,
    export_dir,
    version=1,
    beam_size=4,
    alpha=0.6,
    max_extra_length=50,
    max_source_length=256,
    warmup=True,
    n_best=None,
    quantize=None,
    sampling=None,
):
    """Exports the trained model in ``model_dir`` (a run directory:
    ``model.keras`` + ``vocab.spm``, or a keras-hub preset written by
    ``save_to_preset``) as a TF Serving SavedModel in
    ``<export_dir>/<version>``.

    ``beam_size``, ``alpha``, ``max_extra_length`` and ``max_source_length``
    are `DecodeOptions` fields, validated as such. ``n_best`` (default: the
    beam size, at most the beam size) fixes the ``k`` of the
    ``translate_nbest`` signature. ``sampling``: a dict with
    ``temperature``, ``top_k``, ``top_p`` for the ``translate_sample``
    signature (default: plain sampling from the model's distribution).
    ``quantize="int8"`` applies Keras' ``Model.quantize`` before export.

    Works under every Keras backend: outside TensorFlow it runs the export in
    a subprocess with ``KERAS_BACKEND=tensorflow``. Returns the version
    directory.
    """
    _export_options(beam_size, alpha, max_extra_length, max_source_length, n_best, sampling)
    if quantize not in (None, "int8"):
        raise ValueError(f"quantize must be None or 'int8'. Received: quantize={quantize!r}")

    files = find_trained_model(model_dir)
    if not os.path.isfile(files.vocabulary_path):
        raise FileNotFoundError(
            f"{files.vocabulary_path} not found: export needs the model's "
            "vocabulary (a run directory of `keras-transformer train` holds "
            "model.keras + vocab.spm; a preset, assets/tokenizer/vocabulary.spm)."
        )
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"version must be a positive int. Received: version={version!r}")
    # Before any work (the export itself checks again).
    _check_new_version(os.path.join(export_dir, str(version)))
    if os.path.exists(export_dir) and not os.path.isdir(export_dir):
        raise NotADirectoryError(f"The export directory {export_dir!r} is a file.")
    args = [
        model_dir, export_dir, version, beam_size, alpha, max_extra_length,
        max_source_length, warmup, n_best, quantize, sampling,
    ]

    if keras.config.backend() == "tensorflow":
        return _export_here(*args)
    env = dict(os.environ, KERAS_BACKEND="tensorflow")
    result = subprocess.run(
        [sys.executable, "-m", "keras_transformer.export", json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        # The child reports an error it raised as one marked line.
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


_CHILD_ERROR = "keras-transformer export child error: "

if __name__ == "__main__":  # the subprocess entry point used above
    try:
        print(_export_here(*json.loads(sys.argv[1])))
    except Exception as error:
        if os.environ.get("KERAS_TRANSFORMER_TRACEBACK"):
            raise
        message = " ".join(str(error).split())
        print(f"{_CHILD_ERROR}{type(error).__name__}: {message}", file=sys.stderr)
        sys.exit(1)
