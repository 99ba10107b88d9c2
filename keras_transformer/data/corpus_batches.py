"""Batches of a prepared corpus for ``model.fit`` without TensorFlow.

`make_batches_from_corpus` is `make_dataset_from_corpus` in NumPy: the same
`CorpusStream` (bucketing, packing, shuffling, resumption, per-process
rows), so the same batches for the same seed, built in a background thread
(`keras_transformer.data.prefetch.Prefetcher`) while the model trains. It
is the training input of the JAX and PyTorch backends, whether TensorFlow is
installed or not; Keras takes it through its own generator input path.

Example:

```python
batches, report = make_batches_from_corpus(
    "data/wmt14_prepared", tokens_per_batch=25_000, max_length=256,
    repeat=True, seed=0)
model.fit(batches.generator(), epochs=100, steps_per_epoch=report.num_batches)
```
"""

import itertools

import keras

from keras_transformer.data.corpus_stream import (
    DEFAULT_CYCLE_LENGTH,
    DEFAULT_WINDOW_SIZE,
    CorpusStream,
)
from keras_transformer.data.options import dataset_options
from keras_transformer.data.prefetch import DEFAULT_DEPTH, Prefetcher
from keras_transformer.utils.validation import check_int


def make_batches_from_corpus(
    corpus,
    options=None,
    *,
    window_size=None,
    cycle_length=None,
    start_batch=0,
    sampling_temperature=None,
    prefetch=DEFAULT_DEPTH,
    **kwargs,
):
    """`CorpusBatches` of a prepared corpus, and the `DatasetReport` of a pass.

    The arguments are `make_dataset_from_corpus`'s, plus ``prefetch``: the
    batches built ahead in a background thread (0: none, built when asked
    for). Without ``repeat``, each iteration is the next pass; with
    ``repeat`` an iteration yields every pass, and ``start_batch`` applies
    to each iteration (without ``repeat``, to the first), as each iteration
    of `make_dataset_from_corpus`'s dataset does.

    Returns:
        ``(batches, report)``: a `CorpusBatches` and a `DatasetReport`.

    Raises:
        ValueError: a setting is invalid (naming it), the corpus cannot be
            read, its vocabulary is larger than ``vocabulary_size``, or no
            pair is left after filtering.
        TypeError: an unknown keyword argument.
    """
    options = dataset_options(options, kwargs)
    stream = CorpusStream(
        corpus,
        options,
        window_size=DEFAULT_WINDOW_SIZE if window_size is None else window_size,
        cycle_length=DEFAULT_CYCLE_LENGTH if cycle_length is None else cycle_length,
        sampling_temperature=sampling_temperature,
    )
    batches = CorpusBatches(stream, start_batch=start_batch, prefetch=prefetch)
    return batches, stream.report()


class CorpusBatches:
    """The NumPy ``(inputs, labels)`` batches of a `CorpusStream`,
    prefetched.

    Each ``iter()`` is the next iteration (see `make_batches_from_corpus`);
    `generator` wraps one in a Python generator for ``model.fit``, which
    stops the producing thread when ``fit`` drops it.

    Args:
        stream: a `CorpusStream`.
        start_batch: int. Global batches skipped (a resumed run).
        prefetch: int. Batches built ahead in a thread; 0 for none.

    Attributes:
        last_iterator: the `Prefetcher` of the latest iteration (its
            ``wait_seconds`` says how long the consumer waited), or None.
        num_batches: int. Batches handed out by `generator`, all iterations.
        wait_seconds: float. Time `generator` waited for them (the
            prefetching thread was behind).
    """

    def __init__(self, stream, start_batch=0, prefetch=DEFAULT_DEPTH):
        self.stream = stream
        self.start_batch = check_int("start_batch", start_batch, minimum=0)
        self.prefetch = check_int("prefetch", prefetch, minimum=0)
        self._iterations = itertools.count()
        self.last_iterator = None
        self.num_batches = 0
        self._fed = []  # The prefetchers of `generator`'s iterations.

    @property
    def wait_seconds(self):
        return sum(prefetcher.wait_seconds for prefetcher in self._fed)

    def _batches(self):
        iteration = next(self._iterations)
        if self.stream.options.repeat:
            return self.stream.batches(self.start_batch)
        start = self.start_batch if iteration == 0 else 0
        return self.stream.batches(start, epoch=iteration)

    def __iter__(self):
        batches = self._batches()
        if not self.prefetch:
            return iter(batches)
        self.last_iterator = Prefetcher(batches, depth=self.prefetch)
        return self.last_iterator

    def generator(self):
        """A Python generator of the next iteration's batches (for
        ``model.fit``); closing it stops the prefetching thread."""
        iterator = iter(self)
        if isinstance(iterator, Prefetcher):
            self._fed.append(iterator)
        try:
            for batch in iterator:
                self.num_batches += 1
                yield batch
        finally:
            if isinstance(iterator, Prefetcher):
                iterator.close()


class BatchList(keras.utils.PyDataset):
    """Batches held in a list, as a `keras.utils.PyDataset` (a validation
    set: every epoch reads the same batches, and Keras knows how many).

    Args:
        batches: list of ``(inputs, labels)``.
    """

    def __init__(self, batches):
        super().__init__()
        self.batches = list(batches)

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        return self.batches[index]
