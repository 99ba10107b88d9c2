"""Data: the shared subword vocabulary, parallel text files, tf.data batches.

Also the embedded default task (English -> German number words), which needs
no download.
"""

from keras_transformer.data.default_task import default_task_splits
from keras_transformer.data.default_task import number_to_english
from keras_transformer.data.default_task import number_to_german
from keras_transformer.data.default_task import write_default_task
from keras_transformer.data.pipeline import DatasetReport
from keras_transformer.data.pipeline import default_bucket_lengths
from keras_transformer.data.pipeline import make_dataset
from keras_transformer.data.pipeline import make_dataset_from_files
from keras_transformer.data.text_files import ReadStats
from keras_transformer.data.text_files import read_lines
from keras_transformer.data.text_files import read_parallel
from keras_transformer.data.text_files import write_lines
from keras_transformer.data.tokenizer import SubwordTokenizer

__all__ = [
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
    "read_parallel",
    "write_default_task",
    "write_lines",
]
