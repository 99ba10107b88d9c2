"""The ``keras-transformer`` console script's entry point (``keras_transformer_cli:main``).

Outside the `keras_transformer` package on purpose: importing any module of
that package runs its ``__init__`` first, which imports the whole library
(so that a bare ``import keras_transformer`` registers every Keras class)
and with it Keras and TensorFlow, seconds before a ``--help`` could answer.
While this module is in ``sys.modules``, ``keras_transformer/__init__.py``
imports no more than the package's pure-Python start
(`keras_transformer.cli.startup`), which parses the arguments, sets the
backend and TensorFlow's log level, and only then imports the library.
"""

from keras_transformer.cli.startup import main

__all__ = ["main"]
