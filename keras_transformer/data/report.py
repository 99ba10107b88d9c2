"""`DatasetReport`: what a batching of sentence pairs holds (one pass).

Shared by the ``tf.data`` pipelines (`make_dataset`,
`make_dataset_from_corpus`) and the NumPy one (`CorpusStream`,
`make_batches_from_corpus`); NumPy only, it imports without TensorFlow.
"""

import dataclasses


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
