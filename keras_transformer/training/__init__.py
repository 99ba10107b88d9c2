"""Training: `TrainConfig`, `train`, callbacks, checkpoints and their
average, the choice of the final model, evaluation and BLEU, precision,
multi-device distribution, and the run directory.

Its names are imported when first used (`lazy_attributes`): the command
line's parser reads `TrainConfig`'s fields (``train``'s flags) without
importing the trainer, Keras or TensorFlow. ``import keras_transformer``
imports them all.
"""

from keras_transformer.utils.dependencies import lazy_attributes

_MODULES = {
    "BleuResult": "keras_transformer.training.bleu",
    "corpus_bleu": "keras_transformer.training.bleu",
    "average_checkpoints": "keras_transformer.training.checkpoints",
    "TrainConfig": "keras_transformer.training.config",
    "EvaluationResult": "keras_transformer.training.evaluation",
    "evaluate_translations": "keras_transformer.training.evaluation",
    "RunDirectory": "keras_transformer.training.run_directory",
    "build_model": "keras_transformer.training.run_model",
    "TrainResult": "keras_transformer.training.run_results",
    "train": "keras_transformer.training.trainer",
}
__getattr__ = lazy_attributes(__name__, _MODULES)

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
