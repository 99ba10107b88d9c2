"""`SubwordTokenizer`: the shared SentencePiece vocabulary of source and target.

It learns the vocabulary (BPE, with the reserved ids 0-3 of
`keras_transformer.special_tokens`) and tokenizes in Python through
`sentencepiece` (no TensorFlow needed) and inside TensorFlow graphs through
TensorFlow Text (the data pipeline, the SavedModel). `TransformerTokenizer`
is the same model file as a keras-hub tokenizer.
"""

import io
import os
import re
import sys

import numpy as np
import sentencepiece as spm

from keras_transformer.special_tokens import (
    BOS_ID,
    BOS_PIECE,
    EOS_ID,
    EOS_PIECE,
    PAD_ID,
    PAD_PIECE,
    RESERVED_PIECES,
    UNK_ID,
    UNK_PIECE,
    check_languages,
    check_reserved_pieces,
    language_tag_ids,
    language_tag_piece,
)
from keras_transformer.utils.private_apis import (
    make_tf_sentencepiece_tokenizer,
)
from keras_transformer.utils.run_files import VOCABULARY_FILENAME

_TOO_SMALL = re.compile(r"smaller than required_chars\. (\d+) vs (\d+)")


_TOO_LARGE = re.compile(r"Vocabulary size too high \((\d+)\).*<= (\d+)")


def _loaded_tensorflow():
    """TensorFlow when this process has imported it, else None.

    The tokenizer never imports TensorFlow itself: its graph ops run on
    TensorFlow's tensors or inside its graphs, so TensorFlow is loaded by
    then, and the Python path (the `Translator`, the command line under JAX
    and PyTorch) never pays for it.
    """
    return sys.modules.get("tensorflow")


def _graph_tensorflow(value):
    """TensorFlow when ``value`` is one of its tensors or a graph is being
    built, else None (the Python path)."""
    tf = _loaded_tensorflow()
    if tf is None or not hasattr(tf, "executing_eagerly"):
        return None
    if isinstance(value, (tf.Tensor, tf.RaggedTensor, tf.Variable)):
        return tf
    return None if tf.executing_eagerly() else tf


# {SubwordTokenizer subclass: its tf.Module variant}; see `__new__`.
_MODULE_CLASSES = {}


class SubwordTokenizer:
    """A shared SentencePiece subword vocabulary, in Python and in graphs.

    Ids 0-3 are reserved (see ``keras_transformer.special_tokens``):
    ``<pad>``=0, ``<unk>``=1, ``<s>``=2 (BOS), ``</s>``=3 (EOS). ``tokenize``
    never adds BOS or EOS; the input pipeline adds them.

    Python values (str, lists of str, lists or NumPy arrays of ids) are
    tokenized and detokenized by the ``sentencepiece`` package: no
    TensorFlow needed. TensorFlow tensors, and every call inside a
    ``tf.function`` or ``tf.data`` map, go through
    ``tensorflow_text.SentencepieceTokenizer`` (not
    ``FastSentencepieceTokenizer``: the fast one converts the model to its
    own format and segments BPE models differently from SentencePiece
    itself); both give the same ids for the same text. The TensorFlow Text
    resource is created at the first graph call, never by the Python path.

    A tokenizer created while TensorFlow is loaded is also a ``tf.Module``:
    assign it as an attribute of the module you export and its SentencePiece
    resource is saved with the SavedModel.

    Args:
        proto: bytes. A serialized SentencePiece ``ModelProto``.
        name: str. Module name. Defaults to ``"subword_tokenizer"``.

    Example:

    ```python
    import itertools
    tokenizer = SubwordTokenizer.train(
        itertools.chain(source_sentences, target_sentences),
        vocabulary_size=8000,
    )
    ids = tokenizer.tokenize(["Two dogs play."])  # [[...]], list of list of int
    tokenizer.detokenize(ids)  # ["Two dogs play."]
    tokenizer.tokenize(tf.constant(["Two dogs play."]))  # ragged int32 (TF Text)
    tokenizer.save("runs/vocab")  # writes runs/vocab/vocab.spm
    ```
    """

    def __new__(cls, *args, **kwargs):
        # A tf.Module (trackable by a SavedModel) when TensorFlow is loaded;
        # a plain object otherwise, so that the Python path never imports
        # TensorFlow. Either way an instance of `SubwordTokenizer`.
        tf = _loaded_tensorflow()
        if tf is not None and hasattr(tf, "Module") and not issubclass(cls, tf.Module):
            if cls not in _MODULE_CLASSES:
                _MODULE_CLASSES[cls] = type(
                    cls.__name__,
                    (cls, tf.Module),
                    {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                     "__doc__": cls.__doc__},
                )
            cls = _MODULE_CLASSES[cls]
        return super().__new__(cls)

    def __init__(self, proto, name="subword_tokenizer"):
        tf = _loaded_tensorflow()
        if tf is not None and isinstance(self, getattr(tf, "Module", ())):
            tf.Module.__init__(self, name=name)
        if not isinstance(proto, (bytes, bytearray)):
            raise TypeError(
                "SubwordTokenizer expects the serialized SentencePiece model "
                f"as bytes. Received: {type(proto).__name__}"
            )
        self._proto = bytes(proto)
        self._processor = spm.SentencePieceProcessor()
        try:
            self._processor.LoadFromSerializedProto(self._proto)
        except (RuntimeError, OSError) as error:
            raise ValueError(
                "The bytes are not a valid SentencePiece model proto "
                f"({len(self._proto)} bytes): {error}"
            ) from error
        _check_reserved_ids(self._processor)
        self._tf_tokenizer = None

    def _graph_tokenizer(self, tf):
        """The TensorFlow Text tokenizer, created at the first graph call.

        The resource is created eagerly even inside a ``tf.function``, so
        that tf.data maps and exported functions can capture it.
        """
        if self._tf_tokenizer is None:
            with tf.init_scope():
                self._tf_tokenizer = make_tf_sentencepiece_tokenizer(self._proto)
        return self._tf_tokenizer

    # ------------------------------------------------------------------
    # Construction and persistence.

    @classmethod
    def train(
        cls,
        sentences,
        vocabulary_size,
        model_type="bpe",
        character_coverage=1.0,
        input_sentence_size=2_000_000,
        shuffle_input_sentence=True,
        normalization_rule_name="nmt_nfkc",
        seed=0,
        num_threads=None,
        verbose=False,
        languages=(),
    ):
        """Train a SentencePiece model in memory.

        Args:
            sentences: iterable of str. Training text; for a shared
                vocabulary pass source and target sentences together
                (``itertools.chain(src, tgt)``). Empty strings are skipped.
            vocabulary_size: int. Number of pieces, including the 4 reserved.
            model_type: str. ``"bpe"`` (the paper) or ``"unigram"``.
                Defaults to ``"bpe"``.
            character_coverage: float. Fraction of characters covered by the
                vocabulary. Defaults to ``1.0``.
            input_sentence_size: int. At most this many sentences are used
                (sampled when ``shuffle_input_sentence``). Defaults to
                ``2_000_000``.
            shuffle_input_sentence: bool. Sample sentences at random when the
                corpus is larger than ``input_sentence_size``. Defaults to
                ``True``.
            normalization_rule_name: str. SentencePiece normalization.
                Defaults to ``"nmt_nfkc"``.
            seed: int. Seed of SentencePiece's sampler. Defaults to ``0``.
            num_threads: int. Training threads. Defaults to the CPU count.
            verbose: bool. Show SentencePiece's training log. Defaults to
                ``False``.
            languages: list of str. The target languages of a multilingual
                model: each gets a reserved tag piece (``"<2de>"``, ids 4, 5,
                ... in this order; see `languages`). Defaults to none.

        Returns:
            A `SubwordTokenizer`.

        Example:

        ```python
        tokenizer = SubwordTokenizer.train(["a b c", "a c"] * 50, 16)
        ```
        """
        arguments = sentencepiece_trainer_arguments(
            vocabulary_size,
            model_type=model_type,
            character_coverage=character_coverage,
            input_sentence_size=input_sentence_size,
            shuffle_input_sentence=shuffle_input_sentence,
            normalization_rule_name=normalization_rule_name,
            num_threads=num_threads,
            verbose=verbose,
            languages=check_languages(languages),
        )
        if seed is not None:
            spm.set_random_generator_seed(seed)
        num_sentences = [0]

        def non_empty():
            for sentence in sentences:
                if sentence:
                    num_sentences[0] += 1
                    yield sentence

        model = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=non_empty(), model_writer=model, **arguments
            )
        except RuntimeError as error:
            raise training_error(error, vocabulary_size, num_sentences[0]) from error
        return cls(model.getvalue())

    @classmethod
    def from_proto(cls, proto):
        """Build a tokenizer from a serialized SentencePiece model (bytes)."""
        return cls(proto)

    def save(self, directory):
        """Write the model proto to ``directory/vocab.spm``; returns the path."""
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, VOCABULARY_FILENAME)
        with open(path, "wb") as f:
            f.write(self._proto)
        return path

    @classmethod
    def load(cls, directory):
        """Load a tokenizer saved by `save`.

        Args:
            directory: str. The directory given to `save`, or the path of the
                ``vocab.spm`` file itself.

        Returns:
            A `SubwordTokenizer`.
        """
        path = directory
        if os.path.isdir(directory):
            path = os.path.join(directory, VOCABULARY_FILENAME)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"No SentencePiece model at {path!r} (expected the "
                f"{VOCABULARY_FILENAME} written by SubwordTokenizer.save)."
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
    # Properties.

    @property
    def proto(self):
        """The serialized SentencePiece model (bytes)."""
        return self._proto

    @property
    def vocabulary_size(self):
        """Number of pieces, reserved ids included."""
        return self._processor.get_piece_size()

    @property
    def languages(self):
        """``{language: tag id}`` of a multilingual vocabulary's language
        tags; empty for one target language."""
        if not hasattr(self, "_languages"):
            self._languages = language_tag_ids(self._proto)
        return dict(self._languages)

    def id_to_piece(self, ids):
        """The pieces (str) of a list of ids, for display."""
        return [self._processor.id_to_piece(int(i)) for i in ids]

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
            return self._graph_tokenizer(tf).tokenize(strings)
        if isinstance(strings, (str, bytes)) or (
            isinstance(strings, np.ndarray) and strings.ndim == 0
        ):
            return self._processor.encode(_text(strings), out_type=int)
        return self._processor.encode([_text(s) for s in strings], out_type=int)

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
        text = self._graph_tokenizer(tf).detokenize(tf.ragged.boolean_mask(ids, keep))
        return text[0] if rank == 1 else text

    # ------------------------------------------------------------------
    # Python conveniences.

    def encode(self, sentences):
        """Token ids (list of list of int) of a list of str; no BOS/EOS."""
        if isinstance(sentences, str):
            raise TypeError("encode expects a list of str, not a single str.")
        return self._processor.encode(list(sentences), out_type=int)

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
            texts.append(self._processor.decode(kept))
        return texts


def sentencepiece_trainer_arguments(
    vocabulary_size,
    model_type="bpe",
    character_coverage=1.0,
    input_sentence_size=2_000_000,
    shuffle_input_sentence=True,
    normalization_rule_name="nmt_nfkc",
    num_threads=None,
    verbose=False,
    languages=(),
):
    """The keyword arguments of ``sentencepiece.SentencePieceTrainer.train``
    for a vocabulary of this package (BPE, reserved ids 0-3).

    One definition for every trainer (`SubwordTokenizer.train`,
    `keras_transformer.data.prepare_corpus`), so that the same text gives the
    same vocabulary. The arguments are those of `SubwordTokenizer.train`;
    the value is plain JSON (it crosses to a child process). The seed is not
    a trainer argument: set it with ``sentencepiece.set_random_generator_seed``.
    ``languages``: the target languages of a multilingual model; each gets a
    reserved tag piece (`keras_transformer.special_tokens.language_tag_piece`),
    a control symbol with an id right after the reserved ids 0-3.

    Raises:
        ValueError: ``vocabulary_size`` is not an int above the 4 reserved
            pieces, or ``model_type`` is unknown.
    """
    if not isinstance(vocabulary_size, int) or vocabulary_size <= 4:
        raise ValueError(
            "vocabulary_size must be an int greater than the 4 reserved "
            f"pieces. Received: vocabulary_size={vocabulary_size!r}"
        )
    if model_type not in ("bpe", "unigram"):
        raise ValueError(
            "model_type must be 'bpe' or 'unigram'. "
            f"Received: model_type={model_type!r}"
        )
    return {
        "vocab_size": vocabulary_size,
        "model_type": model_type,
        "character_coverage": character_coverage,
        "input_sentence_size": input_sentence_size,
        "shuffle_input_sentence": shuffle_input_sentence,
        "normalization_rule_name": normalization_rule_name,
        "pad_id": PAD_ID,
        "unk_id": UNK_ID,
        "bos_id": BOS_ID,
        "eos_id": EOS_ID,
        "pad_piece": PAD_PIECE,
        "unk_piece": UNK_PIECE,
        "bos_piece": BOS_PIECE,
        "eos_piece": EOS_PIECE,
        "num_threads": num_threads or os.cpu_count() or 1,
        "minloglevel": 0 if verbose else 2,
        **(
            {"control_symbols": [language_tag_piece(lang) for lang in languages]}
            if languages
            else {}
        ),
    }


def _text(value):
    """A str of a str, bytes (UTF-8) or NumPy string scalar."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    return str(value)


def _check_reserved_ids(processor):
    size = processor.get_piece_size()
    check_reserved_pieces(
        [processor.id_to_piece(i) for i in range(min(size, len(RESERVED_PIECES)))],
        source="The SentencePiece model",
    )


def training_error(error, vocabulary_size, num_sentences):
    """The ValueError of a failed SentencePiece training (``error``, its
    RuntimeError), saying what to change."""
    message = str(error)
    if num_sentences == 0:
        return ValueError("Cannot train a vocabulary: no non-empty sentences.")
    too_small = _TOO_SMALL.search(message)
    if too_small:
        return ValueError(
            f"vocabulary_size={vocabulary_size} is too small for this corpus: "
            f"its {int(too_small.group(2)) - 4} characters plus the 4 reserved "
            f"pieces need at least {too_small.group(2)}. Increase "
            "vocabulary_size or lower character_coverage."
        )
    too_large = _TOO_LARGE.search(message)
    if too_large:
        return ValueError(
            f"vocabulary_size={vocabulary_size} is too large for this corpus "
            f"({num_sentences} sentences): SentencePiece can build at most "
            f"{too_large.group(2)} pieces from it. Use a smaller "
            "vocabulary_size or more text."
        )
    return ValueError(f"SentencePiece training failed: {message}")
