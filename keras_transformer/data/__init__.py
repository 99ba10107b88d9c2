"""Data: the shared subword vocabulary, parallel text files, prepared corpora
(token ids in memory-mapped shards), batches in NumPy and in tf.data.

Also the embedded default task (English -> German number words), which needs
no download. Everything but the tf.data pipeline (`make_dataset`,
`make_dataset_from_files`, `make_dataset_from_corpus`) imports without
TensorFlow, and importing this package does not import TensorFlow: those
three names import it when first used, and raise an ImportError naming
TensorFlow where it is not installed.
"""

from keras_transformer.data.corpus import prepare_corpus
from keras_transformer.data.corpus_options import CorpusOptions
from keras_transformer.data.corpus_batches import (
    BatchList,
    CorpusBatches,
    make_batches_from_corpus,
)
from keras_transformer.data.corpus_stream import CorpusStream
from keras_transformer.data.default_task import (
    default_task_splits,
    number_to_english,
    number_to_german,
    write_default_task,
)
from keras_transformer.data.memory_corpus import InMemoryCorpus, corpus_from_pairs
from keras_transformer.data.options import DatasetOptions, default_bucket_lengths
from keras_transformer.data.prefetch import Prefetcher
from keras_transformer.data.report import DatasetReport
from keras_transformer.data.shards import PreparedCorpus, Shard
from keras_transformer.data.text_files import (
    ParallelFiles,
    ReadStats,
    count_lines,
    expand_paths,
    iter_lines,
    read_lines,
    read_parallel,
    write_lines,
)
from keras_transformer.models.transformer.transformer_tokenizer import (
    TransformerTokenizer,
)
from keras_transformer.utils.dependencies import lazy_names

# Deprecated alias of `TransformerTokenizer`, kept for one version.
SubwordTokenizer = TransformerTokenizer

# The tf.data pipeline, imported (with TensorFlow) on first use.
_TENSORFLOW_NAMES = {
    "make_dataset": "keras_transformer.data.pipeline",
    "make_dataset_from_files": "keras_transformer.data.pipeline",
    "make_dataset_from_corpus": "keras_transformer.data.stream",
}
__getattr__ = lazy_names(
    __name__,
    {
        name: (
            module,
            "TensorFlow: it is the tf.data pipeline; without TensorFlow use "
            "make_batches_from_corpus (NumPy batches of a prepared corpus)",
        )
        for name, module in _TENSORFLOW_NAMES.items()
    },
)

__all__ = [
    "BatchList",
    "CorpusBatches",
    "CorpusOptions",
    "CorpusStream",
    "DatasetOptions",
    "DatasetReport",
    "InMemoryCorpus",
    "ParallelFiles",
    "PreparedCorpus",
    "ReadStats",
    "Shard",
    "SubwordTokenizer",
    "TransformerTokenizer",
    "Prefetcher",
    "count_lines",
    "corpus_from_pairs",
    "default_bucket_lengths",
    "default_task_splits",
    "expand_paths",
    "iter_lines",
    "make_batches_from_corpus",
    "make_dataset",
    "make_dataset_from_corpus",
    "make_dataset_from_files",
    "number_to_english",
    "number_to_german",
    "prepare_corpus",
    "read_lines",
    "read_parallel",
    "write_default_task",
    "write_lines",
]
