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
  (``S == T``).

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

`make_dataset` tokenizes and encodes the pairs here, then hands them to the
strategy ``bucketing`` names (`keras_transformer.data.bucketing` for
``"separate"`` and ``"joint"``, `keras_transformer.data.packing` for
``"packed"``); the settings are a `DatasetOptions`
(`keras_transformer.data.options`).
"""

import dataclasses

from keras_transformer.data.bucketed_dataset import joint_buckets, separate_buckets
from keras_transformer.data.options import (  # noqa: F401 - re-exported
    BUCKETINGS,
    DatasetOptions,
    check_option_names,
    dataset_options,
    default_bucket_lengths,
)
from keras_transformer.data.packed_dataset import packed_rows
from keras_transformer.data.report import DatasetReport  # noqa: F401 - re-exported
from keras_transformer.data.text_files import read_parallel
from keras_transformer.special_tokens import BOS_ID, EOS_ID, check_language_tag_position
from keras_transformer.utils.tensorflow_devices import tf
from keras_transformer.utils.validation import check_int

_TOKENIZE_CHUNK = 20_000

# `DatasetOptions.bucketing` -> the function that batches the encoded pairs:
# ``strategy(encoder_ids, decoder_ids, labels, options)`` returns
# ``(dataset, batching)``, ``batching`` being the report's batch fields.
_STRATEGIES = {
    "separate": separate_buckets,
    "joint": joint_buckets,
    "packed": packed_rows,
}


def make_dataset(
    src_sentences,
    tgt_sentences,
    tokenizer,
    options=None,
    *,
    language_tag_id=None,
    language_tag="source",
    **kwargs,
):
    """Tokenize sentence pairs once and batch them by token count.

    Args:
        src_sentences: list of str. Source sentences.
        tgt_sentences: list of str. Target sentences, aligned with the source.
        tokenizer: a `TransformerTokenizer` (anything whose ``tokenize`` maps a
            1-D string tensor to a ragged int32 tensor).
        options: `DatasetOptions`. The batching settings. Defaults to
            ``DatasetOptions()``.
        language_tag_id: int or None. For a model of several target
            languages: the tag id of the pairs' target language, put first
            in each source (``language_tag="source"``) or target
            (``"target"``), as `prepare_corpus` does. Defaults to None.
        language_tag: ``"source"`` or ``"target"``. Defaults to ``"source"``.
        **kwargs: `DatasetOptions` fields (``tokens_per_batch``,
            ``max_length``, ``shuffle``, ``seed``, ``repeat``,
            ``length_handling``, ``bucket_boundaries``,
            ``shuffle_buffer_size``, ``drop_remainder``,
            ``vocabulary_size``, ``bucketing``, ``batch_multiple``,
            ``num_shards``, ``shard_index``, ``min_shape_saving``; see
            `DatasetOptions` for each). With ``options`` they override its
            fields (``options.replace(**kwargs)``).

    Returns:
        ``(dataset, report)``: a ``tf.data.Dataset`` of ``(inputs, labels)``
        and a `DatasetReport`.

    Raises:
        ValueError: a setting is invalid (naming it), the two sides have
            different lengths, an id is outside ``vocabulary_size``, or no
            pair is left after filtering.
        TypeError: an unknown keyword argument.

    Example:

    ```python
    dataset, report = make_dataset(src, tgt, tokenizer, tokens_per_batch=4096)
    print(report.summary())
    model.fit(dataset, epochs=10)
    ```
    """
    options = dataset_options(options, kwargs)
    src_sentences = list(src_sentences)
    tgt_sentences = list(tgt_sentences)
    if len(src_sentences) != len(tgt_sentences):
        raise ValueError(
            "Source and target must have as many sentences. Received: "
            f"{len(src_sentences)} source, {len(tgt_sentences)} target."
        )
    src_ids = _tokenize_all(tokenizer, src_sentences)  # (N, None)
    tgt_ids = _tokenize_all(tokenizer, tgt_sentences)  # (N, None)
    if language_tag_id is not None:
        check_language_tag_position(language_tag)
        tags = tf.RaggedTensor.from_tensor(
            tf.fill([len(src_sentences), 1], tf.constant(int(language_tag_id), tf.int32))
        )
        if language_tag == "source":
            src_ids = tf.concat([tags, src_ids], axis=1)
        else:
            tgt_ids = tf.concat([tags, tgt_ids], axis=1)
    vocabulary_size = options.vocabulary_size
    if vocabulary_size is None:
        vocabulary_size = getattr(tokenizer, "vocabulary_size", None)
    if vocabulary_size is not None:
        check_int("vocabulary_size", vocabulary_size)
        _check_ids_in_vocabulary(src_ids, tgt_ids, vocabulary_size)
    encoder_ids, decoder_ids, labels, counts = _encode_pairs(src_ids, tgt_ids, options)
    strategy = _STRATEGIES[options.bucketing]
    dataset, batching = strategy(encoder_ids, decoder_ids, labels, options)
    return dataset, DatasetReport(**counts, **batching)


def make_dataset_from_files(src_path, tgt_path, tokenizer, options=None, **kwargs):
    """`make_dataset` on a pair of parallel text files (plain or gzip).

    Args:
        src_path: str. Source file, one sentence per line.
        tgt_path: str. Target file, aligned with the source.
        tokenizer: a `TransformerTokenizer`.
        options: `DatasetOptions`. Defaults to ``DatasetOptions()``.
        **kwargs: `DatasetOptions` fields, as for `make_dataset`
            (``tokens_per_batch``, ``bucketing``, ``batch_multiple``, ...).

    Returns:
        ``(dataset, report)``; ``report.num_skipped_empty`` counts pairs with
        an empty side.

    Example:

    ```python
    dataset, report = make_dataset_from_files(
        "multi30k/train.en.gz", "multi30k/train.de.gz", tokenizer)
    ```
    """
    # Checked before the files are read, so a bad setting fails fast.
    options = dataset_options(options, kwargs)
    src, tgt, stats = read_parallel(src_path, tgt_path)
    dataset, report = make_dataset(src, tgt, tokenizer, options)
    report = dataclasses.replace(report, num_skipped_empty=stats.num_skipped_empty)
    return dataset, report


def _encode_pairs(src_ids, tgt_ids, options):
    """``(encoder_ids, decoder_ids, labels, counts)`` of the tokenized pairs.

    Pairs longer than ``max_length`` are dropped or cut
    (``length_handling``), leaving room for the EOS (source, labels) or BOS
    (decoder input) added here; ``counts`` are the report's pair counts.
    """
    num_pairs = int(src_ids.nrows())
    limit = options.max_length - 1
    too_long = (src_ids.row_lengths() > limit) | (tgt_ids.row_lengths() > limit)
    num_too_long = int(tf.reduce_sum(tf.cast(too_long, tf.int32)))
    if options.length_handling == "filter":
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
            f"longer than max_length={options.max_length}."
        )
    eos = tf.RaggedTensor.from_tensor(tf.fill([num_examples, 1], EOS_ID))
    bos = tf.RaggedTensor.from_tensor(tf.fill([num_examples, 1], BOS_ID))
    encoder_ids = tf.concat([src_ids, eos], axis=1)
    decoder_ids = tf.concat([bos, tgt_ids], axis=1)
    labels = tf.concat([tgt_ids, eos], axis=1)
    filtered = options.length_handling == "filter"
    counts = {
        "num_pairs": num_pairs,
        "num_examples": num_examples,
        "num_filtered": num_too_long if filtered else 0,
        "num_truncated": 0 if filtered else num_too_long,
    }
    return encoder_ids, decoder_ids, labels, counts


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
