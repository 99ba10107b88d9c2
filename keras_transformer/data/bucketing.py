"""Length bucketing for `make_dataset`: the ``"separate"`` and ``"joint"`` strategies.

Each strategy takes the encoded pairs (``encoder_ids``, ``decoder_ids``,
``labels``: int32 ragged tensors, one row per pair, EOS/BOS added) and a
`DatasetOptions`, and returns ``(dataset, batching)``: the ``tf.data``
dataset of ``(inputs, labels)`` batches and the batching fields of the
`DatasetReport` (batches, padding and shapes of one pass).

- `separate_buckets`: each side padded to its own bucket length.
- `joint_buckets`: both sides padded to the bucket of the longer side.

(The third strategy, ``"packed"``, is `keras_transformer.data.packing.
packed_rows`.)

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
import tensorflow as tf

from keras_transformer.special_tokens import PAD_ID


def separate_buckets(encoder_ids, decoder_ids, labels, options):
    """``bucketing="separate"``: batch shapes ``(batch, S, T)``, each side
    padded to its own bucket where that saves enough padding."""
    return _bucketed_dataset(encoder_ids, decoder_ids, labels, options)


def joint_buckets(encoder_ids, decoder_ids, labels, options):
    """``bucketing="joint"``: batch shapes ``(batch, L, L)``, both sides padded
    to the bucket of the longer side."""
    return _bucketed_dataset(encoder_ids, decoder_ids, labels, options)


def _bucketed_dataset(encoder_ids, decoder_ids, labels, options):
    """``(dataset, batching)`` of padded buckets (``options.bucketing``
    says which scheme)."""
    encoder_lengths = encoder_ids.row_lengths().numpy()
    decoder_lengths = decoder_ids.row_lengths().numpy()
    counts = bucket_counts(encoder_lengths, decoder_lengths, options.bucket_lengths)
    shapes = bucket_shapes(counts, options)
    pair_keys = shapes.pair_shapes(encoder_lengths, decoder_lengths).astype(np.int64)
    real_source, real_target = int(encoder_lengths.sum()), int(decoder_lengths.sum())
    shape_counts = np.bincount(pair_keys, minlength=len(shapes.batch_sizes))
    stats = batch_statistics(shapes, shape_counts, real_source, real_target, options)
    dataset = _padded_dataset(
        encoder_ids, decoder_ids, labels, shapes, pair_keys, options
    )
    batching = dict(
        num_source_tokens=real_source,
        num_target_tokens=real_target,
        bucket_lengths=options.bucket_lengths,
        bucket_batch_sizes=options.bucket_batch_sizes(options.bucket_lengths),
        bucketing=options.bucketing,
        batch_multiple=options.batch_multiple,
        num_shards=options.num_shards,
        **stats,
    )
    return dataset, batching


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


def _padded_dataset(encoder_ids, decoder_ids, labels, shapes, pair_keys, options):
    """The ``tf.data`` pipeline of the bucketed strategies: shuffle, group
    each bucket's pairs into padded batches, pad rows to ``batch_multiple``,
    keep this process's shard, split into ``(inputs, labels)``.

    The tokenized tensors live in memory: each epoch only shuffles, pads and
    batches them, so no ``.cache()`` is needed.
    """
    dataset = tf.data.Dataset.from_tensor_slices(
        (encoder_ids, decoder_ids, labels, tf.constant(pair_keys, tf.int64))
    )
    # Rows of a ragged tensor come out typed as rank-1 RaggedTensors, which
    # padded_batch rejects; an identity map turns them into plain tensors.
    dataset = dataset.map(_identity, num_parallel_calls=tf.data.AUTOTUNE)
    if options.shuffle:
        dataset = dataset.shuffle(
            options.shuffle_buffer_size or int(encoder_ids.nrows()),
            seed=options.seed,
            reshuffle_each_iteration=True,
        )
    if options.repeat:
        dataset = dataset.repeat()
    dataset = dataset.group_by_window(
        key_func=_pair_key,
        reduce_func=_padded_batches(shapes, options.drop_remainder),
        window_size_func=lambda key: tf.gather(shapes.batch_sizes, key),
    )
    if options.batch_multiple > 1 and not options.drop_remainder:
        dataset = dataset.map(
            _pad_rows_to_multiple(options.batch_multiple),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
    if options.num_shards > 1:
        dataset = dataset.map(
            _shard_rows(options.num_shards, options.shard_index),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
    dataset = dataset.map(_to_model_inputs, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _identity(*tensors):
    return tensors


def _pair_key(encoder_ids, decoder_ids, labels, key):
    del encoder_ids, decoder_ids, labels
    return key


def _padded_batches(shapes, drop_remainder):
    """``group_by_window``'s reduce function: a bucket's window of pairs
    into batches padded to the bucket's ``(S, T)``."""
    source_lengths = tf.constant(shapes.source_lengths, tf.int64)
    target_lengths = tf.constant(shapes.target_lengths, tf.int64)
    batch_sizes = tf.constant(shapes.batch_sizes, tf.int64)
    pad = tf.constant(PAD_ID, tf.int32)

    def batch(key, window):
        source_length = tf.gather(source_lengths, key)
        target_length = tf.gather(target_lengths, key)
        return window.padded_batch(
            tf.gather(batch_sizes, key),
            padded_shapes=([source_length], [target_length], [target_length], []),
            padding_values=(pad, pad, pad, tf.constant(0, tf.int64)),
            drop_remainder=drop_remainder,
        )

    return batch


def _pad_rows_to_multiple(batch_multiple):
    def pad_rows(encoder_ids, decoder_ids, labels, key):
        # A last partial batch gets fully-masked (all PAD_ID) rows.
        extra = -tf.shape(encoder_ids)[0] % batch_multiple
        padding = [[0, extra], [0, 0]]
        encoder_ids, decoder_ids, labels = (
            tf.pad(x, padding, constant_values=PAD_ID)
            for x in (encoder_ids, decoder_ids, labels)
        )
        return encoder_ids, decoder_ids, labels, key

    return pad_rows


def _shard_rows(num_shards, shard_index):
    def shard(encoder_ids, decoder_ids, labels, key):
        rows = tf.shape(encoder_ids)[0] // num_shards
        start = shard_index * rows
        return (
            encoder_ids[start : start + rows],
            decoder_ids[start : start + rows],
            labels[start : start + rows],
            key,
        )

    return shard


def _to_model_inputs(encoder_ids, decoder_ids, labels, key):
    del key
    inputs = {"encoder_token_ids": encoder_ids, "decoder_token_ids": decoder_ids}
    return inputs, labels
