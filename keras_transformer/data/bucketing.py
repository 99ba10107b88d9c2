"""Length bucketing: the batch shapes of the ``"separate"`` and ``"joint"`` strategies.

- ``"separate"``: each side padded to its own bucket length.
- ``"joint"``: both sides padded to the bucket of the longer side.

This module is NumPy only (it imports without TensorFlow); the ``tf.data``
pipeline of `make_dataset` that uses it is
`keras_transformer.data.bucketed_dataset`.

Every pair's shape is decided up front in NumPy (all lengths are known once
the data is tokenized), so the report's statistics are exact and ``tf.data``
only looks each pair's bucket up. The decision (`bucket_shapes`) depends only
on the number of pairs of each (source bucket, target bucket) combination
(`bucket_counts`): the streamed pipeline (`keras_transformer.data.stream`)
takes it from a prepared corpus's length histogram and gets the same shapes
for the same pairs; `batch_statistics` computes the report's batch fields
from the pairs per shape.
"""

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class BucketShapes:
    """The padded batch shapes of a data set, and the shape of each pair.

    Decided once from the number of pairs of each (source bucket, target
    bucket) combination (`bucket_shapes`), so that a pair's shape depends
    only on its lengths: the in-memory pipeline and the streamed one
    (`keras_transformer.data.stream`) give the same pair the same shape.

    Shape ``k`` is ``(batch_sizes[k], source_lengths[k], target_lengths[k])``
    for its full batches; shapes are numbered by increasing
    ``(source bucket, target bucket)``.

    Args:
        bucket_lengths: int array ``(buckets,)``. The padded lengths a side
            can have.
        source_lengths: int array ``(shapes,)``. Each shape's ``S``.
        target_lengths: int array ``(shapes,)``. Each shape's ``T``.
        batch_sizes: int array ``(shapes,)``. Each shape's batch size (from
            its longer side).
        shape_of: int array ``(buckets, buckets)``. The shape of the pairs
            of each (source bucket, target bucket) combination; -1 for the
            combinations without pairs.
    """

    bucket_lengths: np.ndarray
    source_lengths: np.ndarray
    target_lengths: np.ndarray
    batch_sizes: np.ndarray
    shape_of: np.ndarray

    def buckets(self, lengths):
        """The bucket (index into ``bucket_lengths``) of each length: the
        smallest bucket length >= it."""
        return np.searchsorted(self.bucket_lengths, lengths, side="left")

    def pair_shapes(self, encoder_lengths, decoder_lengths):
        """The shape index of each pair (EOS/BOS included in the lengths)."""
        return self.shape_of[
            self.buckets(encoder_lengths), self.buckets(decoder_lengths)
        ]


def bucket_counts(encoder_lengths, decoder_lengths, bucket_lengths, weights=None):
    """Int64 ``(buckets, buckets)``: pairs per (source bucket, target bucket).

    Args:
        encoder_lengths, decoder_lengths: int arrays ``(n,)``, EOS/BOS
            included, at most ``bucket_lengths[-1]``.
        bucket_lengths: increasing ints.
        weights: int array ``(n,)`` or None. Pairs each entry stands for
            (the counts of a length histogram). Defaults to one each.
    """
    lengths = np.asarray(bucket_lengths)
    source = np.searchsorted(lengths, encoder_lengths, side="left")
    target = np.searchsorted(lengths, decoder_lengths, side="left")
    counts = np.zeros((len(lengths), len(lengths)), np.int64)
    weights = np.ones(len(source), np.int64) if weights is None else weights
    np.add.at(counts, (source, target), np.asarray(weights, np.int64))
    return counts


def bucket_shapes(counts, options):
    """The `BucketShapes` of ``options.bucketing`` (``"separate"`` or
    ``"joint"``) for the pair counts ``counts`` (`bucket_counts`).

    ``"joint"`` pads both sides to the bucket of the longer one.
    ``"separate"`` keeps each side's own bucket when the ``(S, T)``
    combination is worth a shape of its own (`_kept_combinations`); the
    pairs of the other combinations move to the cheapest kept shape that
    holds them. A batch takes the batch size of its longer side.
    """
    bucket_lengths = options.bucket_lengths
    lengths = np.asarray(bucket_lengths)
    sizes = np.asarray(options.bucket_batch_sizes(bucket_lengths))
    num = len(lengths)
    counts = np.asarray(counts, np.int64)
    longer = np.maximum.outer(np.arange(num), np.arange(num))
    # (source bucket, target bucket) each combination goes to.
    source, target = longer.copy(), longer.copy()
    if options.bucketing == "separate":
        source, target = np.indices((num, num))
        joint_padded = 2 * int((counts * lengths[longer]).sum())
        kept = _kept_combinations(
            counts, lengths, sizes, joint_padded, options.min_shape_saving
        )
        for i, j in zip(*np.nonzero((counts > 0) & ~kept)):
            source[i, j], target[i, j] = _cheapest_kept_shape(i, j, kept, lengths)
    used = counts > 0
    keys, inverse = np.unique(source[used] * num + target[used], return_inverse=True)
    shape_of = np.full((num, num), -1, np.int64)
    shape_of[used] = inverse.reshape(-1)
    source_bucket, target_bucket = keys // num, keys % num
    return BucketShapes(
        bucket_lengths=lengths.astype(np.int64),
        source_lengths=lengths[source_bucket].astype(np.int64),
        target_lengths=lengths[target_bucket].astype(np.int64),
        batch_sizes=sizes[np.maximum(source_bucket, target_bucket)].astype(np.int64),
        shape_of=shape_of,
    )


def _kept_combinations(counts, lengths, sizes, joint_padded, min_shape_saving):
    """Boolean ``(buckets, buckets)``: the ``(S, T)`` combinations that get a
    batch shape of their own.

    A shape is worth a compilation when its pairs fill a batch a pass and
    save at least ``min_shape_saving`` of a pass's padded tokens over the
    joint shapes; the joint shapes ``(m, m)`` in use are there anyway.
    """
    num = len(lengths)
    longer_bucket = np.maximum.outer(np.arange(num), np.arange(num))
    # Padded tokens each combination saves over its joint shape (m, m).
    saved = counts * (2 * lengths[longer_bucket] - lengths[:, None] - lengths[None, :])
    kept = (counts >= sizes[longer_bucket]) & (saved >= min_shape_saving * joint_padded)
    kept |= np.eye(num, dtype=bool) & (counts > 0)
    return kept


def _cheapest_kept_shape(i, j, kept, lengths):
    """The kept ``(a, b)`` with ``a >= i``, ``b >= j`` that pads the least,
    or the joint ``(m, m)`` when nothing kept pads less."""
    m = max(i, j)
    best, best_cost = (m, m), (2 * lengths[m], lengths[m], not kept[m, m])
    for a, b in zip(*np.nonzero(kept[i:, j:])):
        a, b = a + i, b + j
        cost = (lengths[a] + lengths[b], max(lengths[a], lengths[b]), False)
        if cost < best_cost:
            best, best_cost = (a, b), cost
    return best


def batch_statistics(shapes, shape_counts, real_source, real_target, options):
    """Batches, padding and shapes of one pass, as the dataset yields them.

    Each pair is counted in its padded shape (pairs that ``drop_remainder``
    leaves out too: which ones changes with the shuffle), plus the fully
    masked rows added to last partial batches. With ``repeat`` batches
    straddle passes: no partial batches, and the average number of batches
    per pass.

    Args:
        shapes: `BucketShapes`.
        shape_counts: int array ``(shapes,)``. Pairs of each shape in a pass.
        real_source, real_target: int. Real encoder and decoder tokens of a
            pass (EOS/BOS included).
        options: `DatasetOptions`.

    Returns:
        The report's fields ``num_batches``, ``padding_fraction``,
        ``source_padding_fraction``, ``target_padding_fraction``,
        ``batch_shapes``, ``num_batch_shapes``, ``num_dropped`` and
        ``num_padding_rows``.
    """
    num_batches = num_dropped = num_padding_rows = 0
    padded_source = padded_target = 0
    batch_shapes = []  # (pairs, shape) of full batches
    shapes_seen = set()
    for count, source_length, target_length, batch_size in zip(
        shape_counts, shapes.source_lengths, shapes.target_lengths, shapes.batch_sizes
    ):
        count, batch_size = int(count), int(batch_size)
        shape = (batch_size, int(source_length), int(target_length))
        full, partial = divmod(count, batch_size)
        rows = count
        if options.repeat:
            num_batches += count / batch_size
            shapes_seen.add(shape)
        else:
            num_batches += full
            if full:
                shapes_seen.add(shape)
            if partial and options.drop_remainder:
                num_dropped += partial
            elif partial:
                partial_rows = (
                    -(-partial // options.batch_multiple) * options.batch_multiple
                )
                num_padding_rows += partial_rows - partial
                rows += partial_rows - partial
                num_batches += 1
                shapes_seen.add((partial_rows,) + shape[1:])
        batch_shapes.append((count, shape))
        padded_source += rows * int(source_length)
        padded_target += rows * int(target_length)
    if options.repeat:
        num_batches = max(1, math.ceil(num_batches - 1e-9))
    real_source, real_target = float(real_source), float(real_target)
    return {
        "num_batches": int(num_batches),
        "padding_fraction": 1.0
        - (real_source + real_target) / (padded_source + padded_target),
        "source_padding_fraction": 1.0 - real_source / padded_source,
        "target_padding_fraction": 1.0 - real_target / padded_target,
        "batch_shapes": tuple(
            shape for _, shape in sorted(batch_shapes, key=lambda x: -x[0])
        ),
        "num_batch_shapes": len(shapes_seen),
        "num_dropped": num_dropped,
        "num_padding_rows": num_padding_rows,
    }
