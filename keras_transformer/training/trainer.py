"""The training loop: `train(config)` from text files to a model that translates.

One run directory holds everything a run produces, so translation and export
use the vocabulary the model was trained with (the layout and its rules are
`keras_transformer.training.run_directory`'s)::

    <output_dir>/
      train_config.json   the resolved `TrainConfig` (config.json in runs
                          of earlier versions, which still resume and load)
      vocab.spm           the shared SentencePiece BPE vocabulary
      source_vocab.spm    the sources' own SentencePiece model, where the
                          init_from run has one (an imported Marian model)
      config.json, model.weights.h5 (+ .sha256), tokenizer.json,
      preprocessor.json, task.json, metadata.json,
      assets/tokenizer/vocabulary.spm
                          the final model (last, best or averaged
                          weights), kept once, as a keras-hub preset
                          (`TransformerSeq2SeqLM.save_to_preset`'s files;
                          source_tokenizer.json too with source_vocab.spm):
                          the layout the loaders read (runs of earlier
                          versions held model.keras too, and still load)
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
read the data and build the vocabulary and datasets (`_prepare_data`, with
`keras_transformer.training.run_data`), build and fit the model (`_fit`,
with `keras_transformer.training.run_model`: the paper's Adam and schedule,
gradient accumulation and the moving average of the weights; the callbacks
of `keras_transformer.training.run_callbacks`), save the final model (last,
best, or an average of checkpoints whose N is fixed or chosen on
validation), score it and write ``results.json``
(`keras_transformer.training.run_results`).
"""

import contextlib
import dataclasses
import os
import time

import keras

from keras_transformer.data import PreparedCorpus, TransformerTokenizer
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.distribution import distribution_scope, training_processes
from keras_transformer.training.host_memory import (
    resolve_retain_host_memory,
    retain_freed_memory,
)
from keras_transformer.training.run_callbacks import RunCallbacks, run_callbacks
from keras_transformer.training.run_data import (
    TrainingData,
    build_tokenizer,
    check_init_from,
    copy_init_vocabularies,
    load_data,
    prepare_training_corpus,
)
from keras_transformer.training.run_directory import RESUME, RunDirectory
from keras_transformer.training.run_model import build_run_model, fit_schedule
from keras_transformer.training.run_results import (
    TrainResult,
    evaluate_run,
    save_final_model,
    write_results,
)
from keras_transformer.training.update_backup import (
    SIGTERM_STOP,
    TrainingTerminated,
    UpdateBackup,
    read_backup_position,
)
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import atomic_write_json
from keras_transformer.utils.run_files import CORPUS_DIRNAME, MODEL_WEIGHTS_FILE


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
            f"The loss became NaN: no {MODEL_WEIGHTS_FILE} was written. "
            "Try a smaller learning_rate_scale or more warmup_steps.",
            verbose,
        )
    else:
        model, model_path, averaged, final, selection = save_final_model(
            config, run, fitted, tokenizer, splits.get("valid"), verbose
        )
        evaluation, samples, eval_name = evaluate_run(config, model, tokenizer, splits, verbose)
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
        write_results(result, eval_name)
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
    ``train_config.json`` and builds the datasets. In a data-parallel PyTorch run
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
    epochs, batches_per_epoch = fit_schedule(config, datasets.report.num_batches)
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
        model = build_run_model(
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


# Keys that may change when an interrupted run is resumed; any other
# difference would make the backup (weights, optimizer, data) inconsistent.
_RESUMABLE_CHANGES = frozenset(
    "epochs max_steps time_budget_minutes keep_checkpoints average_last_n "
    "beam_size alpha max_extra_length eval_sentences num_samples backend "
    "jit_compile retain_host_memory verbose test_src test_tgt patience eval_every_steps "
    "final_model backup_every_steps corpus_dir".split()
)


def _complete_saved_config(saved):
    """A saved `TrainConfig` resolved by this version: keys that an older
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
