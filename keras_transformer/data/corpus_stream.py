"""Batches streamed from a prepared corpus, in memory bounded by a window.

`make_dataset` holds every tokenized pair in memory; a corpus of millions of
pairs (WMT14 En-De: 4.5 million) is read here from its memory-mapped shards
(`keras_transformer.data.shards`) a window at a time instead. The elements,
the `DatasetOptions` and the `DatasetReport` are `make_dataset`'s.

The order of pass ``p`` comes from one generator seeded with ``(seed, p)``:

1. The shards, permuted when shuffling, are taken ``cycle_length`` at a
   time (a group); only the shards of the current group are mapped.
2. The group's pairs that ``max_length`` keeps (``length_handling``) are
   put in one random order (in shard and pair order without shuffling) and
   cut into windows of ``window_size`` pairs, as Marian's maxi-batches and
   OpenNMT's bucket pool do.
3. Each window is batched as `make_dataset` batches a whole pass:

   - ``"separate"``/``"joint"``: each pair gets its padded shape from one
     table decided for the whole corpus from the manifest's length
     histogram (`keras_transformer.data.bucketing.bucket_shapes`): the
     shapes never depend on the window, so JAX compiles one train step per
     shape as in memory. The pairs of each shape fill its batches in stream
     order; the window's full batches are yielded (shuffled when
     shuffling, else in the order they fill) and each shape's partial batch
     waits for the next window (and pass, with ``repeat``).
   - ``"packed"``: `PairPacker` first fit over the window's order; the
     pairs that wait for room go on into the next window.

   At the end of a pass that does not repeat, the partial batches are
   padded with fully-masked rows to a multiple of ``batch_multiple``, or
   dropped (``drop_remainder``), as `make_dataset` does.

Which pairs form each global batch is decided from the lengths alone (the
shards' offsets index); ids are read (`Shard.gather`) only to fill the rows
that are yielded. With ``num_shards > 1`` every process decides the same
batches and reads and fills only its rows ``[shard_index * rows /
num_shards, ...)``: the processes' rows are disjoint and together are the
one-process batch. A resumed run skips the batches it has consumed the same
way, without reading their ids (``start_batch``).

Memory holds the lengths and places of one group's pairs (40 bytes a pair),
one window's batch composition, the ids of about 8,192 pairs being filled
and the pairs waiting for a batch (at most a batch of each shape, or of
packed rows): flat in the size of the corpus. A pair that waits longer than
its group is read from its shard, mapped again for that read.

The batch composition is in `keras_transformer.data.corpus_stream_composers`,
the reading of ids into rows in `keras_transformer.data.corpus_stream_filler`
and the temperature sampling of languages in
`keras_transformer.data.language_sampling`. These modules are NumPy only:
they import without TensorFlow. Two wrappers feed the batches to
``model.fit``: `make_batches_from_corpus`
(`keras_transformer.data.corpus_batches`, a background thread, any backend)
and `make_dataset_from_corpus` (`keras_transformer.data.stream`,
``tf.data``).

Example:

```python
stream = CorpusStream(
    "data/wmt14_prepared",
    DatasetOptions(tokens_per_batch=25_000, max_length=256, bucketing="packed"))
for inputs, labels in stream.batches():
    ...
```
"""

import itertools
import math

import numpy as np

from keras_transformer.data.bucketing import (
    batch_statistics,
    bucket_counts,
    bucket_shapes,
)
from keras_transformer.data.corpus_stream_composers import (
    _BucketComposer,
    _PackedComposer,
)
from keras_transformer.data.corpus_stream_filler import _chunks, _Filler, _Pairs
from keras_transformer.data.language_sampling import (
    _resampled,
    language_sampling_factors,
)
from keras_transformer.data.options import DatasetOptions
from keras_transformer.data.packing import PairPacker
from keras_transformer.data.report import DatasetReport
from keras_transformer.data.shards import PreparedCorpus
from keras_transformer.special_tokens import BOS_ID, EOS_ID
from keras_transformer.utils.validation import check_int

DEFAULT_WINDOW_SIZE = 100_000
DEFAULT_CYCLE_LENGTH = 8
# Fewest pairs packed to estimate a packed report.
_MIN_REPORT_SAMPLE = 20_000


class CorpusStream:
    """The batches of a prepared corpus, read a window at a time.

    See the module's description for the order of a pass and how windows
    are batched. ``batches`` yields NumPy ``(inputs, labels)``, exactly the
    elements of `make_dataset`; `make_batches_from_corpus` prefetches them
    in a thread and `make_dataset_from_corpus` wraps them in a
    ``tf.data.Dataset``.

    A larger ``window_size`` shuffles more and leaves fewer pairs waiting
    for rarer shapes; a smaller one starts faster and holds less (the
    lengths and batch composition of a window, about 50 bytes a pair).
    ``cycle_length`` shards are mapped at a time and their pairs mixed; at
    least one window's worth of pairs per group mixes the shards.

    Args:
        corpus: a `PreparedCorpus`, or the path of one (opened without
            checking the CRC-32 of its files).
        options: `DatasetOptions`. ``shuffle_buffer_size`` does not apply.
        window_size: int. Pairs batched together. Defaults to 100,000.
        cycle_length: int. Shards whose pairs are mixed. Defaults to 8.
        sampling_temperature: float > 0 or None. For a corpus of several
            target languages (`prepare_corpus`'s ``languages``), the
            temperature sampling of multilingual NMT (Arivazhagan et al.,
            2019; fairseq's ``--sampling-temperature``): a pass holds
            language ``l`` in the proportion ``q_l`` proportional to
            ``(n_l / N) ** (1 / T)`` (``n_l`` its pairs, ``N`` all pairs), the
            same number of pairs in all: each pair of ``l`` is taken
            ``r_l = q_l N / n_l`` times on average (its whole part every
            pass, plus a random share of the pairs for the fraction: pairs
            of a small language repeat, a large one is subsampled anew each
            pass). ``T = 1`` keeps the corpus's proportions; larger ``T``
            moves towards equal shares. None: every pair once a pass. The
            `report` describes one pass of the corpus as prepared (the same
            number of pairs; the mix of lengths can differ).

    Raises:
        ValueError: ``window_size`` or ``cycle_length`` is not a positive
            int, ``options.vocabulary_size`` is smaller than the corpus'
            vocabulary, ``max_length`` leaves no pair, or
            ``sampling_temperature`` is not a number > 0 or is given for a
            corpus of one target language.

    Example:

    ```python
    stream = CorpusStream("corpus", DatasetOptions(shuffle=False))
    for inputs, labels in stream.batches():
        ...
    ```
    """

    def __init__(
        self,
        corpus,
        options,
        window_size=DEFAULT_WINDOW_SIZE,
        cycle_length=DEFAULT_CYCLE_LENGTH,
        sampling_temperature=None,
    ):
        if not isinstance(options, DatasetOptions):
            raise TypeError(
                f"options must be a DatasetOptions. Received: options={options!r}"
            )
        self.window_size = check_int("window_size", window_size)
        self.cycle_length = check_int("cycle_length", cycle_length)
        if not isinstance(corpus, PreparedCorpus):
            corpus = PreparedCorpus.open(corpus, verify=False)
        self.corpus = corpus
        self.options = options
        self._check_vocabulary()
        self._histogram = self._kept_histogram()
        self.num_examples = int(self._histogram[2].sum())
        self.sampling_factors = language_sampling_factors(corpus, sampling_temperature)
        # Stream ids of pass p start at p * span (ids grow along the
        # stream); a resampled pass can hold more pairs than the corpus.
        self._pass_span = self.num_examples * (
            1 + int(max(self.sampling_factors.values(), default=0))
        )
        self._seed = options.seed
        if self._seed is None:
            # One seed for every pass of this stream.
            self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self._shapes = None
        if options.bucketing != "packed":
            encoder_lengths, decoder_lengths, counts = self._histogram
            self._shapes = bucket_shapes(
                bucket_counts(
                    encoder_lengths, decoder_lengths, options.bucket_lengths, counts
                ),
                options,
            )
        rows = options.tokens_per_batch // options.max_length
        self._packed_rows = rows // options.batch_multiple * options.batch_multiple
        self._report = None

    def _check_vocabulary(self):
        size = self.options.vocabulary_size
        if size is not None and size < self.corpus.vocabulary_size:
            raise ValueError(
                f"vocabulary_size={size} is smaller than the vocabulary of the "
                f"prepared corpus {self.corpus.path!r} (vocabulary_size="
                f"{self.corpus.vocabulary_size}): its ids would fall outside the "
                "model's embedding."
            )
        size = self.corpus.vocabulary_size if size is None else size
        for name, special in (("BOS_ID", BOS_ID), ("EOS_ID", EOS_ID)):
            if not 0 <= special < size:
                raise ValueError(
                    f"{name}={special} is outside [0, {size}) (vocabulary_size={size})."
                )

    def _kept_histogram(self):
        """``(encoder lengths, decoder lengths, counts)`` of the length
        histogram's kept pairs, EOS/BOS included (after ``max_length``)."""
        histogram = self.corpus.length_histogram
        source, target, counts = histogram[:, 0], histogram[:, 1], histogram[:, 2]
        limit = self.options.max_length - 1
        too_long = (source > limit) | (target > limit)
        self._num_too_long = int(counts[too_long].sum())
        if self.options.length_handling == "filter":
            source, target, counts = (x[~too_long] for x in (source, target, counts))
        else:
            source, target = np.minimum(source, limit), np.minimum(target, limit)
        if not counts.sum():
            raise ValueError(
                f"No sentence pairs left: {self.corpus.num_pairs} in the prepared "
                f"corpus {self.corpus.path!r}, {self._num_too_long} longer than "
                f"max_length={self.options.max_length}."
            )
        return source + 1, target + 1, counts

    def element_shapes(self):
        """``({input name: shape}, label shape)`` of the elements (this
        process's rows; None where a dimension varies), all int32."""
        options = self.options
        names = ("encoder_token_ids", "decoder_token_ids")
        if options.bucketing == "packed":
            shape = (self._packed_rows // options.num_shards, options.max_length)
            names += ("encoder_segment_ids", "decoder_segment_ids")
        else:
            shape = (None, None)
        return {name: shape for name in names}, shape

    # ------------------------------------------------------------------
    # The report.

    def report(self):
        """The `DatasetReport` of a pass, from the manifest's length
        histogram (no id is read, and no pass is held in memory).

        Exact: the pair, filter/truncation and token counts; for
        ``"separate"`` and ``"joint"`` also the batches per pass, the
        padding and the shapes (the stream yields a pass's pairs of each
        shape in full batches and one partial batch, whatever the order).
        For ``"packed"``, ``num_batches``, the padding fractions,
        ``num_padding_rows``, ``num_dropped`` and ``num_pairs_per_row`` are
        estimates: a sample of one window's worth of pairs (at least
        20,000), drawn from the histogram, is packed in a random order and
        the result scaled to the pass.
        """
        if self._report is None:
            self._report = self._make_report()
        return self._report

    def _make_report(self):
        options = self.options
        encoder_lengths, decoder_lengths, counts = self._histogram
        filtered = options.length_handling == "filter"
        real_source = int((encoder_lengths * counts).sum())
        real_target = int((decoder_lengths * counts).sum())
        fields = {
            "num_pairs": self.corpus.num_pairs,
            "num_examples": self.num_examples,
            "num_filtered": self._num_too_long if filtered else 0,
            "num_truncated": 0 if filtered else self._num_too_long,
            "num_source_tokens": real_source,
            "num_target_tokens": real_target,
            "num_skipped_empty": int(self.corpus.manifest.get("num_skipped_empty", 0)),
            "bucketing": options.bucketing,
            "batch_multiple": options.batch_multiple,
            "num_shards": options.num_shards,
        }
        if options.bucketing == "packed":
            fields.update(self._packed_statistics(real_source, real_target))
        else:
            shapes = self._shapes
            pair_shapes = shapes.pair_shapes(encoder_lengths, decoder_lengths)
            shape_counts = np.bincount(
                pair_shapes, weights=counts, minlength=len(shapes.batch_sizes)
            ).astype(np.int64)
            fields.update(
                batch_statistics(
                    shapes, shape_counts, real_source, real_target, options
                )
            )
            fields.update(
                bucket_lengths=options.bucket_lengths,
                bucket_batch_sizes=options.bucket_batch_sizes(options.bucket_lengths),
            )
        return DatasetReport(**fields)

    def _packed_statistics(self, real_source, real_target):
        """The packed report's batch fields, estimated by packing a sample of
        up to ``window_size`` pairs drawn from the histogram."""
        options = self.options
        rows, max_length = self._packed_rows, options.max_length
        encoder_lengths, decoder_lengths, counts = self._histogram
        total = self.num_examples
        rng = np.random.default_rng([self._seed, 2**32])
        size = max(self.window_size, _MIN_REPORT_SAMPLE)
        if total <= size:
            # Every pair, in a random order (length-sorted would pack worse
            # than any order the stream yields).
            sample = rng.permutation(np.repeat(np.arange(len(counts)), counts))
        else:
            sample = rng.choice(len(counts), size=size, p=counts / total)
        packer = PairPacker(max_length, rows)
        lengths = (encoder_lengths[sample], decoder_lengths[sample])
        num_full = sum(1 for _ in packer.pack(np.arange(len(sample)), *lengths))
        last = list(packer.flush()) if not options.repeat else []
        last_pairs = sum(len(batch.pairs) for batch in last)
        # Pairs per full batch, scaled to the pass.
        per_batch = (len(sample) - last_pairs) / num_full if num_full else None
        if options.repeat:
            num_full = math.ceil(total / per_batch) if per_batch else 1
            last = []
        elif per_batch:
            num_full = round((total - last_pairs) / per_batch)
        if options.drop_remainder:
            dropped = [batch for batch in last if len(set(batch.rows)) < rows]
            last = [batch for batch in last if len(set(batch.rows)) == rows]
        else:
            dropped = []
        num_dropped = sum(len(batch.pairs) for batch in dropped)
        num_batches = max(1, num_full + len(last))
        used_rows = num_full * rows + sum(len(set(batch.rows)) for batch in last)
        # Real tokens of the dropped pairs, in proportion.
        kept = 1.0 - num_dropped / total
        padded = num_batches * rows * max_length
        return {
            "num_batches": num_batches,
            "padding_fraction": 1.0 - kept * (real_source + real_target) / (2 * padded),
            "bucket_lengths": (max_length,),
            "bucket_batch_sizes": (rows,),
            "source_padding_fraction": 1.0 - kept * real_source / padded,
            "target_padding_fraction": 1.0 - kept * real_target / padded,
            "batch_shapes": ((rows, max_length, max_length),),
            "num_batch_shapes": 1,
            "num_dropped": num_dropped,
            "num_padding_rows": num_batches * rows - used_rows,
            "num_pairs_per_row": (total - num_dropped) / max(1, used_rows),
        }

    # ------------------------------------------------------------------
    # The batches.

    def batches(self, start_batch=0, epoch=0):
        """Yields NumPy ``(inputs, labels)`` batches (this process's rows).

        Args:
            start_batch: int. Global batches to skip: their composition is
                computed from the lengths, no id is read. The next batch is
                the one an uninterrupted stream yields after them (across
                passes with ``repeat``). Defaults to 0.
            epoch: int. Without ``repeat``, the pass to yield (each pass has
                its own order); ignored with ``repeat``, where the passes
                follow each other from pass 0. Defaults to 0.

        Yields:
            ``(inputs, labels)``: ``inputs`` a dict of int32 arrays
            (``"encoder_token_ids"``, ``"decoder_token_ids"``, and the
            segment ids when packed), ``labels`` int32.
        """
        start_batch = check_int("start_batch", start_batch, minimum=0)
        epoch = check_int("epoch", epoch, minimum=0)
        if self.options.bucketing == "packed":
            composer = _PackedComposer(self.options, self._packed_rows)
        else:
            composer = _BucketComposer(self._shapes, self.options)
        passes = itertools.count() if self.options.repeat else [epoch]
        filler = _Filler(self.corpus, self.options, self._packed_rows)
        carried = _Pairs.empty()
        composed = 0  # global batches composed so far
        for pass_index in passes:
            rng = np.random.default_rng([self._seed, pass_index])
            first_id = pass_index * self._pass_span
            for group in self._groups(rng):
                shards = {index: self.corpus.shard(index) for index in group}
                group_pairs = self._group_pairs(shards, group, rng, first_id)
                first_id += len(group_pairs.ids)
                for start in range(0, len(group_pairs.ids), self.window_size):
                    window = group_pairs.take(slice(start, start + self.window_size))
                    pool = carried.concat(window)
                    plans = composer.window(window, rng)
                    for chunk in _chunks(plans):
                        skipped = min(len(chunk), max(0, start_batch - composed))
                        composed += len(chunk)
                        if skipped < len(chunk):
                            yield from filler.fill(chunk[skipped:], pool, shards)
                    carried = pool.take(
                        np.searchsorted(pool.ids, np.sort(composer.pending()))
                    )
                # The group's shards are unmapped here; a waiting pair's ids
                # are read from its shard, opened again, when its batch is
                # filled.
                del shards
        # Without repeat: the pass's last, partial batches.
        plans = composer.finish()
        skipped = min(len(plans), max(0, start_batch - composed))
        if skipped < len(plans):
            yield from filler.fill(plans[skipped:], carried, {})

    def _groups(self, rng):
        """The shard indices of each group of a pass, in order."""
        order = np.arange(self.corpus.num_shards)
        if self.options.shuffle:
            order = rng.permutation(order)
        return [
            order[i : i + self.cycle_length].tolist()
            for i in range(0, len(order), self.cycle_length)
        ]

    def _group_pairs(self, shards, group, rng, first_id):
        """The `_Pairs` of a group that ``max_length`` keeps, in the pass'
        order (shuffled when shuffling), numbered from ``first_id``."""
        limit = self.options.max_length - 1
        parts = []
        for index in group:
            source, target = shards[index].lengths()
            if self.options.length_handling == "filter":
                kept = np.flatnonzero((source <= limit) & (target <= limit))
            else:
                kept = np.arange(len(source))
            factor = self.sampling_factors.get(self.corpus.shard_languages[index])
            if factor is not None:
                kept = _resampled(kept, factor, rng)
            parts.append(
                (
                    np.full(len(kept), index, np.int64),
                    kept.astype(np.int64),
                    np.minimum(source[kept], limit),
                    np.minimum(target[kept], limit),
                )
            )
        shard_of, index_of, source, target = (
            np.concatenate([part[k] for part in parts]) for k in range(4)
        )
        if self.options.shuffle:
            order = rng.permutation(len(shard_of))
            shard_of, index_of, source, target = (
                x[order] for x in (shard_of, index_of, source, target)
            )
        ids = first_id + np.arange(len(shard_of), dtype=np.int64)
        return _Pairs(ids, shard_of, index_of, source, target)
