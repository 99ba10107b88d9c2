"""tf.data input pipeline: token-budget batches of length-bucketed pairs.

As in the paper (section 5.1), "sentence pairs were batched together by
approximate sequence length"; each batch holds about ``tokens_per_batch``
source tokens and as many target tokens (the paper used about 25,000 each).

Each element is ``(inputs, labels)``::

    inputs = {
        "encoder_token_ids": int32 (batch, S),  # source ids + [EOS]
        "decoder_token_ids": int32 (batch, T),  # [BOS] + target ids
    }
    labels = int32 (batch, T)                   # target ids + [EOS]

padded with ``PAD_ID`` (0). ``S`` and ``T`` are bucket lengths, from a small
fixed set, so compiled train steps see few distinct shapes:

- ``bucketing="separate"`` (the default) pads each side to its own bucket:
  a pair of 7 source and 17 target tokens can go to ``S=8``, ``T=24``
  instead of ``S=T=24``.
- ``bucketing="joint"`` pads both sides to the bucket of the longer side
  (``S == T``), as before.

Either way the batch size of a batch is ``tokens_per_batch // max(S, T)``
(rounded down to a multiple of ``batch_multiple``), so each side holds at
most ``tokens_per_batch`` padded tokens and a pair gets the same batch size
under both schemes: separate bucketing pads less with the same number of
rows per batch and the same number of batches. Each distinct shape costs one
compilation of the train step under JAX, so ``"separate"`` gives a shape of
its own only to the ``(S, T)`` combinations that save enough padding
(``min_shape_saving``).

- ``bucketing="packed"`` puts several pairs into each row of ``max_length``
  tokens per side (`keras_transformer.data.packing`), with
  ``"encoder_segment_ids"`` and ``"decoder_segment_ids"`` in the inputs
  (pair k of a row is segment k on both sides, 0 is padding); the model
  keeps each pair to itself. Every batch then has one shape,
  ``(tokens_per_batch // max_length, max_length)``.
"""

import dataclasses
import math

import numpy as np
import tensorflow as tf

from keras_transformer.data.packing import PairPacker, fill_batch
from keras_transformer.data.text_files import read_parallel
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

BUCKETINGS = ("separate", "joint", "packed")

_TOKENIZE_CHUNK = 20_000


@dataclasses.dataclass(frozen=True)
class DatasetReport:
    """What `make_dataset` built.

    Counts are for one pass over the data. With ``num_shards > 1`` they
    describe the global batches (each shard gets ``1 / num_shards`` of every
    batch's rows).

    Args:
        num_pairs: int. Sentence pairs given.
        num_examples: int. Pairs in the dataset (after filtering).
        num_filtered: int. Pairs dropped because longer than ``max_length``
            (``length_handling="filter"``).
        num_truncated: int. Pairs cut to ``max_length``
            (``length_handling="truncate"``).
        num_batches: int. Batches in one pass over the data; use it as
            ``steps_per_epoch`` when ``repeat=True`` (then the average
            number of batches a pass fills, since batches straddle passes).
        num_source_tokens: int. Real encoder tokens (EOS included).
        num_target_tokens: int. Real label tokens (EOS included).
        padding_fraction: float. Share of padding in the padded batches
            (encoder and decoder together), fully-masked rows included.
        bucket_lengths: tuple of int. Padded lengths a side can have.
        bucket_batch_sizes: tuple of int. Batch size of a batch whose longer
            side is padded to the bucket length at the same position.
        num_skipped_empty: int. Pairs with an empty side skipped when reading
            files (`make_dataset_from_files`).
        source_padding_fraction: float. Share of padding in the encoder
            inputs.
        target_padding_fraction: float. Share of padding in the decoder
            inputs (and labels, which have the same shape).
        bucketing: str. ``"separate"``, ``"joint"`` or ``"packed"``.
        batch_shapes: tuple of ``(batch, S, T)``. The shape of the full
            batches of each bucket, from the most to the least used.
        num_batch_shapes: int. Distinct ``(batch, S, T)`` shapes in one pass,
            last partial batches included: each is one compilation of the
            train (or test) step under JAX or XLA.
        batch_multiple: int. Every batch size is a multiple of it.
        num_dropped: int. Pairs left out of one pass by ``drop_remainder``.
        num_padding_rows: int. Fully-masked rows added to last partial
            batches to reach a multiple of ``batch_multiple``.
        num_shards: int. Shards each batch is split into (one per process).
        num_pairs_per_row: float. ``"packed"``: pairs per (non-empty) row;
            1.0 otherwise.
    """

    num_pairs: int
    num_examples: int
    num_filtered: int
    num_truncated: int
    num_batches: int
    num_source_tokens: int
    num_target_tokens: int
    padding_fraction: float
    bucket_lengths: tuple
    bucket_batch_sizes: tuple
    num_skipped_empty: int = 0
    source_padding_fraction: float = 0.0
    target_padding_fraction: float = 0.0
    bucketing: str = "joint"
    batch_shapes: tuple = ()
    num_batch_shapes: int = 0
    batch_multiple: int = 1
    num_dropped: int = 0
    num_padding_rows: int = 0
    num_shards: int = 1
    num_pairs_per_row: float = 1.0

    def summary(self):
        """A one-paragraph human-readable description."""
        text = (
            f"{self.num_examples} of {self.num_pairs} pairs "
            f"({self.num_filtered} filtered, {self.num_truncated} truncated, "
            f"{self.num_skipped_empty} empty skipped); "
            f"{self.num_source_tokens} source + {self.num_target_tokens} "
            f"target tokens in {self.num_batches} batches per epoch; "
            f"padding {self.padding_fraction:.1%} (source "
            f"{self.source_padding_fraction:.1%}, target "
            f"{self.target_padding_fraction:.1%}); "
        )
        if self.bucketing == "packed":
            text += (
                f"packed rows of {self.bucket_lengths[0]} tokens, "
                f"{self.bucket_batch_sizes[0]} rows per batch, "
                f"{self.num_pairs_per_row:.2f} pairs per row, 1 batch shape"
            )
        else:
            text += (
                f"{self.bucketing} buckets {list(self.bucket_lengths)} with batch "
                f"sizes {list(self.bucket_batch_sizes)}, {self.num_batch_shapes} "
                "batch shapes"
            )
        if self.batch_multiple > 1:
            text += f", batch sizes multiples of {self.batch_multiple}"
        if self.num_shards > 1:
            text += f", each batch split over {self.num_shards} shards"
        if self.num_dropped:
            text += f"; {self.num_dropped} pairs dropped (drop_remainder)"
        if self.num_padding_rows:
            text += f"; {self.num_padding_rows} fully-masked padding rows"
        return text + "."


def default_bucket_lengths(max_length, step=8, growth=1.25):
    """Padded bucket lengths: every ``step`` tokens, then geometric.

    Lengths are multiples of ``step`` growing by at least ``step`` and by
    about ``growth`` times, ending at ``max_length``; padding waste stays
    under about ``growth - 1`` and the number of shapes stays small.

    Args:
        max_length: int. The last (largest) bucket length.
        step: int. Smallest bucket and rounding unit. Defaults to ``8``.
        growth: float. Ratio between neighbouring lengths. Defaults to
            ``1.25``.

    Returns:
        A tuple of increasing ints ending with ``max_length``.

    Example:

    >>> default_bucket_lengths(128)
    (8, 16, 24, 32, 40, 56, 72, 96, 128)
    """
    _check_positive_int("max_length", max_length)
    _check_positive_int("step", step)

    def next_length(length):
        return max(length + step, step * math.ceil(length * growth / step))

    lengths = []
    length = step
    while length < max_length:
        lengths.append(length)
        length = next_length(length)
    last = lengths[-1] if lengths else None
    if last and max_length - last < (next_length(last) - last) / 2:
        lengths.pop()  # A sliver of a bucket just below max_length.
    lengths.append(max_length)
    return tuple(lengths)


def make_dataset(
    src_sentences,
    tgt_sentences,
    tokenizer,
    tokens_per_batch=4096,
    max_length=128,
    shuffle=True,
    seed=None,
    repeat=False,
    length_handling="filter",
    bucket_boundaries=None,
    shuffle_buffer_size=None,
    drop_remainder=False,
    vocabulary_size=None,
    bucketing="separate",
    batch_multiple=1,
    num_shards=1,
    shard_index=0,
    min_shape_saving=0.005,
):
    """Tokenize sentence pairs once and batch them by token count.

    Args:
        src_sentences: list of str. Source sentences.
        tgt_sentences: list of str. Target sentences, aligned with the source.
        tokenizer: a `SubwordTokenizer` (anything whose ``tokenize`` maps a
            1-D string tensor to a ragged int32 tensor).
        tokens_per_batch: int. Padded tokens per batch on each side:
            ``batch * max(S, T) <= tokens_per_batch``. Defaults to 4096.
        max_length: int. Longest encoder or decoder input, EOS/BOS included.
            Defaults to 128.
        shuffle: bool. Shuffle pairs (each epoch anew). Defaults to True.
        seed: int. Shuffle seed. Defaults to None (not reproducible).
        repeat: bool. Repeat forever; pass ``steps_per_epoch=
            report.num_batches`` to ``fit``. Batches then straddle passes,
            so there are no partial batches. Defaults to False.
        length_handling: str. ``"filter"`` drops pairs longer than
            ``max_length``; ``"truncate"`` cuts them, keeping the final EOS.
            Defaults to ``"filter"``.
        bucket_boundaries: sequence of int. Increasing padded bucket lengths;
            a side goes to the smallest length >= its length (``"joint"``:
            >= the pair's longer side). ``max_length`` is appended when
            missing. Defaults to `default_bucket_lengths(max_length)`.
        shuffle_buffer_size: int. Defaults to the number of pairs (a full
            shuffle; the tokenized data is in memory anyway).
        drop_remainder: bool. Drop each bucket's last partial batch (counted
            in ``report.num_dropped``). Defaults to False: the last partial
            batches are kept (padded with fully-masked rows to a multiple of
            ``batch_multiple``).
        vocabulary_size: int. The model's vocabulary size; every id (the
            tokenizer's, BOS and EOS) must be below it, checked once here
            (a ValueError, before any training step). Defaults to the
            tokenizer's ``vocabulary_size`` when it has one.
        bucketing: str. ``"separate"`` pads the source and the target each
            to its own bucket length (batch shapes ``(batch, S, T)``);
            ``"joint"`` pads both to the bucket of the longer side
            (``S == T``). Both give a pair the same batch size (from its
            longer side); ``"separate"`` pads less. Each shape is one
            compilation of the train step under JAX, so under
            ``"separate"`` only the ``(S, T)`` combinations that pay for it
            get a shape of their own (see ``min_shape_saving``); the pairs
            of the others go to the cheapest shape that holds them, never
            more padded than under ``"joint"``. On Multi30k (bucket step 8)
            padding falls from 22.7% to 19.7% with 3 more shapes
            (``benchmarks/padding.py``). ``"packed"`` fills rows of
            ``max_length`` tokens with several pairs (first fit, in the
            shuffled order; see `keras_transformer.data.packing`) and adds
            the segment ids to the inputs; batches of
            ``tokens_per_batch // max_length`` rows (a multiple of
            ``batch_multiple``), one shape in all; a last partial batch is
            filled with empty rows. ``bucket_boundaries`` and
            ``min_shape_saving`` do not apply. Defaults to ``"separate"``.
        batch_multiple: int. Round every batch size down to a multiple of
            this (at least one multiple): the number of data-parallel
            devices, so that `keras.distribution.DataParallel` can shard
            every batch (`keras_transformer.distribution.
            batch_multiple_for`). A last partial batch is padded with
            fully-masked rows (all ``PAD_ID``, so no loss and no metric) to
            a multiple, unless ``drop_remainder``. Defaults to 1.
        num_shards: int. Split each (global) batch into this many equal
            shards of rows and yield only shard ``shard_index``: one per
            process in multi-host data parallelism, where each process feeds
            its part of the global batch. Every process must use the same
            data and ``seed``. Must divide ``batch_multiple``. Defaults to 1.
        shard_index: int. The shard this process yields, in
            ``[0, num_shards)``. Defaults to 0.
        min_shape_saving: float in [0, 1]. Under ``"separate"``, a
            ``(S, T)`` combination with ``S != T`` gets a batch shape of its
            own only when its pairs fill at least one batch per pass and
            padding them to ``(S, T)`` instead of the joint shape saves at
            least this fraction of the padded tokens of a pass. 0 gives
            every combination that fills a batch its own shape (least
            padding, most compilations). Defaults to 0.005 (0.5%: a new
            shape is worth it when the run lasts several epochs).

    Returns:
        ``(dataset, report)``: a ``tf.data.Dataset`` of ``(inputs, labels)``
        and a `DatasetReport`.

    Example:

    ```python
    dataset, report = make_dataset(src, tgt, tokenizer, tokens_per_batch=4096)
    print(report.summary())
    model.fit(dataset, epochs=10)
    ```
    """
    _check_positive_int("tokens_per_batch", tokens_per_batch)
    _check_positive_int("max_length", max_length)
    _check_positive_int("batch_multiple", batch_multiple)
    _check_positive_int("num_shards", num_shards)
    if max_length < 2:
        raise ValueError(
            "max_length must be at least 2 (one token plus BOS or EOS). "
            f"Received: max_length={max_length}"
        )
    if tokens_per_batch < max_length * batch_multiple:
        raise ValueError(
            "tokens_per_batch must be >= max_length * batch_multiple so that "
            f"a batch can hold {batch_multiple} sequence(s) of max_length "
            f"tokens. Received: tokens_per_batch={tokens_per_batch}, "
            f"max_length={max_length}, batch_multiple={batch_multiple}"
        )
    if length_handling not in ("filter", "truncate"):
        raise ValueError(
            "length_handling must be 'filter' or 'truncate'. "
            f"Received: length_handling={length_handling!r}"
        )
    if isinstance(min_shape_saving, bool) or not 0 <= min_shape_saving <= 1:
        raise ValueError(
            "min_shape_saving must be a fraction in [0, 1]. "
            f"Received: min_shape_saving={min_shape_saving!r}"
        )
    if bucketing not in BUCKETINGS:
        raise ValueError(
            f"bucketing must be one of {BUCKETINGS}. Received: bucketing={bucketing!r}"
        )
    if batch_multiple % num_shards:
        raise ValueError(
            "num_shards must divide batch_multiple, so that every batch splits "
            f"evenly. Received: num_shards={num_shards}, "
            f"batch_multiple={batch_multiple}"
        )
    if isinstance(shard_index, bool) or not 0 <= shard_index < num_shards:
        raise ValueError(
            f"shard_index must be in [0, num_shards={num_shards}). "
            f"Received: shard_index={shard_index!r}"
        )
    if num_shards > 1 and shuffle and seed is None:
        raise ValueError(
            "num_shards > 1 needs a seed: every shard must shuffle the same "
            "way to split the same global batches."
        )
    if shuffle_buffer_size is not None:
        _check_positive_int("shuffle_buffer_size", shuffle_buffer_size)
    bucket_lengths = _bucket_lengths(bucket_boundaries, max_length)
    src_sentences = list(src_sentences)
    tgt_sentences = list(tgt_sentences)
    if len(src_sentences) != len(tgt_sentences):
        raise ValueError(
            "Source and target must have as many sentences. Received: "
            f"{len(src_sentences)} source, {len(tgt_sentences)} target."
        )
    num_pairs = len(src_sentences)

    src_ids = _tokenize_all(tokenizer, src_sentences)  # (N, None)
    tgt_ids = _tokenize_all(tokenizer, tgt_sentences)  # (N, None)
    if vocabulary_size is None:
        vocabulary_size = getattr(tokenizer, "vocabulary_size", None)
    if vocabulary_size is not None:
        _check_positive_int("vocabulary_size", vocabulary_size)
        _check_ids_in_vocabulary(src_ids, tgt_ids, vocabulary_size)
    # Room for the EOS (source, labels) or BOS (decoder input) we add.
    limit = max_length - 1
    too_long = (src_ids.row_lengths() > limit) | (tgt_ids.row_lengths() > limit)
    num_too_long = int(tf.reduce_sum(tf.cast(too_long, tf.int32)))
    if length_handling == "filter":
        keep = tf.logical_not(too_long)
        src_ids = tf.ragged.boolean_mask(src_ids, keep)
        tgt_ids = tf.ragged.boolean_mask(tgt_ids, keep)
    else:
        src_ids = src_ids[:, :limit]
        tgt_ids = tgt_ids[:, :limit]
    num_examples = int(src_ids.nrows())
    if num_examples == 0:
        raise ValueError(
            f"No sentence pairs left: {num_pairs} given, {num_too_long} "
            f"longer than max_length={max_length}."
        )

    eos = tf.RaggedTensor.from_tensor(tf.fill([num_examples, 1], EOS_ID))
    bos = tf.RaggedTensor.from_tensor(tf.fill([num_examples, 1], BOS_ID))
    encoder_ids = tf.concat([src_ids, eos], axis=1)
    decoder_ids = tf.concat([bos, tgt_ids], axis=1)
    labels = tf.concat([tgt_ids, eos], axis=1)
    counts = dict(
        num_pairs=num_pairs,
        num_examples=num_examples,
        num_filtered=num_too_long if length_handling == "filter" else 0,
        num_truncated=num_too_long if length_handling == "truncate" else 0,
    )
    if bucketing == "packed":
        return _packed_dataset(
            encoder_ids, decoder_ids, labels, counts,
            tokens_per_batch=tokens_per_batch, max_length=max_length,
            shuffle=shuffle, seed=seed, repeat=repeat,
            drop_remainder=drop_remainder, batch_multiple=batch_multiple,
            num_shards=num_shards, shard_index=shard_index,
        )  # fmt: skip

    batch_sizes = tuple(
        tokens_per_batch // length // batch_multiple * batch_multiple
        for length in bucket_lengths
    )
    encoder_lengths = encoder_ids.row_lengths().numpy()
    decoder_lengths = decoder_ids.row_lengths().numpy()
    shapes = _bucket_shapes(
        encoder_lengths, decoder_lengths, bucket_lengths, batch_sizes, bucketing,
        min_shape_saving,
    )  # fmt: skip
    stats = _batch_statistics(
        shapes, encoder_lengths, decoder_lengths, repeat, drop_remainder, batch_multiple
    )

    # The tokenized tensors live in memory: each epoch only shuffles, pads
    # and batches them, so no .cache() is needed.
    dataset = tf.data.Dataset.from_tensor_slices(
        (encoder_ids, decoder_ids, labels, tf.constant(shapes.pair_keys, tf.int64))
    )
    # Rows of a ragged tensor come out typed as rank-1 RaggedTensors, which
    # padded_batch rejects; an identity map turns them into plain tensors.
    dataset = dataset.map(_identity, num_parallel_calls=tf.data.AUTOTUNE)
    if shuffle:
        dataset = dataset.shuffle(
            shuffle_buffer_size or num_examples,
            seed=seed,
            reshuffle_each_iteration=True,
        )
    if repeat:
        dataset = dataset.repeat()
    dataset = dataset.group_by_window(
        key_func=_pair_key,
        reduce_func=_padded_batches(shapes, drop_remainder),
        window_size_func=lambda key: tf.gather(shapes.batch_sizes, key),
    )
    if batch_multiple > 1 and not drop_remainder:
        dataset = dataset.map(
            _pad_rows_to_multiple(batch_multiple), num_parallel_calls=tf.data.AUTOTUNE
        )
    if num_shards > 1:
        dataset = dataset.map(
            _shard_rows(num_shards, shard_index), num_parallel_calls=tf.data.AUTOTUNE
        )
    dataset = dataset.map(_to_model_inputs, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.prefetch(tf.data.AUTOTUNE)

    report = DatasetReport(
        **counts,
        num_batches=stats["num_batches"],
        num_source_tokens=int(encoder_lengths.sum()),
        num_target_tokens=int(decoder_lengths.sum()),
        padding_fraction=stats["padding_fraction"],
        bucket_lengths=bucket_lengths,
        bucket_batch_sizes=batch_sizes,
        source_padding_fraction=stats["source_padding_fraction"],
        target_padding_fraction=stats["target_padding_fraction"],
        bucketing=bucketing,
        batch_shapes=stats["batch_shapes"],
        num_batch_shapes=stats["num_batch_shapes"],
        batch_multiple=batch_multiple,
        num_dropped=stats["num_dropped"],
        num_padding_rows=stats["num_padding_rows"],
        num_shards=num_shards,
    )
    return dataset, report


def _packed_dataset(
    encoder_ids, decoder_ids, labels, counts, *, tokens_per_batch, max_length,
    shuffle, seed, repeat, drop_remainder, batch_multiple, num_shards, shard_index,
):  # fmt: skip
    """`make_dataset` with ``bucketing="packed"``: ``(dataset, report)``."""
    rows = tokens_per_batch // max_length // batch_multiple * batch_multiple
    shard_rows = rows // num_shards
    ids = [
        (x.flat_values.numpy().astype(np.int32), x.row_splits.numpy())
        for x in (encoder_ids, decoder_ids, labels)
    ]
    encoder_lengths = np.diff(ids[0][1])
    decoder_lengths = np.diff(ids[1][1])
    num_examples = len(encoder_lengths)
    if seed is None:
        # One seed for the report's pass and the dataset's first pass.
        seed = int(np.random.SeedSequence().entropy % (2**63))

    def passes():
        """Every pass's pair order, forever; each iteration of the dataset
        continues the sequence (a new shuffle per epoch, as
        ``reshuffle_each_iteration``), reproducible from ``seed``."""
        rng = np.random.default_rng(seed)
        while True:
            yield rng.permutation(num_examples) if shuffle else np.arange(num_examples)

    def packed_batches(orders, num_passes):
        packer = PairPacker(encoder_lengths, decoder_lengths, max_length, rows)
        for _ in range(num_passes):
            yield from packer.batches(next(orders))
        if not repeat:
            for batch in packer.flush():
                if drop_remainder and len(set(batch.rows)) < rows:
                    continue
                yield batch

    # The report: the first pass exactly as the dataset yields it.
    report_orders = passes()
    batches = list(packed_batches(report_orders, 1))
    used_rows = sum(len(set(batch.rows)) for batch in batches)
    kept = sum(len(batch.pairs) for batch in batches)
    real_source = int(sum(encoder_lengths[batch.pairs].sum() for batch in batches))
    real_target = int(sum(decoder_lengths[batch.pairs].sum() for batch in batches))
    padded = len(batches) * rows * max_length
    report = DatasetReport(
        **counts,
        num_batches=max(1, len(batches)),
        num_source_tokens=int(encoder_lengths.sum()),
        num_target_tokens=int(decoder_lengths.sum()),
        padding_fraction=1.0 - (real_source + real_target) / max(1, 2 * padded),
        bucket_lengths=(max_length,),
        bucket_batch_sizes=(rows,),
        source_padding_fraction=1.0 - real_source / max(1, padded),
        target_padding_fraction=1.0 - real_target / max(1, padded),
        bucketing="packed",
        batch_shapes=((rows, max_length, max_length),),
        num_batch_shapes=1,
        batch_multiple=batch_multiple,
        num_dropped=0 if repeat else num_examples - kept,
        num_padding_rows=len(batches) * rows - used_rows,
        num_shards=num_shards,
        num_pairs_per_row=kept / max(1, used_rows),
    )
    start = shard_index * shard_rows
    # Shared by every iteration of the dataset: each one packs the next pass.
    orders = passes()

    def generate():
        for batch in packed_batches(orders, 1 if not repeat else 2**62):
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
    dataset = tf.data.Dataset.from_generator(
        generate,
        output_signature=(
            {
                "encoder_token_ids": spec,
                "decoder_token_ids": spec,
                "encoder_segment_ids": spec,
                "decoder_segment_ids": spec,
            },
            spec,
        ),
    )
    return dataset.prefetch(tf.data.AUTOTUNE), report


def make_dataset_from_files(src_path, tgt_path, tokenizer, **kwargs):
    """`make_dataset` on a pair of parallel text files (plain or gzip).

    Args:
        src_path: str. Source file, one sentence per line.
        tgt_path: str. Target file, aligned with the source.
        tokenizer: a `SubwordTokenizer`.
        **kwargs: passed to `make_dataset` (``tokens_per_batch``,
            ``bucketing``, ``batch_multiple``, ...).

    Returns:
        ``(dataset, report)``; ``report.num_skipped_empty`` counts pairs with
        an empty side.

    Example:

    ```python
    dataset, report = make_dataset_from_files(
        "multi30k/train.en.gz", "multi30k/train.de.gz", tokenizer)
    ```
    """
    src, tgt, stats = read_parallel(src_path, tgt_path)
    dataset, report = make_dataset(src, tgt, tokenizer, **kwargs)
    report = dataclasses.replace(report, num_skipped_empty=stats.num_skipped_empty)
    return dataset, report


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name} must be a positive int. Received: {name}={value!r}")


def _bucket_lengths(bucket_boundaries, max_length):
    if bucket_boundaries is None:
        return default_bucket_lengths(max_length)
    lengths = list(bucket_boundaries)
    for length in lengths:
        _check_positive_int("each bucket boundary", length)
    if any(b <= a for a, b in zip(lengths, lengths[1:])):
        raise ValueError(
            f"bucket_boundaries must be increasing. Received: {lengths}"
        )
    if lengths and lengths[-1] > max_length:
        raise ValueError(
            "bucket_boundaries must not exceed max_length. Received: "
            f"bucket_boundaries={lengths}, max_length={max_length}"
        )
    if not lengths or lengths[-1] < max_length:
        lengths.append(max_length)
    return tuple(int(length) for length in lengths)


def _check_ids_in_vocabulary(src_ids, tgt_ids, vocabulary_size):
    # The ids live in memory, so one check here covers every epoch (no
    # per-batch cost); the model checks its inputs again in the graph.
    for name, ids in (("source", src_ids), ("target", tgt_ids)):
        values = ids.flat_values
        if tf.size(values) == 0:
            continue
        low = int(tf.reduce_min(values))
        high = int(tf.reduce_max(values))
        if low < 0 or high >= vocabulary_size:
            bad = low if low < 0 else high
            raise ValueError(
                f"The tokenizer gives {name} id {bad} outside [0, "
                f"{vocabulary_size}) (vocabulary_size={vocabulary_size}): "
                "the tokenizer and the model's vocabulary do not match."
            )
    for name, special in (("BOS_ID", BOS_ID), ("EOS_ID", EOS_ID)):
        if not 0 <= special < vocabulary_size:
            raise ValueError(
                f"{name}={special} is outside [0, {vocabulary_size}) "
                f"(vocabulary_size={vocabulary_size})."
            )


def _tokenize_all(tokenizer, sentences):
    # Tokenized eagerly in chunks, once: the lengths are needed up front for
    # filtering and the report, and epochs then reuse the ids.
    chunks = [
        tokenizer.tokenize(tf.constant(sentences[i : i + _TOKENIZE_CHUNK], tf.string))
        for i in range(0, len(sentences), _TOKENIZE_CHUNK)
    ]
    if not chunks:
        return tf.ragged.constant([], dtype=tf.int32, ragged_rank=1)
    ids = chunks[0] if len(chunks) == 1 else tf.concat(chunks, axis=0)
    return tf.cast(ids, tf.int32)


@dataclasses.dataclass(frozen=True)
class _Shapes:
    """The padded shape of each bucket, and each pair's bucket.

    ``source_lengths[k]``, ``target_lengths[k]`` and ``batch_sizes[k]`` give
    bucket ``k``'s full batch shape ``(batch, S, T)``; ``pair_keys[n]`` is the
    bucket of pair ``n``.
    """

    source_lengths: np.ndarray  # (buckets,)
    target_lengths: np.ndarray  # (buckets,)
    batch_sizes: np.ndarray  # (buckets,)
    pair_keys: np.ndarray  # (pairs,)


def _bucket_shapes(
    encoder_lengths, decoder_lengths, bucket_lengths, batch_sizes, bucketing,
    min_shape_saving,
):  # fmt: skip
    """Assigns each pair a padded ``(S, T)`` shape; see `make_dataset`.

    Computed up front in NumPy (all lengths are known), so the report's
    statistics are exact and tf.data only looks the bucket up.
    """
    lengths = np.asarray(bucket_lengths)
    sizes = np.asarray(batch_sizes)
    num = len(lengths)
    # The smallest bucket length >= each side's length.
    source = np.searchsorted(lengths, encoder_lengths, side="left")
    target = np.searchsorted(lengths, decoder_lengths, side="left")
    longer = np.maximum(source, target)
    if bucketing == "joint":
        source = target = longer
    else:
        counts = np.zeros((num, num), np.int64)  # (source bucket, target bucket)
        np.add.at(counts, (source, target), 1)
        longer_bucket = np.maximum.outer(np.arange(num), np.arange(num))
        # Padded tokens each combination saves over its joint shape (m, m).
        saved = counts * (
            2 * lengths[longer_bucket] - lengths[:, None] - lengths[None, :]
        )
        joint_padded = 2 * lengths[longer].sum()
        # A shape is worth a compilation when its pairs fill a batch a pass
        # and save enough; the joint shapes are there anyway.
        kept = (counts >= sizes[longer_bucket]) & (
            saved >= min_shape_saving * joint_padded
        )
        kept |= np.eye(num, dtype=bool) & (counts > 0)
        # Pairs of the other shapes move to the cheapest kept shape that holds
        # them, or to the joint shape (m, m), whichever pads less.
        moved = {}
        for i, j in zip(*np.nonzero((counts > 0) & ~kept)):
            m = max(i, j)
            best, best_cost = (m, m), (2 * lengths[m], lengths[m], not kept[m, m])
            for a, b in zip(*np.nonzero(kept[i:, j:])):
                a, b = a + i, b + j
                cost = (lengths[a] + lengths[b], max(lengths[a], lengths[b]), False)
                if cost < best_cost:
                    best, best_cost = (a, b), cost
            moved[(i, j)] = best
        for (i, j), (a, b) in moved.items():
            at = (source == i) & (target == j)
            source = np.where(at, a, source)
            target = np.where(at, b, target)
    keys, pair_keys = np.unique(source * num + target, return_inverse=True)
    source_bucket, target_bucket = keys // num, keys % num
    return _Shapes(
        source_lengths=lengths[source_bucket].astype(np.int64),
        target_lengths=lengths[target_bucket].astype(np.int64),
        batch_sizes=sizes[np.maximum(source_bucket, target_bucket)].astype(np.int64),
        pair_keys=pair_keys.reshape(-1).astype(np.int64),
    )


def _batch_statistics(
    shapes, encoder_lengths, decoder_lengths, repeat, drop_remainder, batch_multiple
):
    """Batches, padding and shapes of one pass, as `make_dataset` yields them.

    Each pair is counted in its padded shape (pairs that ``drop_remainder``
    leaves out too: which ones changes with the shuffle), plus the fully
    masked rows added to last partial batches. With ``repeat`` batches
    straddle passes: no partial batches, and the average number of batches
    per pass.
    """
    counts = np.bincount(shapes.pair_keys, minlength=len(shapes.batch_sizes))
    num_batches = 0
    num_dropped = num_padding_rows = 0
    padded_source = padded_target = 0
    batch_shapes = []  # (pairs, shape) of full batches
    shapes_seen = set()
    for count, source_length, target_length, batch_size in zip(
        counts, shapes.source_lengths, shapes.target_lengths, shapes.batch_sizes
    ):
        count, batch_size = int(count), int(batch_size)
        shape = (batch_size, int(source_length), int(target_length))
        full, partial = divmod(count, batch_size)
        rows = count
        if repeat:
            num_batches += count / batch_size
            shapes_seen.add(shape)
        else:
            num_batches += full
            if full:
                shapes_seen.add(shape)
            if partial and drop_remainder:
                num_dropped += partial
            elif partial:
                partial_rows = -(-partial // batch_multiple) * batch_multiple
                num_padding_rows += partial_rows - partial
                rows += partial_rows - partial
                num_batches += 1
                shapes_seen.add((partial_rows,) + shape[1:])
        batch_shapes.append((count, shape))
        padded_source += rows * int(source_length)
        padded_target += rows * int(target_length)
    if repeat:
        num_batches = max(1, math.ceil(num_batches - 1e-9))
    real_source = float(encoder_lengths.sum())
    real_target = float(decoder_lengths.sum())
    return {
        "num_batches": int(num_batches),
        "padding_fraction": 1.0 - (real_source + real_target) / (padded_source + padded_target),
        "source_padding_fraction": 1.0 - real_source / padded_source,
        "target_padding_fraction": 1.0 - real_target / padded_target,
        "batch_shapes": tuple(shape for _, shape in sorted(batch_shapes, key=lambda x: -x[0])),
        "num_batch_shapes": len(shapes_seen),
        "num_dropped": num_dropped,
        "num_padding_rows": num_padding_rows,
    }


def _identity(*tensors):
    return tensors


def _pair_key(encoder_ids, decoder_ids, labels, key):
    del encoder_ids, decoder_ids, labels
    return key


def _padded_batches(shapes, drop_remainder):
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
