"""`TransformerSeq2SeqLM`: the keras-hub task: ``fit`` on strings, ``generate``, presets."""

import dataclasses
import os

import keras
from keras_hub.models import Seq2SeqLM

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer import transformer_presets as preset_lib
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_model,
    load_run_model,
)
from keras_transformer.models.transformer.transformer_seq_2_seq_lm_preprocessor import (
    TransformerSeq2SeqLMPreprocessor,
)
from keras_transformer.models.transformer.transformer_tokenizer import (
    TransformerTokenizer,
)
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.objectives.metrics import MaskedTokenAccuracy
from keras_transformer.objectives.schedules import transformer_optimizer
from keras_transformer.special_tokens import check_language_tag_position
from keras_transformer.utils.file_io import check_loaded_weights, read_json
from keras_transformer.utils.run_files import TASK_CONFIG_FILE
from keras_transformer.utils.private_apis import compile_task_without_sampler
from keras_transformer.utils.quantization import quantize_with_package_default

SEARCHES = ("beam", "greedy")
# The backbone of the presets of earlier versions: a `Transformer`, logits out.
TRANSFORMER_REGISTERED_NAME = "keras_transformer>Transformer"
_DECODE_FIELDS = tuple(field.name for field in dataclasses.fields(DecodeOptions))


def _strings(values, name):
    if isinstance(values, dict) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a str or a list of str. Received: {type(values).__name__}")
    strings = []
    for value in values:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        elif hasattr(value, "numpy"):  # a tf.string scalar
            value = value.numpy().decode("utf-8")
        if not isinstance(value, str):
            raise ValueError(
                f"{name} must hold strings. Received an item of type {type(value).__name__}"
            )
        strings.append(value)
    return strings


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerSeq2SeqLM(Seq2SeqLM):
    """A trained Transformer translator as a keras-hub `Seq2SeqLM` task.

    Wraps a `TransformerBackbone` and a `TransformerSeq2SeqLMPreprocessor`,
    and applies the tied output projection to the backbone's
    ``decoder_sequence_output`` (``backbone.token_embedding(x,
    reverse=True)``, the paper's shared matrix, §3.4, with the learned
    output bias of a model built with ``output_bias=True``). ``fit`` takes
    ``{"encoder_text": [...], "decoder_text": [...]}`` string pairs,
    ``generate(strings)`` translates, ``save_to_preset(dir)`` /
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

    ``from_preset`` accepts a keras-hub preset directory (a run directory of
    ``keras-transformer train`` is one), a run directory of earlier versions
    (``model.keras`` + ``vocab.spm`` + ``config.json``, or a ``preset/``
    inside it) or a name registered with
    `keras_transformer.register_trained_preset`. Architecture presets
    ("tiny", ..., "big") have no weights: use `TransformerBackbone.from_preset`.

    Args:
        backbone: a `keras_transformer.TransformerBackbone`. A
            `keras_transformer.Transformer` (the backbone with the
            projection, as earlier versions took, and as presets and run
            directories of earlier versions hold) is accepted too: its
            logits are the task's.
        preprocessor: a `TransformerSeq2SeqLMPreprocessor` or None (then
            ``fit`` takes token ids and ``generate`` is unavailable).
        decode_options: a `keras_transformer.decoding.DecodeOptions` (or a
            dict of its fields): the defaults of ``generate``, saved in the
            preset. Defaults to the paper's beam 4, alpha 0.6.
        batch_size: int. Sentences per generation batch. Defaults to 32.
        language_tag: ``"source"`` or ``"target"``: where a model trained
            with several target languages finds its language tag
            (`keras_transformer.Translator`'s ``language_tag``), saved in
            the preset. ``from_preset`` of a run directory reads it from
            the run's ``train_config.json``; otherwise it defaults to
            ``"source"``.
        beam_size, alpha, max_extra_length, max_source_length, and any other
            `DecodeOptions` field: replace that field of ``decode_options``
            (keras-hub style shortcuts, e.g. ``beam_size=1``).

    Example:

    ```python
    lm = keras_transformer.TransformerSeq2SeqLM.from_preset("runs/numbers")
    lm.generate(["three hundred twelve"])  # ["dreihundertzwölf"]
    lm.fit({"encoder_text": src, "decoder_text": tgt}, batch_size=32)
    lm.save_to_preset("presets/numbers_v2")
    ```
    """

    backbone_cls = TransformerBackbone
    preprocessor_cls = TransformerSeq2SeqLMPreprocessor

    def __init__(
        self,
        backbone,
        preprocessor=None,
        decode_options=None,
        batch_size=32,
        language_tag="source",
        **kwargs,
    ):
        if not isinstance(backbone, TransformerBackbone):
            raise ValueError(
                "TransformerSeq2SeqLM needs a keras_transformer.TransformerBackbone "
                f"backbone. Received: {type(backbone).__name__}"
            )
        # Validated once, by DecodeOptions (errors name the field).
        fields = {name: kwargs.pop(name) for name in _DECODE_FIELDS if name in kwargs}
        if decode_options is None:
            decode_options = DecodeOptions()
        elif isinstance(decode_options, dict):
            decode_options = DecodeOptions.from_dict(decode_options)
        elif not isinstance(decode_options, DecodeOptions):
            raise ValueError(
                "decode_options must be a DecodeOptions or a dict of its fields. "
                f"Received: {type(decode_options).__name__}"
            )
        decode_options = decode_options.replace(**fields) if fields else decode_options
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int. Received: batch_size={batch_size!r}")
        check_language_tag_position(language_tag)
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor

        # === Functional model ===
        inputs = backbone.input
        outputs = backbone(inputs)
        if not isinstance(backbone, Transformer):
            outputs = backbone.token_embedding(
                outputs["decoder_sequence_output"], reverse=True
            )
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.decode_options = decode_options
        self.batch_size = batch_size
        self.language_tag = language_tag
        self._search = "beam"
        self._translator = None
        self._translator_key = None

    # keras-hub style read-only views of the generation defaults.
    beam_size = property(lambda self: self.decode_options.beam_size)
    alpha = property(lambda self: self.decode_options.alpha)
    max_extra_length = property(lambda self: self.decode_options.max_extra_length)
    max_source_length = property(lambda self: self.decode_options.max_source_length)

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
        compile_task_without_sampler(
            self, optimizer=optimizer, loss=loss, weighted_metrics=weighted_metrics, **kwargs
        )
        self._search = sampler
        self.generate_function = None

    # --- generation ---

    def translator(self):
        """The `Translator` that ``generate`` uses (rebuilt when the weights
        change shape, e.g. after ``enable_lora`` or ``quantize``)."""

        if self.preprocessor is None:
            raise ValueError(
                "generate needs a preprocessor (its tokenizer); this "
                "TransformerSeq2SeqLM has preprocessor=None."
            )
        source_tokenizer = getattr(self.preprocessor, "source_tokenizer", None)
        key = (
            id(self.preprocessor.tokenizer),
            id(source_tokenizer),
            self.max_source_length,
            self.batch_size,
            self.language_tag,
            tuple(id(v) for v in self.backbone.variables),
        )
        if self._translator_key != key:
            self._translator = Translator(
                self.backbone,
                self.preprocessor.tokenizer,
                max_source_length=self.max_source_length,
                batch_size=self.batch_size,
                language_tag=self.language_tag,
                source_tokenizer=source_tokenizer,
            )
            self._translator_key = key
        return self._translator

    def generate(
        self,
        inputs,
        max_length=None,
        options=None,
        batch_size=None,
        return_scores=False,
        return_alignments=False,
        alignment_layer=-1,
        max_output_lengths=None,
        verbose=False,
        constraints=None,
        target_language=None,
        **option_overrides,
    ):
        """Translates strings on the package's one decode path (the search of
        `keras_transformer.Translator`).

        Args:
            inputs: str, list of str, or a dict with ``"encoder_text"`` (the
                sources) and optionally ``"decoder_text"`` (target prefixes,
                one per source: each output starts with that text, then the
                search continues; "" for none).
            max_length: int. keras-hub's name for a cap on the output length
                (tokens, EOS included) of every sentence.
            options: a `DecodeOptions`; defaults to the task's
                ``decode_options`` (saved in the preset), with beam size 1
                after ``compile(sampler="greedy")``.
            batch_size: int. Defaults to the task's ``batch_size``.
            return_scores, return_alignments, alignment_layer,
            max_output_lengths, verbose: as in `Translator.translate`.
            constraints: optional target phrases that every output
                contains (lexically constrained decoding, as
                `Translator.translate`'s): one list of str per source, or
                one list of str for a str input.
            target_language: for a model trained with several target
                languages (its vocabulary's language tags): the language to
                translate into, a code such as ``"fr"``, or one code per
                source (``Translator.translate``'s); required by such a
                model. Its tag goes where the task's ``language_tag`` says.
            **option_overrides: `DecodeOptions` fields replacing those of
                ``options``: ``beam_size=``, ``alpha=``, ``num_return=``
                (n-best), ``sampling=True, top_k=, top_p=, temperature=,
                seed=``, ``min_length=``, ...

        Returns:
            As `Translator.translate`: a str for a str input (a list of str
            with ``num_return > 1``), else a list; with ``return_scores``
            and/or ``return_alignments`` a tuple ``(texts, scores,
            alignments)`` of what was asked for.

        Raises:
            ValueError: a bad or unknown decode option (naming it), before
                any compilation.
        """
        if options is None:
            options = self.decode_options
            if self._search == "greedy" and "beam_size" not in option_overrides:
                options = options.replace(beam_size=1, num_return=1)
        translator = self.translator()
        options = translator.decode_options(options, **option_overrides)
        prefixes = None
        if isinstance(inputs, dict):
            unknown = sorted(set(inputs) - {"encoder_text", "decoder_text"})
            if unknown or "encoder_text" not in inputs:
                raise ValueError(
                    "generate takes a dict with 'encoder_text' (and optionally "
                    f"'decoder_text' prefixes). Received keys: {sorted(inputs)}"
                )
            prefixes = inputs.get("decoder_text")
            inputs = inputs["encoder_text"]
        scalar = isinstance(inputs, (str, bytes))
        sentences = _strings([inputs] if scalar else inputs, "encoder_text")
        if prefixes is not None:
            prefixes = _strings([prefixes] if isinstance(prefixes, (str, bytes)) else prefixes, "decoder_text")
            if len(prefixes) != len(sentences):
                raise ValueError(
                    f"decoder_text has {len(prefixes)} prefixes for "
                    f"{len(sentences)} sources; give one per source."
                )
        if scalar and constraints is not None:
            constraints = [constraints]
        if max_length is not None:
            caps = [max_length] * len(sentences)
            if max_output_lengths is not None:
                caps = [min(a, b) for a, b in zip(caps, max_output_lengths)]
            max_output_lengths = caps
        result = translator.translate(
            sentences,
            options,
            batch_size=batch_size,
            return_scores=return_scores,
            return_alignments=return_alignments,
            alignment_layer=alignment_layer,
            target_prefix=prefixes,
            max_output_lengths=max_output_lengths,
            verbose=verbose,
            constraints=constraints,
            target_language=target_language,
        )
        if not scalar:
            return result
        if isinstance(result, tuple):
            return tuple(part[0] for part in result)
        return result[0]

    def quantize(self, mode=None, config=None, **kwargs):
        """`TransformerBackbone.quantize` (int8: the package's) of the backbone's layers."""
        quantize_with_package_default(super().quantize, mode, config, **kwargs)

    # --- configuration and presets ---

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "decode_options": self.decode_options.to_dict(),
                "batch_size": self.batch_size,
                "language_tag": self.language_tag,
            }
        )
        return config

    def save_to_preset(self, preset_dir, max_shard_size=10):
        """keras-hub's preset files and ``model.weights.h5.sha256`` (loads check it)."""
        super().save_to_preset(preset_dir, max_shard_size=max_shard_size)
        preset_lib.write_weights_checksum(preset_dir)

    @classmethod
    @preset_lib.removes_converted_presets
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
            config = read_json(os.path.join(directory, preset_lib.CONFIG_FILE), "preset file")
            if "preprocessor" not in kwargs:
                preset_lib.check_vocabulary_file(
                    os.path.join(directory, preset_lib.TOKENIZER_ASSET), config["config"]
                )
                source_asset = preset_lib.source_vocabulary_asset(directory)
                if source_asset is not None:
                    preset_lib.check_vocabulary_file(source_asset, config["config"])
            if config.get("registered_name") == TRANSFORMER_REGISTERED_NAME:
                task = cls._from_transformer_preset(directory, load_weights, **kwargs)
            else:
                task = super().from_preset(directory, load_weights=load_weights, **kwargs)
                if load_weights and "backbone" not in kwargs:  # keras-hub loaded them.
                    weights_path = os.path.join(directory, preset_lib.MODEL_WEIGHTS_FILE)
                    check_loaded_weights(task.backbone.weights, weights_path)
        else:
            task = super().from_preset(directory, load_weights=load_weights, **kwargs)
        if task.preprocessor is not None:
            preset_lib.check_tokenizer_matches(
                task.preprocessor.tokenizer,
                task.backbone,
                source=f"The tokenizer of {directory!r}",
            )
            source_tokenizer = getattr(task.preprocessor, "source_tokenizer", None)
            if source_tokenizer is not None:
                preset_lib.check_tokenizer_matches(
                    source_tokenizer,
                    task.backbone,
                    source=f"The source tokenizer of {directory!r}",
                )
        return task

    @classmethod
    def _from_transformer_preset(cls, directory, load_weights=True, **kwargs):
        """A preset of earlier versions, whose ``config.json`` holds a
        `Transformer`: keras-hub's `Task.from_preset` finds the task of a
        preset by its backbone class, `TransformerBackbone` today, so such a
        preset loads here from its files: the `Transformer` with its weights,
        the preprocessor of ``preprocessor.json`` with its vocabulary, and
        the task's settings of ``task.json``."""
        backbone = kwargs.pop("backbone", None)
        if backbone is None:
            backbone_kwargs = {key: kwargs.pop(key) for key in ("dtype",) if key in kwargs}
            backbone = TransformerBackbone.from_preset(
                directory, load_weights=load_weights, **backbone_kwargs
            )
        preprocessor = kwargs.pop("preprocessor", None)
        if preprocessor is None:
            preprocessor = TransformerSeq2SeqLMPreprocessor.from_preset(directory)
        settings = {}
        task_path = os.path.join(directory, TASK_CONFIG_FILE)
        if os.path.isfile(task_path):
            task_config = read_json(task_path, "preset file").get("config", {})
            keys = ("decode_options", "batch_size", "language_tag")
            settings = {key: task_config[key] for key in keys if key in task_config}
        return cls(backbone=backbone, preprocessor=preprocessor, **{**settings, **kwargs})

    @classmethod
    def _from_run_directory(cls, directory, load_weights=True, **kwargs):

        files = find_trained_model(directory)
        backbone = kwargs.pop("backbone", None)
        if backbone is None:
            backbone = load_run_model(directory, Transformer, load_weights)
        settings = files.decoding_defaults()
        if settings.get("max_length"):
            settings["sequence_length"] = int(settings.pop("max_length"))
        vocabulary_path = files.vocabulary_path
        preprocessor = kwargs.pop("preprocessor", None)
        if preprocessor is None:
            preset_lib.check_vocabulary_file(vocabulary_path, backbone.get_config())
            with open(vocabulary_path, "rb") as f:
                tokenizer = TransformerTokenizer(proto=f.read())
            # The sources' own SentencePiece model (an imported Marian
            # model's source_vocab.spm), else None: the shared one.
            source_tokenizer = None
            source_path = files.source_vocabulary_path
            if source_path is not None:
                preset_lib.check_vocabulary_file(source_path, backbone.get_config())
                with open(source_path, "rb") as f:
                    source_tokenizer = TransformerTokenizer(proto=f.read())
            length = settings.get("sequence_length", 128)
            preprocessor = TransformerSeq2SeqLMPreprocessor(
                tokenizer,
                encoder_sequence_length=length,
                decoder_sequence_length=length,
                source_tokenizer=source_tokenizer,
            )
        settings.pop("sequence_length", None)
        settings["language_tag"] = files.language_tag()
        return cls(backbone=backbone, preprocessor=preprocessor, **{**settings, **kwargs})
