"""Training: `TrainConfig`, `train`, callbacks, checkpoints and their
average, the choice of the final model, evaluation and BLEU, precision,
multi-device distribution, and the run directory."""

from keras_transformer.training.bleu import BleuResult, corpus_bleu
from keras_transformer.training.checkpoints import average_checkpoints
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.evaluation import EvaluationResult, evaluate_translations
from keras_transformer.training.run_directory import RunDirectory
from keras_transformer.training.run_model import build_model
from keras_transformer.training.run_results import TrainResult
from keras_transformer.training.trainer import train

__all__ = [
    "BleuResult",
    "EvaluationResult",
    "RunDirectory",
    "TrainConfig",
    "TrainResult",
    "average_checkpoints",
    "build_model",
    "corpus_bleu",
    "evaluate_translations",
    "train",
]
