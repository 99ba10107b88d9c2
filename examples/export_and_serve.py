"""Export a trained run as a TF Serving SavedModel, then serve it from a
fresh process that imports only TensorFlow and tensorflow-text.

    python examples/export_and_serve.py --model-dir runs/numbers
    python examples/export_and_serve.py            # trains a tiny model first (about a minute)

The export runs under the TensorFlow backend whatever backend trained the
model (in a subprocess when needed). TF Serving itself would load the same
directory: see docs/serving.md.
"""

import argparse
import json
import os
import subprocess
import sys

SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # the SentencePiece ops used by the graph
loaded = tf.saved_model.load(sys.argv[1])
result = loaded.signatures["serving_default"](sentences=tf.constant(sys.argv[2:]))
print(json.dumps({"translations": [t.decode() for t in result["translations"].numpy()],
                  "scores": result["scores"].numpy().tolist()}))
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", help="a directory written by `keras-transformer train`")
    parser.add_argument("--export-dir", default="runs/export")
    parser.add_argument("--version", type=int, default=1)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--steps", type=int, default=300, help="training steps without --model-dir")
    parser.add_argument("sentences", nargs="*", default=["twenty-one", "three hundred forty-five"])
    args = parser.parse_args(argv)

    model_dir = args.model_dir
    if model_dir is None:
        from keras_transformer import TrainConfig
        from keras_transformer import train

        model_dir = os.path.join(args.export_dir + "_run")
        # A finished run is reused (a run directory holds one run; training
        # into it again would be refused).
        if not os.path.exists(os.path.join(model_dir, "model.weights.h5")):
            train(TrainConfig().replace(output_dir=model_dir, max_steps=args.steps, eval_sentences=50))

    from keras_transformer import export_saved_model

    version_dir = os.path.join(args.export_dir, str(args.version))
    if not os.path.exists(version_dir):
        version_dir = export_saved_model(model_dir, args.export_dir, version=args.version, beam_size=args.beam_size)
    print("exported", version_dir)

    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    result = subprocess.run(
        [sys.executable, "-c", SERVE, version_dir, *args.sentences],
        capture_output=True, text=True, env=env, check=True,
    )
    served = json.loads(result.stdout.strip().splitlines()[-1])
    for source, translation, score in zip(args.sentences, served["translations"], served["scores"]):
        print(f"{source!r} -> {translation!r} (score {score:.3f})")
    return served


if __name__ == "__main__":
    main()
