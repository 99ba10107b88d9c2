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
"""

import hashlib
import os
import zlib

import numpy as np
import sentencepiece as spm

from keras_transformer.utils.file_io import (
    atomic_write_bytes,
    atomic_write_json,
    read_json,
)
from keras_transformer.utils.run_files import VOCABULARY_FILENAME
from keras_transformer.utils.validation import check_choice, check_int

FORMAT_NAME = "keras-transformer-corpus"
FORMAT_VERSION = 1
MANIFEST_FILENAME = "manifest.json"
# The suffix of each file of a shard, and its key in the shard's "crc32".
SHARD_PARTS = ("src", "tgt", "idx")
SIDES = ("source", "target")
_CHUNK_BYTES = 1 << 24


def shard_name(index):
    """The name of shard ``index`` (``"shard-00000"``)."""
    return f"shard-{index:05d}"


def shard_path(directory, name, part):
    """The file of one part (``"src"``, ``"tgt"``, ``"idx"``) of a shard."""
    return os.path.join(directory, f"{name}.{part}.npy")


def ids_dtype(vocabulary_size):
    """``"uint16"`` when every id of the vocabulary fits, else ``"int32"``."""
    return "uint16" if vocabulary_size <= 65536 else "int32"


def file_crc32(path):
    """The CRC-32 of a file's bytes."""
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK_BYTES):
            crc = zlib.crc32(chunk, crc)
    return crc


def _save_array(path, array):
    """Saves ``array`` as ``.npy`` under a temporary name, then renames it;
    returns the CRC-32 of the file."""
    temporary = os.path.join(
        os.path.dirname(path), f".tmp-{os.getpid()}-{os.path.basename(path)}"
    )
    try:
        with open(temporary, "wb") as f:
            np.save(f, array, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        crc = file_crc32(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return crc


def _flat_ids(name, flat, lengths, dtype):
    """``flat`` as a 1-D array of ``dtype`` after checking it against
    ``lengths`` and the range of ``dtype``."""
    flat = np.asarray(flat)
    if flat.ndim != 1 or (flat.size and not np.issubdtype(flat.dtype, np.integer)):
        raise ValueError(
            f"{name} must be a 1-D array of integer ids. Received: shape "
            f"{flat.shape}, dtype {flat.dtype}"
        )
    if int(lengths.sum()) != flat.size:
        raise ValueError(
            f"{name} holds {flat.size} ids but its lengths add up to "
            f"{int(lengths.sum())}."
        )
    if flat.size:
        low, high = int(flat.min()), int(flat.max())
        limit = np.iinfo(dtype).max
        if low < 0 or high > limit:
            raise ValueError(
                f"{name} has ids in [{low}, {high}], outside [0, {limit}] of {dtype}."
            )
    return flat.astype(dtype, copy=False)


def _lengths(name, lengths):
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (
        lengths.size and not np.issubdtype(lengths.dtype, np.integer)
    ):
        raise ValueError(
            f"{name} must be a 1-D array of ints. Received: shape {lengths.shape}"
        )
    if lengths.size and int(lengths.min()) < 0:
        raise ValueError(
            f"{name} must not be negative. Received: min {int(lengths.min())}"
        )
    return lengths.astype(np.int64, copy=False)


def write_shard(
    directory, name, source_flat, source_lengths, target_flat, target_lengths, dtype
):
    """Writes one shard (its ``.src``, ``.tgt`` and ``.idx`` files).

    Each file is written to a temporary name and renamed, the offsets index
    last.

    Args:
        directory: str. The prepared corpus' directory (created if needed).
        name: str. The shard's name, e.g. ``shard_name(0)``.
        source_flat: 1-D int array. The source ids of every pair,
            concatenated, without BOS/EOS.
        source_lengths: 1-D int array. The number of source ids of each pair.
        target_flat: 1-D int array. The target ids, likewise.
        target_lengths: 1-D int array. The target lengths, one per pair.
        dtype: str. ``"uint16"`` or ``"int32"`` (`ids_dtype`).

    Returns:
        The shard's entry of the manifest: a dict with ``"name"``,
        ``"num_pairs"``, ``"num_source_tokens"``, ``"num_target_tokens"`` and
        ``"crc32"`` (``{"src", "tgt", "idx"}``).

    Raises:
        ValueError: the sides have different numbers of pairs, the lengths
            do not add up to the ids, or an id does not fit ``dtype``.
    """
    dtype = check_choice("dtype", dtype, ("uint16", "int32"))
    source_lengths = _lengths("source_lengths", source_lengths)
    target_lengths = _lengths("target_lengths", target_lengths)
    if source_lengths.size != target_lengths.size:
        raise ValueError(
            f"The shard {name!r} has {source_lengths.size} source lengths but "
            f"{target_lengths.size} target lengths."
        )
    source_flat = _flat_ids("source_flat", source_flat, source_lengths, dtype)
    target_flat = _flat_ids("target_flat", target_flat, target_lengths, dtype)
    offsets = np.zeros((source_lengths.size + 1, 2), dtype=np.int64)
    np.cumsum(source_lengths, out=offsets[1:, 0])
    np.cumsum(target_lengths, out=offsets[1:, 1])
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    crc = {}
    for part, array in zip(SHARD_PARTS, (source_flat, target_flat, offsets)):
        crc[part] = _save_array(shard_path(directory, name, part), array)
    return {
        "name": name,
        "num_pairs": int(source_lengths.size),
        "num_source_tokens": int(source_flat.size),
        "num_target_tokens": int(target_flat.size),
        "crc32": crc,
    }


def length_histogram(source_lengths, target_lengths):
    """The ``(K, 3)`` int64 rows ``(source length, target length, count)``
    of the given length pairs, sorted."""
    pairs = np.stack(
        [np.asarray(source_lengths, np.int64), np.asarray(target_lengths, np.int64)], 1
    )
    if not pairs.size:
        return np.zeros((0, 3), np.int64)
    unique, counts = np.unique(pairs, axis=0, return_counts=True)
    return np.concatenate([unique, counts[:, None].astype(np.int64)], axis=1)


def merge_histograms(*histograms):
    """The sum of length histograms (``(K, 3)`` arrays or lists of rows)."""
    rows = [np.asarray(h, np.int64).reshape(-1, 3) for h in histograms]
    rows = np.concatenate(rows) if rows else np.zeros((0, 3), np.int64)
    if not rows.size:
        return np.zeros((0, 3), np.int64)
    unique, inverse = np.unique(rows[:, :2], axis=0, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=rows[:, 2], minlength=len(unique))
    return np.concatenate([unique, counts.astype(np.int64)[:, None]], axis=1)


def vocabulary_size_of(proto):
    """The number of pieces of a serialized SentencePiece model."""
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(bytes(proto))
    except (RuntimeError, OSError) as error:
        raise ValueError(
            f"The bytes are not a valid SentencePiece model proto ({len(proto)} "
            f"bytes): {error}"
        ) from error
    return processor.get_piece_size()


def new_manifest(vocabulary_proto, shard_size, inputs=None, settings=None):
    """The manifest of a corpus with no shard yet (``"complete": false``).

    Args:
        vocabulary_proto: bytes. The SentencePiece model of the ids.
        shard_size: int. Input lines per shard.
        inputs: dict or None. ``{"source": [...], "target": [...],
            "bytes": [[src, tgt], ...]}``: the input files, absolute, and
            their sizes.
        settings: dict or None. How the corpus was prepared (the arguments
            of `prepare_corpus` that decide its content).
    """
    size = vocabulary_size_of(vocabulary_proto)
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "complete": False,
        "vocabulary": {
            "file": VOCABULARY_FILENAME,
            "sha256": hashlib.sha256(bytes(vocabulary_proto)).hexdigest(),
            "size": size,
        },
        "dtype": ids_dtype(size),
        "inputs": inputs,
        "shard_size": int(shard_size),
        "num_lines": 0,
        "num_pairs": 0,
        "num_skipped_empty": 0,
        "shards": [],
        "length_histogram": [],
    }
    if settings is not None:
        manifest["settings"] = settings
    return manifest


def write_manifest(directory, manifest):
    """Writes ``directory/manifest.json`` atomically; returns its path."""
    return atomic_write_json(
        os.path.join(os.fspath(directory), MANIFEST_FILENAME), manifest, indent=1
    )


def add_shard(manifest, entry, num_lines, histogram):
    """Records a written shard in ``manifest`` (in place): its entry, the
    input lines it covers and its length histogram."""
    manifest["shards"].append(entry)
    manifest["num_lines"] += int(num_lines)
    manifest["num_pairs"] += entry["num_pairs"]
    manifest["num_skipped_empty"] = manifest["num_lines"] - manifest["num_pairs"]
    manifest["length_histogram"] = merge_histograms(
        manifest["length_histogram"], histogram
    ).tolist()
    return manifest


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


def _npy_header(path):
    """``(shape, dtype, data_offset)`` of a ``.npy`` file, from its header."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        return shape, dtype, f.tell()


def _resume_hint(path, manifest):
    """How to resume an interrupted preparation of ``path``."""
    inputs = manifest.get("inputs") or {}
    settings = manifest.get("settings") or {}
    if not inputs.get("source"):
        return "prepare it again with the same arguments to resume it."
    command = ["keras-transformer preprocess --train-src", *inputs["source"]]
    command += ["--train-tgt", *inputs["target"], "--output", path]
    if settings.get("vocabulary"):
        command += ["--vocabulary", settings["vocabulary"]]
    elif settings.get("vocabulary_size"):
        command += ["--vocabulary-size", str(settings["vocabulary_size"])]
    command += ["--shard-size", str(manifest["shard_size"])]
    if settings.get("seed") is not None:
        command += ["--seed", str(settings["seed"])]
    return "run the same command again to resume it: " + " ".join(command)


def read_manifest(directory):
    """The manifest of the prepared corpus in ``directory``, checked to be
    of this format and version; None when there is no ``manifest.json``.

    Raises:
        ValueError: naming the file: it is not JSON, not a prepared
            corpus' manifest, or of another format version.
    """
    manifest_path = os.path.join(os.fspath(directory), MANIFEST_FILENAME)
    if not os.path.isfile(manifest_path):
        return None
    manifest = read_json(manifest_path, "manifest of the prepared corpus")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise ValueError(
            f"{manifest_path!r} is not the manifest of a prepared corpus "
            f"(format {found!r}, expected {FORMAT_NAME!r})."
        )
    if manifest.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{manifest_path!r} has format version {manifest.get('version')!r}; "
            f"this version of keras_transformer reads version {FORMAT_VERSION}."
        )
    return manifest


def check_files(directory, manifest, verify=True):
    """Checks the files of the shards ``manifest`` lists, and ``vocab.spm``.

    Every shard file must exist with the dtype, shape and size the manifest
    gives; with ``verify`` its CRC-32 too (which reads every file once).

    Raises:
        ValueError: naming the file missing, truncated or corrupt, or the
            ``vocab.spm`` whose SHA-256 is not the manifest's.
    """
    directory = os.fspath(directory)
    vocabulary_path = os.path.join(directory, manifest["vocabulary"]["file"])
    dtype = np.dtype(manifest["dtype"])
    for entry in manifest["shards"]:
        expected = {
            "src": ((int(entry["num_source_tokens"]),), dtype),
            "tgt": ((int(entry["num_target_tokens"]),), dtype),
            "idx": ((int(entry["num_pairs"]) + 1, 2), np.dtype(np.int64)),
        }
        for part in SHARD_PARTS:
            file = shard_path(directory, entry["name"], part)
            if not os.path.isfile(file):
                raise ValueError(
                    f"The shard file {file!r} of the prepared corpus is missing."
                )
            try:
                shape, file_dtype, offset = _npy_header(file)
            except (OSError, ValueError) as error:
                raise ValueError(
                    f"The shard file {file!r} is corrupt (bad .npy header): {error}"
                ) from error
            shape_wanted, dtype_wanted = expected[part]
            if shape != shape_wanted or file_dtype != dtype_wanted:
                raise ValueError(
                    f"The shard file {file!r} holds {file_dtype} {shape}, but "
                    f"the manifest says {dtype_wanted} {shape_wanted} (corrupt "
                    "or from another preparation)."
                )
            size = offset + int(np.prod(shape)) * file_dtype.itemsize
            actual = os.path.getsize(file)
            if actual != size:
                raise ValueError(
                    f"The shard file {file!r} is truncated or corrupt: "
                    f"{actual} bytes, expected {size}."
                )
            if verify and file_crc32(file) != entry["crc32"][part]:
                raise ValueError(
                    f"The shard file {file!r} is corrupt: its CRC-32 differs "
                    "from the one recorded when it was written."
                )
    if not os.path.isfile(vocabulary_path):
        raise ValueError(
            f"The vocabulary {vocabulary_path!r} of the prepared corpus is missing."
        )
    with open(vocabulary_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != manifest["vocabulary"]["sha256"]:
        raise ValueError(
            f"The vocabulary {vocabulary_path!r} is not the one the ids "
            "of the prepared corpus come from (its SHA-256 differs from the "
            "manifest's)."
        )
    source = manifest.get("source_vocabulary")
    if source:
        path = os.path.join(directory, source["file"])
        if not os.path.isfile(path):
            raise ValueError(f"The source vocabulary {path!r} of the prepared corpus is missing.")
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != source["sha256"]:
                raise ValueError(
                    f"The source vocabulary {path!r} is not the one the source ids "
                    "of the prepared corpus come from (its SHA-256 differs from "
                    "the manifest's)."
                )


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
