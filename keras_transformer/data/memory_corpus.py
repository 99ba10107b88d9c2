"""Sentence pairs in memory as a prepared corpus: `corpus_from_pairs`.

Pairs that are not worth writing to disk (the default task's training
pairs, a validation set) are encoded once with the run's SentencePiece
vocabulary into a `PreparedCorpus` whose one shard is held in memory. Read by
`CorpusStream` like shards on disk, they get the same bucketing, packing,
shuffling and per-process rows as any prepared corpus, in NumPy, under
every backend, without TensorFlow.

Example:

```python
corpus = corpus_from_pairs(["one two"], ["eins zwei"], tokenizer.proto)
stream = CorpusStream(corpus, DatasetOptions(shuffle=False))
```
"""

import hashlib

import numpy as np
import sentencepiece as spm

from keras_transformer.data.shard_format import FORMAT_NAME, FORMAT_VERSION, ids_dtype
from keras_transformer.data.shard_writer import length_histogram
from keras_transformer.data.shards import PreparedCorpus, Shard
from keras_transformer.special_tokens import check_language_tag_position
from keras_transformer.utils.run_files import VOCABULARY_FILENAME
from keras_transformer.utils.validation import check_int


class InMemoryCorpus(PreparedCorpus):
    """A `PreparedCorpus` of one shard held in memory (`corpus_from_pairs`).

    Args:
        name: str. What the pairs are, for messages (its ``path``).
        manifest: dict. The manifest, as `prepare_corpus` writes it.
        shard: the `Shard` (`Shard.from_arrays`).
    """

    def __init__(self, name, manifest, shard):
        super().__init__(name, manifest)
        self._shard = shard

    def shard(self, index):
        check_int("index", index, minimum=0, maximum=0)
        return self._shard


def corpus_from_pairs(
    sources,
    targets,
    vocabulary_proto,
    *,
    language_tag_id=None,
    language_tag="source",
    name="sentence pairs in memory",
    source_vocabulary_proto=None,
):
    """Encodes sentence pairs into an `InMemoryCorpus`.

    Args:
        sources: list of str.
        targets: list of str, aligned with ``sources``.
        vocabulary_proto: bytes. The SentencePiece model (a tokenizer's
            ``proto``).
        language_tag_id: int or None. A target-language tag id put first in
            each source (``language_tag="source"``) or target (``"target"``),
            as `make_dataset` and `prepare_corpus` put it. Defaults to None.
        language_tag: ``"source"`` or ``"target"``.
        name: str. What the pairs are, for messages.
        source_vocabulary_proto: bytes or None. The source side's own
            SentencePiece model over the same ids (an imported Marian
            model's); None encodes both sides with ``vocabulary_proto``.

    Returns:
        An `InMemoryCorpus`.

    Raises:
        ValueError: the sides have different numbers of sentences.
    """
    sources, targets = list(sources), list(targets)
    if len(sources) != len(targets):
        raise ValueError(
            f"Source and target must have as many sentences ({name}). Received: "
            f"{len(sources)} source, {len(targets)} target."
        )
    processor = spm.SentencePieceProcessor(model_proto=bytes(vocabulary_proto))
    size = processor.get_piece_size()
    dtype = np.dtype(ids_dtype(size))
    source_processor = processor
    if source_vocabulary_proto is not None:
        source_processor = spm.SentencePieceProcessor(model_proto=bytes(source_vocabulary_proto))
    sides = [
        source_processor.encode(sources, out_type=int),
        processor.encode(targets, out_type=int),
    ]
    if language_tag_id is not None:
        check_language_tag_position(language_tag)
        tagged = 0 if language_tag == "source" else 1
        sides[tagged] = [[int(language_tag_id)] + ids for ids in sides[tagged]]
    flats, lengths = [], []
    for ids in sides:
        side_lengths = np.fromiter(map(len, ids), np.int64, count=len(ids))
        flat = np.zeros(int(side_lengths.sum()), dtype)
        if len(flat):
            flat[:] = np.concatenate([np.asarray(row, np.int64) for row in ids if row])
        flats.append(flat)
        lengths.append(side_lengths)
    offsets = np.zeros((len(sources) + 1, 2), np.int64)
    np.cumsum(lengths[0], out=offsets[1:, 0])
    np.cumsum(lengths[1], out=offsets[1:, 1])
    shard = Shard.from_arrays("memory", flats[0], flats[1], offsets)
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "complete": True,
        "vocabulary": {
            "file": VOCABULARY_FILENAME,
            "sha256": hashlib.sha256(bytes(vocabulary_proto)).hexdigest(),
            "size": size,
        },
        "dtype": dtype.name,
        "num_pairs": len(sources),
        "shards": [{"name": "memory", "num_pairs": len(sources)}],
        "length_histogram": length_histogram(*lengths).tolist(),
    }
    return InMemoryCorpus(name, manifest, shard)
