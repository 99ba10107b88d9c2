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

from keras_transformer.utils.dependencies import lazy_attributes

# Imported when first used (`lazy_attributes`): `DecodeOptions` is read by
# the training config, whose fields the command line's parser turns into
# flags without importing Keras. ``import keras_transformer`` imports them all.
_MODULES = {
    "compile_for_backend": "keras_transformer.decoding.backends",
    "compiled_decode": "keras_transformer.decoding.backends",
    "Ensemble": "keras_transformer.decoding.ensemble",
    "alignments": "keras_transformer.decoding.forced",
    "token_log_probs": "keras_transformer.decoding.forced",
    "Generator": "keras_transformer.decoding.generate",
    "generate": "keras_transformer.decoding.generate",
    "DecodeOptions": "keras_transformer.decoding.options",
    "SearchInputs": "keras_transformer.decoding.options",
    "SearchRequest": "keras_transformer.decoding.options",
    "sample_tokens": "keras_transformer.decoding.sampling",
    "CacheFunctions": "keras_transformer.decoding.search",
    "beam_search": "keras_transformer.decoding.search",
    "greedy_search": "keras_transformer.decoding.search",
    "length_penalty": "keras_transformer.decoding.search",
    "prepare_sources": "keras_transformer.decoding.sources",
}
__getattr__ = lazy_attributes(__name__, _MODULES)

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
