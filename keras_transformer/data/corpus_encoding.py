"""The encoding of a corpus preparation (`prepare_corpus`): the input lines
after the shards already written, encoded with SentencePiece in chunks on
every core, a shard written and recorded in the manifest at a time.
"""

import itertools
import time

import numpy as np
import sentencepiece as spm

from keras_transformer.data.shard_format import ids_dtype, shard_name
from keras_transformer.data.shard_writer import (
    add_shard,
    length_histogram,
    merge_histograms,
    write_manifest,
    write_shard,
)
from keras_transformer.utils.console import log

# Pairs encoded at a time. SentencePiece returns Python lists (about 36 bytes
# per id), converted to NumPy at once: small chunks keep that transient.
CHUNK_LINES = 16_384


def _shard_ends(files, shard_size, by_file):
    """The input line numbers (from 1) after which a shard ends: every
    ``shard_size`` lines and at the end; ``by_file``: every ``shard_size``
    lines of each pair of files and at its end."""
    if not by_file:
        return set(range(shard_size, files.num_lines, shard_size)) | {files.num_lines}
    ends, first = set(), 0
    for count in files.line_counts:
        ends.update(range(first + shard_size, first + count, shard_size))
        ends.add(first + count)
        first += count
    return ends


def _to_numpy(ids, dtype):
    """``(flat ids, lengths)`` of a list of id lists."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(
        itertools.chain.from_iterable(ids), dtype=dtype, count=int(lengths.sum())
    )
    return flat, lengths


def _encode_shards(files, protos, output_dir, manifest, num_threads, verbose, languages=None):
    """Encodes the lines after the shards of ``manifest`` into new shards,
    updating ``manifest`` (and its file) after each: the sources with the
    first of ``protos``, the targets with the second (the same model, or
    each side's own over one id space). With ``languages`` (one per pair
    of files), every pair gets its language's tag id and a shard ends with
    each pair of files."""
    source_processor, processor = (spm.SentencePieceProcessor(model_proto=p) for p in protos)
    dtype = ids_dtype(processor.get_piece_size())
    shard_size = manifest["shard_size"]
    ends = _shard_ends(files, shard_size, by_file=languages is not None)
    start_line = manifest["num_lines"]
    file_starts = np.cumsum([0] + files.line_counts)
    start, done_at_start = time.perf_counter(), manifest["num_pairs"]
    parts, histogram, num_lines = [], np.zeros((0, 3), np.int64), 0
    blocks = files.blocks(min(CHUNK_LINES, shard_size), start_line, ends=ends)
    for sources, targets, block_lines in blocks:
        if sources:
            source_ids = source_processor.encode(sources, num_threads=num_threads)
            target_ids = processor.encode(targets, num_threads=num_threads)
            if languages is not None:
                pair = int(np.searchsorted(file_starts, start_line + num_lines, "right")) - 1
                tag = manifest["languages"][languages[pair]]
                if manifest["language_tag"] == "source":
                    source_ids = [[tag] + ids for ids in source_ids]
                else:
                    target_ids = [[tag] + ids for ids in target_ids]
            source = _to_numpy(source_ids, dtype)
            target = _to_numpy(target_ids, dtype)
            parts.append((source, target))
            histogram = merge_histograms(
                histogram, length_histogram(source[1], target[1])
            )
        num_lines += block_lines
        line = start_line + num_lines
        if line not in ends:
            continue
        index = len(manifest["shards"])
        arrays = [
            np.concatenate([part[side][kind] for part in parts] + [np.zeros(0, empty)])
            for side in (0, 1)
            for kind, empty in ((0, dtype), (1, np.int64))
        ]
        entry = write_shard(output_dir, shard_name(index), *arrays, dtype)
        if languages is not None:
            pair = int(np.searchsorted(file_starts, start_line, "right")) - 1
            entry["language"] = languages[pair]
        add_shard(manifest, entry, num_lines, histogram)
        write_manifest(output_dir, manifest)
        start_line, num_lines = line, 0
        parts, histogram = [], np.zeros((0, 3), np.int64)
        elapsed = time.perf_counter() - start
        done = manifest["num_pairs"] - done_at_start
        log(
            f"Shard {index + 1}/{len(ends)}: "
            f"{manifest['num_pairs']} pairs ({line}/{files.num_lines} lines), "
            f"{done / max(elapsed, 1e-9):.0f} pairs/s, {elapsed:.0f} s.",
            verbose,
        )
    return manifest
