"""keras_transformer: the Transformer of "Attention Is All You Need" in Keras 3.

Runs on the TensorFlow, JAX and PyTorch backends (``KERAS_BACKEND``).
"""

from keras_transformer import layers
from keras_transformer.checkpoints import average_checkpoints
from keras_transformer.config import TrainConfig
from keras_transformer.losses import LabelSmoothedCrossEntropy
from keras_transformer.metrics import MaskedTokenAccuracy
from keras_transformer.model import Transformer
from keras_transformer.presets import PRESETS
from keras_transformer.schedules import TransformerSchedule, transformer_optimizer
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from keras_transformer.training import train
from keras_transformer.translator import Translator

__version__ = "0.1.0"

# The keras-hub family classes (keras_transformer/hub/) are imported on first
# use, so that the package imports where keras-hub is not installed.
_HUB_EXPORTS = ("TransformerSeq2SeqLM", "TransformerSeq2SeqLMPreprocessor", "TransformerTokenizer")


def __getattr__(name):
    if name in _HUB_EXPORTS:
        from keras_transformer import hub

        return getattr(hub, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BOS_ID",
    "EOS_ID",
    "LabelSmoothedCrossEntropy",
    "MaskedTokenAccuracy",
    "PAD_ID",
    "PRESETS",
    "TrainConfig",
    "Transformer",
    "TransformerSeq2SeqLM",
    "TransformerSeq2SeqLMPreprocessor",
    "TransformerSchedule",
    "TransformerTokenizer",
    "Translator",
    "UNK_ID",
    "average_checkpoints",
    "layers",
    "train",
    "transformer_optimizer",
]
