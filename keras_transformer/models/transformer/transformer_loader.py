"""The one loader of a trained model directory: a run directory of
``keras-transformer train`` or a keras-hub preset (``save_to_preset``).

`find_trained_model` says where the model and its vocabulary are
(`TrainedModelFiles`); `Translator.from_directory`, the keras-hub classes'
``from_preset``, the command line and both exports load through it.
"""

import os

from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_tokenizer import (
    SubwordTokenizer,
)
from keras_transformer.utils.file_io import load_model
from keras_transformer.utils.run_files import (
    MODEL_FILENAME,
    PRESET_CONFIG_FILENAME,
    PRESET_VOCABULARY_PATH,
    RUN_PRESET_DIRNAME,
    VOCABULARY_FILENAME,
    is_preset_directory,
)


class TrainedModelFiles:
    """Where a trained model's files are: a run directory (``model.keras`` +
    ``vocab.spm``) or a keras-hub preset (``config.json``,
    ``model.weights.h5``, ``assets/tokenizer/vocabulary.spm``).

    Attributes:
        kind: "run" or "preset".
        directory: the run or preset directory.
        vocabulary_path: the SentencePiece model.
    """

    def __init__(self, kind, directory, vocabulary_path):
        self.kind = kind
        self.directory = directory
        self.vocabulary_path = vocabulary_path

    def __repr__(self):
        return f"TrainedModelFiles({self.kind!r}, {self.directory!r})"

    def load_model(self, compile=False):
        """The `Transformer`, its errors naming the file."""
        if self.kind == "run":
            return load_model(os.path.join(self.directory, MODEL_FILENAME), compile=compile)

        return Transformer.from_preset(self.directory)

    def load_tokenizer(self):
        """The `SubwordTokenizer` of ``vocabulary_path``."""

        return SubwordTokenizer.load(self.vocabulary_path)


def locate_trained_model(directory):
    """`find_trained_model`'s answer, or None where there is no model."""
    directory = os.fspath(directory)
    if is_preset_directory(directory):
        return TrainedModelFiles(
            "preset", directory, os.path.join(directory, PRESET_VOCABULARY_PATH)
        )
    if os.path.isfile(os.path.join(directory, MODEL_FILENAME)):
        return TrainedModelFiles("run", directory, os.path.join(directory, VOCABULARY_FILENAME))
    nested = os.path.join(directory, RUN_PRESET_DIRNAME)
    if is_preset_directory(nested):
        return TrainedModelFiles("preset", nested, os.path.join(nested, PRESET_VOCABULARY_PATH))
    return None


def find_trained_model(directory):
    """The `TrainedModelFiles` of ``directory``: a run directory of
    ``keras-transformer train``, a keras-hub preset directory
    (``TransformerSeq2SeqLM.save_to_preset``), or a run directory with such a
    preset in ``preset/``. `Translator`, ``translate``, ``evaluate`` and both
    exports load models through it.

    Raises:
        FileNotFoundError: naming the directory and what a trained model
            directory holds, when it is neither.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Model directory not found: {directory!r}")
    files = locate_trained_model(directory)
    if files is not None:
        return files
    raise FileNotFoundError(
        f"No trained model in {directory!r}: expected {MODEL_FILENAME} and "
        f"{VOCABULARY_FILENAME} (a run directory of `keras-transformer train`) "
        f"or {PRESET_CONFIG_FILENAME}, model.weights.h5 and "
        f"{PRESET_VOCABULARY_PATH} (a preset written by save_to_preset)."
    )
