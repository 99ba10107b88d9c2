"""``python -m keras_transformer.export '<json arguments>'``: the
TensorFlow-backend child process that `export_saved_model` starts under the
JAX and PyTorch backends."""

import sys

from keras_transformer.export.saved_model import run_child

if __name__ == "__main__":
    run_child(sys.argv[1:])
