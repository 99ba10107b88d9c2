"""Data: the shared subword vocabulary, parallel text files, prepared corpora
(token ids in memory-mapped shards), tf.data batches.

Also the embedded default task (English -> German number words), which needs
no download. Without TensorFlow (a JAX or PyTorch machine) the text files and
prepared corpora still import; the tf.data pipeline does not.
"""

from keras_transformer.data.corpus import prepare_corpus
from keras_transformer.data.default_task import (
    default_task_splits,
    number_to_english,
    number_to_german,
    write_default_task,
)
from keras_transformer.data.options import DatasetOptions, default_bucket_lengths
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
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer

try:
    import tensorflow as _tensorflow  # noqa: F401
except ImportError:  # tests/data/test_shards.py
    TENSORFLOW_AVAILABLE = False
else:
    TENSORFLOW_AVAILABLE = True

if TENSORFLOW_AVAILABLE:
    from keras_transformer.data.pipeline import (
        DatasetReport,
        make_dataset,
        make_dataset_from_files,
    )
    from keras_transformer.data.stream import CorpusStream, make_dataset_from_corpus

__all__ = [
    "DatasetOptions",
    "ParallelFiles",
    "PreparedCorpus",
    "ReadStats",
    "Shard",
    "SubwordTokenizer",
    "count_lines",
    "default_bucket_lengths",
    "default_task_splits",
    "expand_paths",
    "iter_lines",
    "number_to_english",
    "number_to_german",
    "prepare_corpus",
    "read_lines",
    "read_parallel",
    "write_default_task",
    "write_lines",
]
if TENSORFLOW_AVAILABLE:
    __all__ += ["DatasetReport", "make_dataset", "make_dataset_from_files"]
    __all__ += ["CorpusStream", "make_dataset_from_corpus"]
