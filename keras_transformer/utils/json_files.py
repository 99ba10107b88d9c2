"""`read_json`: a JSON file's value, or an error naming the file.

Apart from `keras_transformer.utils.file_io` (which imports Keras and h5py
for the checked weight writes) so that the modules the command line's
parser reads (`run_files`, the training config) import neither.
"""

import json


def read_json(path, what="file"):
    """The JSON value in ``path``; a ValueError naming the ``what`` and the
    path when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise ValueError(f"Cannot read the {what} {path!r}: {error}") from error
