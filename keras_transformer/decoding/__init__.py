"""Decoding: model-agnostic greedy and beam search, and their compiled use
with a `Transformer` (incremental decoding with key/value caches)."""

from keras_transformer.decoding.compile import Generator
from keras_transformer.decoding.compile import cached_tokens_to_logits
from keras_transformer.decoding.compile import compiled_decode
from keras_transformer.decoding.compile import generate
from keras_transformer.decoding.compile import jax_stateless_jit
from keras_transformer.decoding.compile import reorder_transformer_cache
from keras_transformer.decoding.compile import reorder_uncached_cache
from keras_transformer.decoding.compile import uncached_initial_cache
from keras_transformer.decoding.compile import uncached_tokens_to_logits
from keras_transformer.decoding.search import NEG_INF
from keras_transformer.decoding.search import beam_search
from keras_transformer.decoding.search import gather_cache
from keras_transformer.decoding.search import greedy_search
from keras_transformer.decoding.search import length_penalty

__all__ = [
    "Generator",
    "NEG_INF",
    "beam_search",
    "cached_tokens_to_logits",
    "compiled_decode",
    "gather_cache",
    "generate",
    "greedy_search",
    "jax_stateless_jit",
    "length_penalty",
    "reorder_transformer_cache",
    "reorder_uncached_cache",
    "uncached_initial_cache",
    "uncached_tokens_to_logits",
]
