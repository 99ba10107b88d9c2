"""Deprecated: `SubwordTokenizer` is `TransformerTokenizer`.

`SubwordTokenizer` (this module's name for the package's tokenizer until
0.3) is the same class as
`keras_transformer.models.transformer.transformer_tokenizer.TransformerTokenizer`,
kept for one version; ``sentencepiece_trainer_arguments`` and
``training_error`` live in `sentencepiece_vocabulary`.
"""

from keras_transformer.models.transformer.sentencepiece_vocabulary import (
    learn_vocabulary,
    sentencepiece_trainer_arguments,
    training_error,
)
from keras_transformer.models.transformer.transformer_tokenizer import (
    TransformerTokenizer,
)

# Deprecated alias, kept for one version.
SubwordTokenizer = TransformerTokenizer

__all__ = [
    "SubwordTokenizer",
    "learn_vocabulary",
    "sentencepiece_trainer_arguments",
    "training_error",
]
