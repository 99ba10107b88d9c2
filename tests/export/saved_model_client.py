"""The start of the scripts that export tests run in a fresh TensorFlow-only
process: it loads a SavedModel (``sys.argv[1]``) and a JSON case
(``sys.argv[2]``), and defines ``strings`` (a string tensor), ``plain`` (a
signature's outputs as Python lists) and ``failure`` (the message of an
INVALID_ARGUMENT, or "no error")."""

import json
import os
import subprocess
import sys
import textwrap

# The inputs of each signature of a model of one target language.
PLAIN_INPUTS = {
    "serving_default": ["sentences"],
    "translate_nbest": ["sentences"],
    "translate_token_ids": ["token_ids"],
    "translate_prefix": ["prefixes", "sources"],
    "translate_constrained": ["constraints", "sources"],
    "translate_sample": ["seed", "sentences"],
    "score": ["sources", "targets"],
    "translate_options": ["alpha", "min_length", "repetition_penalty", "sentences"],
}

# The signatures of the export's warm-up requests, in order: serving_default
# on one sentence, then every signature on all the warm-up sentences.
WARMUP_SIGNATURES = ["serving_default", "serving_default"] + sorted(
    set(PLAIN_INPUTS) - {"serving_default"}
)

# For a serving script, after ``loaded``: ``replay_warmup()`` replays the
# SavedModel's warm-up requests as TF Serving does at load (each signature's
# first request, which instantiates its graph) and returns, per request,
# its signature, its input names, its rows (sentences or id rows), the rows
# answered and its ``target_language`` values (None without one).
WARMUP_REPLAY = textwrap.dedent(
    """
    def replay_warmup():
        from tensorflow_serving.apis import prediction_log_pb2
        path = sys.argv[1] + "/assets.extra/tf_serving_warmup_requests"
        replayed = []
        for record in tf.data.TFRecordDataset(path):
            log = prediction_log_pb2.PredictionLog.FromString(record.numpy())
            request = log.predict_log.request
            inputs = {key: tf.make_ndarray(value) for key, value in request.inputs.items()}
            name = request.model_spec.signature_name
            outputs = loaded.signatures[name](**inputs)
            rows = max(
                len(value) for key, value in inputs.items()
                if value.ndim and key != "target_language"
            )
            languages = inputs.get("target_language")
            if languages is not None:
                languages = [language.decode("utf-8") for language in languages]
            replayed.append([name, sorted(inputs), rows, len(outputs["scores"]), languages])
        return replayed
    """
)

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
) + WARMUP_REPLAY


def serve(tmp_path, script, version_dir, case):
    """Runs ``script`` (`SERVE_PRELUDE` + a test's calls) on the SavedModel in
    ``version_dir`` with ``case`` in a fresh process without KERAS_BACKEND,
    and returns the JSON it prints last."""
    (tmp_path / "case.json").write_text(json.dumps(case))
    (tmp_path / "serve.py").write_text(script)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("KERAS_BACKEND", None)
    result = subprocess.run(
        [sys.executable, str(tmp_path / "serve.py"), version_dir, str(tmp_path / "case.json")],
        capture_output=True, text=True, env=env, timeout=600, cwd=str(tmp_path), check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
