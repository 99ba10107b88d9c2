"""Export: a strings-in/strings-out SavedModel for TF Serving
(`saved_model`), and a CTranslate2 model (`ctranslate2_converter`) with its
runtime translator (`ctranslate2_translator`)."""
