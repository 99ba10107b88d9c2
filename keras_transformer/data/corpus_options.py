"""`CorpusOptions`: how `prepare_corpus` learns its vocabulary and writes its
shards, validated once.

One frozen object, as `DatasetOptions` is for batching: `prepare_corpus`
takes it (or its fields as keyword arguments) and checks it before any file
is read, so a bad value is a ValueError naming the argument. It imports
neither TensorFlow nor Keras.
"""

import dataclasses
import os

from keras_transformer.special_tokens import check_language, check_language_tag_position
from keras_transformer.utils.validation import check_int


@dataclasses.dataclass(frozen=True)
class CorpusOptions:
    """The settings of a corpus preparation besides its files and vocabulary.

    Args:
        vocabulary_size: int or None. Learn a shared BPE vocabulary of this
            many pieces (the 4 reserved included) from the corpus; None when
            `prepare_corpus` is given a ``vocabulary``.
        source_vocabulary: str or None. A SentencePiece model of the source
            side over the ids of the ``vocabulary`` (a ``source_vocab.spm``,
            or a directory holding one), for a model whose sides segment
            with models of their own (an imported Marian model): the sources
            are encoded with it, the targets with ``vocabulary``; it is
            copied into the output directory. When ``vocabulary`` is a
            directory holding a ``source_vocab.spm`` (a run directory), that
            one is used unless given here. Defaults to None (one model for
            both sides).
        shard_size: int. Input lines per shard. Defaults to ``250_000``.
        seed: int. Seed of the sample of sentences the vocabulary is learned
            from. Defaults to ``0``.
        num_threads: int or None. Threads of SentencePiece (training and
            encoding). Defaults to the CPU count.
        input_sentence_size: int. The vocabulary is learned from at most
            this many sentences: all of them when the corpus has no more,
            else a sample of both sides drawn with ``seed`` (the same for
            the same files and seed). ``0``: every sentence. Defaults to
            ``2_000_000``.
        languages: list of str or None. For one model of several target
            languages: the target language of each pair of files (after glob
            expansion, in order). The vocabulary then reserves a tag piece
            per language (`keras_transformer.special_tokens`), every pair
            carries its language's tag id (first source token, or first
            target token: ``language_tag``), and each shard holds one
            language (shards end with each pair of files), so that the
            stream can sample the languages (``sampling_temperature``).
            Defaults to None (one target language, no tags).
        language_tag: ``"source"`` or ``"target"``: where the tag goes (see
            `keras_transformer.special_tokens`). Defaults to ``"source"``.
    """

    vocabulary_size: int = None
    source_vocabulary: str = None
    shard_size: int = 250_000
    seed: int = 0
    num_threads: int = None
    input_sentence_size: int = 2_000_000
    languages: tuple = None
    language_tag: str = "source"

    def __post_init__(self):
        check_int("vocabulary_size", self.vocabulary_size, allow_none=True)
        check_int("shard_size", self.shard_size)
        check_int("seed", self.seed, minimum=0)
        check_int("input_sentence_size", self.input_sentence_size, minimum=0)
        if 0 < self.input_sentence_size <= 100:  # SentencePiece's own limit.
            raise ValueError(
                "input_sentence_size must be 0 (every sentence) or more than 100. "
                f"Received: input_sentence_size={self.input_sentence_size}"
            )
        check_int("num_threads", self.num_threads, allow_none=True)
        if self.source_vocabulary is not None:
            object.__setattr__(self, "source_vocabulary", os.fspath(self.source_vocabulary))
        if self.languages is not None:
            if isinstance(self.languages, str):
                raise ValueError(
                    "languages must be a list of language codes, one per pair of files. "
                    f"Received: languages={self.languages!r}"
                )
            object.__setattr__(
                self, "languages",
                tuple(check_language(lang, "languages") for lang in self.languages),
            )
            check_language_tag_position(self.language_tag)

    @property
    def threads(self):
        """``num_threads``, or the CPU count."""
        return self.num_threads or os.cpu_count() or 1

    def replace(self, **changes):
        """A copy with ``changes`` applied (and validated); unknown names are
        refused by name."""
        known = {field.name for field in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(
                f"Unknown corpus option(s) {unknown}. Valid options: {sorted(known)}"
            )
        return dataclasses.replace(self, **changes)
