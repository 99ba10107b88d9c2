"""What training optimizes and watches: the label-smoothed loss, the masked
token accuracy, and the paper's learning-rate schedule and Adam settings.

They sit below `keras_transformer.models` (the keras-hub task compiles with
them), as Keras keeps `keras.losses`, `keras.metrics` and
`keras.optimizers.schedules` apart from its trainer.
"""

from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.objectives.metrics import MaskedTokenAccuracy
from keras_transformer.objectives.schedules import (
    TransformerSchedule,
    transformer_optimizer,
)

__all__ = [
    "LabelSmoothedCrossEntropy",
    "MaskedTokenAccuracy",
    "TransformerSchedule",
    "transformer_optimizer",
]
