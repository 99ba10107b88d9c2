"""What a run ends with: `TrainResult`, the final model chosen and saved
(`save_final_model`: the keras-hub preset files, which keep its weights
once), its score on the test (else validation) split (`evaluate_run`) and
``results.json`` (`write_results`).
"""

import dataclasses
import os

import keras

from keras_transformer.models.transformer.translator import Translator
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.evaluation import (
    evaluate_translations,
    format_evaluation,
    format_samples,
)
from keras_transformer.training.model_selection import choose_final_model
from keras_transformer.training.run_directory import RunDirectory
from keras_transformer.training.run_preset import write_run_preset
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import atomic_write_json
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    TRAIN_CONFIG_FILENAME,
    VOCABULARY_FILENAME,
)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What `train` did.

    Args:
        config: the resolved `TrainConfig`.
        output_dir: str. The run directory.
        model_path: str. ``<output_dir>/model.weights.h5``, the final
            model's weights in the run's keras-hub preset files (None after
            a NaN loss).
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
        final_model: str or None. What the preset holds: "last", "best" or
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


def save_final_model(config, run, fitted, tokenizer, valid_pairs, verbose):
    """Chooses the final model (last, best or an average) and saves it
    once, as the run's keras-hub preset (`write_run_preset`:
    ``model.weights.h5``, ``config.json``, the tokenizer(s), ``task.json``
    with the run's decoding defaults, ...).

    Returns:
        ``(model, model_path, averaged checkpoints, final_model, average
        selection)``.
    """
    model, averaged, final, selection = choose_final_model(
        fitted.model, config, run, fitted.initial_epoch + fitted.epochs_run,
        fitted.callbacks.best, verbose, tokenizer=tokenizer, valid_pairs=valid_pairs,
    )  # fmt: skip
    source = run.join(SOURCE_VOCABULARY_FILENAME)
    model_path = write_run_preset(
        run.path,
        model,
        run.vocabulary_path,
        config.to_dict(),
        source_vocabulary_path=source if os.path.isfile(source) else None,
    )
    log(
        f"Saved {model_path} ({final} weights) with the keras-hub preset files, "
        f"{VOCABULARY_FILENAME} and {TRAIN_CONFIG_FILENAME} in {run.path}",
        verbose,
    )
    return model, model_path, averaged, final, selection


def evaluate_run(config, model, tokenizer, splits, verbose):
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
        options=config.decode_options(),
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


def write_results(result, eval_name):
    values = {
        "backend": keras.config.backend(),
        "dtype_policy": result.model.dtype_policy.name,
        "initial_epoch": result.initial_epoch,
        "epochs_run": result.epochs_run,
        "steps": result.steps,
        "train_seconds": result.train_seconds,
        "stop_reason": result.stop_reason,
        "final_model": result.final_model,
        # The one file of the final model's weights (the preset's), or None.
        "model_path": result.model_path,
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
