"""The training loop: `train(config)` from text files to a model that translates.

One output directory holds everything a run produces, so translation and
export use the vocabulary the model was trained with::

    <output_dir>/
      config.json         the resolved `TrainConfig`
      vocab.spm           the shared SentencePiece BPE vocabulary
      model.keras         the final model (averaged when average_last_n > 1)
      results.json        steps, time, scores
      checkpoints/        epoch_001.weights.h5, ... and model_config.json
      backup/             `BackupAndRestore` state while a run is unfinished
      logs/               history.csv, and TensorBoard events when the
                          tensorboard package is installed

A run directory belongs to one run (see `keras_transformer.run_directory`):
starting the same command again after a crash resumes from the last finished
epoch (the weights, the optimizer state, so the learning-rate step, and the
epoch counter are restored from ``backup/``; the vocabulary is reloaded from
``vocab.spm``); a finished run, a run with other settings or a directory that
is not a run is refused unless ``overwrite=True`` (``--overwrite``) moves it
aside. Every file is written to a temporary name, checked (finite weights,
strict JSON) and then renamed into place, so a crash or a NaN loss never
replaces a good file.
"""

import dataclasses
import importlib.util
import itertools
import math
import os
import time

import keras
import numpy as np

from keras_transformer import bleu as bleu_lib
from keras_transformer import run_directory
from keras_transformer.checkpoints import average_checkpoints
from keras_transformer.checkpoints import list_checkpoints
from keras_transformer.checkpoints import save_architecture
from keras_transformer.distribution import distribution_scope
from keras_transformer.config import TrainConfig
from keras_transformer.losses import LabelSmoothedCrossEntropy
from keras_transformer.metrics import MaskedTokenAccuracy
from keras_transformer.model import Transformer
from keras_transformer.schedules import transformer_optimizer

MODEL_FILENAME = run_directory.MODEL_FILENAME
RESULTS_FILENAME = run_directory.RESULTS_FILENAME
# The default task's split is fixed, so that scores of different runs (and
# seeds) are measured on the same held-out numbers.
DEFAULT_TASK_SPLIT_SEED = 0


@dataclasses.dataclass(frozen=True)
class EvaluationResult:
    """Scores of translations against references.

    Args:
        num_sentences: int. Sentences scored.
        exact_match: float. Fraction of hypotheses equal to their reference.
        bleu: `keras_transformer.bleu.BleuResult`. Cased detokenized BLEU.
        tokenized_bleu: `BleuResult`. Lowercased tokenized BLEU.
        hypotheses: list of str.
        seconds: float. Translation time.
    """

    num_sentences: int
    exact_match: float
    bleu: object
    tokenized_bleu: object
    hypotheses: list
    seconds: float

    def to_dict(self):
        return {
            "num_sentences": self.num_sentences,
            "exact_match": self.exact_match,
            "bleu": self.bleu.score,
            "bleu_signature": self.bleu.signature,
            "tokenized_bleu": self.tokenized_bleu.score,
            "tokenized_bleu_signature": self.tokenized_bleu.signature,
            "seconds": self.seconds,
        }


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What `train` did.

    Args:
        config: the resolved `TrainConfig`.
        output_dir: str. The run directory.
        model_path: str. ``<output_dir>/model.keras`` (None after a NaN loss).
        model: the trained (or averaged) `Transformer`.
        tokenizer: the `SubwordTokenizer`.
        history: dict of per-epoch metric lists (this process' epochs).
        initial_epoch: int. 0, or the epoch a resumed run started from.
        epochs_run: int. Epochs completed in this process.
        steps: int. Optimizer iterations in total (including resumed ones).
        train_seconds: float. Time in `model.fit`.
        stop_reason: str or None. "time budget", "max_steps", "NaN loss".
        averaged_checkpoints: list of str. Checkpoints averaged into the model.
        evaluation: `EvaluationResult` or None.
        samples: list of (source, reference, hypothesis).
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


class TimeBudget(keras.callbacks.Callback):
    """Stops training after ``minutes`` of wall-clock time in `fit`."""

    def __init__(self, minutes):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.stopped = False

    def on_train_begin(self, logs=None):
        self.start = time.monotonic()

    def on_train_batch_end(self, batch, logs=None):
        if time.monotonic() - self.start >= self.seconds:
            self.stopped = self.model.stop_training = True


class StepLimit(keras.callbacks.Callback):
    """Stops training when the optimizer has made ``max_steps`` steps."""

    def __init__(self, max_steps):
        super().__init__()
        self.max_steps = max_steps
        self.stopped = False

    def on_train_begin(self, logs=None):
        # After BackupAndRestore (earlier in the list) restored the optimizer.
        self.steps = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))
        self.stopped = self.model.stop_training = self.steps >= self.max_steps

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        if self.steps >= self.max_steps:
            self.stopped = self.model.stop_training = True


class FiniteCheckpoint(keras.callbacks.Callback):
    """Saves ``checkpoints/epoch_NNN.weights.h5`` after each epoch, atomically.

    An epoch whose weights hold NaN or inf (a diverged run) writes nothing:
    its name goes to ``skipped`` and no earlier good checkpoint is touched.
    """

    def __init__(self, run, verbose=1):
        super().__init__()
        self.run = run
        self.verbose = verbose
        self.skipped = []

    def on_epoch_end(self, epoch, logs=None):
        path = self.run.checkpoint_path(epoch + 1)
        bad = run_directory.nonfinite_variables(self.model.weights)
        if bad:
            self.skipped.append(path)
            _log(
                f"Epoch {epoch + 1}: non-finite weights ({bad[0]}, ...); "
                f"{os.path.basename(path)} was not written.",
                self.verbose,
            )
            return
        # Optimizer state included, as keras.callbacks.ModelCheckpoint does.
        run_directory.save_weights(self.model, path)


class PruneCheckpoints(keras.callbacks.Callback):
    """Deletes all but the newest ``keep`` epoch checkpoints."""

    def __init__(self, directory, keep):
        super().__init__()
        self.directory = directory
        self.keep = keep

    def on_epoch_end(self, epoch, logs=None):
        for path in list_checkpoints(self.directory)[: -self.keep]:
            os.remove(path)


def _log(message, verbose):
    if verbose:
        print(message, flush=True)


def load_data(config):
    """``{"train": (src, tgt), "valid": ..., "test": ...}`` lists of str.

    The default task gives all three splits; for files, missing valid/test
    splits are absent from the dict.
    """
    from keras_transformer.data import default_task_splits, read_parallel

    if config.uses_default_task:
        return default_task_splits(seed=DEFAULT_TASK_SPLIT_SEED)
    splits = {}
    for name in ("train", "valid", "test"):
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
    from keras_transformer.data import SubwordTokenizer

    path = run_directory.RunDirectory(config.output_dir).vocabulary_path
    if os.path.isfile(path):
        tokenizer = SubwordTokenizer.load(path)
        if tokenizer.vocabulary_size != config.vocabulary_size:
            raise ValueError(
                f"{path!r} has {tokenizer.vocabulary_size} pieces but the config "
                f"asks for vocabulary_size={config.vocabulary_size}. Use a new "
                "output_dir, or delete the old vocabulary and its model."
            )
        _log(f"Vocabulary: reusing {path} ({tokenizer.vocabulary_size} pieces).", verbose)
        return tokenizer
    start = time.monotonic()
    src, tgt = train_pairs
    tokenizer = SubwordTokenizer.train(
        itertools.chain(src, tgt), config.vocabulary_size, seed=config.seed
    )
    run_directory.atomic_write_bytes(path, tokenizer.proto)
    _log(
        f"Vocabulary: trained {tokenizer.vocabulary_size} BPE pieces on "
        f"{2 * len(src)} sentences in {time.monotonic() - start:.1f} s -> {path}",
        verbose,
    )
    return tokenizer


def build_model(config, vocabulary_size):
    """`Transformer.from_preset` compiled with the paper's optimizer and loss."""
    model = Transformer.from_preset(
        config.preset,
        vocabulary_size=vocabulary_size,
        dtype=config.dtype_policy,
        **config.model_overrides,
    )
    model.compile(
        optimizer=transformer_optimizer(
            model.d_model,
            warmup_steps=config.warmup_steps,
            scale=config.learning_rate_scale,
        ),
        loss=LabelSmoothedCrossEntropy(label_smoothing=config.label_smoothing),
        metrics=[MaskedTokenAccuracy()],
        jit_compile=config.jit_compile,
    )
    return model


def _schedule(config, num_batches):
    """``(epochs, steps_per_epoch)`` honouring ``max_steps``."""
    steps_per_epoch = config.steps_per_epoch or num_batches
    epochs = config.epochs
    if config.max_steps is not None:
        steps_per_epoch = min(steps_per_epoch, config.max_steps)
        epochs = min(epochs, math.ceil(config.max_steps / steps_per_epoch))
    return epochs, steps_per_epoch


def train(config, callbacks=None, overwrite=False):
    """Trains a Transformer as ``config`` says and evaluates it.

    Trains (or loads) the vocabulary, builds the token-bucketed datasets and
    the model, runs `fit` with checkpoints, `BackupAndRestore`, NaN and time
    guards, saves the final (optionally checkpoint-averaged) model, then
    prints sample translations and a score: exact match on the default
    task, BLEU on your test (else validation) files.

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
    if not isinstance(config, TrainConfig):
        raise TypeError(f"train expects a TrainConfig. Received: {type(config).__name__}")
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
    run = run_directory.RunDirectory(config.output_dir)
    _claim(run, config, overwrite, verbose)
    out = config.output_dir
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(config.seed)
    data = "the embedded default task (English -> German number words)"
    if not config.uses_default_task:
        data = f"{config.train_src} -> {config.train_tgt}"
    _log(f"Training on {data} with the {backend} backend -> {out}", verbose)

    splits = load_data(config)
    tokenizer = build_tokenizer(config, splits["train"], verbose)
    # Written now (after the vocabulary check), so that an interrupted run
    # can be resumed, translated from and inspected.
    run_directory.atomic_write_json(run.config_path, config.to_dict())
    train_dataset, valid_dataset, report = build_datasets(config, splits, tokenizer)
    _log(f"Training data: {report.summary()}", verbose)
    epochs, steps_per_epoch = _schedule(config, report.num_batches)
    # Build, compile and fit inside the distribution's scope (a no-op for
    # "none"); see keras_transformer.distribution.
    with distribution_scope(config.distribution):
        model = build_model(config, tokenizer.vocabulary_size)
        overrides = f" with {config.model_overrides}" if config.model_overrides else ""
        _log(
            f"Model: preset {config.preset!r}{overrides}, {model.count_params():,} "
            f"parameters; {epochs} epochs x {steps_per_epoch} steps.",
            verbose,
        )
        checkpoint_dir = run.checkpoint_dir
        save_architecture(model, checkpoint_dir)
        run_callbacks, time_budget, step_limit = _callbacks(config, run, verbose)

        start = time.monotonic()
        history = model.fit(
            train_dataset,
            validation_data=valid_dataset,
            epochs=epochs,
            steps_per_epoch=steps_per_epoch,
            callbacks=run_callbacks + list(callbacks or []),
            verbose=config.verbose,
            shuffle=False,  # The pipeline shuffles (tf.data ignores this anyway).
        )
    train_seconds = time.monotonic() - start
    # BackupAndRestore may have started fit at a later epoch.
    initial_epoch = history.epoch[0] if history.epoch else epochs
    epochs_run = len(history.epoch)
    steps = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
    losses = history.history.get("loss", [])
    stop_reason = None
    if losses and not np.isfinite(losses[-1]):
        stop_reason = "NaN loss"
    elif time_budget is not None and time_budget.stopped:
        stop_reason = "time budget"
    elif step_limit is not None and step_limit.stopped:
        stop_reason = "max_steps"
    _log(
        f"Trained {epochs_run} epoch(s) ({steps} steps in total) in "
        f"{train_seconds:.0f} s" + (f"; stopped: {stop_reason}." if stop_reason else "."),
        verbose,
    )

    model_path, averaged, evaluation, samples = None, [], None, []
    if stop_reason == "NaN loss":
        _log(
            "The loss became NaN: no model.keras was written. Try a smaller "
            "learning_rate_scale or more warmup_steps.",
            verbose,
        )
    else:
        last_epoch = initial_epoch + epochs_run
        model, averaged = _final_model(model, config, checkpoint_dir, last_epoch)
        if averaged:
            _log(f"Averaged the last {len(averaged)} epoch checkpoints.", verbose)
        model_path = run_directory.save_model(model, run.model_path)
        _log(f"Saved {model_path} (with vocab.spm and config.json)", verbose)
        evaluation, samples, eval_name = _evaluate_run(
            config, model, tokenizer, splits, verbose
        )

    result = TrainResult(
        config=config,
        output_dir=out,
        model_path=model_path,
        model=model,
        tokenizer=tokenizer,
        history=dict(history.history),
        initial_epoch=initial_epoch,
        epochs_run=epochs_run,
        steps=steps,
        train_seconds=train_seconds,
        stop_reason=stop_reason,
        averaged_checkpoints=averaged,
        evaluation=evaluation,
        samples=samples,
    )
    _write_results(result, eval_name if evaluation is not None else None)
    return result


# Keys that may change when an interrupted run is resumed; any other
# difference would make the backup (weights, optimizer, data) inconsistent.
_RESUMABLE_CHANGES = frozenset(
    "epochs max_steps time_budget_minutes keep_checkpoints average_last_n "
    "beam_size alpha max_extra_length eval_sentences num_samples backend "
    "jit_compile verbose test_src test_tgt".split()
)


def _claim(run, config, overwrite, verbose):
    """Explains what a run in ``run`` will do; refuses to mix two runs."""
    action = run.claim(
        config.to_dict(), may_change=_RESUMABLE_CHANGES, overwrite=overwrite
    )
    if run.moved_to is not None:
        _log(f"Moved the old contents of {run.path} aside to {run.moved_to}.", verbose)
    if action == run_directory.RESUME:
        epoch = run.backup_epoch()
        _log(f"Resuming the unfinished run in {run.path} after epoch {epoch}.", verbose)
    return action


def build_datasets(config, splits, tokenizer):
    """``(train_dataset, valid_dataset or None, train_report)``.

    The training data repeats forever (``steps_per_epoch`` sets the epoch);
    the validation data is one pass per epoch.
    """
    import tensorflow as tf

    from keras_transformer.data import default_bucket_lengths, make_dataset

    # Training and validation batches share one batching (same shapes).
    batching = dict(
        tokenizer=tokenizer,
        tokens_per_batch=config.tokens_per_batch,
        max_length=config.max_length,
        bucket_boundaries=default_bucket_lengths(
            config.max_length, step=config.bucket_step
        ),
    )
    train_dataset, report = make_dataset(
        *splits["train"], shuffle=True, seed=config.seed, repeat=True, **batching
    )
    valid_dataset = None
    if "valid" in splits:
        valid_dataset, valid_report = make_dataset(
            *splits["valid"], shuffle=False, **batching
        )
        # A known size: Keras then shows a full progress bar and does not
        # warn that the validation data "ran out" after the first epoch.
        valid_dataset = valid_dataset.apply(
            tf.data.experimental.assert_cardinality(valid_report.num_batches)
        )
    return train_dataset, valid_dataset, report


def _callbacks(config, run, verbose):
    """``(callbacks, time_budget or None, step_limit or None)`` for `fit`."""
    checkpoint_dir = run.checkpoint_dir
    log_dir = run.logs_dir
    os.makedirs(log_dir, exist_ok=True)
    callbacks = [
        # First, so that later callbacks see the restored state. A second
        # copy of the backup survives a crash while the first is written.
        keras.callbacks.BackupAndRestore(run.backup_dir, double_checkpoint=True),
        FiniteCheckpoint(run, verbose),
        keras.callbacks.TerminateOnNaN(),
        keras.callbacks.CSVLogger(os.path.join(log_dir, "history.csv"), append=True),
    ]
    if importlib.util.find_spec("tensorboard") is not None:
        callbacks.append(keras.callbacks.TensorBoard(log_dir, write_graph=False))
    else:
        _log(
            "(TensorBoard is not installed: metrics go to logs/history.csv; "
            "pip install tensorboard for event files.)",
            verbose,
        )
    if config.keep_checkpoints is not None:
        keep = max(config.keep_checkpoints, config.average_last_n)
        callbacks.append(PruneCheckpoints(checkpoint_dir, keep))
    time_budget = step_limit = None
    if config.time_budget_minutes is not None:
        time_budget = TimeBudget(config.time_budget_minutes)
        callbacks.append(time_budget)
    if config.max_steps is not None:
        step_limit = StepLimit(config.max_steps)
        callbacks.append(step_limit)
    return callbacks, time_budget, step_limit


def _final_model(model, config, checkpoint_dir, last_epoch):
    """The trained model, or the average of the last epoch checkpoints."""
    if config.average_last_n < 2:
        return model, []
    first = max(1, last_epoch - config.average_last_n + 1)
    run = run_directory.RunDirectory(os.path.dirname(checkpoint_dir))
    paths = [run.checkpoint_path(epoch) for epoch in range(first, last_epoch + 1)]
    paths = [path for path in paths if os.path.isfile(path)]
    if len(paths) < 2:
        return model, []
    return average_checkpoints(paths, last_n=config.average_last_n)


def _evaluate_run(config, model, tokenizer, splits, verbose):
    """Samples and the score on the test (else validation) split."""
    eval_name = "test" if "test" in splits else "valid" if "valid" in splits else None
    if eval_name is None or config.eval_sentences == 0:
        return None, [], eval_name
    from keras_transformer.translator import Translator

    sources, references = splits[eval_name]
    if config.eval_sentences:
        sources = sources[: config.eval_sentences]
        references = references[: config.eval_sentences]
    evaluation = evaluate_translations(
        Translator(model, tokenizer),
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
        _log("Sample translations:", verbose)
        for source, reference, hypothesis in samples:
            mark = "ok" if hypothesis == reference else "  "
            _log(f"  {mark} {source}\n       -> {hypothesis}\n     ref {reference}", verbose)
    summary = format_evaluation(
        evaluation,
        f"{eval_name} set",
        exact_match=config.uses_default_task,
        bleu=not config.uses_default_task,
    )
    _log(summary, verbose)
    return evaluation, samples, eval_name


def evaluate_translations(
    translator,
    sources,
    references,
    beam_size=4,
    alpha=0.6,
    max_extra_length=50,
    batch_size=None,
    verbose=1,
):
    """Translates ``sources`` and scores them against ``references``.

    Returns:
        An `EvaluationResult` (exact match, cased detokenized sacreBLEU and
        lowercased tokenized BLEU).
    """
    if len(sources) != len(references):
        raise ValueError(
            f"{len(sources)} sources but {len(references)} references; they "
            "must be aligned line by line."
        )
    if not sources:
        raise ValueError("Nothing to evaluate: no sentences.")
    start = time.monotonic()
    hypotheses = translator.translate(
        list(sources),
        beam_size=beam_size,
        alpha=alpha,
        max_extra_length=max_extra_length,
        batch_size=batch_size,
        verbose="auto" if verbose else False,
    )
    seconds = time.monotonic() - start
    exact = float(
        np.mean([h.strip() == r.strip() for h, r in zip(hypotheses, references)])
    )
    return EvaluationResult(
        num_sentences=len(sources),
        exact_match=exact,
        bleu=bleu_lib.corpus_bleu(hypotheses, list(references)),
        tokenized_bleu=bleu_lib.tokenized_bleu(hypotheses, list(references)),
        hypotheses=hypotheses,
        seconds=seconds,
    )


def format_evaluation(evaluation, name, exact_match=True, bleu=True):
    """Lines to print: exact match and/or both BLEU scores with signatures."""
    lines = []
    if exact_match:
        lines.append(
            f"Exact match on the {name}: {evaluation.exact_match:.1%} of "
            f"{evaluation.num_sentences} sentences "
            f"(translated in {evaluation.seconds:.1f} s)"
        )
    if bleu:
        lines += [
            f"BLEU on the {name} ({evaluation.num_sentences} sentences, "
            f"translated in {evaluation.seconds:.1f} s)",
            f"  cased detokenized sacreBLEU: {evaluation.bleu.score:6.2f}  "
            f"{evaluation.bleu.signature}",
            f"  lowercased tokenized BLEU:   {evaluation.tokenized_bleu.score:6.2f}  "
            f"{evaluation.tokenized_bleu.signature}",
        ]
    return "\n".join(lines)


def _write_results(result, eval_name):
    values = {
        "backend": keras.config.backend(),
        "initial_epoch": result.initial_epoch,
        "epochs_run": result.epochs_run,
        "steps": result.steps,
        "train_seconds": result.train_seconds,
        "stop_reason": result.stop_reason,
        "averaged_checkpoints": result.averaged_checkpoints,
        "final_metrics": {
            key: float(values[-1]) for key, values in result.history.items() if values
        },
    }
    if result.evaluation is not None:
        values["evaluation"] = dict(result.evaluation.to_dict(), split=eval_name)
    # Strict JSON: a NaN loss is written as null.
    path = run_directory.RunDirectory(result.output_dir).results_path
    run_directory.atomic_write_json(path, values)
