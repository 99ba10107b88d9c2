"""The ``tf.data`` strategies ``"separate"`` and ``"joint"`` of `make_dataset`.

Each strategy takes the encoded pairs (``encoder_ids``, ``decoder_ids``,
``labels``: int32 ragged tensors, one row per pair, EOS/BOS added) and a
`DatasetOptions`, and returns ``(dataset, batching)``: the ``tf.data``
dataset of ``(inputs, labels)`` batches and the batching fields of the
`DatasetReport` (batches, padding and shapes of one pass).

- `separate_buckets`: each side padded to its own bucket length.
- `joint_buckets`: both sides padded to the bucket of the longer side.

(The third strategy, ``"packed"``, is `keras_transformer.data.
packed_dataset.packed_rows`.) The shapes are decided in NumPy by
`keras_transformer.data.bucketing`.
"""

import numpy as np

from keras_transformer.data.bucketing import (
    batch_statistics,
    bucket_counts,
    bucket_shapes,
)
from keras_transformer.special_tokens import PAD_ID
from keras_transformer.utils.tensorflow_devices import tf


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
