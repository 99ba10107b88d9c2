"""Importers of models trained elsewhere: one module per source format."""

from keras_transformer.convert.marian import (
    FORMATS,
    ConversionError,
    convert,
    convert_marian,
)

__all__ = ["FORMATS", "ConversionError", "convert", "convert_marian"]
