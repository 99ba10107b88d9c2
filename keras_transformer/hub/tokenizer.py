"""`TransformerTokenizer`: the shared SentencePiece vocabulary as a keras-hub tokenizer."""

import keras
from keras_hub.tokenizers import SentencePieceTokenizer

from keras_transformer.model import Transformer

from keras_transformer.special_tokens import BOS_ID
from keras_transformer.special_tokens import BOS_PIECE
from keras_transformer.special_tokens import EOS_ID
from keras_transformer.special_tokens import EOS_PIECE
from keras_transformer.special_tokens import PAD_ID
from keras_transformer.special_tokens import PAD_PIECE
from keras_transformer.special_tokens import UNK_ID
from keras_transformer.special_tokens import UNK_PIECE

RESERVED_PIECES = {
    PAD_ID: PAD_PIECE,
    UNK_ID: UNK_PIECE,
    BOS_ID: BOS_PIECE,
    EOS_ID: EOS_PIECE,
}


def check_reserved_pieces(vocabulary, source="the SentencePiece model"):
    """Raises a ValueError unless ids 0-3 are ``<pad> <unk> <s> </s>``."""
    found = {i: vocabulary[i] for i in RESERVED_PIECES if i < len(vocabulary)}
    if found != RESERVED_PIECES:
        raise ValueError(
            f"{source} does not reserve the ids the Transformer uses: expected "
            f"{RESERVED_PIECES}, found {found}. Train the vocabulary with "
            "keras_transformer.data.SubwordTokenizer.train."
        )


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerTokenizer(SentencePieceTokenizer):
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

    def __init__(self, proto=None, **kwargs):
        self._add_special_token(PAD_PIECE, "pad_token")
        self._add_special_token(UNK_PIECE, "unk_token")
        self._add_special_token(BOS_PIECE, "start_token")
        self._add_special_token(EOS_PIECE, "end_token")
        super().__init__(proto=proto, **kwargs)
        # Nothing to build; unbuilt, `Model.quantize` on a task holding this
        # tokenizer would refuse it.
        self.built = True

    def _update_special_token_ids(self):
        # Runs when a proto is set; check the ids before keras-hub looks the
        # special pieces up (its error would not say which ids are expected).
        check_reserved_pieces(self._vocabulary)
        super()._update_special_token_ids()

    def _set_proto_tf(self, proto):
        # keras-hub's TF Text tokenizer keeps its model resource private to a
        # kernel that `tf.random.set_seed` / `keras.utils.set_random_seed`
        # clear (tensorflow/text#570); use the shared resource of
        # `SubwordTokenizer` instead.
        if keras.backend.standardize_dtype(self.compute_dtype) != "int32":
            return super()._set_proto_tf(proto)
        try:
            from keras_transformer.data.tokenizer import _make_tf_tokenizer
        except ImportError:  # No TensorFlow: keras-hub's own error path.
            return super()._set_proto_tf(proto)
        self._sentence_piece = _make_tf_tokenizer(proto)
