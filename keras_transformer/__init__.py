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

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "LabelSmoothedCrossEntropy",
    "MaskedTokenAccuracy",
    "PAD_ID",
    "PRESETS",
    "TrainConfig",
    "Transformer",
    "TransformerSchedule",
    "Translator",
    "UNK_ID",
    "average_checkpoints",
    "layers",
    "train",
    "transformer_optimizer",
]
