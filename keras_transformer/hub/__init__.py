"""keras-hub model family: tokenizer, preprocessor, Seq2SeqLM task, presets.

Imported lazily (``keras_hub`` and its TensorFlow import load on first use):
``keras_transformer.hub.TransformerSeq2SeqLM`` etc.
"""

import importlib

_EXPORTS = {
    "TransformerTokenizer": "keras_transformer.hub.tokenizer",
    "TransformerSeq2SeqLMPreprocessor": "keras_transformer.hub.seq_2_seq_lm_preprocessor",
    "TransformerSeq2SeqLM": "keras_transformer.hub.seq_2_seq_lm",
    "list_presets": "keras_transformer.hub.presets",
    "register_trained_preset": "keras_transformer.hub.presets",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
