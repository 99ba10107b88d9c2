"""The ids of a `CorpusStream`'s planned batches: the stream's pairs as
parallel arrays (`_Pairs`), read from the memory-mapped shards a chunk of
about 8,192 pairs at a time, and written into this process's rows of each
padded or packed batch (`_Filler`).
"""

import dataclasses

import numpy as np

from keras_transformer.data.packing import scatter_pairs
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

# Batches are filled this many pairs at a time: one read of the shards per
# chunk, and the ids of at most one chunk in memory.
_CHUNK_PAIRS = 8192


def _chunks(plans):
    """Lists of consecutive plans holding about ``_CHUNK_PAIRS`` pairs."""
    chunk, size = [], 0
    for plan in plans:
        chunk.append(plan)
        size += len(plan.pairs)
        if size >= _CHUNK_PAIRS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


@dataclasses.dataclass
class _Pairs:
    """Pairs of the stream as parallel arrays, by increasing stream id:
    where each is in the corpus (``shards``, ``indices``) and its kept
    lengths (truncated, without EOS/BOS)."""

    ids: np.ndarray
    shards: np.ndarray
    indices: np.ndarray
    source_lengths: np.ndarray
    target_lengths: np.ndarray

    @classmethod
    def empty(cls):
        return cls(*(np.zeros(0, np.int64) for _ in range(5)))

    def _arrays(self):
        # Not dataclasses.astuple, which deep-copies the arrays.
        return [getattr(self, field.name) for field in dataclasses.fields(self)]

    def take(self, positions):
        """The pairs at ``positions`` (indices or a slice)."""
        return _Pairs(*(x[positions] for x in self._arrays()))

    def concat(self, other):
        """These pairs, then ``other`` (whose ids are all larger)."""
        return _Pairs(
            *(np.concatenate([x, y]) for x, y in zip(self._arrays(), other._arrays()))
        )


def _with_token(values, lengths, token, at_start):
    """``(flat, row_splits)`` of rows of ``values`` (the rows' tokens,
    concatenated, ``lengths`` each) with ``token`` added at each row's start
    or end."""
    splits = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths + 1, out=splits[1:])
    flat = np.empty(splits[-1], np.int32)
    shift = np.arange(len(lengths), dtype=np.int64) + (1 if at_start else 0)
    flat[np.arange(len(values), dtype=np.int64) + np.repeat(shift, lengths)] = values
    flat[splits[:-1] if at_start else splits[1:] - 1] = token
    return flat, splits


class _Filler:
    """Reads the ids of planned batches and fills this process's rows."""

    def __init__(self, corpus, options, packed_rows):
        self.corpus = corpus
        self.options = options
        self.packed = options.bucketing == "packed"
        # Packed rows per process.
        self.rows = packed_rows // options.num_shards

    def read(self, pairs, shards):
        """The ids of ``pairs``, kept lengths only: ``(source, target)``, each
        the pairs' ids concatenated. Read from ``shards`` (a dict of open
        `Shard`s); a shard not in it is opened for the read (a pair that
        waited longer than its group)."""
        sides = []
        for side, lengths in (
            ("source", pairs.source_lengths),
            ("target", pairs.target_lengths),
        ):
            parts, starts, offset = [], np.zeros(len(pairs.ids), np.int64), 0
            for index in np.unique(pairs.shards).tolist():
                here = np.flatnonzero(pairs.shards == index)
                shard = shards[index] if index in shards else self.corpus.shard(index)
                ids, splits = shard.gather(pairs.indices[here], side)
                starts[here] = offset + splits[:-1]
                parts.append(ids)
                offset += len(ids)
            flat = np.concatenate(parts + [np.zeros(0, np.int32)])
            sides.append(flat[_row_index(starts, lengths)])
        return tuple(sides)

    def fill(self, plans, pairs, shards):
        """Yields the ``(inputs, labels)`` of ``plans`` (this process's rows),
        reading the ids of those rows' pairs once."""
        placements = [self._placements(plan) for plan in plans]
        needed = np.unique(
            np.concatenate([p[0] for p in placements] + [np.zeros(0, np.int64)])
        )
        pairs = pairs.take(np.searchsorted(pairs.ids, needed))
        source, target = self.read(pairs, shards)
        source_lengths, target_lengths = pairs.source_lengths, pairs.target_lengths
        encoder = _with_token(source, source_lengths, EOS_ID, at_start=False)
        decoder = _with_token(target, target_lengths, BOS_ID, at_start=True)
        labels = (_with_token(target, target_lengths, EOS_ID, at_start=False)[0],)
        labels += (decoder[1],)
        for plan, (ids, *placed) in zip(plans, placements):
            slots = np.searchsorted(needed, ids)
            if self.packed:
                yield self._packed(slots, *placed, encoder, decoder, labels)
            else:
                yield self._padded(plan, slots, encoder, decoder, labels)

    def _placements(self, plan):
        """The placements in this process's rows: ``(pair ids, rows)`` (rows
        counted from its first row), plus ``(source offsets, target offsets,
        segments)`` when packed."""
        options = self.options
        if not self.packed:
            rows = plan.num_rows // options.num_shards
            first = options.shard_index * rows
            ids = plan.pairs[first : first + rows]
            return ids, np.arange(len(ids), dtype=np.int64)
        first = options.shard_index * self.rows
        rows = np.asarray(plan.rows, np.int64) - first
        mine = (rows >= 0) & (rows < self.rows)
        return tuple(
            np.asarray(x, np.int64)[mine]
            for x in (
                plan.pairs,
                rows,
                plan.source_offsets,
                plan.target_offsets,
                plan.segments,
            )
        )

    def _padded(self, plan, slots, encoder, decoder, labels):
        rows = plan.num_rows // self.options.num_shards
        row_of = np.arange(len(slots), dtype=np.int64)
        offsets = np.zeros(len(slots), np.int64)
        arrays = []
        for (flat, splits), length in (
            (encoder, plan.source_length),
            (decoder, plan.target_length),
            (labels, plan.target_length),
        ):
            array = np.full((rows, length), PAD_ID, np.int32)
            scatter_pairs(array, row_of, offsets, flat, splits, slots)
            arrays.append(array)
        inputs = {"encoder_token_ids": arrays[0], "decoder_token_ids": arrays[1]}
        return inputs, arrays[2]

    def _packed(self, slots, rows, source_offsets, target_offsets, segments,
                encoder, decoder, labels):  # fmt: skip
        shape = (self.rows, self.options.max_length)
        encoder_ids, decoder_ids, label_ids = (
            np.full(shape, PAD_ID, np.int32) for _ in range(3)
        )
        encoder_segments = np.zeros(shape, np.int32)
        decoder_segments = np.zeros(shape, np.int32)
        placed = (rows, source_offsets)
        scatter_pairs(encoder_ids, *placed, *encoder, slots)
        scatter_pairs(encoder_segments, *placed, None, encoder[1], slots, segments)
        placed = (rows, target_offsets)
        scatter_pairs(decoder_ids, *placed, *decoder, slots)
        scatter_pairs(label_ids, *placed, *labels, slots)
        scatter_pairs(decoder_segments, *placed, None, decoder[1], slots, segments)
        inputs = {
            "encoder_token_ids": encoder_ids,
            "decoder_token_ids": decoder_ids,
            "encoder_segment_ids": encoder_segments,
            "decoder_segment_ids": decoder_segments,
        }
        return inputs, label_ids


def _row_index(starts, lengths):
    """Indices into a flat array of the rows ``[starts[i], starts[i] +
    lengths[i])``, one row after the other."""
    ends = np.cumsum(lengths)
    within = np.arange(ends[-1] if len(ends) else 0) - np.repeat(
        ends - lengths, lengths
    )
    return np.repeat(starts, lengths) + within
