"""`DatasetOptions`: how `make_dataset` batches, buckets and shards, validated once.

One frozen object carries the batching settings from wherever they are set
(`make_dataset`'s keyword arguments, the trainer's config) to the pipeline.
It is checked when it is made, so a bad value is a ValueError naming the
argument before any sentence is tokenized.

It imports neither TensorFlow nor Keras.
"""

import dataclasses
import math

from keras_transformer.utils.validation import (
    check_choice,
    check_int,
    check_number,
)

BUCKETINGS = ("separate", "joint", "packed")
LENGTH_HANDLINGS = ("filter", "truncate")


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
    check_int("max_length", max_length)
    check_int("step", step)
    check_number("growth", growth)

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


@dataclasses.dataclass(frozen=True)
class DatasetOptions:
    """How `make_dataset` batches sentence pairs.

    Args:
        tokens_per_batch: int. Padded tokens per batch on each side:
            ``batch * max(S, T) <= tokens_per_batch``. Must be at least
            ``max_length * batch_multiple``. Defaults to 4096.
        max_length: int >= 2. Longest encoder or decoder input, EOS/BOS
            included. Defaults to 128.
        shuffle: bool. Shuffle pairs (each epoch anew). Defaults to True.
        seed: int or None. Shuffle seed. Defaults to None (not
            reproducible).
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
            tokenizer's, BOS and EOS) must be below it, checked once by
            `make_dataset` (a ValueError, before any training step).
            Defaults to the tokenizer's ``vocabulary_size`` when it has one.
        bucketing: str. ``"separate"`` pads the source and the target each
            to its own bucket length (batch shapes ``(batch, S, T)``);
            ``"joint"`` pads both to the bucket of the longer side
            (``S == T``). Both give a pair the same batch size (from its
            longer side); ``"separate"`` pads less. Each shape is one
            compilation of the train step under JAX, so under
            ``"separate"`` only the ``(S, T)`` combinations that pay for it
            get a shape of their own (see ``min_shape_saving``); the pairs
            of the others go to the cheapest shape that holds them, never
            more padded than under ``"joint"`` (``benchmarks/padding.py``
            measures both). ``"packed"`` fills rows of ``max_length`` tokens
            with several pairs (first fit, in the shuffled order; see
            `keras_transformer.data.packing`) and adds the segment ids to
            the inputs; batches of ``tokens_per_batch // max_length`` rows
            (a multiple of ``batch_multiple``), one shape in all; a last
            partial batch is filled with empty rows. ``bucket_boundaries``
            and ``min_shape_saving`` do not apply. Defaults to
            ``"separate"``.
        batch_multiple: int. Round every batch size down to a multiple of
            this (at least one multiple): the number of data-parallel
            devices, so that `keras.distribution.DataParallel` can shard
            every batch (`keras_transformer.training.distribution.
            batch_multiple_for`). A last partial batch is padded with
            fully-masked rows (all ``PAD_ID``, so no loss and no metric) to
            a multiple, unless ``drop_remainder``. Defaults to 1.
        num_shards: int. Split each (global) batch into this many equal
            shards of rows and yield only shard ``shard_index``: one per
            process in multi-host data parallelism, where each process feeds
            its part of the global batch. Every process must use the same
            data and ``seed`` (a seed is required when shuffling). Must
            divide ``batch_multiple``. Defaults to 1.
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

    Example:

    ```python
    options = DatasetOptions(tokens_per_batch=4096, max_length=64, seed=0)
    train, report = make_dataset(src, tgt, tokenizer, options, repeat=True)
    valid, _ = make_dataset(val_src, val_tgt, tokenizer,
                            options.replace(shuffle=False))
    ```
    """

    tokens_per_batch: int = 4096
    max_length: int = 128
    shuffle: bool = True
    seed: int = None
    repeat: bool = False
    length_handling: str = "filter"
    bucket_boundaries: tuple = None
    shuffle_buffer_size: int = None
    drop_remainder: bool = False
    vocabulary_size: int = None
    bucketing: str = "separate"
    batch_multiple: int = 1
    num_shards: int = 1
    shard_index: int = 0
    min_shape_saving: float = 0.005

    def __post_init__(self):
        self._check_sizes()
        self._check_choices()
        self._check_sharding()
        if self.bucket_boundaries is not None:
            # A tuple: a generator would be used up here, and the options
            # stay immutable.
            object.__setattr__(self, "bucket_boundaries", tuple(self.bucket_boundaries))
        _ = self.bucket_lengths  # Checks bucket_boundaries against max_length.

    def _check_sizes(self):
        check_int("tokens_per_batch", self.tokens_per_batch)
        check_int("max_length", self.max_length)
        check_int("batch_multiple", self.batch_multiple)
        if self.max_length < 2:
            raise ValueError(
                "max_length must be at least 2 (one token plus BOS or EOS). "
                f"Received: max_length={self.max_length}"
            )
        if self.tokens_per_batch < self.max_length * self.batch_multiple:
            raise ValueError(
                "tokens_per_batch must be >= max_length * batch_multiple so that "
                f"a batch can hold {self.batch_multiple} sequence(s) of max_length "
                f"tokens. Received: tokens_per_batch={self.tokens_per_batch}, "
                f"max_length={self.max_length}, batch_multiple={self.batch_multiple}"
            )
        check_int("shuffle_buffer_size", self.shuffle_buffer_size, allow_none=True)
        check_int("vocabulary_size", self.vocabulary_size, allow_none=True)
        check_int("seed", self.seed, minimum=0, allow_none=True)

    def _check_choices(self):
        for name in ("shuffle", "repeat", "drop_remainder"):
            check_choice(name, getattr(self, name), (True, False))
        check_choice("length_handling", self.length_handling, LENGTH_HANDLINGS)
        check_choice("bucketing", self.bucketing, BUCKETINGS)
        try:
            check_number("min_shape_saving", self.min_shape_saving, minimum=0, maximum=1)
        except ValueError:
            raise ValueError(
                "min_shape_saving must be a fraction in [0, 1]. "
                f"Received: min_shape_saving={self.min_shape_saving!r}"
            ) from None

    def _check_sharding(self):
        check_int("num_shards", self.num_shards)
        check_int("shard_index", self.shard_index, minimum=0)
        if self.batch_multiple % self.num_shards:
            raise ValueError(
                "num_shards must divide batch_multiple, so that every batch splits "
                f"evenly. Received: num_shards={self.num_shards}, "
                f"batch_multiple={self.batch_multiple}"
            )
        if self.shard_index >= self.num_shards:
            raise ValueError(
                f"shard_index must be in [0, num_shards={self.num_shards}). "
                f"Received: shard_index={self.shard_index!r}"
            )
        if self.num_shards > 1 and self.shuffle and self.seed is None:
            raise ValueError(
                "num_shards > 1 needs a seed: every shard must shuffle the same "
                "way to split the same global batches."
            )

    @property
    def bucket_lengths(self):
        """The padded lengths a side can have: ``bucket_boundaries`` with
        ``max_length`` appended when missing (or the defaults)."""
        if self.bucket_boundaries is None:
            return default_bucket_lengths(self.max_length)
        lengths = list(self.bucket_boundaries)
        for index, length in enumerate(lengths):
            check_int(f"bucket_boundaries[{index}]", length)
        if any(b <= a for a, b in zip(lengths, lengths[1:])):
            raise ValueError(
                f"bucket_boundaries must be increasing. Received: {lengths}"
            )
        if lengths and lengths[-1] > self.max_length:
            raise ValueError(
                "bucket_boundaries must not exceed max_length. Received: "
                f"bucket_boundaries={lengths}, max_length={self.max_length}"
            )
        if not lengths or lengths[-1] < self.max_length:
            lengths.append(self.max_length)
        return tuple(int(length) for length in lengths)

    def bucket_batch_sizes(self, bucket_lengths):
        """The batch size of a batch whose longer side is padded to each of
        ``bucket_lengths``: as many rows as ``tokens_per_batch`` holds,
        rounded down to a multiple of ``batch_multiple``."""
        return tuple(
            self.tokens_per_batch // length // self.batch_multiple * self.batch_multiple
            for length in bucket_lengths
        )

    def replace(self, **changes):
        """A copy with ``changes`` applied (and validated); an unknown name
        is a TypeError naming it."""
        check_option_names(changes)
        return dataclasses.replace(self, **changes)


def check_option_names(names):
    """Raises a TypeError naming every entry of ``names`` that is not a
    `DatasetOptions` field (as Python does for an unknown keyword)."""
    known = {field.name for field in dataclasses.fields(DatasetOptions)}
    unknown = sorted(set(names) - known)
    if unknown:
        raise TypeError(
            f"Unknown dataset option(s) {unknown}. Valid options: {sorted(known)}"
        )


def dataset_options(options, kwargs):
    """The `DatasetOptions` of ``(options, **kwargs)`` as `make_dataset` and
    `make_dataset_from_corpus` take them: ``kwargs`` alone make the options;
    with ``options`` they override its fields.

    Raises:
        TypeError: ``options`` is not a `DatasetOptions`, or a keyword is not
            one of its fields.
    """
    if options is None:
        check_option_names(kwargs)
        return DatasetOptions(**kwargs)
    if not isinstance(options, DatasetOptions):
        raise TypeError(
            "options must be a DatasetOptions (pass the other settings by "
            f"keyword). Received: options={options!r}"
        )
    return options.replace(**kwargs) if kwargs else options
