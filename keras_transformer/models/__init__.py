"""Model families. One today: `keras_transformer.models.transformer`."""
