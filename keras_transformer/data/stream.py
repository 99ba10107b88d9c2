"""Batches of a prepared corpus as a ``tf.data.Dataset``: `make_dataset_from_corpus`.

The batches are `CorpusStream`'s (`keras_transformer.data.corpus_stream`,
NumPy, read from memory-mapped shards a window at a time) under
``tf.data.Dataset.from_generator``. `make_batches_from_corpus`
(`keras_transformer.data.corpus_batches`) yields the same batches without
TensorFlow.

Example:

```python
dataset, report = make_dataset_from_corpus(
    "data/wmt14_prepared", tokens_per_batch=25_000, max_length=256,
    bucketing="packed", repeat=True, seed=0)
model.fit(dataset, epochs=100, steps_per_epoch=report.num_batches)
```
"""

from keras_transformer.data.corpus_batches import make_batches_from_corpus
from keras_transformer.data.corpus_stream import (  # noqa: F401 - re-exported
    DEFAULT_CYCLE_LENGTH,
    DEFAULT_WINDOW_SIZE,
    CorpusStream,
)
from keras_transformer.data.language_sampling import (  # noqa: F401 - re-exported
    language_sampling_factors,
)
from keras_transformer.utils.tensorflow_devices import tf


def make_dataset_from_corpus(
    corpus,
    options=None,
    *,
    window_size=None,
    cycle_length=None,
    start_batch=0,
    sampling_temperature=None,
    **kwargs,
):
    """A ``tf.data.Dataset`` of token-budget batches of a prepared corpus.

    The batches of `CorpusStream` (read from memory-mapped shards a window
    at a time) under ``tf.data.Dataset.from_generator``, prefetched; the
    elements are `make_dataset`'s.

    Without ``repeat``, each iteration of the dataset (each epoch of
    ``fit``) is the next pass, shuffled anew; with ``repeat`` an iteration
    yields every pass, and ``start_batch`` applies to each iteration
    (without ``repeat``, to the first).

    Args:
        corpus: a `PreparedCorpus`, or the path of one.
        options: `DatasetOptions`. Defaults to ``DatasetOptions()``.
            ``shuffle_buffer_size`` does not apply (``window_size`` does).
        window_size: int. Pairs batched together (see `CorpusStream`).
            Defaults to 100,000.
        cycle_length: int. Shards read at a time. Defaults to 8.
        start_batch: int. Global batches already consumed (a resumed run:
            optimizer steps times gradient accumulation steps); they are
            skipped without reading their ids. Defaults to 0.
        sampling_temperature: float or None. For a corpus of several
            target languages: sample the languages with temperature ``T``
            (see `CorpusStream`). Defaults to None (every pair once a pass).
        **kwargs: `DatasetOptions` fields, as for `make_dataset`
            (``tokens_per_batch``, ``max_length``, ``bucketing``, ...).

    Returns:
        ``(dataset, report)``: the ``tf.data.Dataset`` of ``(inputs,
        labels)`` and the `DatasetReport` of a pass (`CorpusStream.report`).

    Raises:
        ValueError: a setting is invalid (naming it), the corpus cannot be
            read, its vocabulary is larger than ``vocabulary_size``, or no
            pair is left after filtering.
        TypeError: an unknown keyword argument.

    Example:

    ```python
    dataset, report = make_dataset_from_corpus(
        "data/wmt14_prepared", tokens_per_batch=4096, repeat=True, seed=0)
    print(report.summary())
    ```
    """
    batches, report = make_batches_from_corpus(
        corpus,
        options,
        window_size=window_size,
        cycle_length=cycle_length,
        start_batch=start_batch,
        sampling_temperature=sampling_temperature,
        prefetch=0,  # tf.data prefetches
        **kwargs,
    )
    # Each iteration of the dataset is the next iteration of `batches`
    # (the next pass without ``repeat``), as for the NumPy path.
    dataset = tf.data.Dataset.from_generator(
        lambda: iter(batches), output_signature=element_signature(batches.stream)
    )
    return dataset.prefetch(tf.data.AUTOTUNE), report


def element_signature(stream):
    """The ``tf.TensorSpec``s of a `CorpusStream`'s ``(inputs, labels)``."""
    inputs, labels = stream.element_shapes()
    return (
        {name: tf.TensorSpec(shape, tf.int32) for name, shape in inputs.items()},
        tf.TensorSpec(labels, tf.int32),
    )
