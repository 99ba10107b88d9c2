"""The ``tf.data`` strategy ``"packed"`` of `make_dataset`: the pairs
packed in NumPy (`keras_transformer.data.packing`) under
``tf.data.Dataset.from_generator``."""

import numpy as np

from keras_transformer.data.packing import (
    packed_batches,
    packed_statistics,
    pass_orders,
    fill_batch,
)
from keras_transformer.utils.tensorflow_devices import tf


def packed_rows(encoder_ids, decoder_ids, labels, options):
    """``bucketing="packed"``: batches of ``tokens_per_batch // max_length``
    rows (a multiple of ``batch_multiple``) of ``max_length`` tokens, each
    row holding several pairs told apart by segment ids.

    The pair order of every pass comes from one generator seeded with
    ``seed`` (a fresh seed when None): the report describes the first pass
    exactly as the dataset yields it.
    """
    rows = options.tokens_per_batch // options.max_length
    rows = rows // options.batch_multiple * options.batch_multiple
    ids = [
        (x.flat_values.numpy().astype(np.int32), x.row_splits.numpy())
        for x in (encoder_ids, decoder_ids, labels)
    ]
    encoder_lengths = np.diff(ids[0][1])
    decoder_lengths = np.diff(ids[1][1])
    seed = options.seed
    if seed is None:
        # One seed for the report's pass and the dataset's first pass.
        seed = int(np.random.SeedSequence().entropy % (2**63))

    def batches(orders, num_passes):
        return packed_batches(
            encoder_lengths, decoder_lengths, rows, orders, num_passes, options
        )

    def orders():
        return pass_orders(len(encoder_lengths), options.shuffle, seed)

    batching = packed_statistics(
        batches(orders(), 1), encoder_lengths, decoder_lengths, rows, options
    )
    # Shared by every iteration of the dataset: each one packs the next pass.
    dataset_orders = orders()
    num_passes = 2**62 if options.repeat else 1
    dataset = _packed_dataset(
        lambda: batches(dataset_orders, num_passes), ids, rows, options
    )
    return dataset, batching


def _packed_dataset(packed_batches, ids, rows, options):
    """A ``tf.data`` dataset of the batches ``packed_batches()`` yields, each
    filled (`fill_batch`) and cut to this process's shard of rows."""
    max_length = options.max_length
    shard_rows = rows // options.num_shards
    start = options.shard_index * shard_rows

    def generate():
        for batch in packed_batches():
            arrays = fill_batch(batch, rows, max_length, *ids)
            encoder, decoder, label, encoder_segments, decoder_segments = (
                x[start : start + shard_rows] for x in arrays
            )
            inputs = {
                "encoder_token_ids": encoder,
                "decoder_token_ids": decoder,
                "encoder_segment_ids": encoder_segments,
                "decoder_segment_ids": decoder_segments,
            }
            yield inputs, label

    spec = tf.TensorSpec((shard_rows, max_length), tf.int32)
    names = ("encoder_token_ids", "decoder_token_ids", "encoder_segment_ids",
             "decoder_segment_ids")  # fmt: skip
    dataset = tf.data.Dataset.from_generator(
        generate, output_signature=({name: spec for name in names}, spec)
    )
    return dataset.prefetch(tf.data.AUTOTUNE)
