"""Translate through TF Serving's gRPC API (port 8500) with
``tensorflow-serving-api``: the model-status call, then one PredictRequest.

    python examples/grpc_client.py --server localhost:8500 --model numbers \
        "twenty-one" "three hundred forty-five"
    python examples/grpc_client.py --saved-model exported/numbers/1 "twenty-one"

With ``--saved-model DIR`` no server is involved: the same PredictRequest is
run through the signature it names in the SavedModel loaded in this process,
and answered as a PredictResponse. That is how the test suite checks this
script; see docs/serving.md.
"""

import argparse
import sys

import tensorflow as tf
from tensorflow_serving.apis import get_model_status_pb2, model_service_pb2_grpc
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc


def predict_request(model, sentences, signature="serving_default"):
    """A PredictRequest for a signature whose one input is ``sentences``."""
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    request.model_spec.signature_name = signature
    request.inputs["sentences"].CopyFrom(tf.make_tensor_proto(list(sentences), dtype=tf.string))
    return request


def model_status(channel, model):
    """GetModelStatus: each version's state (AVAILABLE once loaded)."""
    request = get_model_status_pb2.GetModelStatusRequest()
    request.model_spec.name = model
    return model_service_pb2_grpc.ModelServiceStub(channel).GetModelStatus(request, timeout=30)


def predict(channel, request):
    return prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=300)


def predict_locally(saved_model_dir, request):
    """The PredictResponse for ``request``, from the SavedModel loaded here."""
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    signature = tf.saved_model.load(saved_model_dir).signatures[request.model_spec.signature_name]
    inputs = {name: tf.constant(tf.make_ndarray(proto)) for name, proto in request.inputs.items()}
    response = predict_pb2.PredictResponse()
    response.model_spec.CopyFrom(request.model_spec)
    for name, value in signature(**inputs).items():
        response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
    return response


def translations(response):
    texts = tf.make_ndarray(response.outputs["translations"])
    scores = tf.make_ndarray(response.outputs["scores"])
    return [t.decode("utf-8") for t in texts], scores.tolist()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default="localhost:8500", help="host:port of the gRPC API")
    parser.add_argument("--model", default="numbers", help="the served model's name")
    parser.add_argument("--saved-model", help="answer from this SavedModel directory, no server")
    parser.add_argument("sentences", nargs="*", default=["twenty-one", "three hundred forty-five"])
    args = parser.parse_args(argv)

    request = predict_request(args.model, args.sentences)
    if args.saved_model:
        response = predict_locally(args.saved_model, request)
    else:
        import grpc

        channel = grpc.insecure_channel(args.server)
        print(model_status(channel, args.model))
        response = predict(channel, request)
    texts, scores = translations(response)
    for source, text, score in zip(args.sentences, texts, scores):
        print(f"{source!r} -> {text!r} (score {score:.3f})")
    return texts


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
