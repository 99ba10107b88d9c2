"""The keys of `TrainConfig`, by concern: the model, the data, the
optimization, the checkpoints and outputs, the decoding, the runtime.

Each group is a frozen dataclass of fields with their one-line ``doc`` (the
CLI's help and the reference in docs/training.md), their value ``check``
and CLI metadata (`keras_transformer.training.config_values.config_field`).
`TrainConfig` inherits them all, so that its keys stay flat
(``TrainConfig(preset="tiny", epochs=3)``, ``--set epochs=3``) and in this
order; the rules that relate keys of several groups are `TrainConfig`'s.
"""

import dataclasses
import typing

from keras_transformer import options as decode_options
from keras_transformer.special_tokens import LANGUAGE_TAG_POSITIONS
from keras_transformer.training.config_values import (
    AUTO,
    BACKENDS,
    BUCKETINGS,
    DISTRIBUTIONS,
    FINAL_MODELS,
    KEEP_BEST,
    Files,
    check_average_last_n,
    check_decay,
    check_model_overrides,
    check_preset,
    check_target_languages,
    check_vocabulary_size,
    config_field,
    int_at_least,
    one_of,
    positive,
)
from keras_transformer.utils.validation import check_rate


@dataclasses.dataclass(frozen=True)
class ModelFields:
    """The model: its preset (or the run it continues) and its arguments.

    `TrainConfig` keys (flat: ``TrainConfig(preset=...)``).

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
    """

    # --- model ---
    preset: typing.Optional[str] = config_field(
        None, "model preset: tiny, small, base or big; " + AUTO, check=check_preset
    )
    init_from: typing.Optional[str] = config_field(
        None, "continue training from this run directory (a run of train, or a model "
        "imported with convert): its model, weights and vocabulary; null: a new model",
        metavar="RUN",
    )
    model_overrides: dict = dataclasses.field(
        default_factory=dict,
        metadata={
            "doc": "preset arguments to replace",
            "cli": False,
            "check": check_model_overrides,
        },
    )
    dtype_policy: typing.Optional[str] = config_field(
        None, "e.g. mixed_bfloat16, or auto: mixed_bfloat16 where the device "
        "runs bfloat16 natively, else float32; null: float32"
    )


@dataclasses.dataclass(frozen=True)
class DataFields:
    """The data: training, validation and test files, the vocabulary, batching.

    `TrainConfig` keys (flat: ``TrainConfig(preset=...)``).

    Args:
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
    """

    # --- data ---
    train_src: Files = config_field(
        None, "training source file (plain or gzip), glob pattern, or list of "
        "them; null: the default task", metavar="FILE", cli_text=True,
    )
    train_tgt: Files = config_field(
        None, "training target file(s), as train_src", metavar="FILE", cli_text=True
    )
    valid_src: Files = config_field(
        None, "validation source file(s)", metavar="FILE", cli_text=True
    )
    valid_tgt: Files = config_field(
        None, "validation target file(s)", metavar="FILE", cli_text=True
    )
    test_src: Files = config_field(
        None, "test source file(s) (final score)", metavar="FILE", cli_text=True
    )
    test_tgt: Files = config_field(
        None, "test target file(s)", metavar="FILE", cli_text=True
    )
    train_corpus: typing.Optional[str] = config_field(
        None, "a corpus prepared by keras-transformer preprocess, instead of "
        "train_src/train_tgt", metavar="DIR",
    )
    corpus_dir: typing.Optional[str] = config_field(
        None, "where train prepares train_src/train_tgt into binary shards (reused "
        "while the files and vocabulary are unchanged); null: <output_dir>/corpus",
        metavar="DIR",
    )
    window_size: int = config_field(
        100_000, "sentence pairs per bucketing or packing window of the training "
        "stream (memory grows with it, not with the corpus)",
        check=int_at_least(1, allow_none=False),
    )
    target_languages: typing.Optional[typing.List[str]] = config_field(
        None, "one model for several target languages: the target language of each "
        "train_src/train_tgt entry, e.g. [de, fr, cs] (a reserved tag piece each); "
        "null: one target language", metavar="[LANG, ...]", check=check_target_languages,
    )
    language_tag: str = config_field(
        "source", "where a multilingual model's language tag goes: 'source' (the "
        "source's first token, as Marian) or 'target' (the first output token, "
        "forced when decoding)", check=one_of(*LANGUAGE_TAG_POSITIONS),
    )
    sampling_temperature: typing.Optional[float] = config_field(
        None, "sample the target languages with temperature T (1: the corpus's "
        "proportions; larger: more even); null: every pair once a pass", check=positive,
    )
    eval_language: typing.Optional[str] = config_field(
        None, "target language of the valid/test files of a multilingual model; "
        "null: the first of target_languages", metavar="LANG",
    )
    vocabulary_size: typing.Optional[int] = config_field(
        None, "shared BPE vocabulary size; " + AUTO, check=check_vocabulary_size
    )
    max_length: typing.Optional[int] = config_field(
        None, "longest sequence in tokens; " + AUTO, check=int_at_least(2)
    )
    tokens_per_batch: typing.Optional[int] = config_field(
        None, "padded tokens per batch; " + AUTO, check=positive
    )
    bucket_step: int = config_field(8, "length bucket width in tokens", check=positive)
    bucketing: str = config_field(
        "separate",
        "'separate': each side padded to its own length bucket; 'joint': both to the longer side's; 'packed': several pairs per row of max_length tokens",
        check=one_of(*BUCKETINGS),
    )


@dataclasses.dataclass(frozen=True)
class OptimizationFields:
    """The optimization: epochs, limits, the learning-rate schedule, accumulation, regularization.

    `TrainConfig` keys (flat: ``TrainConfig(preset=...)``).

    Args:
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
    """

    # --- schedule ---
    epochs: typing.Optional[int] = config_field(
        None, "number of epochs; " + AUTO, check=positive
    )
    steps_per_epoch: typing.Optional[int] = config_field(
        None, "optimizer updates per epoch (checkpoint interval); null: one pass",
        check=positive,
    )
    max_steps: typing.Optional[int] = config_field(
        None, "stop after this many optimizer updates in total", check=positive
    )
    time_budget_minutes: typing.Optional[float] = config_field(
        None, "stop training after MINUTES", check=positive,
        flags=("--time-budget",), metavar="MINUTES",
    )
    backup_every_steps: typing.Optional[int] = config_field(
        None, "also back up the training state every N updates, so that a crash "
        "or preemption loses at most N; null: at the end of each epoch",
        check=int_at_least(1),
    )
    accumulate_steps: int = config_field(
        1, "gradient accumulation: batches averaged into each optimizer update",
        check=positive,
    )
    warmup_steps: typing.Optional[int] = config_field(
        None, "learning-rate warmup in updates; " + AUTO, check=positive
    )
    learning_rate_scale: typing.Optional[float] = config_field(
        None, "multiplies the paper's learning rate; " + AUTO, check=positive,
        flags=("--lr-scale",),
    )
    decay_steps: typing.Optional[int] = config_field(
        None, "also decay the learning rate linearly to zero at this update; "
        "null: the paper's schedule", check=positive,
    )
    label_smoothing: float = config_field(0.1, "eps_ls (0.1 in the paper)", check=check_rate)
    ema_decay: typing.Optional[float] = config_field(
        None, "moving average of the weights with this decay per update (e.g. "
        "0.999), used for validation and the final model; null: none",
        check=check_decay,
    )
    seed: int = config_field(0, "random seed")


@dataclasses.dataclass(frozen=True)
class CheckpointFields:
    """The outputs: the run directory, checkpoints, validation during training and the final model.

    `TrainConfig` keys (flat: ``TrainConfig(preset=...)``).

    Args:
        output_dir: str. Where the final model (keras-hub preset files:
            model.weights.h5, config.json, ...), vocab.spm,
            train_config.json, checkpoints/, logs/ and backup/ go. Auto.
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
        final_model: "last", "best" or "average". What the run's preset
            (its model.weights.h5) holds:
            the weights at the end of training (the moving average with
            ``ema_decay``), the best checkpoint, or the average of the last
            ``average_last_n`` epoch checkpoints. Auto: "best" with
            ``keep_best``, else "last" with ``ema_decay``, else "average".
    """

    # --- outputs ---
    output_dir: typing.Optional[str] = config_field(
        None, "run directory (model, vocabulary, config); " + AUTO, metavar="DIR"
    )
    average_last_n: typing.Union[int, typing.List[int], None] = config_field(
        None, "final_model average: average the last N epoch checkpoints; a "
        "list (3,5,8) chooses N by greedy validation BLEU after training; " + AUTO,
        check=check_average_last_n,
        metavar="N[,N...]",
    )
    keep_checkpoints: typing.Optional[int] = config_field(
        None, "keep only the newest N epoch checkpoints; null keeps all",
        check=positive,
    )
    # --- validation during training ---
    valid_bleu_sentences: typing.Optional[int] = config_field(
        0, "validation BLEU: greedy-decode the first N validation sentences "
        "(null: all; 0: off)",
        check=int_at_least(0),
    )
    eval_every_steps: typing.Optional[int] = config_field(
        None, "validation BLEU every N updates; null: each epoch", check=positive
    )
    keep_best: typing.Optional[str] = config_field(
        None, "keep the best checkpoint by validation bleu or loss "
        "(checkpoints/best/); null: none",
        check=one_of(None, *KEEP_BEST),
    )
    patience: typing.Optional[int] = config_field(
        None, "stop when the keep_best value has not improved for N "
        "evaluations; null: never",
        check=positive,
    )
    final_model: typing.Optional[str] = config_field(
        None, "the final model: last, best or average weights; auto: best "
        "with keep_best, else last with ema_decay, else average",
        check=one_of(None, *FINAL_MODELS),
    )


def _option_check(key, value):
    decode_options.check(key, value)


# The run's decoding defaults: a field per option that a run keeps.
RunDecodingFields = dataclasses.make_dataclass(
    "RunDecodingFields",
    [
        (
            name,
            decode_options.BY_NAME[name].type,
            config_field(
                decode_options.DEFAULTS[name],
                decode_options.BY_NAME[name].help + " (the run's decoding default)",
                check=_option_check,
            ),
        )
        for name in decode_options.RUN_DEFAULTS
    ],
    frozen=True,
)


@dataclasses.dataclass(frozen=True)
class DecodingFields(RunDecodingFields):
    """The decoding and the final evaluation.

    `TrainConfig` keys (flat: ``TrainConfig(preset=...)``).

    The run's decoding defaults come first (`RunDecodingFields`): one key
    per option of `keras_transformer.options.RUN_DEFAULTS` (``beam_size``,
    ``alpha``, ``max_extra_length``, ``min_length``,
    ``no_repeat_ngram_size``, ``repetition_penalty``), with the option's
    default, help and checks. They drive the final evaluation, and
    ``translate``, ``evaluate`` and ``export`` of the run use them where no
    flag is given.

    Args:
        eval_sentences: int. Score on at most this many test sentences;
            None scores all, 0 skips the evaluation.
        num_samples: int. Sample translations printed after training.
    """

    # --- evaluation ---
    eval_sentences: typing.Optional[int] = config_field(
        None, "score at most N test sentences after training (null: all; 0: skip)",
        check=int_at_least(0),
    )
    num_samples: int = config_field(
        5, "sample translations to print", check=int_at_least(0, allow_none=False)
    )


@dataclasses.dataclass(frozen=True)
class RuntimeFields:
    """The runtime: backend, compilation, memory, devices, progress output.

    `TrainConfig` keys (flat: ``TrainConfig(preset=...)``).

    Args:
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

    # --- runtime ---
    backend: typing.Optional[str] = config_field(
        None, "tensorflow, jax or torch", check=one_of(None, *BACKENDS),
        cli=False,  # The --backend flag.
    )
    jit_compile: typing.Union[bool, str] = config_field(
        "auto", "passed to model.compile: true, false or auto",
        check=one_of("auto", True, False),
    )
    retain_host_memory: typing.Union[bool, str] = config_field(
        "auto", "keep freed host memory in the process (glibc malloc, no "
        "munmap of large tensors each step): true, false or auto (on for "
        "TensorFlow)",
        check=one_of("auto", True, False),
    )
    distribution: str = config_field(
        "none", "none, data, model (JAX) or multi-worker (TensorFlow)",
        check=one_of(*DISTRIBUTIONS),
    )
    verbose: typing.Union[int, str] = config_field(
        "auto", "0 silent, 1 progress bars, 2 one line per epoch, or auto",
        check=one_of("auto", 0, 1, 2),
    )
