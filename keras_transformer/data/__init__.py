"""Data: the shared subword vocabulary, parallel text files, tf.data batches.

Also the embedded default task (English -> German number words), which needs
no download.
"""

from keras_transformer.data.default_task import (
    default_task_splits,
    number_to_english,
    number_to_german,
    write_default_task,
)
from keras_transformer.data.options import DatasetOptions, default_bucket_lengths
from keras_transformer.data.pipeline import (
    DatasetReport,
    make_dataset,
    make_dataset_from_files,
)
from keras_transformer.data.text_files import (
    ReadStats,
    read_lines,
    expand_paths,
    read_parallel,
    write_lines,
)
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer

__all__ = [
    "DatasetOptions",
    "DatasetReport",
    "ReadStats",
    "SubwordTokenizer",
    "default_bucket_lengths",
    "default_task_splits",
    "make_dataset",
    "make_dataset_from_files",
    "number_to_english",
    "number_to_german",
    "read_lines",
    "expand_paths",
    "read_parallel",
    "write_default_task",
    "write_lines",
]
