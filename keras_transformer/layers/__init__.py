"""Keras layers of the Transformer, one concept per module."""

from keras_transformer.layers.attention import AttentionOutput, MultiHeadAttention
from keras_transformer.layers.decoder import TransformerDecoderLayer
from keras_transformer.layers.embedding import TokenEmbedding
from keras_transformer.layers.encoder import TransformerEncoderLayer
from keras_transformer.layers.feed_forward import PositionwiseFeedForward
from keras_transformer.layers.masks import PaddingMask
from keras_transformer.layers.positional_encoding import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    sinusoidal_encoding,
)
from keras_transformer.layers.token_checks import (
    TokenIdCheck,
    check_token_ids,
    validate_token_ids,
)

__all__ = [
    "AttentionOutput",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "PaddingMask",
    "PositionwiseFeedForward",
    "SinusoidalPositionalEncoding",
    "TokenEmbedding",
    "TokenIdCheck",
    "TransformerDecoderLayer",
    "TransformerEncoderLayer",
    "check_token_ids",
    "sinusoidal_encoding",
    "validate_token_ids",
]
