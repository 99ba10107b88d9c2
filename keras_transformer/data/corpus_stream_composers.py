"""Which pairs form each global batch of a `CorpusStream`, decided from
their lengths alone, a window at a time: `_BucketComposer` for
``"separate"`` and ``"joint"`` (padded batches of the corpus's shape table),
`_PackedComposer` for ``"packed"`` (first fit). Both carry the pairs that
wait for a batch into the next window and pad or drop the partial batches
at the end of a pass.
"""

import dataclasses

import numpy as np

from keras_transformer.data.packing import PairPacker


@dataclasses.dataclass
class _Plan:
    """One padded (``"separate"``/``"joint"``) global batch: ``pairs[r]`` in
    row ``r`` of ``num_rows`` rows of ``source_length``/``target_length``
    tokens (rows past ``len(pairs)`` are fully masked)."""

    pairs: np.ndarray
    num_rows: int
    source_length: int
    target_length: int


class _BucketComposer:
    """Decides the global batches of ``"separate"`` and ``"joint"``: the
    pairs of each shape, in stream order, cut into full batches; each
    shape's partial batch waits for the next window."""

    def __init__(self, shapes, options):
        self.shapes = shapes
        self.options = options
        self.queues = [np.zeros(0, np.int64) for _ in shapes.batch_sizes]

    def window(self, window, rng):
        """The window's full batches, in the order they fill (shuffled with
        ``rng`` when shuffling)."""
        shapes = self.shapes
        pair_shapes = shapes.pair_shapes(
            window.source_lengths + 1, window.target_lengths + 1
        )
        order = np.argsort(pair_shapes, kind="stable")
        counts = np.bincount(pair_shapes, minlength=len(shapes.batch_sizes))
        by_shape = np.split(window.ids[order], np.cumsum(counts)[:-1])
        plans, completed = [], []
        for shape in np.flatnonzero(counts):
            queue = np.concatenate([self.queues[shape], by_shape[shape]])
            size = int(shapes.batch_sizes[shape])
            full = len(queue) // size
            if full:
                batches = queue[: full * size].reshape(full, size)
                lengths = (
                    int(shapes.source_lengths[shape]),
                    int(shapes.target_lengths[shape]),
                )
                plans += [_Plan(batch, size, *lengths) for batch in batches]
                # A batch fills when its last pair arrives.
                completed.append(batches[:, -1])
            self.queues[shape] = queue[full * size :]
        if plans:
            order = np.argsort(np.concatenate(completed), kind="stable")
            if self.options.shuffle:
                order = rng.permutation(order)
            plans = [plans[i] for i in order]
        return plans

    def pending(self):
        return np.concatenate(self.queues)

    def finish(self):
        """The partial batches at the end of a pass, by shape, padded to a
        multiple of ``batch_multiple`` (none with ``drop_remainder``)."""
        plans = []
        multiple = self.options.batch_multiple
        for shape, queue in enumerate(self.queues):
            if len(queue) and not self.options.drop_remainder:
                rows = -(-len(queue) // multiple) * multiple
                lengths = (
                    int(self.shapes.source_lengths[shape]),
                    int(self.shapes.target_lengths[shape]),
                )
                plans.append(_Plan(queue, rows, *lengths))
        self.queues = [queue[:0] for queue in self.queues]
        return plans


class _PackedComposer:
    """Decides the global batches of ``"packed"``: first fit over the
    windows' order; the waiting pairs carry over."""

    def __init__(self, options, rows):
        self.options = options
        self.rows = rows
        self.packer = PairPacker(options.max_length, rows)

    def window(self, window, rng):
        del rng  # The pairs are in shuffled order already.
        return self.packer.pack(
            window.ids, window.source_lengths + 1, window.target_lengths + 1
        )

    def pending(self):
        return np.asarray(self.packer.pending(), np.int64)

    def finish(self):
        return [
            batch
            for batch in self.packer.flush()
            if not (self.options.drop_remainder and len(set(batch.rows)) < self.rows)
        ]
