"""keras_transformer: the Transformer of "Attention Is All You Need" in Keras 3.

Runs on the TensorFlow, JAX and PyTorch backends (``KERAS_BACKEND``, read by
Keras when it is first imported). ``import keras_transformer`` imports the
whole package and so registers its Keras classes (layers, model, loss,
metric, schedule, tokenizer, keras-hub task): ``.keras`` files and presets
load in any order of imports.

The package is layered; a module imports only from its own layer or lower:
``special_tokens``/``utils`` < ``layers`` < ``objectives`` < ``decoding`` <
``models`` < ``data`` < ``training`` < ``export`` < ``cli``
(``tests/test_layering.py`` checks it).

TensorFlow and keras-hub are dependencies of the package, but under JAX and
PyTorch only the ``tf.data`` pipeline, graph tokenization and the SavedModel
export need TensorFlow and TensorFlow Text. Where they are not installed (a
GPU machine with only JAX or PyTorch), the model, its layers, the
objectives, the decoding, the tokenizer (in Python, through
``sentencepiece``), the `Translator`, prepared corpora, training (`train`,
from NumPy batches) and checkpoint averaging import and run;
`export_saved_model` says that it needs TensorFlow. The ``tf.data`` names
(`make_dataset`, ...) import TensorFlow when first used. keras-hub imports
TensorFlow whenever it is installed; without keras-hub the backbone is a
plain ``keras.Model``, the tokenizer keeps its methods on a plain base, and
using the keras-hub task or preprocessor raises an ImportError that says
so.

The ``keras-transformer`` command starts without the library: its console
script (``keras_transformer.cli.startup:main``) imports the package under
its own program name (``sys.argv[0]``, `COMMAND_NAME`), and the package
then imports only what the argument parser reads (pure Python). So ``--help`` answers without Keras or TensorFlow, and the command
sets ``KERAS_BACKEND`` and TensorFlow's log level before Keras is imported;
a subcommand then imports what it runs (the Keras classes register with
`keras_transformer.cli.main`'s imports).

The public API is in namespaces, as keras-hub's: `keras_transformer.layers`,
`.models`, `.objectives`, `.decoding`, `.data`, `.training` and `.export`;
their names (and `__all__`) are the same whatever is installed. The names
at the top level are kept for compatibility.
"""

import os
import re
import sys

from keras_transformer.version import __version__

# The console script's name (pyproject.toml's [project.scripts]).
COMMAND_NAME = "keras-transformer"


def started_as_the_command(argv0=None):
    """Whether this process is the ``keras-transformer`` command: its
    console script runs under the command's name (``sys.argv[0]`` while
    the script imports the package; on Windows with pip's ``.exe`` or
    ``-script.py`` suffix)."""
    argv0 = (sys.argv[0] if sys.argv else "") if argv0 is None else argv0
    name = re.sub(r"(-script\.pyw?|\.exe)$", "", os.path.basename(argv0))
    return name == COMMAND_NAME


if not started_as_the_command():
    from keras_transformer import (
        data,
        decoding,
        export,
        layers,
        models,
        objectives,
        training,
    )
    from keras_transformer.utils.dependencies import resolve_lazy_attributes

    # The lazily loaded names, now that their modules are imported (a
    # submodule would otherwise hide its namesake: decoding.generate).
    resolve_lazy_attributes(decoding)
    resolve_lazy_attributes(training)
    from keras_transformer.data.corpus import prepare_corpus
    from keras_transformer.data.corpus_stream import CorpusStream
    from keras_transformer.data.options import DatasetOptions
    from keras_transformer.data.shards import PreparedCorpus
    from keras_transformer.decoding.ensemble import Ensemble
    from keras_transformer.decoding.options import DecodeOptions
    from keras_transformer.export.saved_model import export_saved_model
    from keras_transformer.models import (
        KERAS_HUB_AVAILABLE,
        PRESETS,
        SubwordTokenizer,
        Transformer,
        TransformerBackbone,
        TransformerTokenizer,
        Translator,
        list_presets,
        register_trained_preset,
    )
    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
    from keras_transformer.objectives.metrics import MaskedTokenAccuracy
    from keras_transformer.objectives.schedules import (
        TransformerSchedule,
        transformer_optimizer,
    )
    from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID
    from keras_transformer.training.checkpoints import average_checkpoints
    from keras_transformer.training.config import TrainConfig
    from keras_transformer.training.trainer import train
    from keras_transformer.utils.dependencies import is_installed

    # Whether TensorFlow can be imported (found without importing it).
    TENSORFLOW_AVAILABLE = is_installed("tensorflow")

    if KERAS_HUB_AVAILABLE:
        from keras_transformer.models import (
            TransformerSeq2SeqLM,
            TransformerSeq2SeqLMPreprocessor,
        )

    # Names that need an optional dependency, kept at the top level for
    # compatibility: keras-hub's classes (`keras_transformer.models`) and the
    # tf.data pipeline (`keras_transformer.data`, which imports TensorFlow when
    # one of them is first used). Where the dependency is missing, using one
    # raises the ImportError of its namespace.
    _OPTIONAL_NAMES = {
        "TransformerSeq2SeqLM": models,
        "TransformerSeq2SeqLMPreprocessor": models,
        "make_dataset": data,
        "make_dataset_from_corpus": data,
        "make_dataset_from_files": data,
    }


    def __getattr__(name):
        if name in _OPTIONAL_NAMES:
            return getattr(_OPTIONAL_NAMES[name], name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BOS_ID",
    "CorpusStream",
    "EOS_ID",
    "KERAS_HUB_AVAILABLE",
    "PAD_ID",
    "PRESETS",
    "TENSORFLOW_AVAILABLE",
    "UNK_ID",
    "DatasetOptions",
    "DecodeOptions",
    "Ensemble",
    "LabelSmoothedCrossEntropy",
    "MaskedTokenAccuracy",
    "PreparedCorpus",
    "SubwordTokenizer",
    "TrainConfig",
    "Transformer",
    "TransformerBackbone",
    "TransformerSchedule",
    "TransformerSeq2SeqLM",
    "TransformerSeq2SeqLMPreprocessor",
    "TransformerTokenizer",
    "Translator",
    "__version__",
    "average_checkpoints",
    "data",
    "decoding",
    "export",
    "export_saved_model",
    "layers",
    "list_presets",
    "make_dataset",
    "make_dataset_from_corpus",
    "make_dataset_from_files",
    "models",
    "objectives",
    "prepare_corpus",
    "register_keras_serializables",
    "register_trained_preset",
    "train",
    "training",
    "transformer_optimizer",
]


def register_keras_serializables():
    """Kept for code written for 0.1: importing `keras_transformer` registers
    the package's Keras classes, so there is nothing left to do."""
