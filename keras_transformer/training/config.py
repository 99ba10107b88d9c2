"""`TrainConfig`: one frozen object describing a training run.

Everything `keras_transformer.training.train` needs is here, validated when
the object is created: unknown keys and wrong types are errors that name the
key. Variants are made with ``.replace(...)`` (flax ``examples/wmt`` style),
files are YAML or JSON.

Fields left at ``None`` marked "auto" get a value that depends on the data:
one set of settings for the embedded default task (English -> German number
words, tuned to learn in minutes on 2 CPU cores) and one for the user's own
parallel text (closer to the paper). `TrainConfig.resolved` fills them in;
the ``train_config.json`` of a run stores the resolved values.

Example:

```python
config = TrainConfig.from_file("multi30k.yaml").replace(epochs=20)
config = TrainConfig(train_src="train.en", train_tgt="train.de",
                     model_overrides={"num_layers": 3})
```

The command line builds its ``train`` flags from the fields' metadata
(``doc``, and ``flags`` for extra spellings).

Longer than the package's usual module because `TrainConfig` is one object:
its checks across fields run when it is created and read the fields of every
group together (the fields themselves are in
`keras_transformer.training.config_fields`, the value types in
`keras_transformer.training.config_values`).
"""

import dataclasses
import json
import os

import yaml

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.options import RUN_DEFAULTS
from keras_transformer.training.config_fields import (
    CheckpointFields,
    DataFields,
    DecodingFields,
    ModelFields,
    OptimizationFields,
    RuntimeFields,
)
from keras_transformer.training.config_values import (  # noqa: F401 (imported from here)
    BACKENDS,
    BUCKETINGS,
    FINAL_MODELS,
    KEEP_BEST,
    ConfigTypeError,
    base_type,
    check_type,
    takes_list,
)
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    TRAIN_CONFIG_FILENAME,
    train_config_path,
)

# Settings of the embedded default task (no data arguments). Chosen so that
# `keras-transformer train` reaches >= 99.5% exact match on the 1000 held-out
# test numbers in a few minutes on 2 CPU cores, vocabulary training and
# evaluation included. 7 epochs are 224 updates of 2048 tokens. The rate
# warms up over 100 updates to 0.35 x the paper's formula (3.1e-3 for d_model
# 128) and decays as 1/sqrt(step) to 2.1e-3 at the end: this post-LN model's
# loss spikes above about 3.5e-3, and a warmup longer than the run would leave
# the rate rising when training stops. A late spike costs the short numbers
# ("seven", "twenty-one"), which are only 1% of the training pairs (numbers
# drawn uniformly from 0..9999). The final model averages the last 3 epoch
# checkpoints (as the paper averages 5).
DEFAULT_TASK_SETTINGS = dict(
    output_dir=os.path.join("runs", "numbers"),
    preset="tiny",
    vocabulary_size=256,
    max_length=32,
    tokens_per_batch=2048,
    epochs=7,
    warmup_steps=100,
    learning_rate_scale=0.35,
    average_last_n=3,
)

# Settings for the user's own parallel text (Multi30k-sized and up).
USER_DATA_SETTINGS = dict(
    output_dir=os.path.join("runs", "model"),
    preset="small",
    vocabulary_size=8000,
    max_length=128,
    tokens_per_batch=4096,
    epochs=20,
    warmup_steps=4000,
    learning_rate_scale=1.0,
    average_last_n=5,
)

# The keys that ``init_from`` decides (the model's architecture and its
# vocabulary), and the model arguments a continued run may still set.
INIT_FROM_KEEPS = ("preset", "vocabulary_size")
INIT_FROM_OVERRIDES = ("dropout_rate",)


# The groups in reverse: a dataclass takes the fields of its bases from the
# last base to the first, so the keys keep their order (model first).
@dataclasses.dataclass(frozen=True)
class TrainConfig(
    RuntimeFields,
    DecodingFields,
    CheckpointFields,
    OptimizationFields,
    DataFields,
    ModelFields,
):
    """A training run: model, data, schedule, outputs, decoding.

    Its keys are flat (``TrainConfig(preset="tiny", epochs=3)``) and
    documented by concern in `keras_transformer.training.config_fields`:
    `ModelFields` (preset, init_from, model_overrides, dtype_policy),
    `DataFields` (files, vocabulary, batching), `OptimizationFields`
    (epochs, limits, schedule, accumulation, smoothing, moving average,
    seed), `CheckpointFields` (output directory, checkpoints, validation
    BLEU, the best checkpoint, the final model), `DecodingFields` (the final
    evaluation's search) and `RuntimeFields` (backend, compilation, memory,
    distribution, progress output).
    """

    def __post_init__(self):
        for field in dataclasses.fields(self):
            check_type(field.name, getattr(self, field.name), field.type)
        # Store floats as floats (YAML gives 2 for 2.0) and a private copy
        # of the overrides, so the frozen object is not shared-mutable.
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if base_type(field.type) is float and isinstance(value, int):
                object.__setattr__(self, field.name, float(value))
        object.__setattr__(self, "model_overrides", dict(self.model_overrides))
        if isinstance(self.average_last_n, list):
            object.__setattr__(self, "average_last_n", list(self.average_last_n))
        self._check_values()

    # --- construction ---

    @classmethod
    def field_names(cls):
        """Valid keys, in definition order."""
        return [field.name for field in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls, values, source=None):
        """A config from a mapping; unknown keys raise a ValueError naming them."""
        if not isinstance(values, dict):
            where = f" in {source}" if source else ""
            raise ValueError(
                f"A training config must be a mapping of keys to values{where}. "
                f"Received: {type(values).__name__}"
            )
        check_keys(values, source=source)
        return cls(**values)

    @classmethod
    def from_file(cls, path):
        """Reads a YAML (``.yaml``/``.yml``) or JSON (``.json``) file.

        Other extensions are read as YAML, which also accepts JSON.
        """
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Config file not found: {path!r}")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError as error:
            raise ValueError(
                f"Cannot read the config {path!r}: not UTF-8 text (byte "
                f"{error.start}: {error.reason}); expected YAML or JSON."
            ) from None
        try:
            if path.endswith(".json"):
                values = json.loads(text)
            else:
                values = yaml.safe_load(text)
        except ValueError as error:  # json.JSONDecodeError
            raise ValueError(f"Cannot parse {path!r} as JSON: {error}") from error
        except Exception as error:  # yaml.YAMLError
            raise ValueError(f"Cannot parse {path!r} as YAML: {error}") from error
        if values is None:
            values = {}
        return cls.from_dict(values, source=repr(path))

    def replace(self, **overrides):
        """A copy with ``overrides`` applied; unknown keys raise a ValueError."""
        check_keys(overrides)
        return dataclasses.replace(self, **overrides)

    # --- derived values ---

    @property
    def uses_default_task(self):
        """True when no training files are given."""
        return self.train_src is None and self.train_corpus is None

    def resolved(self):
        """A copy whose "auto" (None) fields hold the values that will be used."""
        settings = (
            DEFAULT_TASK_SETTINGS if self.uses_default_task else USER_DATA_SETTINGS
        )
        filled = {
            name: value
            for name, value in settings.items()
            if getattr(self, name) is None
            # A model to continue from has its own architecture and vocabulary.
            and not (self.init_from is not None and name in INIT_FROM_KEEPS)
        }
        if self.final_model is None:
            filled["final_model"] = self._auto_final_model()
        return dataclasses.replace(self, **filled) if filled else self

    def to_dict(self):
        """Plain JSON-serializable values."""
        return {name: getattr(self, name) for name in self.field_names()}

    def save(self, path):
        """Writes the config as JSON; returns the path."""
        directory = os.path.dirname(os.fspath(path))
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=False)
            f.write("\n")
        return path

    def translator_options(self, tokenizer):
        """The `Translator` arguments of the translators that validate and
        evaluate this run: ``language_tag`` and ``target_language`` (the
        language of the valid/test files: ``eval_language``, else the first
        of ``target_languages``, else the first of the tokenizer's; None for
        a vocabulary of one target language), and ``source_tokenizer``
        where the run has a SentencePiece model of its sources
        (``<output_dir>/source_vocab.spm``, from ``init_from``)."""
        options = {}
        if self.output_dir is not None:
            path = os.path.join(self.output_dir, SOURCE_VOCABULARY_FILENAME)
            if os.path.isfile(path):
                options["source_tokenizer"] = type(tokenizer).load(path)
        languages = tokenizer.languages
        language = None
        if languages:
            language = self.eval_language or (self.target_languages or list(languages))[0]
            if language not in languages:
                raise ValueError(
                    f"eval_language {language!r} is not a language of the vocabulary "
                    f"({', '.join(sorted(languages))})."
                )
        return dict(options, language_tag=self.language_tag, target_language=language)

    # --- validation ---

    def _check_values(self):
        """Each field's own ``check`` (its metadata), then the rules that
        relate fields; an error names the key."""
        for field in dataclasses.fields(self):
            check = field.metadata.get("check")
            if check is not None:
                check(field.name, getattr(self, field.name))
        self._check_data_files()
        self._check_init_from()
        self._check_schedule()
        # The decode keys: the one validation of `DecodeOptions`.
        self.decode_options()
        self._check_average_choice()
        self._check_validation_values()

    def decode_options(self):
        """The run's decoding defaults as `DecodeOptions` (validated)."""
        return DecodeOptions(**{name: getattr(self, name) for name in RUN_DEFAULTS})

    def _auto_final_model(self):
        """The final model an unset (auto) ``final_model`` resolves to."""
        return "best" if self.keep_best else "last" if self.ema_decay else "average"

    @property
    def average_candidates(self):
        """``average_last_n`` as a sorted list of distinct N (None: unset)."""
        value = self.average_last_n
        if value is None:
            return None
        return sorted(set(value)) if isinstance(value, list) else [value]

    def _check_data_files(self):
        """Source and target files come in pairs; valid/test need train files."""
        for name in ("train", "valid", "test"):
            src, tgt = getattr(self, f"{name}_src"), getattr(self, f"{name}_tgt")
            if (src is None) != (tgt is None):
                raise ValueError(
                    f"{name}_src and {name}_tgt go together. Received: "
                    f"{name}_src={src!r}, {name}_tgt={tgt!r}"
                )
        if self.train_corpus is not None and self.train_src is not None:
            raise ValueError(
                "train_corpus replaces train_src/train_tgt: give one or the other. "
                f"Received: train_corpus={self.train_corpus!r}, "
                f"train_src={self.train_src!r}"
            )
        self._check_languages()
        if self.uses_default_task and (self.valid_src or self.test_src):
            raise ValueError(
                "valid_src/test_src need training files too (train_src and "
                "train_tgt, or train_corpus); without them the embedded default task is used."
            )

    def _check_init_from(self):
        """``init_from`` brings the model and its vocabulary: the keys that
        would choose others are errors (a run directory is checked by
        `train`, before any work)."""
        if self.init_from is None:
            return
        for key in INIT_FROM_KEEPS:
            if getattr(self, key) is not None:
                raise ValueError(
                    f"init_from={self.init_from!r} brings the model and its vocabulary: "
                    f"remove {key} (received {key}={getattr(self, key)!r})."
                )
        others = sorted(set(self.model_overrides) - set(INIT_FROM_OVERRIDES))
        if others:
            raise ValueError(
                f"init_from={self.init_from!r} brings the model's architecture: "
                f"model_overrides may set only {', '.join(INIT_FROM_OVERRIDES)}. "
                f"Received: {others}"
            )
        if self.output_dir is not None and os.path.normpath(self.output_dir) == os.path.normpath(
            self.init_from
        ):
            raise ValueError(
                f"init_from and output_dir are the same directory ({self.init_from!r}): "
                "the continued run needs an output_dir of its own."
            )

    def _check_languages(self):
        """``target_languages``: one per train_src entry, with files; the
        other language keys only with a multilingual model."""
        languages = self.target_languages
        if languages is None:
            if self.eval_language is not None and self.train_corpus is None:
                raise ValueError(
                    "eval_language needs target_languages (a model of several "
                    f"target languages). Received: eval_language={self.eval_language!r}"
                )
            return
        if self.train_src is None:
            raise ValueError(
                "target_languages needs train_src/train_tgt: one list entry per "
                f"target language. Received: target_languages={languages!r}"
            )
        entries = self.train_src if isinstance(self.train_src, list) else [self.train_src]
        targets = self.train_tgt if isinstance(self.train_tgt, list) else [self.train_tgt]
        if not len(entries) == len(targets) == len(languages):
            raise ValueError(
                "target_languages needs one language per train_src/train_tgt entry: "
                f"{len(languages)} language(s) for {len(entries)} source and "
                f"{len(targets)} target entries."
            )
        if self.eval_language is not None and self.eval_language not in languages:
            raise ValueError(
                f"eval_language must be one of target_languages {languages}. "
                f"Received: eval_language={self.eval_language!r}"
            )

    def _check_schedule(self):
        """The rate decays after its warmup; a batch holds a longest sequence."""
        if (
            self.decay_steps is not None
            and self.warmup_steps is not None
            and self.decay_steps <= self.warmup_steps
        ):
            raise ValueError(
                "decay_steps must exceed warmup_steps (the rate decays after "
                f"warming up). Received: decay_steps={self.decay_steps}, "
                f"warmup_steps={self.warmup_steps}"
            )
        if (
            self.max_length is not None
            and self.tokens_per_batch is not None
            and self.tokens_per_batch < self.max_length
        ):
            raise ValueError(
                "tokens_per_batch must be >= max_length. Received: "
                f"tokens_per_batch={self.tokens_per_batch}, "
                f"max_length={self.max_length}"
            )

    def _check_average_choice(self):
        """A list of ``average_last_n`` chooses an average on validation BLEU:
        the final model must be an average, and your data needs validation
        files."""
        value = self.average_last_n
        if not isinstance(value, list):
            return
        final = self.final_model or self._auto_final_model()
        if final != "average":
            raise ValueError(
                f"average_last_n={value} chooses how many checkpoints the final "
                f"average holds, but final_model is {final!r}"
                + (" (auto)" if self.final_model is None else "")
                + ": set final_model to 'average' or give one N."
            )
        if not self.uses_default_task and self.valid_src is None:
            raise ValueError(
                f"average_last_n={value} chooses N on validation BLEU: set "
                "valid_src and valid_tgt (or give one N)."
            )

    def _check_validation_values(self):
        """What validation BLEU, the best checkpoint, patience and the final
        model need of each other and of the data."""
        bleu_off = self.valid_bleu_sentences == 0
        if self.keep_best == "bleu" and bleu_off:
            raise ValueError(
                "keep_best='bleu' needs validation BLEU: set valid_bleu_sentences "
                "(a number of validation sentences, or null for all)."
            )
        if self.eval_every_steps is not None and bleu_off:
            raise ValueError(
                f"eval_every_steps={self.eval_every_steps} sets how often validation "
                "BLEU runs, but valid_bleu_sentences=0 turns it off."
            )
        if self.patience is not None and self.keep_best is None:
            raise ValueError(
                f"patience={self.patience} watches the keep_best value: set "
                "keep_best to 'bleu' or 'loss'."
            )
        if self.final_model == "best" and self.keep_best is None:
            raise ValueError(
                "final_model='best' needs keep_best ('bleu' or 'loss') to keep a "
                "best checkpoint."
            )
        if self.final_model == "average" and self.ema_decay is not None:
            raise ValueError(
                "final_model='average' averages the raw epoch checkpoints, which "
                f"would ignore ema_decay={self.ema_decay}: use final_model 'last' "
                "(the moving average) or 'best'."
            )
        uses_validation = self.keep_best is not None or not bleu_off
        if uses_validation and not self.uses_default_task and self.valid_src is None:
            key = "keep_best" if self.keep_best is not None else "valid_bleu_sentences"
            raise ValueError(
                f"{key} needs validation files: set valid_src and valid_tgt."
            )


def check_keys(values, source=None):
    """Raises a ValueError naming keys that are not `TrainConfig` fields."""
    valid = TrainConfig.field_names()
    unknown = [key for key in values if key not in valid]
    if unknown:
        where = f" in {source}" if source else ""
        raise ValueError(
            f"Unknown config key(s){where}: {', '.join(map(str, unknown))}. "
            f"Valid keys: {', '.join(valid)}"
        )


def parse_value(key, text):
    """A command-line string as the value of config key ``key``.

    Values are read as YAML (``3`` is an int, ``true`` a bool, ``null``
    None, ``{num_layers: 3}`` a dict); for float keys, strings such as
    ``1e-3`` (which YAML 1.1 leaves as text) are converted too.
    """

    try:
        value = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError as error:
        raise ValueError(f"Cannot parse the value of {key}: {text!r} ({error})") from None
    fields = {field.name: field for field in dataclasses.fields(TrainConfig)}
    if key in fields and isinstance(value, str) and takes_list(fields[key].type):
        # "3,5,8" (YAML reads it as text): the list [3, 5, 8].
        try:
            value = [int(part) for part in value.split(",")]
        except ValueError:
            pass  # The type check reports it.
    if key in fields and isinstance(value, str):
        base = base_type(fields[key].type)
        if base in (int, float):
            try:
                value = base(value)
            except ValueError:
                pass  # The type check reports it.
    return value


def parse_overrides(assignments, config=None):
    """Applies ``["key=value", "model_overrides.num_layers=3", ...]`` to a config.

    Args:
        assignments: iterable of str ``KEY=VALUE``; ``model_overrides.NAME=VALUE``
            sets one model argument.
        config: the `TrainConfig` to start from. Defaults to ``TrainConfig()``.

    Returns:
        A new `TrainConfig`. Unknown keys raise a ValueError naming them.
    """
    config = TrainConfig() if config is None else config
    values, model_overrides = {}, dict(config.model_overrides)
    for assignment in assignments:
        key, separator, text = assignment.partition("=")
        key = key.strip()
        if not separator or not key:
            raise ValueError(f"Overrides are KEY=VALUE. Received: {assignment!r}")
        if key.startswith("model_overrides."):
            model_overrides[key.split(".", 1)[1]] = parse_value(key, text)
        else:
            values[key] = parse_value(key, text)
    check_keys(values, source="the overrides")
    if "model_overrides" not in values:
        values["model_overrides"] = model_overrides
    return config.replace(**values)


def load_run_config(directory):
    """The `TrainConfig` saved in a run directory (``train_config.json``,
    or the ``config.json`` of a run of earlier versions).

    Raises:
        FileNotFoundError: naming ``train_config.json``, where the directory
            holds neither.
    """
    path = train_config_path(directory)
    if path is None:
        raise FileNotFoundError(
            f"{os.path.join(directory, TRAIN_CONFIG_FILENAME)!r} not found: "
            f"{directory!r} holds no run of `keras-transformer train`."
        )
    return TrainConfig.from_file(path)
