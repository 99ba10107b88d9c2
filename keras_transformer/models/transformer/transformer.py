"""`Transformer`: the backbone with its tied output projection, logits out.

The model that ``keras-transformer train`` builds and saves (as the run
directory's keras-hub preset; ``model.keras`` in earlier versions), that
`Translator` and both exports load, and that the
package's earlier versions called by this name; its config, its layers and
the layout of its saved weights are `TransformerBackbone`'s, so files saved
by every earlier version load with the same outputs.
"""

import os

import keras

from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.utils.file_io import check_loaded_weights, verify_checksum


@keras.saving.register_keras_serializable(package="keras_transformer")
class Transformer(TransformerBackbone):
    """The Transformer of "Attention Is All You Need": `TransformerBackbone`
    with the tied output projection (§3.4) in its graph.

    Takes `TransformerBackbone`'s arguments (the paper's by default; see
    there) and its inputs, ``{"encoder_token_ids": int (batch,
    source_length), "decoder_token_ids": int (batch, target_length)}``, with
    padding id 0 (and the segment ids of packed rows). Output: float32 logits
    ``(batch, target_length, vocabulary_size)``,
    ``token_embedding(decoder_sequence_output, reverse=True)``: position i
    predicts the target token i. Train it with `keras_transformer.train` or
    ``compile``/``fit`` on token ids; `TransformerSeq2SeqLM` applies the same
    projection over a `TransformerBackbone` for keras-hub's task (strings
    in, ``generate``).

    Example:
    >>> model = Transformer.from_preset("tiny", vocabulary_size=100)
    >>> inputs = {"encoder_token_ids": np.array([[5, 6, 7, 0]]),
    ...           "decoder_token_ids": np.array([[2, 8, 9]])}
    >>> model(inputs).shape
    (1, 3, 100)

    References:
        Vaswani et al., 2017, "Attention Is All You Need", §3.
    """

    def _sequence_outputs(self, encoder_output, decoder_output):
        return self.logits(decoder_output)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        """`keras.Model.load_weights`, verified: a file with a ``.sha256``
        beside it (every weights file the package writes) must match it, and
        the loaded values must be finite; otherwise a ValueError names the
        file (and the variables holding NaN or inf).

        Every weights file of a run loads through here: the preset's
        ``model.weights.h5`` (`Translator`, the command line, both exports),
        epoch and best checkpoints, checkpoint averaging.
        """
        local = isinstance(filepath, (str, os.PathLike)) and os.path.isfile(filepath)
        if local:
            verify_checksum(filepath)
        super().load_weights(filepath, skip_mismatch=skip_mismatch, **kwargs)
        check_loaded_weights(self.weights, filepath)
