"""The start of the scripts that export tests run in a fresh TensorFlow-only
process: it loads a SavedModel (``sys.argv[1]``) and a JSON case
(``sys.argv[2]``), and defines ``strings`` (a string tensor), ``plain`` (a
signature's outputs as Python lists) and ``failure`` (the message of an
INVALID_ARGUMENT, or "no error")."""

import textwrap

SERVE_PRELUDE = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text  # registers the SentencePiece ops
    assert "keras_transformer" not in sys.modules
    loaded = tf.saved_model.load(sys.argv[1])
    case = json.loads(open(sys.argv[2]).read())
    strings = lambda values: tf.constant(values, dtype=tf.string)

    def plain(result):
        out = {}
        for key, value in result.items():
            value = value.numpy()
            out[key] = (
                [[t.decode("utf-8") for t in row] for row in value] if value.ndim == 2
                else [t.decode("utf-8") for t in value]
            ) if value.dtype == object else value.tolist()
        return out

    def failure(signature, **inputs):
        try:
            loaded.signatures[signature](**inputs)
            return "no error"
        except tf.errors.InvalidArgumentError as error:
            return error.message
    """
)
