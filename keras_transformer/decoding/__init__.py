"""Decoding: model-agnostic greedy/beam search and sampling, their compiled
use with a `Transformer` (incremental decoding with key/value caches), forced
decoding (scores, alignments) and the options that drive them.

The helpers behind these (cache reordering, uncached decoding, the source
preparation used by the SavedModel) live in the submodules: `search`,
`compile`, `sampling`, `forced`, `sources`, `options`.
"""

from keras_transformer.decoding.backends import compile_for_backend, compiled_decode
from keras_transformer.decoding.forced import alignments, token_log_probs
from keras_transformer.decoding.generate import Generator, generate
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.decoding.sampling import sample_tokens
from keras_transformer.decoding.search import beam_search, greedy_search, length_penalty
from keras_transformer.decoding.sources import prepare_sources

__all__ = [
    "DecodeOptions",
    "Generator",
    "alignments",
    "beam_search",
    "compile_for_backend",
    "compiled_decode",
    "generate",
    "greedy_search",
    "length_penalty",
    "prepare_sources",
    "sample_tokens",
    "token_log_probs",
]
