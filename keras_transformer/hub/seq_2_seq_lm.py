"""`TransformerSeq2SeqLM`: the keras-hub task: ``fit`` on strings, ``generate``, presets."""

import json
import os

import keras
from keras_hub.models import Seq2SeqLM
from keras_hub.src.models.causal_lm import CausalLM

from keras_transformer.hub import presets as preset_lib
from keras_transformer.hub.seq_2_seq_lm_preprocessor import (
    TransformerSeq2SeqLMPreprocessor,
)
from keras_transformer.hub.tokenizer import TransformerTokenizer
from keras_transformer.losses import LabelSmoothedCrossEntropy
from keras_transformer.metrics import MaskedTokenAccuracy
from keras_transformer.model import Transformer
from keras_transformer.schedules import transformer_optimizer
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

SEARCHES = ("beam", "greedy")


class _TranslatorTokenizer:
    """The interface `Translator` reads (``encode``, ``decode``,
    ``id_to_piece``, ``vocabulary_size``) over a `TransformerTokenizer`, with
    `SubwordTokenizer`'s semantics (no BOS/EOS added; decode cuts at EOS)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.vocabulary_size = tokenizer.vocabulary_size()

    def encode(self, sentences):
        if not sentences:
            return []
        return [list(map(int, ids)) for ids in self.tokenizer.tokenize(list(sentences))]

    def decode(self, ids):
        kept = []
        for sequence in ids:
            row = []
            for token in sequence:
                token = int(token)
                if token == EOS_ID:
                    break
                if token not in (PAD_ID, BOS_ID):
                    row.append(token)
            kept.append(row)
        if not kept:
            return []
        return list(self.tokenizer.detokenize(kept))

    def id_to_piece(self, ids):
        return [self.tokenizer.id_to_token(int(i)) for i in ids]


def _check_generation_settings(beam_size, alpha, max_extra_length, max_source_length, batch_size):
    for name, value in (
        ("beam_size", beam_size),
        ("max_extra_length", max_extra_length),
        ("max_source_length", max_source_length),
        ("batch_size", batch_size),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int. Received: {name}={value!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha < 0:
        raise ValueError(f"alpha must be a float >= 0. Received: alpha={alpha!r}")


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerSeq2SeqLM(Seq2SeqLM):
    """A trained Transformer translator as a keras-hub `Seq2SeqLM` task.

    Wraps a `Transformer` backbone and a `TransformerSeq2SeqLMPreprocessor`:
    ``fit`` takes ``{"encoder_text": [...], "decoder_text": [...]}`` string
    pairs, ``generate(strings)`` translates, ``save_to_preset(dir)`` /
    ``from_preset(dir)`` round-trip weights, config, tokenizer and the
    generation defaults below.

    ``generate`` runs the package's own cached beam search with the paper's
    length penalty (§6.1), the same search as `keras_transformer.Translator`
    (keras-hub's `BeamSampler` has no length penalty, so keras-hub's
    ``sampler`` machinery is not used); ``beam_size=1`` (or
    ``compile(sampler="greedy")``) is greedy search.

    ``compile()`` defaults to the paper's recipe (§5.3, §5.4): Adam with
    beta_1=0.9, beta_2=0.98, epsilon=1e-9 and the warmup schedule
    ``d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)``, label-smoothed
    cross-entropy (0.1) over non-padding tokens, masked token accuracy.

    ``from_preset`` accepts a keras-hub preset directory, a run directory of
    ``keras-transformer train`` (``model.keras`` + ``vocab.spm`` +
    ``config.json``, or a ``preset/`` inside it) or a name registered with
    `keras_transformer.hub.register_trained_preset`. Architecture presets
    ("tiny", ..., "big") have no weights: use `Transformer.from_preset`.

    Args:
        backbone: a `keras_transformer.Transformer`.
        preprocessor: a `TransformerSeq2SeqLMPreprocessor` or None (then
            ``fit`` takes token ids and ``generate`` is unavailable).
        beam_size: int. Default beam size of ``generate``. Defaults to 4.
        alpha: float. Default length-penalty exponent. Defaults to 0.6.
        max_extra_length: int. Output length limit = source length + this.
            Defaults to 50.
        max_source_length: int. Longer sources are truncated (EOS kept).
            Defaults to 256.
        batch_size: int. Sentences per generation batch. Defaults to 32.

    Example:

    ```python
    lm = keras_transformer.TransformerSeq2SeqLM.from_preset("runs/numbers")
    lm.generate(["three hundred twelve"])  # ["dreihundertzwölf"]
    lm.fit({"encoder_text": src, "decoder_text": tgt}, batch_size=32)
    lm.save_to_preset("presets/numbers_v2")
    ```
    """

    backbone_cls = Transformer
    preprocessor_cls = TransformerSeq2SeqLMPreprocessor

    def __init__(
        self,
        backbone,
        preprocessor=None,
        beam_size=4,
        alpha=0.6,
        max_extra_length=50,
        max_source_length=256,
        batch_size=32,
        **kwargs,
    ):
        if not isinstance(backbone, Transformer):
            raise ValueError(
                "TransformerSeq2SeqLM needs a keras_transformer.Transformer "
                f"backbone. Received: {type(backbone).__name__}"
            )
        _check_generation_settings(
            beam_size, alpha, max_extra_length, max_source_length, batch_size
        )
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor

        # === Functional model ===
        inputs = backbone.input
        outputs = backbone(inputs)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.beam_size = beam_size
        self.alpha = float(alpha)
        self.max_extra_length = max_extra_length
        self.max_source_length = max_source_length
        self.batch_size = batch_size
        self._search = "beam"
        self._translator = None
        self._translator_key = None

    def compile(
        self,
        optimizer="auto",
        loss="auto",
        *,
        weighted_metrics="auto",
        sampler="beam",
        warmup_steps=4000,
        learning_rate_scale=1.0,
        label_smoothing=0.1,
        **kwargs,
    ):
        """Configures training (the paper's recipe by default) and the search.

        Args:
            optimizer: "auto" (Adam 0.9/0.98/1e-9 with the warmup schedule),
                or any Keras optimizer.
            loss: "auto" (`LabelSmoothedCrossEntropy(label_smoothing)`) or
                any Keras loss.
            weighted_metrics: "auto" (`MaskedTokenAccuracy`) or a list.
            sampler: "beam" (default: beam search with ``beam_size``) or
                "greedy" (beam size 1). keras-hub's random samplers are not
                supported.
            warmup_steps: int. Of the "auto" schedule. Defaults to 4000.
            learning_rate_scale: float. Multiplies the "auto" schedule.
            label_smoothing: float. Of the "auto" loss. Defaults to 0.1.
            **kwargs: passed to `keras.Model.compile`.
        """
        if sampler not in SEARCHES:
            raise ValueError(
                f"sampler must be one of {SEARCHES}: generate runs the package's "
                "beam search with length penalty (keras-hub samplers are not "
                f"used). Received: sampler={sampler!r}"
            )
        if optimizer == "auto":
            optimizer = transformer_optimizer(
                self.backbone.d_model, warmup_steps=warmup_steps, scale=learning_rate_scale
            )
        if loss == "auto":
            loss = LabelSmoothedCrossEntropy(label_smoothing=label_smoothing)
        if weighted_metrics == "auto":
            weighted_metrics = [MaskedTokenAccuracy()]
        # Skips `CausalLM.compile`, which sets up a keras-hub sampler.
        super(CausalLM, self).compile(
            optimizer=optimizer, loss=loss, weighted_metrics=weighted_metrics, **kwargs
        )
        self._search = sampler
        self.generate_function = None

    # --- generation ---

    def translator(self):
        """The `Translator` that ``generate`` uses (rebuilt when the weights
        change shape, e.g. after ``enable_lora`` or ``quantize``)."""
        from keras_transformer.translator import Translator

        if self.preprocessor is None:
            raise ValueError(
                "generate needs a preprocessor (its tokenizer); this "
                "TransformerSeq2SeqLM has preprocessor=None."
            )
        key = (
            id(self.preprocessor.tokenizer),
            self.max_source_length,
            self.batch_size,
            tuple(id(v) for v in self.backbone.variables),
        )
        if self._translator_key != key:
            self._translator = Translator(
                self.backbone,
                _TranslatorTokenizer(self.preprocessor.tokenizer),
                max_source_length=self.max_source_length,
                batch_size=self.batch_size,
            )
            self._translator_key = key
        return self._translator

    def generate(
        self,
        inputs,
        max_length=None,
        beam_size=None,
        alpha=None,
        max_extra_length=None,
        num_return=1,
        return_scores=False,
        min_output_length=0,
        max_output_lengths=None,
        batch_size=None,
        verbose=False,
    ):
        """Translates strings with the package's beam search.

        Args:
            inputs: str, list of str, or a dict whose ``"encoder_text"`` holds
                them (``"decoder_text"`` prefixes are not supported yet).
            max_length: int. keras-hub's name for a cap on the output length
                (tokens, EOS included) of every sentence.
            beam_size, alpha, max_extra_length: default to the task's settings
                (saved in the preset); ``compile(sampler="greedy")`` makes
                the default beam size 1.
            num_return, return_scores, min_output_length, max_output_lengths,
            batch_size, verbose: as in `Translator.translate`.

        Returns:
            As `Translator.translate`: a str for a str input, else a list.
        """
        if isinstance(inputs, dict):
            prefixes = inputs.get("decoder_text")
            if prefixes is not None and any(
                p for p in ([prefixes] if isinstance(prefixes, str) else prefixes)
            ):
                raise ValueError(
                    "generate does not support decoder_text prefixes yet; "
                    "pass the source strings only."
                )
            inputs = inputs["encoder_text"]
        scalar = isinstance(inputs, (str, bytes))
        sentences = [inputs] if scalar else list(inputs)
        sentences = [s.decode("utf-8") if isinstance(s, bytes) else s for s in sentences]
        if beam_size is None:
            beam_size = 1 if self._search == "greedy" else self.beam_size
        if max_length is not None:
            caps = [max_length] * len(sentences)
            if max_output_lengths is not None:
                caps = [min(a, b) for a, b in zip(caps, max_output_lengths)]
            max_output_lengths = caps
        result = self.translator().translate(
            sentences,
            beam_size=beam_size,
            alpha=self.alpha if alpha is None else alpha,
            max_extra_length=(
                self.max_extra_length if max_extra_length is None else max_extra_length
            ),
            batch_size=batch_size,
            num_return=num_return,
            return_scores=return_scores,
            min_output_length=min_output_length,
            max_output_lengths=max_output_lengths,
            verbose=verbose,
        )
        if scalar:
            if return_scores:
                return result[0][0], result[1][0]
            return result[0]
        return result

    # --- configuration and presets ---

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "beam_size": self.beam_size,
                "alpha": self.alpha,
                "max_extra_length": self.max_extra_length,
                "max_source_length": self.max_source_length,
                "batch_size": self.batch_size,
            }
        )
        return config

    @classmethod
    def from_preset(cls, preset, load_weights=True, **kwargs):
        """Loads a trained preset: a preset directory (``save_to_preset``), a
        run directory of ``keras-transformer train``, or a registered name.

        Keyword arguments override saved settings (``beam_size=1``,
        ``preprocessor=...``, ``dtype=...``).

        Raises:
            ValueError: naming the file, for a directory without weights or
                tokenizer, a tokenizer that does not fit the model, or a
                preset of another architecture.
        """
        directory = preset_lib.resolve_trained_preset(preset)
        if preset_lib.is_run_directory(directory):
            return cls._from_run_directory(directory, load_weights, **kwargs)
        preset_lib.check_preset_directory(
            directory, require_tokenizer="preprocessor" not in kwargs
        )
        if "://" not in directory:
            config = preset_lib._read_json(os.path.join(directory, preset_lib.CONFIG_FILE))
            if "preprocessor" not in kwargs:
                preset_lib.check_vocabulary_file(
                    os.path.join(directory, preset_lib.TOKENIZER_ASSET), config["config"]
                )
        task = super().from_preset(directory, load_weights=load_weights, **kwargs)
        if task.preprocessor is not None:
            preset_lib.check_tokenizer_matches(
                task.preprocessor.tokenizer,
                task.backbone,
                source=f"The tokenizer of {directory!r}",
            )
        return task

    @classmethod
    def _from_run_directory(cls, directory, load_weights=True, **kwargs):
        from keras_transformer.run_directory import (
            CONFIG_FILENAME,
            MODEL_FILENAME,
            VOCABULARY_FILENAME,
            load_model,
        )

        preset_lib.check_run_directory(directory)
        model_path = os.path.join(directory, MODEL_FILENAME)
        vocabulary_path = os.path.join(directory, VOCABULARY_FILENAME)
        backbone = kwargs.pop("backbone", None)
        if backbone is None:
            backbone = load_model(model_path, compile=False)
            if not isinstance(backbone, Transformer):
                raise ValueError(
                    f"{model_path!r} holds a {type(backbone).__name__}, not a "
                    "keras_transformer Transformer."
                )
            if not load_weights:
                backbone = Transformer.from_config(backbone.get_config())
        settings = {}
        config_path = os.path.join(directory, CONFIG_FILENAME)
        if os.path.isfile(config_path):
            run_config = preset_lib._read_json(config_path)
            for key in ("beam_size", "alpha", "max_extra_length"):
                if run_config.get(key) is not None:
                    settings[key] = run_config[key]
            if run_config.get("max_length"):
                settings["sequence_length"] = int(run_config["max_length"])
        preprocessor = kwargs.pop("preprocessor", None)
        if preprocessor is None:
            preset_lib.check_vocabulary_file(vocabulary_path, backbone.get_config())
            with open(vocabulary_path, "rb") as f:
                tokenizer = TransformerTokenizer(proto=f.read())
            length = settings.get("sequence_length", 128)
            preprocessor = TransformerSeq2SeqLMPreprocessor(
                tokenizer,
                encoder_sequence_length=length,
                decoder_sequence_length=length,
            )
        settings.pop("sequence_length", None)
        return cls(backbone=backbone, preprocessor=preprocessor, **{**settings, **kwargs})
