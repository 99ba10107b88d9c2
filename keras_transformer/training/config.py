"""`TrainConfig`: one frozen object describing a training run.

Everything `keras_transformer.training.train` needs is here, validated when
the object is created: unknown keys and wrong types are errors that name the
key. Variants are made with ``.replace(...)`` (flax ``examples/wmt`` style),
files are YAML or JSON.

Fields left at ``None`` marked "auto" get a value that depends on the data:
one set of settings for the embedded default task (English -> German number
words, tuned to learn in minutes on 2 CPU cores) and one for the user's own
parallel text (closer to the paper). `TrainConfig.resolved` fills them in;
the ``config.json`` of a run stores the resolved values.

Example:

```python
config = TrainConfig.from_file("multi30k.yaml").replace(epochs=20)
config = TrainConfig(train_src="train.en", train_tgt="train.de",
                     model_overrides={"num_layers": 3})
```

The command line builds its ``train`` flags from the fields' metadata
(``doc``, and ``flags`` for extra spellings).
"""

import dataclasses
import functools
import json
import os
import typing

import yaml

from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_presets import (
    PRESETS,
    constructor_argument_names,
)
from keras_transformer.special_tokens import (
    LANGUAGE_TAG_POSITIONS,
    RESERVED_PIECES,
    check_languages,
)
from keras_transformer.training.distribution import DISTRIBUTIONS
from keras_transformer.utils.run_files import CONFIG_FILENAME, SOURCE_VOCABULARY_FILENAME
from keras_transformer.utils.validation import (
    check_choice,
    check_int,
    check_number,
    check_rate,
)

BACKENDS = ("tensorflow", "jax", "torch")
# A side of a corpus: a path or glob pattern, or a list of them.
_Files = typing.Union[str, typing.List[str], None]
KEEP_BEST = ("bleu", "loss")
FINAL_MODELS = ("last", "best", "average")
BUCKETINGS = ("separate", "joint", "packed")

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

_AUTO = "auto: depends on the data (default task or your files)"
# The keys that ``init_from`` decides (the model's architecture and its
# vocabulary), and the model arguments a continued run may still set.
INIT_FROM_KEEPS = ("preset", "vocabulary_size")
INIT_FROM_OVERRIDES = ("dropout_rate",)


def _field(default, doc, check=None, **metadata):
    """A field with its one-line ``doc`` (the CLI's help), its value check
    and CLI metadata.

    Args:
        default: the default value.
        doc: str. One line: ``keras-transformer train --help`` and the
            reference in docs/training.md print it.
        check: a function ``(key, value)`` that raises a ValueError naming
            the key when the value is out of range (the type is checked from
            the annotation before). None: any value of the type.
        **metadata: ``flags`` (extra flag spellings), ``metavar``,
            ``cli=False`` (no flag; ``--set`` still works).
    """
    if check is not None:
        metadata["check"] = check
    return dataclasses.field(default=default, metadata=dict(metadata, doc=doc))


# --- value checks of single fields (``check`` metadata) ---


def _positive(name, value):
    """None, or a finite number > 0 (counts of updates, tokens, minutes)."""
    if value is None:
        return
    check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive. Received: {name}={value!r}")


def _int_at_least(minimum, allow_none=True):
    """An int >= ``minimum`` (or None, with ``allow_none``)."""
    return functools.partial(check_int, minimum=minimum, allow_none=allow_none)


def _one_of(*choices):
    return functools.partial(check_choice, choices=choices)


def _check_preset(name, value):
    if value is not None and value not in PRESETS:
        raise ValueError(f"Unknown preset {value!r}. Available presets: {sorted(PRESETS)}")


def _check_model_overrides(name, value):
    """Keyword arguments of `Transformer`, the vocabulary size excepted."""
    for key in value:
        if not isinstance(key, str):
            raise ConfigTypeError(f"{name} keys must be str. Received: {key!r}")
    if "vocabulary_size" in value:
        raise ValueError(
            f"{name} must not set vocabulary_size: the model's vocabulary is the "
            "tokenizer's. Set the top-level vocabulary_size instead."
        )
    valid = constructor_argument_names(Transformer)
    unknown = sorted(set(value) - set(valid))
    if unknown:
        raise ValueError(
            f"Unknown model argument(s) in {name}: {unknown}. "
            f"Valid arguments: {sorted(valid)}"
        )


def _check_vocabulary_size(name, value):
    """None, or more pieces than the reserved ones (PAD, UNK, BOS, EOS)."""
    if value is not None and value <= len(RESERVED_PIECES):
        raise ValueError(
            f"{name} must exceed the {len(RESERVED_PIECES)} reserved pieces. "
            f"Received: {name}={value}"
        )


def _check_target_languages(name, value):
    if value is not None:
        check_languages(value, name)


def _check_decay(name, value):
    """None, or a moving-average decay in (0, 1)."""
    if value is None:
        return
    check_number(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"{name} must be in (0, 1), e.g. 0.999, or null. Received: {name}={value}"
        )


def _check_average_last_n(name, value):
    """None, a positive int, or a non-empty list of them."""
    candidates = value if isinstance(value, list) else [value]
    if not candidates or any(n is not None and n <= 0 for n in candidates):
        raise ValueError(
            f"{name} must be a positive int or a non-empty list of them. "
            f"Received: {name}={value!r}"
        )


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """A training run: model, data, schedule, outputs, decoding.

    Args:
        preset: str. Model preset ("tiny", "small", "base", "big"). Auto:
            "tiny" for the default task, "small" for your data.
        init_from: str. A run directory to continue training from (a
            finished run of `train`, or a model imported with
            `keras-transformer convert`): its architecture and weights
            start the run and its SentencePiece model(s) encode the data
            (``source_vocab.spm`` the sources where it has one); no
            vocabulary is learned. The run itself goes to ``output_dir``,
            another directory. ``preset`` and ``vocabulary_size`` are
            errors with it, ``model_overrides`` may set only
            ``dropout_rate``; the schedule, the decoding settings and every
            other key are this config's.
        model_overrides: dict. Replaces preset arguments of
            `Transformer.from_preset`, e.g. ``{"num_layers": 3,
            "dropout_rate": 0.3}``. ``vocabulary_size`` is not allowed here
            (it is the tokenizer's, see ``vocabulary_size``).
        dtype_policy: str. E.g. "mixed_bfloat16", or "auto": mixed_bfloat16
            where the device multiplies bfloat16 natively (Ampere+ GPUs,
            TPUs, CPUs with AVX512-BF16/AMX-BF16/ARM BF16), else float32
            (`keras_transformer.training.precision`). Defaults to None (float32).
        train_src, train_tgt: str or list of str. Parallel training files
            (plain or gzip): a path, a glob pattern (``"wmt/*.en.gz"``), or a
            list of them; the sides pair their files in order
            (`keras_transformer.data.read_parallel`).
            None for both trains on the embedded default task.
        valid_src, valid_tgt: str. Validation files (loss/accuracy each
            epoch, validation BLEU, the best checkpoint, and the final score
            when no test files are given).
        test_src, test_tgt: str. Test files for the final score.
        train_corpus: str. A corpus directory prepared by `keras-transformer
            preprocess` (`keras_transformer.data.prepare_corpus`): binary
            shards and their vocabulary, used instead of ``train_src`` and
            ``train_tgt``.
        corpus_dir: str. Where `train` prepares ``train_src`` and
            ``train_tgt`` into binary shards before training (reused, not
            prepared again, while the files and the vocabulary are
            unchanged; an interrupted preparation resumes). None (default):
            ``<output_dir>/corpus``. Training then streams the shards in
            bounded memory, whatever the corpus size.
        window_size: int. Sentence pairs per window of the training stream:
            pairs are length-bucketed or packed within a window (Marian's
            maxi-batch), so memory grows with the window, not the corpus.
            Defaults to 100,000.
        vocabulary_size: int. Shared SentencePiece BPE vocabulary, trained
            on the training files when the output directory has none. Auto.
        max_length: int. Longest sequence in tokens (EOS/BOS included);
            longer training pairs are dropped. Auto.
        tokens_per_batch: int. Padded tokens per batch on each side. Auto.
        bucket_step: int. Width of the length buckets (one every
            ``bucket_step`` tokens up to ``4 * bucket_step``, then ~25%
            apart); smaller is finer for short sentences but gives more
            distinct batch shapes (more compilations under JAX). Defaults
            to 8.
        bucketing: str. "separate" (default) pads the source and the target
            each to its own length bucket; "joint" pads both to the bucket
            of the longer side; "packed" puts several pairs into each row
            of ``max_length`` tokens (segment-aware masks and positions in
            the model; one batch shape) (`keras_transformer.data.make_dataset`).
        epochs: int. Epochs (passes over the data, or ``steps_per_epoch``
            updates). Auto.
        steps_per_epoch: int. Optimizer updates between checkpoints; None is
            one pass over the training data.
        max_steps: int. Stop after this many optimizer updates in total.
        time_budget_minutes: float. Stop training after this many minutes.
        backup_every_steps: int. Also save the training state to
            ``backup/`` every N optimizer updates (at every epoch end in any
            case), so that a crash or a preemption loses at most N updates;
            a resumed run continues the interrupted epoch and the data
            stream where the backup was taken. SIGTERM always saves a
            backup after the batch in flight and stops. None (default): at
            epoch ends only.
        accumulate_steps: int. Gradient accumulation: each optimizer update
            averages the gradients of this many batches (Keras' optimizer
            ``gradient_accumulation_steps``), as one batch this many times
            larger would (fairseq's ``--update-freq``). ``steps_per_epoch``,
            ``max_steps``, ``warmup_steps`` and ``eval_every_steps`` count
            updates. Defaults to 1 (none).
        warmup_steps: int. Schedule warmup (§5.3), in updates. Auto.
        learning_rate_scale: float. Multiplies the paper's rate. Auto.
        decay_steps: int or None. Also decay the rate linearly to zero at
            this update (not in the paper; for fixed budgets). None: the
            paper's schedule.
        label_smoothing: float. eps_ls (§5.4). Defaults to 0.1.
        ema_decay: float in (0, 1). Keep an exponential moving average of
            the weights, ``ema = decay * ema + (1 - decay) * weights`` after
            every update (Keras' optimizer ``use_ema``; with
            ``accumulate_steps`` N, after every batch with decay ** (1/N));
            validation BLEU, the best checkpoint and the final model use the
            average. Epoch checkpoints and ``backup/`` hold the raw weights
            and the optimizer state, which includes the average. None
            (default) keeps no average.
        seed: int. Seeds the weights, dropout, shuffling and the vocabulary
            sampler. (The default task's train/valid/test split is fixed.)
        output_dir: str. Where model.keras, vocab.spm, config.json,
            checkpoints/, logs/ and backup/ go. Auto.
        average_last_n: int or list of int. With ``final_model="average"``,
            the final model averages the weights of the last N epoch
            checkpoints (the paper averages 5); 1 keeps the last weights.
            A list, e.g. ``[3, 5, 8, 12]``, chooses N on the validation set
            after training: each candidate average is decoded greedily on
            the validation sentences (the first ``valid_bleu_sentences``
            when that is positive, else all) and the best sacreBLEU (exact
            match on the default task) wins (ties: the larger N), so the choice fits the run's length, not
            one fixed number (results.json records every score). Auto.
        keep_checkpoints: int. Keep only the newest N epoch checkpoints
            (at least ``average_last_n``, or its largest candidate); None
            keeps all.
        valid_bleu_sentences: int. Validation BLEU during training: greedy
            decoding of the first N validation sentences, scored with
            sacreBLEU and logged as ``val_bleu`` (and ``val_exact_match``)
            in logs/history.csv, TensorBoard and logs/validation.csv. None
            decodes them all; 0 (default) turns validation BLEU off.
        eval_every_steps: int. Validation BLEU every N optimizer updates;
            None (default) at the end of each epoch.
        keep_best: "bleu" or "loss". Keep the weights with the best
            validation BLEU (each validation BLEU) or loss (each epoch) in
            ``checkpoints/best/``. None (default) keeps none.
        patience: int. Stop training when the ``keep_best`` value has not
            improved for this many evaluations. None (default) never stops.
        final_model: "last", "best" or "average". What model.keras holds:
            the weights at the end of training (the moving average with
            ``ema_decay``), the best checkpoint, or the average of the last
            ``average_last_n`` epoch checkpoints. Auto: "best" with
            ``keep_best``, else "last" with ``ema_decay``, else "average".
        beam_size: int. Beam size of the final evaluation. Defaults to 4.
        alpha: float. Length penalty of the final evaluation (0.6).
        max_extra_length: int. Output length limit is source length plus
            this (50).
        eval_sentences: int. Score on at most this many test sentences;
            None scores all, 0 skips the evaluation.
        num_samples: int. Sample translations printed after training.
        backend: str. "tensorflow", "jax" or "torch". Must match the
            backend Keras was imported with (the CLI sets it for you).
        jit_compile: bool or "auto". Passed to `model.compile`.
        retain_host_memory: bool or "auto". Keep freed host memory in the
            process (glibc malloc without mmap) instead of unmapping and
            page-faulting large tensors in again every step; "auto" (the
            default): on for the TensorFlow backend, whose CPU steps
            otherwise spend much of their time in the kernel
            (`keras_transformer.training.host_memory`).
        distribution: str. Multi-device training: "none" (default),
            "data" (JAX DataParallel / TF MirroredStrategy), "model" (JAX
            ModelParallel) or "multi-worker" (TF MultiWorkerMirroredStrategy,
            configured by TF_CONFIG). See `keras_transformer.training.distribution`.
        verbose: "auto", 0, 1 or 2. Keras progress output.
    """

    # --- model ---
    preset: typing.Optional[str] = _field(
        None, "model preset: tiny, small, base or big; " + _AUTO, check=_check_preset
    )
    init_from: typing.Optional[str] = _field(
        None, "continue training from this run directory (a run of train, or a model "
        "imported with convert): its model, weights and vocabulary; null: a new model",
        metavar="RUN",
    )
    model_overrides: dict = dataclasses.field(
        default_factory=dict,
        metadata={
            "doc": "preset arguments to replace",
            "cli": False,
            "check": _check_model_overrides,
        },
    )
    dtype_policy: typing.Optional[str] = _field(
        None, "e.g. mixed_bfloat16, or auto: mixed_bfloat16 where the device "
        "runs bfloat16 natively, else float32; null: float32"
    )
    # --- data ---
    train_src: _Files = _field(
        None, "training source file (plain or gzip), glob pattern, or list of "
        "them; null: the default task", metavar="FILE", cli_text=True,
    )
    train_tgt: _Files = _field(
        None, "training target file(s), as train_src", metavar="FILE", cli_text=True
    )
    valid_src: _Files = _field(
        None, "validation source file(s)", metavar="FILE", cli_text=True
    )
    valid_tgt: _Files = _field(
        None, "validation target file(s)", metavar="FILE", cli_text=True
    )
    test_src: _Files = _field(
        None, "test source file(s) (final score)", metavar="FILE", cli_text=True
    )
    test_tgt: _Files = _field(
        None, "test target file(s)", metavar="FILE", cli_text=True
    )
    train_corpus: typing.Optional[str] = _field(
        None, "a corpus prepared by keras-transformer preprocess, instead of "
        "train_src/train_tgt", metavar="DIR",
    )
    corpus_dir: typing.Optional[str] = _field(
        None, "where train prepares train_src/train_tgt into binary shards (reused "
        "while the files and vocabulary are unchanged); null: <output_dir>/corpus",
        metavar="DIR",
    )
    window_size: int = _field(
        100_000, "sentence pairs per bucketing or packing window of the training "
        "stream (memory grows with it, not with the corpus)",
        check=_int_at_least(1, allow_none=False),
    )
    target_languages: typing.Optional[typing.List[str]] = _field(
        None, "one model for several target languages: the target language of each "
        "train_src/train_tgt entry, e.g. [de, fr, cs] (a reserved tag piece each); "
        "null: one target language", metavar="[LANG, ...]", check=_check_target_languages,
    )
    language_tag: str = _field(
        "source", "where a multilingual model's language tag goes: 'source' (the "
        "source's first token, as Marian) or 'target' (the first output token, "
        "forced when decoding)", check=_one_of(*LANGUAGE_TAG_POSITIONS),
    )
    sampling_temperature: typing.Optional[float] = _field(
        None, "sample the target languages with temperature T (1: the corpus's "
        "proportions; larger: more even); null: every pair once a pass", check=_positive,
    )
    eval_language: typing.Optional[str] = _field(
        None, "target language of the valid/test files of a multilingual model; "
        "null: the first of target_languages", metavar="LANG",
    )
    vocabulary_size: typing.Optional[int] = _field(
        None, "shared BPE vocabulary size; " + _AUTO, check=_check_vocabulary_size
    )
    max_length: typing.Optional[int] = _field(
        None, "longest sequence in tokens; " + _AUTO, check=_int_at_least(2)
    )
    tokens_per_batch: typing.Optional[int] = _field(
        None, "padded tokens per batch; " + _AUTO, check=_positive
    )
    bucket_step: int = _field(8, "length bucket width in tokens", check=_positive)
    bucketing: str = _field(
        "separate",
        "'separate': each side padded to its own length bucket; 'joint': both to the longer side's; 'packed': several pairs per row of max_length tokens",
        check=_one_of(*BUCKETINGS),
    )
    # --- schedule ---
    epochs: typing.Optional[int] = _field(
        None, "number of epochs; " + _AUTO, check=_positive
    )
    steps_per_epoch: typing.Optional[int] = _field(
        None, "optimizer updates per epoch (checkpoint interval); null: one pass",
        check=_positive,
    )
    max_steps: typing.Optional[int] = _field(
        None, "stop after this many optimizer updates in total", check=_positive
    )
    time_budget_minutes: typing.Optional[float] = _field(
        None, "stop training after MINUTES", check=_positive,
        flags=("--time-budget",), metavar="MINUTES",
    )
    backup_every_steps: typing.Optional[int] = _field(
        None, "also back up the training state every N updates, so that a crash "
        "or preemption loses at most N; null: at the end of each epoch",
        check=_int_at_least(1),
    )
    accumulate_steps: int = _field(
        1, "gradient accumulation: batches averaged into each optimizer update",
        check=_positive,
    )
    warmup_steps: typing.Optional[int] = _field(
        None, "learning-rate warmup in updates; " + _AUTO, check=_positive
    )
    learning_rate_scale: typing.Optional[float] = _field(
        None, "multiplies the paper's learning rate; " + _AUTO, check=_positive,
        flags=("--lr-scale",),
    )
    decay_steps: typing.Optional[int] = _field(
        None, "also decay the learning rate linearly to zero at this update; "
        "null: the paper's schedule", check=_positive,
    )
    label_smoothing: float = _field(0.1, "eps_ls (0.1 in the paper)", check=check_rate)
    ema_decay: typing.Optional[float] = _field(
        None, "moving average of the weights with this decay per update (e.g. "
        "0.999), used for validation and the final model; null: none",
        check=_check_decay,
    )
    seed: int = _field(0, "random seed")
    # --- outputs ---
    output_dir: typing.Optional[str] = _field(
        None, "run directory (model, vocabulary, config); " + _AUTO, metavar="DIR"
    )
    average_last_n: typing.Union[int, typing.List[int], None] = _field(
        None, "final_model average: average the last N epoch checkpoints; a "
        "list (3,5,8) chooses N by greedy validation BLEU after training; " + _AUTO,
        check=_check_average_last_n,
        metavar="N[,N...]",
    )
    keep_checkpoints: typing.Optional[int] = _field(
        None, "keep only the newest N epoch checkpoints; null keeps all",
        check=_positive,
    )
    # --- validation during training ---
    valid_bleu_sentences: typing.Optional[int] = _field(
        0, "validation BLEU: greedy-decode the first N validation sentences "
        "(null: all; 0: off)",
        check=_int_at_least(0),
    )
    eval_every_steps: typing.Optional[int] = _field(
        None, "validation BLEU every N updates; null: each epoch", check=_positive
    )
    keep_best: typing.Optional[str] = _field(
        None, "keep the best checkpoint by validation bleu or loss "
        "(checkpoints/best/); null: none",
        check=_one_of(None, *KEEP_BEST),
    )
    patience: typing.Optional[int] = _field(
        None, "stop when the keep_best value has not improved for N "
        "evaluations; null: never",
        check=_positive,
    )
    final_model: typing.Optional[str] = _field(
        None, "the final model: last, best or average weights; auto: best "
        "with keep_best, else last with ema_decay, else average",
        check=_one_of(None, *FINAL_MODELS),
    )
    # --- decoding and evaluation ---
    beam_size: int = _field(4, "beam size of the final evaluation")
    alpha: float = _field(0.6, "length penalty of the final evaluation")
    max_extra_length: int = _field(50, "output length limit = source length + N")
    eval_sentences: typing.Optional[int] = _field(
        None, "score at most N test sentences after training (null: all; 0: skip)",
        check=_int_at_least(0),
    )
    num_samples: int = _field(
        5, "sample translations to print", check=_int_at_least(0, allow_none=False)
    )
    # --- runtime ---
    backend: typing.Optional[str] = _field(
        None, "tensorflow, jax or torch", check=_one_of(None, *BACKENDS),
        cli=False,  # The --backend flag.
    )
    jit_compile: typing.Union[bool, str] = _field(
        "auto", "passed to model.compile: true, false or auto",
        check=_one_of("auto", True, False),
    )
    retain_host_memory: typing.Union[bool, str] = _field(
        "auto", "keep freed host memory in the process (glibc malloc, no "
        "munmap of large tensors each step): true, false or auto (on for "
        "TensorFlow)",
        check=_one_of("auto", True, False),
    )
    distribution: str = _field(
        "none", "none, data, model (JAX) or multi-worker (TensorFlow)",
        check=_one_of(*DISTRIBUTIONS),
    )
    verbose: typing.Union[int, str] = _field(
        "auto", "0 silent, 1 progress bars, 2 one line per epoch, or auto",
        check=_one_of("auto", 0, 1, 2),
    )

    def __post_init__(self):
        for field in dataclasses.fields(self):
            _check_type(field.name, getattr(self, field.name), field.type)
        # Store floats as floats (YAML gives 2 for 2.0) and a private copy
        # of the overrides, so the frozen object is not shared-mutable.
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if _base_type(field.type) is float and isinstance(value, int):
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
                options["source_tokenizer"] = SubwordTokenizer.load(path)
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
        DecodeOptions(
            beam_size=self.beam_size,
            alpha=self.alpha,
            max_extra_length=self.max_extra_length,
        )
        self._check_average_choice()
        self._check_validation_values()

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
    if key in fields and isinstance(value, str) and _takes_list(fields[key].type):
        # "3,5,8" (YAML reads it as text): the list [3, 5, 8].
        try:
            value = [int(part) for part in value.split(",")]
        except ValueError:
            pass  # The type check reports it.
    if key in fields and isinstance(value, str):
        base = _base_type(fields[key].type)
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
    """The `TrainConfig` saved in a run directory (``config.json``)."""
    return TrainConfig.from_file(os.path.join(directory, CONFIG_FILENAME))


def _base_type(annotation):
    """``Optional[int]`` -> int; other annotations unchanged."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        return args[0]
    return annotation


def _takes_list(annotation):
    """True when ``annotation`` is ``List[...]`` or a Union holding one."""
    if typing.get_origin(annotation) is list:
        return True
    if typing.get_origin(annotation) is typing.Union:
        return any(_takes_list(a) for a in typing.get_args(annotation))
    return False


def _type_name(annotation):
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Union:
        return " or ".join(_type_name(a) for a in args)
    if typing.get_origin(annotation) is list:
        return f"a list of {_type_name(args[0])}"
    return "null" if annotation is type(None) else annotation.__name__


def _matches(value, annotation):
    if typing.get_origin(annotation) is typing.Union:
        return any(_matches(value, a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if typing.get_origin(annotation) is list:
        [item] = typing.get_args(annotation)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


class ConfigTypeError(TypeError, ValueError):
    """A config value of the wrong type: a TypeError, and a ValueError so
    that callers treating bad values as the user's (the CLI) report it as one."""


def _check_type(name, value, annotation):
    if not _matches(value, annotation):
        raise ConfigTypeError(
            f"Config key {name!r} must be {_type_name(annotation)}. "
            f"Received: {value!r} ({type(value).__name__})"
        )
