"""Translate through TF Serving's REST API: the model-status call, then one
predict request, printed as the server answers it.

    python examples/rest_client.py --server localhost:8501 --model numbers \
        "twenty-one" "three hundred forty-five"
    python examples/rest_client.py --signature score \
        --inputs '{"sources": ["twenty-one"], "targets": ["einundzwanzig"]}'
    python examples/rest_client.py --saved-model exported/numbers/1 "twenty-one"

With ``--saved-model DIR`` no server is involved: the same request body is
answered by the SavedModel loaded in this process (TensorFlow and
tensorflow-text only), in the row format the server uses. That is how the
test suite checks this script. Needs only the Python standard library (and
TensorFlow for ``--saved-model``); see docs/serving.md.
"""

import argparse
import json
import sys
import urllib.request


def request_body(sentences=None, signature="serving_default", inputs=None):
    """TF Serving's predict body: ``instances`` (the row format) for one
    input, ``inputs`` (the columnar format) for a signature of several."""
    body = {"signature_name": signature}
    if inputs is not None:
        body["inputs"] = inputs
    else:
        body["instances"] = list(sentences)
    return body


def model_status(server, model):
    """GET /v1/models/<model>: each version's state ("AVAILABLE" once loaded)."""
    with urllib.request.urlopen(f"http://{server}/v1/models/{model}", timeout=30) as response:
        return json.loads(response.read())


def predict(server, model, body):
    """POST /v1/models/<model>:predict."""
    request = urllib.request.Request(
        f"http://{server}/v1/models/{model}:predict",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def predict_locally(saved_model_dir, body):
    """What the server answers to ``body``, from the SavedModel loaded in
    this process: ``instances`` -> ``{"predictions": [one dict per row]}``,
    ``inputs`` -> ``{"outputs": {name: column}}``."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    signature = tf.saved_model.load(saved_model_dir).signatures[body["signature_name"]]
    if "instances" in body:
        name = next(iter(signature.structured_input_signature[1]))
        inputs = {name: tf.constant(body["instances"], tf.string)}
    else:
        inputs = {
            name: tf.constant(value, spec.dtype)
            for name, spec in signature.structured_input_signature[1].items()
            for value in [body["inputs"][name]]
        }
    outputs = {name: _plain(value.numpy()) for name, value in signature(**inputs).items()}
    if "instances" in body:
        rows = len(body["instances"])
        return {"predictions": [{name: outputs[name][i] for name in outputs} for i in range(rows)]}
    return {"outputs": outputs}


def _plain(value):
    if value.dtype == object:
        return [_plain(v) for v in value] if value.ndim > 1 else [v.decode("utf-8") for v in value]
    return value.tolist()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default="localhost:8501", help="host:port of the REST API")
    parser.add_argument("--model", default="numbers", help="the served model's name")
    parser.add_argument("--signature", default="serving_default")
    parser.add_argument("--inputs", help="a JSON object of named inputs (the columnar format)")
    parser.add_argument("--saved-model", help="answer from this SavedModel directory, no server")
    parser.add_argument("sentences", nargs="*", default=["twenty-one", "three hundred forty-five"])
    args = parser.parse_args(argv)

    body = request_body(args.sentences, args.signature, json.loads(args.inputs) if args.inputs else None)
    if args.saved_model:
        response = predict_locally(args.saved_model, body)
    else:
        print(json.dumps(model_status(args.server, args.model)))
        response = predict(args.server, args.model, body)
    print(json.dumps(response, ensure_ascii=False))
    return response


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
