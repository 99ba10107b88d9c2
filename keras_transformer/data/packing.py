"""Packing several sentence pairs into one row (`make_dataset(...,
bucketing="packed")`).

Every batch is ``rows`` rows of ``row_length`` tokens on each side. The pairs
of a pass arrive in (shuffled) order and go, first fit, to the first row of
the batch being filled whose source *and* target still have room; pair k of
a row carries segment id k on both sides (0 on the padding at the end), and
the model keeps attention inside a pair and restarts positions at each
pair's start (`keras_transformer.Transformer`, "Packed rows"). A pair that
fits in no row waits for the next batch; the batch is complete when as many
pairs wait as it has rows, or when it is full. tensor2tensor and flax's WMT
example pack the same way. One batch shape for the whole run: one
compilation under JAX, where bucketing needs one per shape.

Written here (NumPy, in a Python generator) because tf.data has no packing
of *pairs*: tf.data's ``bucket_by_sequence_length`` and ``padded_batch`` pad,
and keras-hub's packers (``StartEndPacker``, ``MultiSegmentPacker``) join the
segments of one example, not several examples. Packing a pass is a
NumPy loop over its pairs; tf.data's prefetch overlaps it with training.

`PairPacker` places the pairs, `fill_batch` writes each batch's arrays;
this module is NumPy only (it imports without TensorFlow). The ``"packed"``
strategy of `make_dataset`, in ``tf.data``, is
`keras_transformer.data.packed_dataset.packed_rows`.
"""

import dataclasses

import numpy as np

from keras_transformer.special_tokens import PAD_ID


@dataclasses.dataclass
class PackedBatch:
    """The placements of one batch: pair ``pairs[i]`` goes to row ``rows[i]``
    at ``source_offsets[i]`` / ``target_offsets[i]`` as segment
    ``segments[i]``."""

    pairs: list
    rows: list
    source_offsets: list
    target_offsets: list
    segments: list


class PairPacker:
    """First-fit packing of pairs into batches of ``rows`` x ``row_length``.

    Pairs that wait for room carry over from one call of `pack` to the next
    (a repeated dataset's passes, or a streamed pass's windows, join without
    partial batches); `flush` packs what is left.

    Args:
        row_length: int. Tokens per row on each side.
        rows: int. Rows per batch.

    Example:

    ```python
    packer = PairPacker(row_length=8, rows=2)
    batches = list(packer.pack([10, 11, 12], [5, 3, 4], [4, 4, 6]))
    batches += list(packer.flush())
    batches[0].rows  # [0, 0, 1]: pairs 10 and 11 share row 0
    ```
    """

    def __init__(self, row_length, rows):
        self.row_length = int(row_length)
        self.num_rows = int(rows)
        self.waiting = []  # (pair, source length, target length)
        self._new_batch()

    def _new_batch(self):
        self.source_free = np.full(self.num_rows, self.row_length, np.int64)
        self.target_free = np.full(self.num_rows, self.row_length, np.int64)
        self.segment_count = np.zeros(self.num_rows, np.int64)
        self.batch = PackedBatch([], [], [], [], [])

    def _place(self, pair, source, target):
        """Puts ``pair`` in the first row with room; False when none has."""
        fits = (self.source_free >= source) & (self.target_free >= target)
        row = int(fits.argmax())
        if not fits[row]:
            return False
        batch = self.batch
        batch.pairs.append(pair)
        batch.rows.append(row)
        batch.source_offsets.append(self.row_length - int(self.source_free[row]))
        batch.target_offsets.append(self.row_length - int(self.target_free[row]))
        self.segment_count[row] += 1
        batch.segments.append(int(self.segment_count[row]))
        self.source_free[row] -= source
        self.target_free[row] -= target
        return True

    def _emit(self):
        batch = self.batch
        self._new_batch()
        waiting, self.waiting = self.waiting, []
        for item in waiting:  # each fits an empty row: placed in order
            if not self._place(*item):
                self.waiting.append(item)
        return batch

    def _full(self):
        return not self.source_free.any() and not self.target_free.any()

    def pack(self, pairs, source_lengths, target_lengths):
        """Yields the `PackedBatch`es completed while packing ``pairs`` in
        order.

        Args:
            pairs: sequence of int. The pairs' identifiers (what the
                batches' ``pairs`` hold).
            source_lengths, target_lengths: int sequences aligned with
                ``pairs``, each at most ``row_length``.

        Raises:
            ValueError: a pair is longer than ``row_length``.
        """
        source_lengths = np.asarray(source_lengths, np.int64)
        target_lengths = np.asarray(target_lengths, np.int64)
        longest = max(source_lengths.max(initial=0), target_lengths.max(initial=0))
        if longest > self.row_length:
            raise ValueError(
                f"A pair of {longest} tokens does not fit a packed row of "
                f"row_length={self.row_length}."
            )
        # Python ints: the loop is per pair.
        items = zip(
            np.asarray(pairs).tolist(), source_lengths.tolist(), target_lengths.tolist()
        )
        for item in items:
            if not self._place(*item):
                self.waiting.append(item)
            if len(self.waiting) >= self.num_rows or self._full():
                yield self._emit()

    def pending(self):
        """The pairs not yet in a yielded batch: those of the batch being
        filled, then the waiting ones."""
        return self.batch.pairs + [pair for pair, _, _ in self.waiting]

    def flush(self):
        """Yields the last batches: the one being filled and the waiting
        pairs (the last one partly filled)."""
        while self.batch.pairs or self.waiting:
            yield self._emit()


def scatter_pairs(destination, rows, offsets, flat, splits, pairs, values=None):
    """Writes the ids of ``pairs`` into rows of ``destination``, in place.

    Pair ``pairs[i]`` (the ids ``flat[splits[p]:splits[p + 1]]``) goes to
    ``destination[rows[i], offsets[i]:]``; with ``values`` each of its
    positions gets ``values[i]`` instead of its ids (segment ids). One
    fancy-index assignment for all the pairs.

    Args:
        destination: 2-D array, written in place.
        rows, offsets, pairs: int arrays ``(n,)``.
        flat: 1-D array. The ids of every pair, concatenated.
        splits: int array. Row splits of ``flat``.
        values: int array ``(n,)`` or None.
    """
    pairs = np.asarray(pairs, np.int64)
    starts = splits[pairs]
    lengths = splits[pairs + 1] - starts
    # Position of each token within its pair.
    ends = np.cumsum(lengths)
    within = np.arange(ends[-1] if len(ends) else 0) - np.repeat(
        ends - lengths, lengths
    )
    target_rows = np.repeat(np.asarray(rows, np.int64), lengths)
    columns = np.repeat(np.asarray(offsets, np.int64), lengths) + within
    if values is None:
        destination[target_rows, columns] = flat[np.repeat(starts, lengths) + within]
    else:
        destination[target_rows, columns] = np.repeat(values, lengths)


def fill_batch(batch, rows, row_length, encoder_ids, decoder_ids, labels):
    """NumPy ``(encoder ids, decoder ids, labels, encoder segment ids,
    decoder segment ids)``, each ``(rows, row_length)`` int32, of a
    `PackedBatch`. ``encoder_ids`` & co. are ``(flat values, row splits)``
    of every pair's ids; ``labels`` has the row splits of ``decoder_ids``."""
    shape = (rows, row_length)
    encoder, decoder, label = (np.full(shape, PAD_ID, np.int32) for _ in range(3))
    encoder_segments = np.zeros(shape, np.int32)
    decoder_segments = np.zeros(shape, np.int32)
    (encoder_flat, encoder_splits), (decoder_flat, decoder_splits) = (
        encoder_ids,
        decoder_ids,
    )
    placed = (batch.rows, batch.source_offsets)
    scatter_pairs(encoder, *placed, encoder_flat, encoder_splits, batch.pairs)
    scatter_pairs(
        encoder_segments, *placed, None, encoder_splits, batch.pairs, batch.segments
    )
    placed = (batch.rows, batch.target_offsets)
    scatter_pairs(decoder, *placed, decoder_flat, decoder_splits, batch.pairs)
    scatter_pairs(label, *placed, labels[0], decoder_splits, batch.pairs)
    scatter_pairs(
        decoder_segments, *placed, None, decoder_splits, batch.pairs, batch.segments
    )
    return encoder, decoder, label, encoder_segments, decoder_segments


def pass_orders(num_examples, shuffle, seed):
    """Every pass's pair order, forever; each iteration of the dataset
    continues the sequence (a new shuffle per epoch, as
    ``reshuffle_each_iteration``), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    while True:
        yield rng.permutation(num_examples) if shuffle else np.arange(num_examples)


def packed_batches(
    encoder_lengths, decoder_lengths, rows, orders, num_passes, options
):
    """The `PackedBatch`es of ``num_passes`` passes (orders from ``orders``);
    without ``repeat``, the last partial batches too (unless
    ``drop_remainder``)."""
    packer = PairPacker(options.max_length, rows)
    for _ in range(num_passes):
        order = next(orders)
        yield from packer.pack(order, encoder_lengths[order], decoder_lengths[order])
    if not options.repeat:
        for batch in packer.flush():
            if options.drop_remainder and len(set(batch.rows)) < rows:
                continue
            yield batch


def packed_statistics(batches, encoder_lengths, decoder_lengths, rows, options):
    """The report's batching fields for one pass of packed ``batches`` (an
    iterable, consumed batch by batch: the pass is never held in memory)."""
    max_length = options.max_length
    num_batches = used_rows = kept = real_source = real_target = 0
    for batch in batches:
        num_batches += 1
        used_rows += len(set(batch.rows))
        kept += len(batch.pairs)
        real_source += int(encoder_lengths[batch.pairs].sum())
        real_target += int(decoder_lengths[batch.pairs].sum())
    padded = num_batches * rows * max_length
    return {
        "num_batches": max(1, num_batches),
        "num_source_tokens": int(encoder_lengths.sum()),
        "num_target_tokens": int(decoder_lengths.sum()),
        "padding_fraction": 1.0 - (real_source + real_target) / max(1, 2 * padded),
        "bucket_lengths": (max_length,),
        "bucket_batch_sizes": (rows,),
        "source_padding_fraction": 1.0 - real_source / max(1, padded),
        "target_padding_fraction": 1.0 - real_target / max(1, padded),
        "bucketing": "packed",
        "batch_shapes": ((rows, max_length, max_length),),
        "num_batch_shapes": 1,
        "batch_multiple": options.batch_multiple,
        "num_dropped": 0 if options.repeat else len(encoder_lengths) - kept,
        "num_padding_rows": num_batches * rows - used_rows,
        "num_shards": options.num_shards,
        "num_pairs_per_row": kept / max(1, used_rows),
    }
