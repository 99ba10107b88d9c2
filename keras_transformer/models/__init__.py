"""Models: the Transformer family (`keras_transformer.models.transformer`,
keras-hub's layout) and the model mixin of the token-id contract.

* `TransformerBackbone`: the functional model, token ids in, hidden states
  out (keras-hub's `Backbone`; a `keras.Model` without keras-hub);
* `Transformer`: the backbone with its tied output projection, logits out
  (the model of ``train`` and of ``.keras`` files);
* `TransformerTokenizer`: the SentencePiece tokenizer (keras-hub's
  `SentencePieceTokenizer` where keras-hub is installed, the same methods
  on a plain base without it); `SubwordTokenizer` its deprecated alias;
* `TransformerSeq2SeqLM`, `TransformerSeq2SeqLMPreprocessor`: keras-hub's
  task and preprocessor; they need keras-hub, and without it using one of
  them raises an ImportError that says so;
* `Translator`, the presets (`PRESETS`, `list_presets`,
  `register_trained_preset`) and `TokenIdCheckedModel`.
"""

from keras_transformer.models.token_id_checked_model import TokenIdCheckedModel
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_backbone import (
    KERAS_HUB_AVAILABLE,
    TransformerBackbone,
)
from keras_transformer.models.transformer.transformer_presets import (
    PRESETS,
    list_presets,
    register_trained_preset,
)
from keras_transformer.models.transformer.transformer_tokenizer import (
    TransformerTokenizer,
)
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.utils.dependencies import lazy_names

# keras-hub's classes: imported with the package where keras-hub is
# installed (so that their registered names load), else an ImportError on use.
KERAS_HUB_NAMES = {
    "TransformerSeq2SeqLM": "keras_transformer.models.transformer.transformer_seq_2_seq_lm",
    "TransformerSeq2SeqLMPreprocessor": (
        "keras_transformer.models.transformer.transformer_seq_2_seq_lm_preprocessor"
    ),
}
if KERAS_HUB_AVAILABLE:
    from keras_transformer.models.transformer.transformer_seq_2_seq_lm import (
        TransformerSeq2SeqLM,
    )
    from keras_transformer.models.transformer.transformer_seq_2_seq_lm_preprocessor import (
        TransformerSeq2SeqLMPreprocessor,
    )

# Deprecated alias of `TransformerTokenizer`, kept for one version.
SubwordTokenizer = TransformerTokenizer

__getattr__ = lazy_names(
    __name__,
    {
        name: (module, "keras-hub (pip install keras-hub)")
        for name, module in KERAS_HUB_NAMES.items()
    },
)

__all__ = [
    "KERAS_HUB_AVAILABLE",
    "PRESETS",
    "SubwordTokenizer",
    "TokenIdCheckedModel",
    "Transformer",
    "TransformerBackbone",
    "TransformerSeq2SeqLM",
    "TransformerSeq2SeqLMPreprocessor",
    "TransformerTokenizer",
    "Translator",
    "list_presets",
    "register_trained_preset",
]
