"""`TransformerTokenizer`: the shared SentencePiece vocabulary (paper §5.1).

The one tokenizer class of the package: the `Translator`, the ``tf.data``
pipeline, the SavedModel export, training and the keras-hub task all use
it. Python values are tokenized by the ``sentencepiece`` package (no
TensorFlow needed); TensorFlow tensors and calls inside TensorFlow graphs go
through TensorFlow Text. Where keras-hub is installed it is a
`keras_hub.tokenizers.SentencePieceTokenizer` (the preset asset
``assets/tokenizer/vocabulary.spm``); keras-hub runs that class without
TensorFlow too. Without keras-hub it keeps the same methods on a plain
base. Vocabularies are learned by
`keras_transformer.models.transformer.sentencepiece_vocabulary.learn_vocabulary`.
"""

import os
import sys

import keras
import numpy as np
import sentencepiece as spm

from keras_transformer.models.transformer import (
    transformer_presets as preset_lib,
)
from keras_transformer.models.transformer.sentencepiece_vocabulary import (
    learn_vocabulary,
)
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.special_tokens import (
    BOS_ID,
    BOS_PIECE,
    EOS_ID,
    EOS_PIECE,
    PAD_ID,
    PAD_PIECE,
    UNK_PIECE,
    check_reserved_pieces,
    language_tag_ids,
)
from keras_transformer.utils.private_apis import (
    KERAS_HUB_TOKENIZER_AVAILABLE,
    SentencePieceTokenizerBase,
    make_tf_sentencepiece_tokenizer,
)
from keras_transformer.utils.run_files import TOKENIZER_CONFIG_FILE, VOCABULARY_FILENAME


def _graph_tensorflow(value):
    """TensorFlow when ``value`` is one of its tensors or a TensorFlow graph
    is being built, else None (the Python path).

    The tokenizer never imports TensorFlow itself: its graph ops run on
    TensorFlow's tensors or inside its graphs, so TensorFlow is loaded by
    then, and the Python path never pays for it.
    """
    tf = sys.modules.get("tensorflow")
    if tf is None or not hasattr(tf, "executing_eagerly"):
        return None
    if isinstance(value, (tf.Tensor, tf.RaggedTensor, tf.Variable)):
        return tf
    return None if tf.executing_eagerly() else tf


class VocabularySize(int):
    """The number of pieces: an int that can also be called.

    keras-hub's tokenizers have a ``vocabulary_size()`` method; the package's
    earlier `SubwordTokenizer` had a ``vocabulary_size`` property. Both read
    the same number: ``tokenizer.vocabulary_size == tokenizer.vocabulary_size()``.
    """

    def __call__(self):
        return int(self)


class _PythonTokenizerBase:
    """The keras-hub tokenizer interface that `TransformerTokenizer` uses,
    where keras-hub is not installed: a proto (bytes or a file path), its
    vocabulary, and ``__call__`` as ``tokenize``."""

    def __init__(self, proto=None, name=None, **kwargs):
        self.name = name or "transformer_tokenizer"
        self.proto = None
        self.set_proto(proto)

    def set_proto(self, proto):
        if isinstance(proto, str):
            with open(proto, "rb") as f:
                proto = f.read()
        if proto is not None and not isinstance(proto, bytes):
            raise ValueError(
                "SentencePiece `proto` argument should be either a `string` "
                f"filepath or a `bytes` sequence. Received unknown type: {type(proto)}"
            )
        self.proto = proto
        if proto is not None:
            self._vocabulary = self._processor_of(proto).id_to_piece(
                list(range(self._processor_of(proto).get_piece_size()))
            )
            self.check_vocabulary(self._vocabulary)

    def __call__(self, inputs):
        return self.tokenize(inputs)

    def get_config(self):
        return {"name": self.name, "proto": None}


_Base = SentencePieceTokenizerBase if KERAS_HUB_TOKENIZER_AVAILABLE else _PythonTokenizerBase


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerTokenizer(_Base):
    """The shared source/target subword vocabulary, in Python and in graphs.

    Ids 0-3 are reserved (see ``keras_transformer.special_tokens``):
    ``<pad>``=0, ``<unk>``=1, ``<s>``=2 (BOS), ``</s>``=3 (EOS); a model
    without them raises a ValueError. ``tokenize`` never adds BOS or EOS;
    the input pipeline and the preprocessor add them.

    Python values (str, lists of str, lists or NumPy arrays of ids) are
    tokenized and detokenized by the ``sentencepiece`` package: no
    TensorFlow needed. TensorFlow tensors, and every call inside a
    ``tf.function`` or ``tf.data`` map, go through
    ``tensorflow_text.SentencepieceTokenizer`` (not
    ``FastSentencepieceTokenizer``, which segments BPE models differently
    from SentencePiece itself); both give the same ids for the same text.
    The TensorFlow Text resource is created at the first graph call, never by
    the Python path, and survives ``keras.utils.set_random_seed``. Under the
    TensorFlow backend the tokenizer, assigned to a ``tf.Module``, is saved
    with it in a SavedModel; under other backends assign its
    `graph_tokenizer` too.

    With keras-hub installed it is a `keras_hub.tokenizers.SentencePieceTokenizer`
    (``from_preset``, ``save_to_preset``, ``vocabulary_size()``,
    ``id_to_token``...), the tokenizer of `TransformerSeq2SeqLMPreprocessor`.

    Args:
        proto: bytes, or the path of a ``.spm`` file (paths are refused in
            Keras' safe mode, as for every keras-hub `SentencePieceTokenizer`).
            None when the vocabulary comes from a preset's assets.
        **kwargs: passed to `keras_hub.tokenizers.SentencePieceTokenizer`
            (``name``, ``dtype``...).

    Example:

    ```python
    import itertools
    tokenizer = TransformerTokenizer.train(
        itertools.chain(source_sentences, target_sentences),
        vocabulary_size=8000,
    )
    ids = tokenizer.tokenize(["Two dogs play."])  # [[...]], list of list of int
    tokenizer.detokenize(ids)  # ["Two dogs play."]
    tokenizer.tokenize(tf.constant(["Two dogs play."]))  # ragged int32 (TF Text)
    tokenizer.save("runs/vocab")  # writes runs/vocab/vocab.spm
    ```
    """

    backbone_cls = TransformerBackbone

    special_pieces = {
        "pad_token": PAD_PIECE,
        "unk_token": UNK_PIECE,
        "start_token": BOS_PIECE,
        "end_token": EOS_PIECE,
    }

    @classmethod
    def from_preset(cls, preset, config_file=TOKENIZER_CONFIG_FILE, **kwargs):
        """keras-hub's `from_preset`; a preset whose backbone is a
        `Transformer` (earlier versions, ``keras-transformer train``) or a
        `TransformerBackbone` loads the same (see
        `transformer_presets.load_family_preset_layer`)."""
        tokenizer = preset_lib.load_family_preset_layer(cls, preset, config_file, **kwargs)
        if tokenizer is not None:
            return tokenizer
        return super().from_preset(preset, config_file=config_file, **kwargs)

    def __init__(self, proto=None, **kwargs):
        if proto is not None and not isinstance(proto, (bytes, bytearray, str)):
            raise TypeError(
                "TransformerTokenizer expects the serialized SentencePiece model "
                f"as bytes (or a file path). Received: {type(proto).__name__}"
            )
        super().__init__(proto=bytes(proto) if isinstance(proto, bytearray) else proto, **kwargs)

    @staticmethod
    def _processor_of(proto):
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(proto)
        except (RuntimeError, OSError) as error:
            raise ValueError(
                "The bytes are not a valid SentencePiece model proto "
                f"({len(proto)} bytes): {error}"
            ) from error
        return processor

    def set_proto(self, proto):
        """Sets the SentencePiece model (bytes or a file path), checking it
        (a ValueError for bytes that are not a model or a model without the
        reserved ids)."""
        self._processor = None
        if isinstance(proto, bytes):
            # A ValueError naming the problem before keras-hub's own error.
            self._processor = self._processor_of(proto)
        self._tf_tokenizer = None
        self._languages = None
        super().set_proto(proto)

    @property
    def _sentencepiece(self):
        """The ``sentencepiece`` processor of the Python path."""
        if self._processor is None:
            if self.proto is None:
                raise ValueError(
                    "No vocabulary has been set for TransformerTokenizer: pass "
                    "`proto` or load it from a preset."
                )
            self._processor = self._processor_of(self.proto)
        return self._processor

    def check_vocabulary(self, vocabulary):
        """Called when a vocabulary is set, before keras-hub looks the
        special pieces up (its error would not say which ids are expected)."""
        check_reserved_pieces(vocabulary, source="The SentencePiece model")

    # ------------------------------------------------------------------
    # Construction and persistence.

    @classmethod
    def train(cls, sentences, vocabulary_size, seed=0, **options):
        """Learn a vocabulary in memory (`learn_vocabulary`: BPE, the reserved
        ids 0-3).

        Args:
            sentences: iterable of str. For a shared vocabulary pass source
                and target sentences together (``itertools.chain(src, tgt)``).
                Empty strings are skipped.
            vocabulary_size: int. Number of pieces, including the 4 reserved.
            seed: int. Seed of SentencePiece's sampler. Defaults to ``0``.
            **options: ``model_type`` (``"bpe"``, the paper, or
                ``"unigram"``), ``character_coverage`` (1.0),
                ``input_sentence_size`` (2_000_000),
                ``shuffle_input_sentence`` (True),
                ``normalization_rule_name`` (``"nmt_nfkc"``), ``num_threads``
                (the CPU count), ``verbose`` (False), ``languages`` (the
                target languages of a multilingual model: each gets a
                reserved tag piece, ids 4, 5, ... in this order).

        Returns:
            A `TransformerTokenizer`.

        Example:

        ```python
        tokenizer = TransformerTokenizer.train(["a b c", "a c"] * 50, 16)
        ```
        """
        return cls(learn_vocabulary(sentences, vocabulary_size, seed=seed, **options))

    @classmethod
    def from_proto(cls, proto):
        """Build a tokenizer from a serialized SentencePiece model (bytes)."""
        if not isinstance(proto, (bytes, bytearray)):
            raise TypeError(
                "TransformerTokenizer expects the serialized SentencePiece model "
                f"as bytes. Received: {type(proto).__name__}"
            )
        return cls(proto)

    def save(self, directory):
        """Write the model proto to ``directory/vocab.spm``; returns the path."""
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, VOCABULARY_FILENAME)
        with open(path, "wb") as f:
            f.write(self.proto)
        return path

    @classmethod
    def load(cls, directory):
        """Load a tokenizer saved by `save`.

        Args:
            directory: str. The directory given to `save`, or the path of a
                SentencePiece model file (``vocab.spm``, ``source_vocab.spm``).

        Returns:
            A `TransformerTokenizer`.
        """
        path = directory
        if os.path.isdir(directory):
            path = os.path.join(directory, VOCABULARY_FILENAME)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"No SentencePiece model at {path!r} (expected the "
                f"{VOCABULARY_FILENAME} written by TransformerTokenizer.save)."
            )
        try:
            with open(path, "rb") as f:
                proto = f.read()
        except OSError as error:
            raise ValueError(f"Cannot read {path!r}: {error}") from error
        try:
            return cls(proto)
        except ValueError as error:
            raise ValueError(f"Cannot load {path!r}: {error}") from error

    # ------------------------------------------------------------------
    # Vocabulary.

    @property
    def vocabulary_size(self):
        """Number of pieces, reserved ids included; an int that may also be
        called (``vocabulary_size()``, keras-hub's method)."""
        return VocabularySize(self._sentencepiece.get_piece_size())

    def get_vocabulary(self):
        """Every piece, in id order."""
        return [self._sentencepiece.id_to_piece(i) for i in range(self.vocabulary_size)]

    def id_to_token(self, id):
        """The piece of an id."""
        if not 0 <= int(id) < self.vocabulary_size:
            raise ValueError(
                f"`id` must be in range [0, {self.vocabulary_size - 1}]. Received: {id}"
            )
        return self._sentencepiece.id_to_piece(int(id))

    def token_to_id(self, token):
        """The id of a piece (``<unk>``'s for an unknown piece)."""
        if isinstance(token, bytes):
            token = token.decode("utf-8")
        return self._sentencepiece.piece_to_id(token)

    def id_to_piece(self, ids):
        """The pieces (str) of a list of ids, for display."""
        return [self._sentencepiece.id_to_piece(int(i)) for i in ids]

    @property
    def languages(self):
        """``{language: tag id}`` of a multilingual vocabulary's language
        tags; empty for one target language."""
        if self._languages is None:
            self._languages = language_tag_ids(self.proto)
        return dict(self._languages)

    @property
    def graph_tokenizer(self):
        """The TensorFlow Text tokenizer (a ``tf.Module``) of graph calls,
        created at first use, outside any graph being built (so that
        ``tf.data`` maps and exported functions can capture it)."""
        if self._tf_tokenizer is None:
            tf = sys.modules.get("tensorflow")
            if tf is None:
                self._tf_tokenizer = make_tf_sentencepiece_tokenizer(self.proto)
            else:
                with tf.init_scope():
                    self._tf_tokenizer = make_tf_sentencepiece_tokenizer(self.proto)
        return self._tf_tokenizer

    # ------------------------------------------------------------------
    # Tokenization: Python values in Python, TensorFlow values in graphs.

    def tokenize(self, strings):
        """Token ids of strings, without BOS or EOS.

        Args:
            strings: a str, a list (or NumPy array) of str, or a TensorFlow
                string tensor of rank 0 or 1.

        Returns:
            Python in, Python out: a list of int for a str, a list of lists
            of int for a list. A TensorFlow tensor (or any call inside a
            graph) gives a ``tf.RaggedTensor`` of int32 ``(batch, None)``
            for rank 1 and a 1-D int32 tensor for a scalar.
        """
        tf = _graph_tensorflow(strings)
        if tf is not None:
            strings = tf.convert_to_tensor(strings, dtype=tf.string)
            return self.graph_tokenizer.tokenize(strings)
        if isinstance(strings, (str, bytes)) or (
            isinstance(strings, np.ndarray) and strings.ndim == 0
        ):
            return self._sentencepiece.encode(_text(strings), out_type=int)
        return self._sentencepiece.encode([_text(s) for s in strings], out_type=int)

    def call(self, inputs, *args, training=None, **kwargs):
        return self.tokenize(inputs)

    def detokenize(self, ids):
        """Text of id sequences, cut at the first EOS, ignoring PAD and BOS.

        Unknown pieces render as SentencePiece renders them (`` ⁇ ``).

        Args:
            ids: ids of rank 1 or 2, e.g. padded decoder output
                ``(batch, length)``: lists or NumPy (or backend) arrays, or
                a TensorFlow tensor or ``tf.RaggedTensor``.

        Returns:
            Python in, Python out: a str for rank 1, a list of str for rank
            2. For TensorFlow values, a string tensor of rank
            ``rank(ids) - 1``.
        """
        tf = _graph_tensorflow(ids)
        if tf is not None:
            return self._graph_detokenize(tf, ids)
        if isinstance(ids, np.ndarray) or not isinstance(ids, (list, tuple)):
            ids = np.asarray(ids)
            rank = ids.ndim
        else:
            rank = 2 if ids and not np.isscalar(ids[0]) else 1
        if rank not in (1, 2):
            raise ValueError(
                f"detokenize expects ids of rank 1 or 2. Received rank {rank}."
            )
        if rank == 1:
            return self.decode([ids])[0]
        return self.decode(ids)

    def _graph_detokenize(self, tf, ids):
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
        rank = ids.shape.rank
        if rank not in (1, 2):
            raise ValueError(
                f"detokenize expects ids of rank 1 or 2. Received rank {rank}."
            )
        if rank == 1:
            ids = ids[tf.newaxis]
        if isinstance(ids, tf.RaggedTensor):
            ids = ids.to_tensor(default_value=PAD_ID)
        ids = tf.cast(ids, tf.int32)
        # Everything from the first EOS on is dropped, then PAD and BOS.
        before_eos = tf.equal(
            tf.cumsum(tf.cast(tf.equal(ids, EOS_ID), tf.int32), axis=-1), 0
        )
        keep = before_eos & tf.not_equal(ids, PAD_ID) & tf.not_equal(ids, BOS_ID)
        text = self.graph_tokenizer.detokenize(tf.ragged.boolean_mask(ids, keep))
        return text[0] if rank == 1 else text

    # ------------------------------------------------------------------
    # Python conveniences (the `Translator`'s interface).

    def encode(self, sentences):
        """Token ids (list of list of int) of a list of str; no BOS/EOS."""
        if isinstance(sentences, str):
            raise TypeError("encode expects a list of str, not a single str.")
        return self._sentencepiece.encode(list(sentences), out_type=int)

    def decode(self, ids):
        """Text of id sequences (list of str).

        Each sequence is cut at its first EOS; PAD and BOS are dropped.

        Args:
            ids: list of sequences of int (lists or numpy rows).
        """
        texts = []
        for sequence in ids:
            kept = []
            for token in sequence:
                token = int(token)
                if token == EOS_ID:
                    break
                if token not in (PAD_ID, BOS_ID):
                    kept.append(token)
            texts.append(self._sentencepiece.decode(kept))
        return texts


def _text(value):
    """A str of a str, bytes (UTF-8) or NumPy string scalar."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    return str(value)


def load_tokenizers(files):
    """``(tokenizer, source tokenizer)`` of a trained model directory
    (`keras_transformer.models.transformer.transformer_loader.TrainedModelFiles`):
    the shared or target vocabulary, and the source side's own one, or None
    where the sides share one vocabulary."""
    source = files.source_vocabulary_path
    return (
        TransformerTokenizer.load(files.vocabulary_path),
        None if source is None else TransformerTokenizer.load(source),
    )
