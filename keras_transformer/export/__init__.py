"""Export: a strings-in/strings-out SavedModel for TF Serving
(`saved_model`), and a CTranslate2 model (`ctranslate2_converter`) with its
runtime translator (`ctranslate2_translator`), and a Hugging Face
``MarianMTModel`` directory (`transformers_exporter`).

Every name imports without TensorFlow and CTranslate2; the SavedModel
export raises an ImportError naming TensorFlow where it is not installed,
the CTranslate2 ones naming ``ctranslate2``.
"""

from keras_transformer.export.ctranslate2_converter import (
    export_ctranslate2,
    export_run_directory_to_ctranslate2,
)
from keras_transformer.export.ctranslate2_translator import CTranslate2Translator
from keras_transformer.export.saved_model import export_saved_model
from keras_transformer.export.transformers_exporter import export_to_transformers

__all__ = [
    "CTranslate2Translator",
    "export_ctranslate2",
    "export_run_directory_to_ctranslate2",
    "export_saved_model",
    "export_to_transformers",
]
