"""`TransformerTokenizer`: the shared SentencePiece vocabulary as a keras-hub
`SentencePieceTokenizer`, the preset asset of the keras-hub task
(``assets/tokenizer/vocabulary.spm``). The same model file as
`SubwordTokenizer`, which learns it.
"""

import keras

from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.special_tokens import (
    BOS_PIECE,
    EOS_PIECE,
    PAD_PIECE,
    UNK_PIECE,
    check_reserved_pieces,
)
from keras_transformer.utils.private_apis import (
    SentencePieceTokenizerBase,
)


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerTokenizer(SentencePieceTokenizerBase):
    """The shared source/target subword vocabulary (paper §5.1), keras-hub style.

    A `keras_hub.tokenizers.SentencePieceTokenizer` reading the same
    ``vocab.spm`` proto as `keras_transformer.data.SubwordTokenizer` (a run
    directory's vocabulary), so the ids are the same. The reserved ids are
    checked: ``<pad>`` 0, ``<unk>`` 1, ``<s>`` 2 (start, BOS), ``</s>`` 3
    (end, EOS); a proto without them raises a ValueError. Tokenizing never
    adds BOS or EOS (the preprocessor does). In a preset the proto is the
    asset ``assets/tokenizer/vocabulary.spm``.

    Eager calls run SentencePiece in Python; inside ``tf.data`` or a
    ``tf.function`` the TensorFlow Text op runs, with a resource that survives
    ``keras.utils.set_random_seed`` (see `SubwordTokenizer`).

    Args:
        proto: bytes, or the path of a ``.spm`` file (paths are refused in
            safe mode by keras-hub, as for every `SentencePieceTokenizer`).
        **kwargs: passed to `keras_hub.tokenizers.SentencePieceTokenizer`.

    Example:

    ```python
    tokenizer = TransformerTokenizer(proto=open("runs/x/vocab.spm", "rb").read())
    tokenizer(["Two dogs play."])  # [[...ids...]], no BOS/EOS
    tokenizer.detokenize([[45, 12, 9]])
    ```
    """

    backbone_cls = Transformer

    special_pieces = {
        "pad_token": PAD_PIECE,
        "unk_token": UNK_PIECE,
        "start_token": BOS_PIECE,
        "end_token": EOS_PIECE,
    }

    def check_vocabulary(self, vocabulary):
        """Called when a vocabulary is set, before keras-hub looks the
        special pieces up (its error would not say which ids are expected)."""
        check_reserved_pieces(vocabulary)
