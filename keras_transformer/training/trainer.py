"""The training loop: `train(config)` from text files to a model that translates.

One run directory holds everything a run produces, so translation and export
use the vocabulary the model was trained with (the layout and its rules are
`keras_transformer.training.run_directory`'s)::

    <output_dir>/
      config.json         the resolved `TrainConfig`
      vocab.spm           the shared SentencePiece BPE vocabulary
      source_vocab.spm    the sources' own SentencePiece model, where the
                          init_from run has one (an imported Marian model)
      model.keras         the final model: last, best or averaged weights
      results.json        steps, time, scores
      checkpoints/        epoch_001.weights.h5, ... and model_config.json;
                          best/ with keep_best (best.weights.h5, best.json)
      backup/             `BackupAndRestore` state while a run is unfinished
      logs/               history.csv (val_bleu too), validation.csv (one row
                          per validation BLEU), and TensorBoard events when
                          the tensorboard package is installed

Starting the same command again after a crash resumes from the last finished
epoch (the weights, the optimizer state, so the learning-rate step, the epoch
counter, and the best checkpoint's value are restored; the vocabulary is
reloaded); a finished run, a run with other settings or a directory that is
not a run is refused unless ``overwrite=True`` (``--overwrite``) moves it
aside. Every file is written to a temporary name, checked (finite weights,
strict JSON) and then renamed into place, so a crash or a NaN loss never
replaces a good file.

`train` runs these steps in order: claim the run directory (`_start_run`),
read the data and build the vocabulary and datasets (`_prepare_data`:
`load_data`, `build_tokenizer`, `build_datasets`), build and fit the model
(`_fit`: `build_model` with `build_optimizer`, the paper's Adam and schedule,
gradient accumulation and the moving average of the weights; the callbacks
of `keras_transformer.training.run_callbacks`), save the final model
(`_save_final_model`: last, best, or an average of checkpoints whose N is
fixed or chosen on validation, `keras_transformer.training.model_selection`),
then score it (`_evaluate_run`) and write ``results.json``.
"""

import contextlib
import dataclasses
import itertools
import math
import os
import time

import keras

from keras_transformer.data import (
    BatchList,
    CorpusStream,
    DatasetOptions,
    PreparedCorpus,
    TransformerTokenizer,
    corpus_from_pairs,
    default_bucket_lengths,
    default_task_splits,
    make_batches_from_corpus,
    prepare_corpus,
    read_parallel,
)
from keras_transformer.data.text_files import expand_paths
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_loader import load_run_model
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.objectives.metrics import MaskedTokenAccuracy
from keras_transformer.objectives.schedules import transformer_optimizer
from keras_transformer.training.checkpoints import save_architecture
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.distribution import (
    distribution_scope,
    pipeline_options_for,
    training_processes,
)
from keras_transformer.training.evaluation import (
    evaluate_translations,
    format_evaluation,
    format_samples,
)
from keras_transformer.training.host_memory import (
    resolve_retain_host_memory,
    retain_freed_memory,
)
from keras_transformer.training.model_selection import choose_final_model
from keras_transformer.training.precision import resolve_dtype_policy
from keras_transformer.training.run_callbacks import RunCallbacks, run_callbacks
from keras_transformer.training.run_directory import RESUME, RunDirectory
from keras_transformer.training.update_backup import (
    SIGTERM_STOP,
    TrainingTerminated,
    UpdateBackup,
    read_backup_position,
)
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import (
    atomic_write_bytes,
    atomic_write_json,
    save_model,
)
from keras_transformer.utils.private_apis import schedule_at_update_count
from keras_transformer.utils.run_files import (
    CONFIG_FILENAME,
    CORPUS_DIRNAME,
    MODEL_FILENAME,
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)

if keras.config.backend() == "tensorflow":
    # The TensorFlow backend reads the training stream through tf.data; JAX
    # and PyTorch through a NumPy generator, without TensorFlow.
    from keras_transformer.data.stream import make_dataset_from_corpus

# The default task's split is fixed, so that scores of different runs (and
# seeds) are measured on the same held-out numbers.
DEFAULT_TASK_SPLIT_SEED = 0


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What `train` did.

    Args:
        config: the resolved `TrainConfig`.
        output_dir: str. The run directory.
        model_path: str. ``<output_dir>/model.keras`` (None after a NaN loss).
        model: the final `Transformer` (see ``final_model``).
        tokenizer: the `TransformerTokenizer`.
        history: dict of per-epoch metric lists (this process' epochs),
            ``val_bleu`` and ``val_exact_match`` included with validation BLEU.
        initial_epoch: int. 0, or the epoch a resumed run started from.
        epochs_run: int. Epochs completed in this process.
        steps: int. Optimizer updates in total (including resumed ones).
        train_seconds: float. Time in `model.fit`.
        stop_reason: str or None. "time budget", "max_steps", "patience",
            "NaN loss".
        averaged_checkpoints: list of str. Checkpoints averaged into the model.
        evaluation: `EvaluationResult` or None.
        samples: list of (source, reference, hypothesis).
        final_model: str or None. What model.keras holds: "last", "best" or
            "average" (None after a NaN loss).
        best: dict or None. With ``keep_best``: ``{"monitor", "value",
            "update", "path"}`` of the best checkpoint.
        average_selection: dict or None. With a list ``average_last_n``:
            ``{"chosen", "monitor", "candidates", "sentences", "seconds"}``,
            each candidate ``{"last_n", "checkpoints", "epochs", "val_bleu",
            "val_exact_match"}``; ``monitor`` ("val_bleu", or
            "val_exact_match" on the default task) chose.
    """

    config: TrainConfig
    output_dir: str
    model_path: str
    model: object
    tokenizer: object
    history: dict
    initial_epoch: int
    epochs_run: int
    steps: int
    train_seconds: float
    stop_reason: object
    averaged_checkpoints: list
    evaluation: object
    samples: list
    final_model: object = None
    best: object = None
    average_selection: object = None


def load_data(config):
    """``{"train": (src, tgt), "valid": ..., "test": ...}`` lists of str.

    The default task gives all three splits. For files, only the validation
    and test splits are read into memory (missing ones are absent from the
    dict): the training data is prepared into shards and streamed
    (`prepare_training_corpus`).
    """
    if config.uses_default_task:
        return default_task_splits(seed=DEFAULT_TASK_SPLIT_SEED)
    splits = {}
    for name in ("valid", "test"):
        src_path = getattr(config, f"{name}_src")
        if src_path is not None:
            tgt_path = getattr(config, f"{name}_tgt")
            src, tgt, stats = read_parallel(src_path, tgt_path)
            if not src:
                raise ValueError(
                    f"No {name} sentence pairs in {src_path!r} and {tgt_path!r} "
                    f"({stats.num_lines} lines, {stats.num_skipped_empty} with an "
                    "empty side): the files are empty or blank."
                )
            splits[name] = (src, tgt)
    return splits


def build_tokenizer(config, train_pairs, verbose=1):
    """Loads ``<output_dir>/vocab.spm``, or trains it on the training text."""
    path = RunDirectory(config.output_dir).vocabulary_path
    if os.path.isfile(path):
        tokenizer = TransformerTokenizer.load(path)
        if config.vocabulary_size not in (None, tokenizer.vocabulary_size):
            raise ValueError(
                f"{path!r} has {tokenizer.vocabulary_size} pieces but the config "
                f"asks for vocabulary_size={config.vocabulary_size}. Use a new "
                "output_dir, or delete the old vocabulary and its model."
            )
        log(f"Vocabulary: reusing {path} ({tokenizer.vocabulary_size} pieces).", verbose)
        return tokenizer
    start = time.monotonic()
    src, tgt = train_pairs
    tokenizer = TransformerTokenizer.train(
        itertools.chain(src, tgt), config.vocabulary_size, seed=config.seed
    )
    atomic_write_bytes(path, tokenizer.proto)
    log(
        f"Vocabulary: trained {tokenizer.vocabulary_size} BPE pieces on "
        f"{2 * len(src)} sentences in {time.monotonic() - start:.1f} s -> {path}",
        verbose,
    )
    return tokenizer


def prepare_training_corpus(config, verbose=1):
    """The run's training data as a `PreparedCorpus`, and its vocabulary in
    ``<output_dir>/vocab.spm``.

    ``train_corpus`` is opened as it is; ``train_src``/``train_tgt`` are
    prepared into ``corpus_dir`` (``<output_dir>/corpus`` by default) with
    the run's vocabulary when it has one (a resumed run), else with a new
    one of ``vocabulary_size`` pieces learned from a streamed sample. A
    corpus prepared before with the same files and vocabulary is reused; an
    interrupted preparation resumes.

    Raises:
        ValueError: the corpus's vocabulary is not the run's, or its size is
            not ``vocabulary_size`` (naming both).
    """
    run = RunDirectory(config.output_dir)
    vocabulary = run.vocabulary_path if os.path.isfile(run.vocabulary_path) else None
    if config.train_corpus is not None:
        corpus = PreparedCorpus.open(config.train_corpus)
        log(f"Training corpus: {corpus.path} ({corpus.num_pairs:,} pairs).", verbose)
    else:
        corpus_dir = config.corpus_dir or run.join(CORPUS_DIRNAME)
        log(f"Training corpus: preparing {corpus_dir}", verbose)
        corpus = prepare_corpus(
            config.train_src,
            config.train_tgt,
            corpus_dir,
            languages=_file_languages(config),
            language_tag=config.language_tag,
            vocabulary=vocabulary,
            vocabulary_size=None if vocabulary else config.vocabulary_size,
            # The run's own source model (from init_from), when it has one.
            source_vocabulary=_source_vocabulary(run),
            seed=config.seed,
            # Keras' verbose=2 (a line per epoch) is not a request for
            # SentencePiece's own log.
            verbose=min(verbose, 1),
        )
    if corpus.languages and corpus.language_tag != config.language_tag:
        raise ValueError(
            f"The corpus {corpus.path!r} puts its language tags on the "
            f"{corpus.language_tag} side; set language_tag: {corpus.language_tag} "
            f"(received language_tag={config.language_tag!r})."
        )
    if config.vocabulary_size not in (None, corpus.vocabulary_size):
        raise ValueError(
            f"The corpus {corpus.path!r} has a vocabulary of {corpus.vocabulary_size} "
            f"pieces but the config asks for vocabulary_size={config.vocabulary_size}."
        )
    with open(corpus.vocabulary_path, "rb") as f:
        proto = f.read()
    if vocabulary is None:
        atomic_write_bytes(run.vocabulary_path, proto)
    else:
        with open(vocabulary, "rb") as f:
            corpus.check_vocabulary(f.read(), vocabulary)
    source_path = run.join(SOURCE_VOCABULARY_FILENAME)
    source_proto = None
    if os.path.isfile(source_path):
        with open(source_path, "rb") as f:
            source_proto = f.read()
    corpus.check_source_vocabulary(source_proto, source_path)
    return corpus


def _source_vocabulary(run):
    """``<run>/source_vocab.spm`` where the run has one, else None."""
    path = run.join(SOURCE_VOCABULARY_FILENAME)
    return path if os.path.isfile(path) else None


def check_init_from(path):
    """Raises an error naming ``path`` (``init_from``) when it is not a run
    directory with a model and its vocabulary."""
    if not os.path.isdir(path):
        what = "is not a directory" if os.path.exists(path) else "does not exist"
        raise FileNotFoundError(
            f"init_from {path!r} {what} (expected a run directory with {MODEL_FILENAME} "
            f"and {VOCABULARY_FILENAME}: a finished run of train, or the output of convert)."
        )
    for name in (MODEL_FILENAME, VOCABULARY_FILENAME):
        if not os.path.isfile(os.path.join(path, name)):
            raise ValueError(
                f"init_from {path!r} is not a finished run directory: "
                f"{os.path.join(path, name)!r} is missing."
            )


def copy_init_vocabularies(config, run):
    """Copies the SentencePiece model(s) of ``init_from`` into the run (once;
    a resumed run keeps its copies, which must be the same)."""
    for name in (VOCABULARY_FILENAME, SOURCE_VOCABULARY_FILENAME):
        source = os.path.join(config.init_from, name)
        if not os.path.isfile(source):
            continue
        with open(source, "rb") as f:
            proto = f.read()
        target = run.join(name)
        if not os.path.isfile(target):
            atomic_write_bytes(target, proto)
            continue
        with open(target, "rb") as f:
            if f.read() != proto:
                raise ValueError(
                    f"{target!r} is not the vocabulary of init_from ({source!r}): use a "
                    "new output_dir."
                )


def _file_languages(config):
    """The target language of each pair of training files (each
    ``train_src`` entry expanded, as `prepare_corpus` expands it), or None
    for one target language."""
    if config.target_languages is None:
        return None
    entries = config.train_src if isinstance(config.train_src, list) else [config.train_src]
    return [
        language
        for entry, language in zip(entries, config.target_languages)
        for _ in expand_paths(entry, "the source files")
    ]



def build_optimizer(config, d_model):
    """The paper's Adam and schedule (§5.3), with accumulation and EMA.

    ``accumulate_steps`` > 1 sets Keras' ``gradient_accumulation_steps``:
    the optimizer sums the gradients of that many batches and applies their
    mean once, so that (for a loss that is a mean over the batch) the update
    equals one batch that many times larger. Keras evaluates a learning-rate
    schedule at the count of *batches*; `schedule_at_update_count` makes
    the warmup schedule count updates, as without accumulation.

    ``ema_decay`` sets Keras' ``use_ema``: after each update the optimizer
    moves its average of the weights, ``ema = decay * ema + (1 - decay) *
    weights`` (the first update sets it to the weights). Under accumulation
    Keras moves the average after every batch, also those that only
    accumulate (the weights are then unchanged); the per-batch momentum is
    then ``ema_decay ** (1 / accumulate_steps)``, so that the average still
    forgets at ``ema_decay`` per update's worth of batches (it is the
    per-batch average of the weights held for ``accumulate_steps`` batches
    each).
    """
    steps = config.accumulate_steps
    options = {}
    if steps > 1:
        options["gradient_accumulation_steps"] = steps
    if config.ema_decay is not None:
        options.update(use_ema=True, ema_momentum=config.ema_decay ** (1.0 / steps))
    optimizer = transformer_optimizer(
        d_model,
        warmup_steps=config.warmup_steps,
        scale=config.learning_rate_scale,
        decay_steps=config.decay_steps,
        **options,
    )
    if steps > 1:
        schedule_at_update_count(optimizer)
    return optimizer


def build_model(config, vocabulary_size):
    """`Transformer.from_preset`, or with ``init_from`` that run's model and
    weights (rebuilt with the config's dtype policy and ``dropout_rate``),
    compiled with `build_optimizer` and the paper's loss."""
    dtype = resolve_dtype_policy(config.dtype_policy)[0]
    if config.init_from is not None:
        start = load_run_model(config.init_from, Transformer)
        if start.vocabulary_size != vocabulary_size:
            raise ValueError(
                f"The model of init_from {config.init_from!r} has {start.vocabulary_size} "
                f"ids but its vocabulary {vocabulary_size} pieces."
            )
        model = Transformer.from_config(
            {**start.get_config(), **config.model_overrides, "dtype": dtype}
        )
        model.set_weights(start.get_weights())
        del start
    else:
        model = Transformer.from_preset(
            config.preset,
            vocabulary_size=vocabulary_size,
            dtype=dtype,
            **config.model_overrides,
        )
    model.compile(
        optimizer=build_optimizer(config, model.d_model),
        loss=LabelSmoothedCrossEntropy(label_smoothing=config.label_smoothing),
        metrics=[MaskedTokenAccuracy()],
        jit_compile=config.jit_compile,
    )
    return model


def _schedule(config, num_batches):
    """``(epochs, batches per epoch)`` for `fit`, honouring ``max_steps``.

    ``steps_per_epoch`` and ``max_steps`` count optimizer updates; with
    ``accumulate_steps`` batches per update, an epoch is a whole number of
    updates (one pass over the data rounds up to one).
    """
    per_update = config.accumulate_steps
    updates_per_epoch = config.steps_per_epoch or math.ceil(num_batches / per_update)
    epochs = config.epochs
    if config.max_steps is not None:
        updates_per_epoch = min(updates_per_epoch, config.max_steps)
        epochs = min(epochs, math.ceil(config.max_steps / updates_per_epoch))
    return epochs, updates_per_epoch * per_update


def train(config, callbacks=None, overwrite=False):
    """Trains a Transformer as ``config`` says and evaluates it.

    Trains (or loads) the vocabulary, builds the token-bucketed datasets and
    the model, runs `fit` with checkpoints, `BackupAndRestore`, NaN and time
    guards (and, as configured, validation BLEU, the best checkpoint and
    early stopping), saves the final model (last, best or checkpoint-averaged
    weights), then prints sample translations and a score: exact match on the
    default task, BLEU on your test (else validation) files.

    Args:
        config: a `TrainConfig` ("auto" fields are resolved here).
        callbacks: optional extra `keras.callbacks.Callback`s for `fit`.
        overwrite: bool. When ``config.output_dir`` holds a finished run, a
            run with other settings, or files that are not a run, rename it
            to ``<output_dir>.old-<timestamp>`` and start afresh, instead of
            refusing. Defaults to False.

    Returns:
        A `TrainResult`.

    Example:

    ```python
    result = train(TrainConfig())  # the embedded default task
    print(result.evaluation.exact_match)
    ```
    """
    processes = training_processes(config.distribution)
    try:
        return _train(config, callbacks, overwrite, processes)
    finally:
        processes.close()


def _train(config, callbacks, overwrite, processes):
    config, run, resume, verbose = _start_run(config, overwrite, processes)
    splits, tokenizer, datasets = _prepare_data(config, run, verbose, processes)
    fitted = _fit(config, run, tokenizer, splits, datasets, resume, callbacks, verbose, processes)
    if not processes.is_chief:
        # Process 0 saves, scores and writes the results.
        return _follower_result(config, tokenizer, fitted)
    model, model_path, averaged, final, selection = fitted.model, None, [], None, None
    evaluation, samples, eval_name = None, [], None
    if fitted.stop_reason == SIGTERM_STOP:
        log(
            f"SIGTERM: saved the training state at update {fitted.steps} in "
            f"{RunDirectory(config.output_dir).backup_dir}; run the same command "
            "again to resume.",
            verbose,
        )
    elif fitted.stop_reason == "NaN loss":
        log(
            f"The loss became NaN: no {MODEL_FILENAME} was written. "
            "Try a smaller learning_rate_scale or more warmup_steps.",
            verbose,
        )
    else:
        model, model_path, averaged, final, selection = _save_final_model(
            config, run, fitted, tokenizer, splits.get("valid"), verbose
        )
        evaluation, samples, eval_name = _evaluate_run(config, model, tokenizer, splits, verbose)
    result = TrainResult(
        config=config,
        output_dir=config.output_dir,
        model_path=model_path,
        model=model,
        tokenizer=tokenizer,
        history=dict(fitted.history.history),
        initial_epoch=fitted.initial_epoch,
        epochs_run=fitted.epochs_run,
        steps=fitted.steps,
        train_seconds=fitted.train_seconds,
        stop_reason=fitted.stop_reason,
        averaged_checkpoints=averaged,
        evaluation=evaluation,
        samples=samples,
        final_model=final,
        best=fitted.callbacks.best_summary(),
        average_selection=selection,
    )
    if fitted.stop_reason != SIGTERM_STOP:  # Unfinished: the backup resumes it.
        _write_results(result, eval_name)
    return result


def _start_run(config, overwrite, processes):
    """Resolves ``config``, checks the backend and claims the run directory
    (process 0 of a data-parallel PyTorch run; the others write nothing and
    are silent).

    Returns:
        ``(config, run, resume, verbose)``: the resolved config with a
        normalized ``output_dir``, its `RunDirectory`, whether the run
        resumes an interrupted one, and the verbosity of the log.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"train expects a TrainConfig. Received: {type(config).__name__}")
    if config.init_from is not None:
        check_init_from(config.init_from)
    elif config.train_corpus is not None and config.vocabulary_size is None:
        # A prepared corpus fixes the vocabulary: its size, not the default.
        corpus = PreparedCorpus.open(config.train_corpus, verify=False)
        config = config.replace(vocabulary_size=corpus.vocabulary_size)
    config = config.resolved()
    backend = keras.config.backend()
    if config.backend is not None and config.backend != backend:
        raise ValueError(
            f"The config asks for backend={config.backend!r} but Keras runs on "
            f"{backend!r}. Set KERAS_BACKEND={config.backend} before Keras is "
            "imported (the keras-transformer command does this for you)."
        )
    verbose = 1 if config.verbose == "auto" else config.verbose
    # One spelling of the path (runs/x/ and runs/x are the same run).
    config = config.replace(output_dir=os.path.normpath(config.output_dir))
    if not processes.is_chief:
        verbose = 0
        config = config.replace(verbose=0)
    run = RunDirectory(config.output_dir)
    action = None
    if processes.is_chief:
        action = _claim(run, config, overwrite, verbose)
        os.makedirs(config.output_dir, exist_ok=True)
    action = processes.broadcast(action)
    # Other processes draw other dropout masks (their initial weights are
    # replaced by process 0's).
    keras.utils.set_random_seed(config.seed + processes.rank)
    data = "the embedded default task (English -> German number words)"
    if not config.uses_default_task:
        data = f"{config.train_src} -> {config.train_tgt}"
        if config.train_corpus is not None:
            data = f"the prepared corpus {config.train_corpus}"
    log(f"Training on {data} with the {backend} backend -> {config.output_dir}", verbose)
    if processes.describe() is not None:
        log(processes.describe(), verbose)
    if resolve_retain_host_memory(config.retain_host_memory, backend):
        _, how = retain_freed_memory()
        log(f"retain_host_memory: {how}.", verbose)
    return config, run, action == RESUME, verbose


def _prepare_data(config, run, verbose, processes):
    """Reads the splits, loads or trains the vocabulary, writes
    ``config.json`` and builds the datasets. In a data-parallel PyTorch run
    the other processes wait for process 0 to write the vocabulary and the
    corpus, then read them.

    Returns:
        ``(splits, tokenizer, (train_dataset, valid_dataset, train_report))``.
    """
    splits = load_data(config)
    if not processes.is_chief:
        processes.barrier()
        tokenizer = TransformerTokenizer.load(run.vocabulary_path)
        if config.uses_default_task:
            train_data = splits["train"]
        else:
            train_data = PreparedCorpus.open(
                config.train_corpus or config.corpus_dir or run.join(CORPUS_DIRNAME),
                verify=False,
            )
        return splits, tokenizer, TrainingData(config, train_data, splits.get("valid"), tokenizer)
    if config.init_from is not None:
        copy_init_vocabularies(config, run)
    if config.uses_default_task:
        train_data = splits["train"]
        tokenizer = build_tokenizer(config, train_data, verbose)
        # Written now (after the vocabulary check), so that an interrupted
        # run can be resumed, translated from and inspected.
        atomic_write_json(run.config_path, config.to_dict())
    else:
        # Written before the corpus is prepared, so that the same command
        # resumes an interrupted preparation in the run directory.
        atomic_write_json(run.config_path, config.to_dict())
        train_data = prepare_training_corpus(config, verbose)
        tokenizer = TransformerTokenizer.load(run.vocabulary_path)
    processes.barrier()  # The others read the vocabulary and corpus now.
    datasets = TrainingData(config, train_data, splits.get("valid"), tokenizer)
    log(f"Training data: {datasets.report.summary()}", verbose)
    return splits, tokenizer, datasets


@dataclasses.dataclass
class _Fitted:
    """The trained model and what `fit` did."""

    model: object
    history: object
    callbacks: object  # The `RunCallbacks`.
    train_seconds: float
    initial_epoch: int
    epochs_run: int
    steps: int
    stop_reason: object


def _fit(config, run, tokenizer, splits, datasets, resume, extra_callbacks, verbose, processes):
    """Builds the model and trains it with the run's callbacks; a `_Fitted`.

    A run resumed from a backup taken inside an epoch first finishes that
    epoch with its remaining batches (a `fit` call of its own), then runs
    the other epochs; the training stream starts at the first batch the
    backup had not trained on.
    """
    epochs, batches_per_epoch = _schedule(config, datasets.report.num_batches)
    epoch, batch_in_epoch, batches = read_backup_position(run.backup_dir) if resume else (0, 0, 0)
    if batches is None:  # A backup of epoch ends only.
        batch_in_epoch, batches = 0, epoch * batches_per_epoch
    if resume and batches:
        log(
            f"Resuming at update {batches // config.accumulate_steps:,} (epoch "
            f"{epoch + 1}, batch {batch_in_epoch + 1} of {batches_per_epoch}): "
            f"the training data continues after the {batches:,} batches already "
            "trained on.",
            verbose,
        )
    every = config.backup_every_steps
    every_batches = every * config.accumulate_steps if every else None
    phases = []  # (initial_epoch, batches in its first epoch)
    if 0 < batch_in_epoch < batches_per_epoch and epoch < epochs:
        phases.append((epoch, batches_per_epoch - batch_in_epoch))
        epoch += 1
    if epoch < epochs or not phases:
        phases.append((epoch, batches_per_epoch))
    # Build, compile and fit inside the distribution's scope (a no-op for
    # "none"); see keras_transformer.training.distribution.
    with distribution_scope(config.distribution):
        model = _build_run_model(
            config, run, tokenizer, epochs, batches_per_epoch, verbose, processes.is_chief
        )
        processes.install(model)
        fit_callbacks = None
        histories = []
        start = time.monotonic()
        for index, (initial_epoch, first_batches) in enumerate(phases):
            last = index == len(phases) - 1
            backup = (UpdateBackup if processes.is_chief else processes.follower_backup)(
                backup_dir=run.backup_dir,
                every_batches=every_batches,
                start_epoch=initial_epoch,
                start_batch_in_epoch=batches_per_epoch - first_batches,
                start_batches=batches,
                accumulate_steps=config.accumulate_steps,
                delete_on_end=last,
            )
            follow = processes.callback(backup)
            if not processes.is_chief:
                # Validation and every file are process 0's.
                fit_callbacks = _FollowerCallbacks([backup])
            elif fit_callbacks is None:
                fit_callbacks = run_callbacks(
                    config, run, tokenizer, splits.get("valid"), resume=resume,
                    verbose=verbose, backup=backup,
                )  # fmt: skip
            else:
                fit_callbacks.callbacks[0] = backup
            with backup.stop_on_sigterm(), contextlib.suppress(TrainingTerminated):
                model.fit(
                    datasets.train_dataset(batches),
                    validation_data=datasets.valid_dataset if processes.is_chief else None,
                    initial_epoch=initial_epoch,
                    epochs=initial_epoch + 1 if not last else epochs,
                    steps_per_epoch=first_batches,
                    callbacks=fit_callbacks.callbacks
                    + list(extra_callbacks or [])
                    + ([follow] if follow is not None else []),
                    verbose=config.verbose,
                    shuffle=False,  # The pipeline shuffles (tf.data ignores this anyway).
                )
            # Also the epochs of a `fit` that SIGTERM ended.
            histories.append(model.history)
            batches = backup.batches
            if backup.stopped_by_signal or model.stop_training:
                break
    history = _joined_history(histories)
    fitted = _Fitted(
        model=model,
        history=history,
        callbacks=fit_callbacks,
        train_seconds=time.monotonic() - start,
        # BackupAndRestore may have started fit at a later epoch.
        initial_epoch=history.epoch[0] if history.epoch else epochs,
        epochs_run=len(history.epoch),
        steps=int(keras.ops.convert_to_numpy(model.optimizer.iterations)),
        stop_reason=(
            SIGTERM_STOP
            if backup.stopped_by_signal
            else fit_callbacks.stop_reason(history.history.get("loss", []))
        ),
    )
    log(
        f"Trained {fitted.epochs_run} epoch(s) ({fitted.steps} updates in total) in "
        f"{fitted.train_seconds:.0f} s"
        + (f"; stopped: {fitted.stop_reason}." if fitted.stop_reason else "."),
        verbose,
    )
    summary = datasets.input_summary(fitted.train_seconds)
    if summary is not None:
        log(summary, verbose)
    return fitted


def _joined_history(histories):
    """One `History` of consecutive `fit` calls."""
    joined = histories[0]
    for history in histories[1:]:
        joined.epoch = list(joined.epoch) + list(history.epoch)
        for key, values in history.history.items():
            joined.history.setdefault(key, []).extend(values)
    return joined


def _build_run_model(config, run, tokenizer, epochs, batches_per_epoch, verbose, write=True):
    """`build_model`, described in the log; its architecture is saved with
    the checkpoints (unless ``write`` is False)."""
    model = build_model(config, tokenizer.vocabulary_size)
    log(_describe(config, model, epochs, batches_per_epoch), verbose)
    _, reason = resolve_dtype_policy(config.dtype_policy)
    if reason is not None:
        log(f"dtype_policy auto: {model.dtype_policy.name} ({reason}).", verbose)
    if write:
        save_architecture(model, run.checkpoint_dir)
    return model


class _FollowerCallbacks(RunCallbacks):
    """The `RunCallbacks` of a data-parallel process other than 0: its
    batch-counting backup only; it stops when process 0 stops."""

    def stop_reason(self, losses):
        return None


def _follower_result(config, tokenizer, fitted):
    """The `TrainResult` of a data-parallel process other than 0, which
    writes nothing: its trained model, no files, no evaluation."""
    return TrainResult(
        config=config, output_dir=config.output_dir, model_path=None, model=fitted.model,
        tokenizer=tokenizer, history=dict(fitted.history.history),
        initial_epoch=fitted.initial_epoch, epochs_run=fitted.epochs_run, steps=fitted.steps,
        train_seconds=fitted.train_seconds,
        stop_reason=SIGTERM_STOP if fitted.stop_reason == SIGTERM_STOP else None,
        averaged_checkpoints=[], evaluation=None, samples=[],
    )  # fmt: skip


def _save_final_model(config, run, fitted, tokenizer, valid_pairs, verbose):
    """Chooses the final model (last, best or an average) and saves it.

    Returns:
        ``(model, model_path, averaged checkpoints, final_model, average
        selection)``.
    """
    model, averaged, final, selection = choose_final_model(
        fitted.model, config, run, fitted.initial_epoch + fitted.epochs_run,
        fitted.callbacks.best, verbose, tokenizer=tokenizer, valid_pairs=valid_pairs,
    )  # fmt: skip
    model_path = save_model(model, run.model_path)
    log(
        f"Saved {model_path} ({final} weights; with {VOCABULARY_FILENAME} and {CONFIG_FILENAME})",
        verbose,
    )
    return model, model_path, averaged, final, selection


def _describe(config, model, epochs, batches_per_epoch):
    overrides = f" with {config.model_overrides}" if config.model_overrides else ""
    origin = f"preset {config.preset!r}"
    if config.init_from is not None:
        origin = f"continued from {config.init_from}"
    per_update = config.accumulate_steps
    schedule = f"{epochs} epochs x {batches_per_epoch // per_update} updates"
    if per_update > 1:
        schedule += f" of {per_update} accumulated batches"
    if config.ema_decay is not None:
        schedule += f"; moving average of the weights (decay {config.ema_decay})"
    return (
        f"Model: {origin}{overrides}, {model.count_params():,} "
        f"parameters; {schedule}."
    )


# Keys that may change when an interrupted run is resumed; any other
# difference would make the backup (weights, optimizer, data) inconsistent.
_RESUMABLE_CHANGES = frozenset(
    "epochs max_steps time_budget_minutes keep_checkpoints average_last_n "
    "beam_size alpha max_extra_length eval_sentences num_samples backend "
    "jit_compile retain_host_memory verbose test_src test_tgt patience eval_every_steps "
    "final_model backup_every_steps corpus_dir".split()
)


def _complete_saved_config(saved):
    """A saved ``config.json`` resolved by this version: keys that an older
    version did not write take their defaults (the values that run used)."""
    known = set(TrainConfig.field_names())
    return (
        TrainConfig.from_dict({k: v for k, v in saved.items() if k in known}).resolved().to_dict()
    )


def _claim(run, config, overwrite, verbose):
    """Explains what a run in ``run`` will do; refuses to mix two runs."""
    action = run.claim(
        config.to_dict(),
        may_change=_RESUMABLE_CHANGES,
        overwrite=overwrite,
        complete_saved=_complete_saved_config,
    )
    if run.moved_to is not None:
        log(f"Moved the old contents of {run.path} aside to {run.moved_to}.", verbose)
    if action == RESUME:
        epoch = run.backup_epoch()
        log(f"Resuming the unfinished run in {run.path} after epoch {epoch}.", verbose)
    return action


class TrainingData:
    """The training stream and the validation batches of a run.

    The training data repeats forever (``steps_per_epoch`` sets the epoch)
    and can start at any batch (`train_dataset`), so that a resumed run
    continues where its backup was taken. It is a `CorpusStream` of a
    prepared corpus (memory-mapped shards, bounded memory), or of the
    default task's pairs encoded in memory (`corpus_from_pairs`): the same
    batches for the same seed under every backend. The TensorFlow backend
    reads it through ``tf.data`` (`make_dataset_from_corpus`); JAX and
    PyTorch through a Python generator whose batches a background thread
    builds ahead (`make_batches_from_corpus`), without TensorFlow. The
    validation pairs are batched once, in NumPy, the same way (unshuffled),
    and fed as a `keras.utils.PyDataset` (`BatchList`) each epoch.

    Args:
        config: the resolved `TrainConfig`.
        train_data: a `PreparedCorpus`, or ``(sources, targets)`` lists.
        valid_pairs: ``(sources, targets)`` or None.
        tokenizer: the run's `TransformerTokenizer`.
    """

    def __init__(self, config, train_data, valid_pairs, tokenizer):
        # Training and validation batches share one batching (same shapes).
        # Under JAX data parallelism every batch size is a multiple of the
        # device count (and each host reads its share of every global batch).
        self.config = config
        self._feeds = []  # The `CorpusBatches` fed to fit (JAX, PyTorch).
        # The sources of a run with a source model of their own (init_from).
        source_proto = None
        source_path = _source_vocabulary(RunDirectory(config.output_dir))
        if source_path is not None:
            with open(source_path, "rb") as f:
                source_proto = f.read()
        if not isinstance(train_data, PreparedCorpus):
            train_data = corpus_from_pairs(
                *train_data, tokenizer.proto, name="the training pairs",
                source_vocabulary_proto=source_proto,
            )  # fmt: skip
        self.train_data = train_data
        self.tokenizer = tokenizer
        self.batching = dict(
            tokens_per_batch=config.tokens_per_batch,
            max_length=config.max_length,
            bucket_boundaries=default_bucket_lengths(config.max_length, step=config.bucket_step),
            bucketing=config.bucketing,
            vocabulary_size=tokenizer.vocabulary_size,
            **pipeline_options_for(config.distribution),
        )
        self._first, self.report = self._train_dataset(0)
        self.valid_dataset = None
        if valid_pairs is not None:
            translator = config.translator_options(tokenizer)
            language = translator["target_language"]
            corpus = corpus_from_pairs(
                *valid_pairs,
                tokenizer.proto,
                language_tag_id=None if language is None else tokenizer.languages[language],
                language_tag=translator["language_tag"],
                name="the validation pairs",
                source_vocabulary_proto=source_proto,
            )
            batching = self.batching
            if keras.config.backend() == "torch":
                # Process 0 alone validates, on whole batches.
                batching = dict(batching, num_shards=1, shard_index=0)
            stream = CorpusStream(corpus, DatasetOptions(shuffle=False, seed=0, **batching))
            # A known size: Keras shows a full progress bar and reads the
            # same batches every epoch.
            self.valid_dataset = BatchList(list(stream.batches()))

    def train_dataset(self, start_batch=0):
        """The training batches from global batch ``start_batch`` on: a
        ``tf.data.Dataset`` under the TensorFlow backend, a generator of
        NumPy batches otherwise."""
        if start_batch == 0 and self._first is not None:
            dataset, self._first = self._first, None
            return dataset
        return self._train_dataset(start_batch)[0]

    def _train_dataset(self, start_batch):
        options = dict(
            self.batching,
            shuffle=True,
            seed=self.config.seed,
            repeat=True,
            window_size=self.config.window_size,
            start_batch=start_batch,
            sampling_temperature=self.config.sampling_temperature,
        )
        if keras.config.backend() == "tensorflow":
            return make_dataset_from_corpus(self.train_data, **options)
        batches, report = make_batches_from_corpus(self.train_data, **options)
        self._feeds.append(batches)
        return batches.generator(), report

    def input_summary(self, seconds):
        """A line on the NumPy input path (JAX and PyTorch): batches fed and
        the time ``fit`` waited for them, out of ``seconds``; None under the
        TensorFlow backend (tf.data)."""
        if not self._feeds:
            return None
        batches = sum(feed.num_batches for feed in self._feeds)
        waited = sum(feed.wait_seconds for feed in self._feeds)
        return (
            f"Input pipeline: {batches} batches built in a background thread; "
            f"the training loop waited {waited:.2f} s for them "
            f"({waited / max(seconds, 1e-9):.1%} of {seconds:.0f} s in fit)."
        )


def _evaluate_run(config, model, tokenizer, splits, verbose):
    """``(evaluation, samples, split name)`` on the test (else validation) split."""
    eval_name = "test" if "test" in splits else "valid" if "valid" in splits else None
    if eval_name is None or config.eval_sentences == 0:
        return None, [], eval_name
    sources, references = splits[eval_name]
    if config.eval_sentences:
        sources = sources[: config.eval_sentences]
        references = references[: config.eval_sentences]
    evaluation = evaluate_translations(
        Translator(model, tokenizer, **config.translator_options(tokenizer)),
        sources,
        references,
        beam_size=config.beam_size,
        alpha=config.alpha,
        max_extra_length=config.max_extra_length,
        verbose=verbose,
    )
    samples = list(zip(sources, references, evaluation.hypotheses))
    samples = samples[: config.num_samples]
    if samples:
        log(format_samples(*zip(*samples)), verbose)
    summary = format_evaluation(
        evaluation,
        f"{eval_name} set",
        exact_match=config.uses_default_task,
        bleu=not config.uses_default_task,
    )
    log(summary, verbose)
    return evaluation, samples, eval_name


def _write_results(result, eval_name):
    values = {
        "backend": keras.config.backend(),
        "dtype_policy": result.model.dtype_policy.name,
        "initial_epoch": result.initial_epoch,
        "epochs_run": result.epochs_run,
        "steps": result.steps,
        "train_seconds": result.train_seconds,
        "stop_reason": result.stop_reason,
        "final_model": result.final_model,
        "averaged_checkpoints": result.averaged_checkpoints,
        "best": result.best,
        "average_selection": result.average_selection,
        "final_metrics": {
            key: float(values[-1]) for key, values in result.history.items() if values
        },
    }
    if result.evaluation is not None:
        values["evaluation"] = dict(result.evaluation.to_dict(), split=eval_name)
    # Strict JSON: a NaN loss is written as null.
    path = RunDirectory(result.output_dir).results_path
    atomic_write_json(path, values)
