"""The writing of a prepared corpus (format in `keras_transformer.data.shards`):
one shard's files, each written to a temporary name and renamed, its entry
in the manifest, the length histograms, and the manifest itself.
"""

import hashlib
import os

import numpy as np
import sentencepiece as spm

from keras_transformer.data.shard_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILENAME,
    SHARD_PARTS,
    file_crc32,
    ids_dtype,
    shard_path,
)
from keras_transformer.utils.file_io import atomic_write_json
from keras_transformer.utils.run_files import VOCABULARY_FILENAME
from keras_transformer.utils.validation import check_choice


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
