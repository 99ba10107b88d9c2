"""Prepared corpora: token ids of a parallel corpus in memory-mapped shards.

A prepared corpus is a directory written once (`prepare_corpus`,
``keras-transformer preprocess``) and read by every training run that uses
it, so that a run never tokenizes text::

    <dir>/manifest.json        written last; "complete": true once every shard is written
    <dir>/vocab.spm            the SentencePiece model the ids come from
    <dir>/shard-00000.src.npy  the source ids of the shard's pairs, concatenated (no BOS/EOS)
    <dir>/shard-00000.tgt.npy  the same for the target side
    <dir>/shard-00000.idx.npy  int64 (num_pairs + 1, 2): cumulative offsets (source, target)
    ...

The ids are ``uint16`` when the vocabulary has at most 65,536 pieces, else
``int32``. Shards are ``.npy`` files, read with ``numpy.load(mmap_mode="r")``:
any pair can be read without reading the others (windowed bucketing, a
host's share of the rows), reads copy nothing, and no TensorFlow is needed
(JAX and PyTorch machines read them as they are). Every file is written to a
temporary name and renamed, so a killed preparation never leaves half a file
under its final name; the manifest records each file's CRC-32.

``manifest.json`` (strict JSON)::

    {"format": "keras-transformer-corpus", "version": 1, "complete": true,
     "vocabulary": {"file": "vocab.spm", "sha256": "...", "size": 8000},
     "dtype": "uint16",
     "inputs": {"source": [...], "target": [...], "bytes": [[src, tgt], ...]},
     "shard_size": 250000,
     "num_lines": 4500000, "num_pairs": 4499000, "num_skipped_empty": 1000,
     "shards": [{"name": "shard-00000", "num_pairs": 250000,
                 "num_source_tokens": ..., "num_target_tokens": ...,
                 "crc32": {"src": ..., "tgt": ..., "idx": ...}}, ...],
     "length_histogram": [[source_length, target_length, count], ...]}

Shard ``k`` holds the pairs of input lines ``[k * shard_size, (k + 1) *
shard_size)`` of the input files taken one after the other (pairs with an
empty side are skipped and counted in ``num_skipped_empty``). The length
histogram is exact, over all pairs, lengths without BOS/EOS.

The format's names are in `keras_transformer.data.shard_format`, the writing
of shards and manifests in `keras_transformer.data.shard_writer` and the
checks of the files in `keras_transformer.data.shard_checks`; this module
reads a prepared corpus (`PreparedCorpus`, `Shard`) and writes one from ids
in memory (`write_prepared_corpus`).
"""

import hashlib
import os

import numpy as np

from keras_transformer.data.shard_checks import (
    _resume_hint,
    check_files,
    read_manifest,
)
from keras_transformer.data.shard_format import (
    MANIFEST_FILENAME,
    SHARD_PARTS,
    SIDES,
    shard_name,
    shard_path,
)
from keras_transformer.data.shard_writer import (
    add_shard,
    length_histogram,
    new_manifest,
    write_manifest,
    write_shard,
)
from keras_transformer.utils.file_io import atomic_write_bytes
from keras_transformer.utils.run_files import VOCABULARY_FILENAME
from keras_transformer.utils.validation import check_choice, check_int


def write_prepared_corpus(
    directory, source_ids, target_ids, vocabulary_proto, shard_size=250_000, inputs=None
):
    """Writes already encoded pairs as a prepared corpus.

    Args:
        directory: str. The directory to write (created if needed).
        source_ids: sequence of int sequences. The source ids of each pair,
            without BOS/EOS.
        target_ids: sequence of int sequences, as many.
        vocabulary_proto: bytes. The SentencePiece model of the ids,
            written as ``vocab.spm``.
        shard_size: int. Pairs per shard. Defaults to ``250_000``.
        inputs: dict or None. The manifest's ``"inputs"``. Defaults to None.

    Returns:
        The `PreparedCorpus`, opened.

    Example:

    ```python
    corpus = write_prepared_corpus(
        "corpus", [[5, 6], [7]], [[8], [9, 10, 11]], tokenizer.proto
    )
    corpus.shard(0).gather([1], "target")  # (array([9, 10, 11]), array([0, 3]))
    ```
    """
    shard_size = check_int("shard_size", shard_size)
    if len(source_ids) != len(target_ids):
        raise ValueError(
            f"source_ids has {len(source_ids)} pairs but target_ids {len(target_ids)}."
        )
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    manifest = new_manifest(vocabulary_proto, shard_size, inputs)
    atomic_write_bytes(
        os.path.join(directory, VOCABULARY_FILENAME), bytes(vocabulary_proto)
    )
    for index, start in enumerate(range(0, len(source_ids), shard_size)):
        stop = min(start + shard_size, len(source_ids))
        sides = []
        for ids in (source_ids[start:stop], target_ids[start:stop]):
            lengths = np.array([len(sequence) for sequence in ids], np.int64)
            flat = np.concatenate(
                [np.asarray(sequence, np.int64).reshape(-1) for sequence in ids]
                + [np.zeros(0, np.int64)]
            )
            sides += [flat, lengths]
        entry = write_shard(directory, shard_name(index), *sides, manifest["dtype"])
        add_shard(manifest, entry, stop - start, length_histogram(sides[1], sides[3]))
    manifest["complete"] = True
    write_manifest(directory, manifest)
    return PreparedCorpus.open(directory)


class Shard:
    """One shard of a `PreparedCorpus`, memory-mapped.

    Nothing is read until used; drop the object to unmap the files.

    Attributes:
        name: str. The shard's name (``"shard-00000"``).
        num_pairs: int. Pairs in the shard.
        source: 1-D ``numpy.memmap``. The source ids, concatenated.
        target: 1-D ``numpy.memmap``. The target ids, concatenated.
        offsets: ``numpy.memmap`` int64 ``(num_pairs + 1, 2)``. Pair ``i``
            has the source ids ``source[offsets[i, 0]:offsets[i + 1, 0]]``
            and the target ids ``target[offsets[i, 1]:offsets[i + 1, 1]]``.

    Example:

    ```python
    shard = PreparedCorpus.open("corpus").shard(0)
    source_lengths, target_lengths = shard.lengths()
    ids, row_splits = shard.gather([3, 0], "source")  # pairs 3 then 0
    ```
    """

    def __init__(self, directory, entry, dtype):
        self.name = entry["name"]
        self.num_pairs = int(entry["num_pairs"])
        arrays = {}
        for part in SHARD_PARTS:
            path = shard_path(directory, self.name, part)
            try:
                arrays[part] = np.load(path, mmap_mode="r", allow_pickle=False)
            except (OSError, ValueError) as error:
                raise ValueError(
                    f"Cannot read the shard file {path!r} (missing, truncated "
                    f"or corrupt): {error}"
                ) from error
        self.source = arrays["src"]
        self.target = arrays["tgt"]
        self.offsets = arrays["idx"]
        idx_path = shard_path(directory, self.name, "idx")
        expected = {
            "src": ((int(entry["num_source_tokens"]),), np.dtype(dtype)),
            "tgt": ((int(entry["num_target_tokens"]),), np.dtype(dtype)),
            "idx": ((self.num_pairs + 1, 2), np.dtype(np.int64)),
        }
        for part, (shape, part_dtype) in expected.items():
            if arrays[part].shape != shape or arrays[part].dtype != part_dtype:
                raise ValueError(
                    f"The shard file {shard_path(directory, self.name, part)!r} "
                    f"holds {arrays[part].dtype} {arrays[part].shape}, but the "
                    f"manifest says {part_dtype} {shape} (corrupt or from another "
                    "preparation)."
                )
        ends = self.offsets[[0, -1]]
        if ends[0].tolist() != [0, 0] or ends[1].tolist() != [
            self.source.size,
            self.target.size,
        ]:
            raise ValueError(
                f"The offsets {idx_path!r} do not match the ids of the shard "
                f"(first {ends[0].tolist()}, last {ends[1].tolist()}, ids "
                f"{[self.source.size, self.target.size]}): corrupt shard."
            )

    @classmethod
    def from_arrays(cls, name, source, target, offsets):
        """A shard held in memory: ``source``/``target`` the ids (1-D),
        ``offsets`` the int64 ``(num_pairs + 1, 2)`` index, as in the files."""
        shard = cls.__new__(cls)
        shard.name = name
        shard.num_pairs = len(offsets) - 1
        shard.source, shard.target, shard.offsets = source, target, offsets
        return shard

    def lengths(self):
        """``(source_lengths, target_lengths)``: int64 arrays of the number of
        ids of each pair, without BOS/EOS."""
        lengths = np.diff(np.asarray(self.offsets), axis=0)
        return lengths[:, 0].copy(), lengths[:, 1].copy()

    def gather(self, pairs, side):
        """The ids of some pairs of one side, in the order given.

        Args:
            pairs: 1-D int array. Indices of pairs of the shard.
            side: str. ``"source"`` or ``"target"``.

        Returns:
            ``(ids, row_splits)``: int32 ids of the pairs concatenated, and
            int64 row splits (``len(pairs) + 1``): pair ``pairs[k]`` has
            ``ids[row_splits[k]:row_splits[k + 1]]``.
        """
        column = SIDES.index(check_choice("side", side, SIDES))
        data = self.source if column == 0 else self.target
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= self.num_pairs):
            raise ValueError(
                f"pairs must be in [0, {self.num_pairs}) for the shard "
                f"{self.name!r}. Received: pairs in [{pairs.min()}, {pairs.max()}]"
            )
        starts = np.asarray(self.offsets[pairs, column])
        lengths = np.asarray(self.offsets[pairs + 1, column]) - starts
        row_splits = np.zeros(pairs.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=row_splits[1:])
        index = np.repeat(starts - row_splits[:-1], lengths) + np.arange(
            row_splits[-1], dtype=np.int64
        )
        return np.asarray(data[index], dtype=np.int32), row_splits


class PreparedCorpus:
    """A prepared corpus: the directory written by `prepare_corpus`.

    Open it with `PreparedCorpus.open`; read its shards with `shard`.

    Attributes:
        path: str. The directory.
        manifest: dict. ``manifest.json``.
        num_pairs: int. Pairs in the corpus.
        num_shards: int. Shards in the corpus.
        shard_names: list of str. The shards' names, in order.
        vocabulary_path: str. The ``vocab.spm`` of the ids.
        vocabulary_sha256: str. Its SHA-256 (hex).
        vocabulary_size: int. Its number of pieces.
        source_vocabulary_sha256: str or None. The SHA-256 of the source
            side's own SentencePiece model (``source_vocab.spm``), or None
            where ``vocab.spm`` encoded both sides.
        length_histogram: int64 array ``(K, 3)``. Rows ``(source length,
            target length, number of pairs)``, without BOS/EOS.

    Example:

    ```python
    corpus = PreparedCorpus.open("data/wmt14_prepared")
    corpus.check_vocabulary(tokenizer.proto, "runs/base/vocab.spm")
    for index in range(corpus.num_shards):
        source_lengths, target_lengths = corpus.shard(index).lengths()
    ```
    """

    def __init__(self, path, manifest):
        self.path = path
        self.manifest = manifest
        self.num_pairs = int(manifest["num_pairs"])
        self.shard_names = [entry["name"] for entry in manifest["shards"]]
        self.num_shards = len(self.shard_names)
        vocabulary = manifest["vocabulary"]
        self.vocabulary_path = os.path.join(path, vocabulary["file"])
        self.vocabulary_sha256 = vocabulary["sha256"]
        self.vocabulary_size = int(vocabulary["size"])
        self.source_vocabulary_sha256 = (manifest.get("source_vocabulary") or {}).get("sha256")
        self.length_histogram = np.asarray(
            manifest["length_histogram"], dtype=np.int64
        ).reshape(-1, 3)
        # A corpus of several target languages (`prepare_corpus`'s
        # ``languages``): ``{language: tag id}``, where the tags are
        # (``"source"`` or ``"target"``), each shard's language and the
        # pairs of each language. Empty/None for one target language.
        self.languages = dict(manifest.get("languages") or {})
        self.language_tag = manifest.get("language_tag")
        self.shard_languages = [entry.get("language") for entry in manifest["shards"]]
        self.language_pairs = {
            language: sum(
                entry["num_pairs"]
                for entry in manifest["shards"]
                if entry.get("language") == language
            )
            for language in self.languages
        }

    @classmethod
    def open(cls, path, verify=True):
        """Opens a prepared corpus after checking its files.

        Every shard file must exist with the shape the manifest gives;
        with ``verify`` its bytes must also have the recorded CRC-32 (this
        reads every file once), and ``vocab.spm`` its SHA-256.

        Args:
            path: str. The directory.
            verify: bool. Check the CRC-32 of every file. Defaults to True.

        Returns:
            A `PreparedCorpus`.

        Raises:
            ValueError: naming the file: the directory is not a prepared
                corpus (no ``manifest.json``), its format or version is
                unknown, the preparation did not finish, a shard file is
                missing, truncated or corrupt, or ``vocab.spm`` is not the
                vocabulary of the ids.
        """
        path = os.fspath(path)
        manifest = read_manifest(path)
        if manifest is None:
            raise ValueError(
                f"{path!r} is not a prepared corpus: it has no {MANIFEST_FILENAME} "
                "(prepare one with `keras-transformer preprocess` or prepare_corpus)."
            )
        if not manifest.get("complete"):
            raise ValueError(
                f"The prepared corpus {path!r} is incomplete: its preparation was "
                f"interrupted after {len(manifest.get('shards', []))} shards; "
                f"{_resume_hint(path, manifest)}"
            )
        check_files(path, manifest, verify)
        return cls(path, manifest)

    def check_vocabulary(self, proto, name):
        """Raises a ValueError naming the corpus and ``name`` when ``proto``
        (bytes of a SentencePiece model) is not the corpus' vocabulary.

        Args:
            proto: bytes. The vocabulary a model uses.
            name: str. Where it comes from, for the message (a path).
        """
        if hashlib.sha256(bytes(proto)).hexdigest() != self.vocabulary_sha256:
            raise ValueError(
                f"The prepared corpus {self.path!r} was encoded with the vocabulary "
                f"{self.vocabulary_path!r}, not with {name!r}: its ids would mean "
                "other pieces. Prepare the corpus with this vocabulary "
                "(--vocabulary) or use the corpus' vocab.spm."
            )

    def check_source_vocabulary(self, proto, name):
        """Raises a ValueError naming the corpus and ``name`` when the
        sources were not encoded with ``proto`` (bytes of the source side's
        own SentencePiece model; None: the sides share ``vocab.spm``)."""
        digest = None if proto is None else hashlib.sha256(bytes(proto)).hexdigest()
        if digest != self.source_vocabulary_sha256:
            used = "its own source_vocab.spm" if self.source_vocabulary_sha256 else "vocab.spm"
            wanted = repr(name) if proto is not None else "the shared vocab.spm"
            raise ValueError(
                f"The prepared corpus {self.path!r} encoded its sources with {used}, "
                f"not with {wanted}: prepare it with the model's vocabularies "
                "(--vocabulary RUN)."
            )

    def shard(self, index):
        """The `Shard` ``index`` (``0 <= index < num_shards``), memory-mapped."""
        index = check_int("index", index, minimum=0, maximum=self.num_shards - 1)
        return Shard(self.path, self.manifest["shards"][index], self.manifest["dtype"])

    def __repr__(self):
        return (
            f"PreparedCorpus({self.path!r}, num_pairs={self.num_pairs}, "
            f"num_shards={self.num_shards}, vocabulary_size={self.vocabulary_size})"
        )
