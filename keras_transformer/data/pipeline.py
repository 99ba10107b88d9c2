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

padded with ``PAD_ID`` (0). ``S == T`` is the bucket length, one of a small
fixed set, so compiled train steps see few distinct shapes.
"""

import dataclasses
import math

import numpy as np
import tensorflow as tf

from keras_transformer.data.text_files import read_parallel
from keras_transformer.special_tokens import BOS_ID
from keras_transformer.special_tokens import EOS_ID
from keras_transformer.special_tokens import PAD_ID

_TOKENIZE_CHUNK = 20_000


@dataclasses.dataclass(frozen=True)
class DatasetReport:
    """What `make_dataset` built.

    Args:
        num_pairs: int. Sentence pairs given.
        num_examples: int. Pairs in the dataset (after filtering).
        num_filtered: int. Pairs dropped because longer than ``max_length``
            (``length_handling="filter"``).
        num_truncated: int. Pairs cut to ``max_length``
            (``length_handling="truncate"``).
        num_batches: int. Batches in one pass over the data; use it as
            ``steps_per_epoch`` when ``repeat=True``.
        num_source_tokens: int. Real encoder tokens (EOS included).
        num_target_tokens: int. Real label tokens (EOS included).
        padding_fraction: float. Share of padding in the padded batches
            (encoder and decoder together).
        bucket_lengths: tuple of int. Padded length of each bucket.
        bucket_batch_sizes: tuple of int. Batch size of each bucket.
        num_skipped_empty: int. Pairs with an empty side skipped when reading
            files (`make_dataset_from_files`).
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

    def summary(self):
        """A one-paragraph human-readable description."""
        return (
            f"{self.num_examples} of {self.num_pairs} pairs "
            f"({self.num_filtered} filtered, {self.num_truncated} truncated, "
            f"{self.num_skipped_empty} empty skipped); "
            f"{self.num_source_tokens} source + {self.num_target_tokens} "
            f"target tokens in {self.num_batches} batches per epoch; "
            f"padding {self.padding_fraction:.1%}; "
            f"buckets {list(self.bucket_lengths)} with batch sizes "
            f"{list(self.bucket_batch_sizes)}."
        )


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
):
    """Tokenize sentence pairs once and batch them by token count.

    Args:
        src_sentences: list of str. Source sentences.
        tgt_sentences: list of str. Target sentences, aligned with the source.
        tokenizer: a `SubwordTokenizer` (anything whose ``tokenize`` maps a
            1-D string tensor to a ragged int32 tensor).
        tokens_per_batch: int. Padded tokens per batch on each side:
            ``batch * bucket_length <= tokens_per_batch``. Defaults to 4096.
        max_length: int. Longest encoder or decoder input, EOS/BOS included.
            Defaults to 128.
        shuffle: bool. Shuffle pairs (each epoch anew). Defaults to True.
        seed: int. Shuffle seed. Defaults to None (not reproducible).
        repeat: bool. Repeat forever; pass ``steps_per_epoch=
            report.num_batches`` to ``fit``. Defaults to False.
        length_handling: str. ``"filter"`` drops pairs longer than
            ``max_length``; ``"truncate"`` cuts them, keeping the final EOS.
            Defaults to ``"filter"``.
        bucket_boundaries: sequence of int. Increasing padded bucket lengths;
            a pair goes to the smallest length >= its longer side.
            ``max_length`` is appended when missing. Defaults to
            `default_bucket_lengths(max_length)`.
        shuffle_buffer_size: int. Defaults to the number of pairs (a full
            shuffle; the tokenized data is in memory anyway).
        drop_remainder: bool. Drop each bucket's last partial batch.
            Defaults to False.
        vocabulary_size: int. The model's vocabulary size; every id (the
            tokenizer's, BOS and EOS) must be below it, checked once here
            (a ValueError, before any training step). Defaults to the
            tokenizer's ``vocabulary_size`` when it has one.

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
    if max_length < 2:
        raise ValueError(
            "max_length must be at least 2 (one token plus BOS or EOS). "
            f"Received: max_length={max_length}"
        )
    if tokens_per_batch < max_length:
        raise ValueError(
            "tokens_per_batch must be >= max_length so that a batch can hold "
            f"one sequence of max_length tokens. Received: tokens_per_batch="
            f"{tokens_per_batch}, max_length={max_length}"
        )
    if length_handling not in ("filter", "truncate"):
        raise ValueError(
            "length_handling must be 'filter' or 'truncate'. "
            f"Received: length_handling={length_handling!r}"
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

    batch_sizes = tuple(tokens_per_batch // length for length in bucket_lengths)
    encoder_lengths = encoder_ids.row_lengths().numpy()
    decoder_lengths = decoder_ids.row_lengths().numpy()
    num_batches, padding_fraction = _batch_statistics(
        np.maximum(encoder_lengths, decoder_lengths),
        encoder_lengths.sum() + decoder_lengths.sum(),
        bucket_lengths,
        batch_sizes,
        drop_remainder,
    )

    # The tokenized tensors live in memory: each epoch only shuffles, pads
    # and batches them, so no .cache() is needed.
    dataset = tf.data.Dataset.from_tensor_slices(
        (encoder_ids, decoder_ids, labels)
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
    pad = tf.constant(PAD_ID, tf.int32)
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=_pair_length,
        # tf.data boundaries are exclusive upper bounds; bucket i holds
        # lengths in (bucket_lengths[i-1], bucket_lengths[i]].
        bucket_boundaries=[length + 1 for length in bucket_lengths],
        # The extra last bucket (longer than max_length) is always empty.
        bucket_batch_sizes=list(batch_sizes) + [1],
        padding_values=(pad, pad, pad),
        pad_to_bucket_boundary=True,
        drop_remainder=drop_remainder,
    )
    dataset = dataset.map(_to_model_inputs, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.prefetch(tf.data.AUTOTUNE)

    report = DatasetReport(
        num_pairs=num_pairs,
        num_examples=num_examples,
        num_filtered=num_too_long if length_handling == "filter" else 0,
        num_truncated=num_too_long if length_handling == "truncate" else 0,
        num_batches=num_batches,
        num_source_tokens=int(encoder_lengths.sum()),
        num_target_tokens=int(decoder_lengths.sum()),
        padding_fraction=padding_fraction,
        bucket_lengths=bucket_lengths,
        bucket_batch_sizes=batch_sizes,
    )
    return dataset, report


def make_dataset_from_files(src_path, tgt_path, tokenizer, **kwargs):
    """`make_dataset` on a pair of parallel text files (plain or gzip).

    Args:
        src_path: str. Source file, one sentence per line.
        tgt_path: str. Target file, aligned with the source.
        tokenizer: a `SubwordTokenizer`.
        **kwargs: passed to `make_dataset`.

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


def _batch_statistics(
    pair_lengths, num_real_tokens, bucket_lengths, batch_sizes, drop_remainder
):
    # Mirrors the bucketing rule: the smallest bucket length >= pair length.
    bucket_ids = np.searchsorted(bucket_lengths, pair_lengths, side="left")
    counts = np.bincount(bucket_ids, minlength=len(bucket_lengths))
    num_batches = 0
    num_padded_tokens = 0
    for count, length, batch_size in zip(counts, bucket_lengths, batch_sizes):
        full, partial = divmod(int(count), batch_size)
        num_batches += full + (1 if partial and not drop_remainder else 0)
        num_padded_tokens += 2 * length * int(count)  # encoder and decoder
    # Over all pairs, including any that drop_remainder leaves out.
    padding_fraction = 1.0 - float(num_real_tokens) / float(num_padded_tokens)
    return num_batches, padding_fraction


def _identity(*tensors):
    return tensors


def _pair_length(encoder_ids, decoder_ids, labels):
    del labels  # As long as decoder_ids.
    return tf.maximum(tf.shape(encoder_ids)[0], tf.shape(decoder_ids)[0])


def _to_model_inputs(encoder_ids, decoder_ids, labels):
    inputs = {"encoder_token_ids": encoder_ids, "decoder_token_ids": decoder_ids}
    return inputs, labels
