"""`TransformerSeq2SeqLMPreprocessor`: string pairs -> ``(x, y, sample_weight)``."""

import sys

import keras
import numpy as np
from keras_hub.layers import StartEndPacker
from keras_hub.models import Seq2SeqLMPreprocessor

from keras_transformer.models.transformer import (
    transformer_presets as preset_lib,
)
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.models.transformer.transformer_tokenizer import (
    TransformerTokenizer,
)
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID
from keras_transformer.utils.private_apis import preprocessing_function
from keras_transformer.utils.run_files import (
    PREPROCESSOR_CONFIG_FILE,
    SOURCE_TOKENIZER_CONFIG_FILE,
)


def _tensorflow_of(x):
    """TensorFlow when ``x`` is one of its tensors (inside ``tf.data``, or
    converted by `preprocessing_function`), else None; TensorFlow is not
    imported for the check."""
    tf = sys.modules.get("tensorflow")
    return tf if tf is not None and tf.is_tensor(x) else None


def _without_end_token(token_ids):
    """EOS -> PAD: the decoder input is BOS + target, as in the pipeline.

    (keras-hub's packers leave EOS in the decoder input of sequences shorter
    than the padded length; its label is padding, so the loss is the same,
    but the model inputs would differ from `make_dataset`'s.)
    """
    tf = _tensorflow_of(token_ids)
    if tf is not None:
        return tf.where(tf.equal(token_ids, EOS_ID), tf.zeros_like(token_ids), token_ids)
    token_ids = np.asarray(token_ids)
    return np.where(token_ids == EOS_ID, np.zeros_like(token_ids), token_ids)


def _empty_text_like(text):
    """Empty decoder prompts, one per string of ``text``."""
    tf = _tensorflow_of(text)
    if tf is not None:
        return tf.fill(tf.shape(text), "")
    if isinstance(text, (str, bytes)):
        return ""
    return [""] * len(text)


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerSeq2SeqLMPreprocessor(Seq2SeqLMPreprocessor):
    """Turns ``{"encoder_text", "decoder_text"}`` strings into model inputs.

    The same tensors as the package's `tf.data` pipeline
    (`keras_transformer.data.make_dataset`), padded to fixed lengths instead
    of length buckets::

        x = {
            "encoder_token_ids": source ids + [EOS],   # (batch, encoder_sequence_length)
            "decoder_token_ids": [BOS] + target ids,   # (batch, decoder_sequence_length)
        }
        y = target ids + [EOS]                         # (batch, decoder_sequence_length)
        sample_weight = y != PAD                       # (batch, decoder_sequence_length)

    i.e. the decoder input is the target shifted right; padding is
    ``PAD_ID`` (0). Longer sequences are truncated, keeping the final EOS
    (the pipeline's ``length_handling="truncate"``). Runs eagerly on Python
    strings (any backend) and inside ``tf.data`` (``dataset.map(preprocessor)``,
    under every backend).

    A model whose sources have a SentencePiece model of their own, over
    the same ids as the targets' (an imported Marian model,
    `keras_transformer.convert`), takes it as ``source_tokenizer``: the
    ``"encoder_text"`` is then tokenized with it and the ``"decoder_text"``
    (and the generated ids) with ``tokenizer``. ``save_to_preset`` writes
    it as ``source_tokenizer.json`` and
    ``assets/source_tokenizer/vocabulary.spm`` beside the tokenizer's files.

    Args:
        tokenizer: a `TransformerTokenizer`: the shared vocabulary, or the
            targets' one where ``source_tokenizer`` is given.
        encoder_sequence_length: int. Padded encoder length, EOS included.
            Defaults to 128.
        decoder_sequence_length: int. Padded decoder/label length, BOS/EOS
            included. Defaults to 128.
        source_tokenizer: a `TransformerTokenizer` or None. The sources' own
            SentencePiece model; None (the default) tokenizes both sides
            with ``tokenizer``. Its ``config_file`` is set to
            ``"source_tokenizer.json"`` (the name of its preset files).

    Call arguments:
        x: dict with ``"encoder_text"`` and ``"decoder_text"`` (str, list of
            str or string tensor).
        y, sample_weight: must be None (the labels come from
            ``"decoder_text"``).
        encoder_sequence_length, decoder_sequence_length: optional overrides.

    Example:

    ```python
    preprocessor = TransformerSeq2SeqLMPreprocessor(
        tokenizer, encoder_sequence_length=32, decoder_sequence_length=32)
    x, y, sample_weight = preprocessor(
        {"encoder_text": ["one"], "decoder_text": ["eins"]})
    dataset = tf.data.Dataset.from_tensor_slices(pairs).batch(16).map(preprocessor)
    ```
    """

    backbone_cls = TransformerBackbone
    tokenizer_cls = TransformerTokenizer

    @classmethod
    def from_preset(cls, preset, config_file=PREPROCESSOR_CONFIG_FILE, **kwargs):
        """keras-hub's `from_preset`; a preset whose backbone is a
        `Transformer` (earlier versions, ``keras-transformer train``) or a
        `TransformerBackbone` loads the same (see
        `transformer_presets.load_family_preset_layer`)."""
        preprocessor = preset_lib.load_family_preset_layer(
            cls, preset, config_file, **kwargs
        )
        if preprocessor is not None:
            return preprocessor
        return super().from_preset(preset, config_file=config_file, **kwargs)

    def __init__(
        self,
        tokenizer,
        encoder_sequence_length=128,
        decoder_sequence_length=128,
        source_tokenizer=None,
        **kwargs,
    ):
        for name, value in (
            ("encoder_sequence_length", encoder_sequence_length),
            ("decoder_sequence_length", decoder_sequence_length),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                raise ValueError(
                    f"{name} must be an int >= 2 (a token and BOS/EOS). "
                    f"Received: {name}={value!r}"
                )
        if source_tokenizer is not None and not isinstance(
            source_tokenizer, TransformerTokenizer
        ):
            raise ValueError(
                "source_tokenizer must be a TransformerTokenizer or None. "
                f"Received: {type(source_tokenizer).__name__}"
            )
        super().__init__(
            tokenizer=tokenizer,
            encoder_sequence_length=encoder_sequence_length,
            decoder_sequence_length=decoder_sequence_length,
            **kwargs,
        )
        if source_tokenizer is not None:
            # Its own preset files, beside (not over) the tokenizer's.
            source_tokenizer.config_file = SOURCE_TOKENIZER_CONFIG_FILE
        self.source_tokenizer = source_tokenizer

    @property
    def encoder_tokenizer(self):
        """The tokenizer of ``"encoder_text"``: ``source_tokenizer``, or
        ``tokenizer`` where the sides share one vocabulary."""
        if self.source_tokenizer is not None:
            return self.source_tokenizer
        return self.tokenizer

    def build(self, input_shape):
        # Source: ids + EOS (no BOS). Decoder: BOS + ids + EOS, split into the
        # input (without the last token) and the labels (without BOS).
        self.encoder_packer = StartEndPacker(
            start_value=None,
            end_value=EOS_ID,
            pad_value=PAD_ID,
            sequence_length=self.encoder_sequence_length,
            return_padding_mask=True,
        )
        self.decoder_packer = StartEndPacker(
            start_value=BOS_ID,
            end_value=EOS_ID,
            pad_value=PAD_ID,
            sequence_length=self.decoder_sequence_length,
            return_padding_mask=True,
        )
        self.built = True

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "encoder_sequence_length": self.encoder_sequence_length,
                "decoder_sequence_length": self.decoder_sequence_length,
            }
        )
        if self.source_tokenizer is not None:
            config["source_tokenizer"] = keras.layers.serialize(self.source_tokenizer)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("source_tokenizer"), dict):
            config["source_tokenizer"] = keras.layers.deserialize(
                config["source_tokenizer"]
            )
        return super().from_config(config)

    @preprocessing_function
    def call(
        self,
        x,
        y=None,
        sample_weight=None,
        *,
        encoder_sequence_length=None,
        decoder_sequence_length=None,
        sequence_length=None,
    ):
        if not isinstance(x, dict) or not {"encoder_text", "decoder_text"} <= set(x):
            raise ValueError(
                "TransformerSeq2SeqLMPreprocessor expects a dict with keys "
                "'encoder_text' and 'decoder_text'. Received: "
                f"{sorted(x) if isinstance(x, dict) else type(x).__name__}"
            )
        if y is not None or sample_weight is not None:
            raise ValueError(
                "TransformerSeq2SeqLMPreprocessor makes the labels from "
                "x['decoder_text']; pass y=None and sample_weight=None."
            )
        encoder_sequence_length = (
            encoder_sequence_length or self.encoder_sequence_length
        )
        decoder_sequence_length = (
            decoder_sequence_length or sequence_length or self.decoder_sequence_length
        )
        encoder_token_ids, _ = self.encoder_packer(
            self.encoder_tokenizer(x["encoder_text"]),
            sequence_length=encoder_sequence_length,
        )
        decoder_token_ids, decoder_padding_mask = self.decoder_packer(
            self.tokenizer(x["decoder_text"]),
            sequence_length=decoder_sequence_length + 1,
        )
        x = {
            "encoder_token_ids": encoder_token_ids,
            "decoder_token_ids": _without_end_token(decoder_token_ids[..., :-1]),
        }
        y = decoder_token_ids[..., 1:]
        sample_weight = decoder_padding_mask[..., 1:]
        return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)

    @preprocessing_function
    def generate_preprocess(
        self,
        x,
        *,
        encoder_sequence_length=None,
        decoder_sequence_length=None,
        sequence_length=None,
    ):
        """Source strings (or ``{"encoder_text", "decoder_text"}`` with a
        target prefix) -> ``{"encoder_token_ids", "decoder_token_ids"}``; the
        decoder ids are BOS plus the prefix, without EOS."""
        if not self.built:
            self.build(None)
        if isinstance(x, dict):
            encoder_text, decoder_text = x["encoder_text"], x["decoder_text"]
        else:
            encoder_text = x
            decoder_text = _empty_text_like(encoder_text)
        encoder_sequence_length = (
            encoder_sequence_length or self.encoder_sequence_length
        )
        decoder_sequence_length = (
            decoder_sequence_length or sequence_length or self.decoder_sequence_length
        )
        encoder_token_ids, _ = self.encoder_packer(
            self.encoder_tokenizer(encoder_text), sequence_length=encoder_sequence_length
        )
        decoder_token_ids, _ = self.decoder_packer(
            self.tokenizer(decoder_text),
            sequence_length=decoder_sequence_length,
            add_end_value=False,
        )
        return {
            "encoder_token_ids": encoder_token_ids,
            "decoder_token_ids": decoder_token_ids,
        }

    def generate_postprocess(self, x):
        """Token ids ``(batch, length)`` (or a dict holding
        ``"decoder_token_ids"``) -> strings, each cut at its first EOS with
        PAD and BOS dropped."""
        if isinstance(x, dict):
            x = x["decoder_token_ids"]
        ids = keras.ops.convert_to_numpy(x).tolist()
        kept = []
        for sequence in ids:
            row = []
            for token in sequence:
                if token == EOS_ID:
                    break
                if token not in (PAD_ID, BOS_ID):
                    row.append(int(token))
            kept.append(row)
        return self.tokenizer.detokenize(kept)
