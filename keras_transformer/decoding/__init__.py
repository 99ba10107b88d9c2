"""Decoding: model-agnostic greedy/beam search and sampling, their compiled
use with a `Transformer` (incremental decoding with key/value caches), forced
decoding (scores, alignments) and the options that drive them.

The helpers behind these live in the submodules: `search` (the searches'
conventions and public names; `greedy`, `beam`, `constraints`,
`search_step` and `search_loop` hold them by concern), `cache` (key/value caches and uncached decoding),
`generate` (the searches over a `Transformer`, and `Generator`), `backends`
(compiling for the backend), `sampling`, `forced`, `sources` (the source
preparation shared with the SavedModel), `ensemble` (several models decoded
as one) and `options`.
"""

from keras_transformer.decoding.backends import compile_for_backend, compiled_decode
from keras_transformer.decoding.ensemble import Ensemble
from keras_transformer.decoding.forced import alignments, token_log_probs
from keras_transformer.decoding.generate import Generator, generate
from keras_transformer.decoding.options import DecodeOptions, SearchInputs, SearchRequest
from keras_transformer.decoding.sampling import sample_tokens
from keras_transformer.decoding.search import (
    CacheFunctions,
    beam_search,
    greedy_search,
    length_penalty,
)
from keras_transformer.decoding.sources import prepare_sources

__all__ = [
    "CacheFunctions",
    "DecodeOptions",
    "Ensemble",
    "Generator",
    "SearchInputs",
    "SearchRequest",
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
