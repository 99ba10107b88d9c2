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
- ``translate_token_ids``: ``token_ids`` int32 ``[None, None]`` (padded
  with 0, no BOS/EOS needed) -> ``token_ids`` int32 ``[None, None]``
  (EOS-terminated, 0-padded) and ``scores``. Ids outside
  ``[0, vocabulary_size)`` fail the request with ``INVALID_ARGUMENT``
  "token_ids contains id ... outside [0, V)".
"""

import json
import os
import subprocess
import sys

from keras_transformer.special_tokens import EOS_ID, PAD_ID

WARMUP_SENTENCES = ("A man is running.", "Two dogs play in the snow.", "")


def _check_export_arguments(beam_size, alpha, max_extra_length, max_source_length):
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(f"beam_size must be an int >= 1. Received: beam_size={beam_size!r}")
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0. Received: alpha={alpha!r}")
    if not isinstance(max_extra_length, int) or max_extra_length < 1:
        raise ValueError(
            f"max_extra_length must be an int >= 1. Received: max_extra_length={max_extra_length!r}"
        )
    if not isinstance(max_source_length, int) or max_source_length < 2:
        raise ValueError(
            f"max_source_length must be an int >= 2. Received: max_source_length={max_source_length!r}"
        )


def _build_module(model, tokenizer, vocabulary_path, beam_size, alpha, max_extra_length, max_source_length):
    import tensorflow as tf

    from keras_transformer.decoding.compile import generate
    from keras_transformer.layers.token_checks import check_token_ids

    class TranslationModule(tf.Module):
        def __init__(self):
            super().__init__(name="translator")
            self.model = model
            self.tokenizer = tokenizer
            # Copied to <version>/assets/ for clients that tokenize themselves
            # (the graph's tokenizer holds the same model).
            self.vocabulary_file = tf.saved_model.Asset(vocabulary_path)
            # Variables for TF's object graph (the model's are TF variables
            # under the TensorFlow backend).
            self.model_variables = [v.value for v in model.weights]

        def _translate_ids(self, token_ids):
            # token_ids: int32 (batch, length), 0-padded, no EOS.
            token_ids = token_ids[:, : max_source_length - 1]
            lengths = tf.reduce_sum(tf.cast(token_ids != PAD_ID, tf.int32), axis=1)
            batch = tf.shape(token_ids)[0]
            # Append EOS after the last real token of each row.
            eos = tf.one_hot(lengths, tf.shape(token_ids)[1] + 1, dtype=tf.int32) * EOS_ID
            source = tf.pad(token_ids, [[0, 0], [0, 1]]) + eos
            max_length = tf.shape(source)[1] + max_extra_length

            def run():
                sequences, scores = generate(
                    model,
                    source,
                    # Output limit (EOS included) = input tokens + max_extra_length,
                    # as `Translator` does.
                    max_lengths=lengths + max_extra_length,
                    alpha=tf.constant(alpha, tf.float32),
                    min_length=tf.constant(0, tf.int32),
                    max_length=max_length,
                    beam_size=beam_size,
                )
                return tf.cast(sequences[:, 0], tf.int32), tf.cast(scores[:, 0], tf.float32)

            def empty():
                return tf.zeros([0, 1], tf.int32), tf.zeros([0], tf.float32)

            return tf.cond(batch > 0, run, empty)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="sentences")])
        def serve(self, sentences):
            pieces = self.tokenizer.tokenize(sentences)
            pieces = pieces[:, : max_source_length - 1]
            token_ids = tf.cast(pieces.to_tensor(default_value=PAD_ID), tf.int32)
            # Rows of only unknown characters still translate; an empty batch
            # of strings gives an empty output.
            sequences, scores = self._translate_ids(token_ids)
            translations = self.tokenizer.detokenize(sequences)
            # "" and whitespace-only inputs have no tokens: empty translation.
            blank = tf.equal(pieces.row_lengths(), 0)
            translations = tf.where(blank, tf.constant(""), translations)
            scores = tf.where(blank, tf.zeros_like(scores), scores)
            return {"translations": translations, "scores": scores}

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32, name="token_ids")])
        def serve_token_ids(self, token_ids):
            # Out-of-range ids would wrap (-1 reads the last embedding row):
            # fail with an error naming the vocabulary size instead.
            token_ids = check_token_ids(
                token_ids, model.vocabulary_size, "token_ids"
            )
            sequences, scores = self._translate_ids(token_ids)
            return {"token_ids": sequences, "scores": scores}

    return TranslationModule()


def _write_warmup_requests(version_dir, signature_name="serving_default"):
    import tensorflow as tf
    from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2

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


def _export_here(model_dir, export_dir, version, beam_size, alpha, max_extra_length, max_source_length, warmup):
    import keras
    import tensorflow as tf

    from keras_transformer.data.tokenizer import SubwordTokenizer

    from keras_transformer.run_directory import load_model

    # Errors name the file (a truncated or corrupt model.keras, ...).
    model = load_model(os.path.join(model_dir, "model.keras"), compile=False)
    tokenizer = SubwordTokenizer.load(model_dir)
    if tokenizer.vocabulary_size != model.vocabulary_size:
        raise ValueError(
            f"The vocabulary in {model_dir} has {tokenizer.vocabulary_size} pieces "
            f"but the model expects vocabulary_size={model.vocabulary_size}."
        )
    vocabulary_path = os.path.join(model_dir, "vocab.spm")
    module = _build_module(model, tokenizer, vocabulary_path, beam_size, alpha, max_extra_length, max_source_length)
    version_dir = os.path.join(export_dir, str(version))
    if os.path.exists(version_dir):
        raise FileExistsError(
            f"{version_dir} exists; TF Serving versions are immutable. Choose "
            "another --version or remove it."
        )
    signatures = {
        "serving_default": module.serve.get_concrete_function(),
        "translate_token_ids": module.serve_token_ids.get_concrete_function(),
    }
    tf.saved_model.save(module, version_dir, signatures=signatures)
    if warmup:
        _write_warmup_requests(version_dir)
    metadata = {
        "beam_size": beam_size,
        "alpha": alpha,
        "max_extra_length": max_extra_length,
        "max_source_length": max_source_length,
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
):
    """Exports the model directory ``model_dir`` (``model.keras`` + ``vocab.spm``)
    as a TF Serving SavedModel in ``<export_dir>/<version>``.

    Works under every Keras backend: outside TensorFlow it runs the export in
    a subprocess with ``KERAS_BACKEND=tensorflow``. Returns the version
    directory.
    """
    _check_export_arguments(beam_size, alpha, max_extra_length, max_source_length)
    for name in ("model.keras", "vocab.spm"):
        path = os.path.join(model_dir, name)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{path} not found: export needs a model directory written by "
                "`keras-transformer train` (model.keras + vocab.spm)."
            )
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"version must be a positive int. Received: version={version!r}")
    # Before any work (the export itself checks again).
    version_dir = os.path.join(export_dir, str(version))
    if os.path.exists(version_dir):
        raise FileExistsError(
            f"{version_dir} exists; TF Serving versions are immutable. Choose "
            "another --version or remove it."
        )
    if os.path.exists(export_dir) and not os.path.isdir(export_dir):
        raise NotADirectoryError(f"The export directory {export_dir!r} is a file.")
    args = [model_dir, export_dir, version, beam_size, alpha, max_extra_length, max_source_length, warmup]
    import keras

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
