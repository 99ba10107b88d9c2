"""The final model of a training run: what its preset (``model.weights.h5``) holds.

`choose_final_model` runs after `fit`: the last weights, the best checkpoint
(``keep_best``), or the average of the newest epoch checkpoints, with N
fixed (``average_last_n: 5``) or chosen on the validation set among
candidates (``average_last_n: [3, 5, 8, 12]``, `choose_average`).
"""

import os
import time

from keras_transformer.models.transformer.translator import Translator
from keras_transformer.training.checkpoints import average_checkpoints
from keras_transformer.training.evaluation import evaluate_translations
from keras_transformer.utils.console import log


def choose_final_model(model, config, run, last_epoch, best, verbose, tokenizer=None,
                       valid_pairs=None):
    """What ``config.final_model`` asks for, after `fit`.

    Args:
        model: the trained model, holding the last weights (Keras has
            already put the moving average in, with ``ema_decay``).
        config: the run's resolved `TrainConfig`.
        run: its `keras_transformer.training.run_directory.RunDirectory`.
        last_epoch: int. The last epoch trained (1-based; resumed runs
            count their earlier epochs).
        best: the run's `BestCheckpoint` callback, or None.
        verbose: int.
        tokenizer, valid_pairs: the run's tokenizer and validation
            ``(sources, references)``; needed with a list ``average_last_n``.

    Returns:
        ``(model, averaged checkpoint paths, "last" | "best" | "average",
        average selection or None)``; the selection is `choose_average`'s.
    """
    if config.final_model == "best":
        if best is not None and best.has_best:
            model.load_weights(best.weights_path)
            log(
                f"Final model: the best checkpoint ({best.monitor} {best.best:.4g} "
                f"after {best.best_step} updates).",
                verbose,
            )
            return model, [], "best", None
        log(
            "No best checkpoint was kept (no validation finished): the final "
            "model holds the last weights.",
            verbose,
        )
        return model, [], "last", None
    if config.final_model != "average":
        return model, [], "last", None
    selection = None
    last_n = config.average_last_n
    if isinstance(last_n, list):
        selection = choose_average(config, run, last_epoch, tokenizer, valid_pairs, verbose)
        if selection is None:
            return model, [], "last", None
        last_n = selection["chosen"]
    epochs = checkpoint_epochs(run, last_epoch, last_n)
    if len(epochs) < 2 and selection is None:
        return model, [], "last", None
    averaged, paths = average_checkpoints(
        [run.checkpoint_path(epoch) for epoch in epochs], last_n=len(epochs)
    )
    message = (
        f"Averaged the last {len(paths)} epoch checkpoints "
        f"(epochs {epochs[0]}-{epochs[-1]})."
        if len(paths) > 1
        else f"Final model: the last epoch checkpoint (epoch {epochs[0]})."
    )
    if len(paths) < last_n:
        # Not an error (a time budget decides how many epochs a run gets),
        # but the average then reaches back into early training.
        message += (
            f" average_last_n asks for {last_n}; this run has only "
            f"{len(paths)}, so the average includes its earliest checkpoints."
        )
    log(message, verbose)
    return averaged, paths, "average", selection


def checkpoint_epochs(run, last_epoch, last_n):
    """The epochs among the last ``last_n`` whose checkpoint exists, oldest first."""
    first = max(1, last_epoch - last_n + 1)
    return [
        epoch
        for epoch in range(first, last_epoch + 1)
        if os.path.isfile(run.checkpoint_path(epoch))
    ]


def choose_average(config, run, last_epoch, tokenizer, valid_pairs, verbose):
    """Chooses N among the ``average_last_n`` candidates on the validation set.

    Each candidate average of the last N epoch checkpoints is translated
    greedily (as validation BLEU during training is) and scored with
    sacreBLEU (exact match on the default task); the best wins, ties going
    to the larger N. A candidate that would average the same checkpoints as
    a smaller one (the run has fewer than N) is not scored again. Fairseq,
    OpenNMT and Marian average a fixed number of checkpoints; a fixed N
    suits one run length only (a 25-minute budget gives 10 epochs on one
    backend and 25 on another).

    Returns:
        ``{"chosen", "monitor", "candidates", "sentences", "seconds"}``, or
        None when the run has no epoch checkpoint.
    """

    start = time.monotonic()
    # The default task's sentences are single German words: BLEU (4-grams)
    # is 0 for them whatever the model, so exact match decides there, as it
    # is the default task's final score.
    monitor = "val_exact_match" if config.uses_default_task else "val_bleu"
    sources, references = valid_pairs
    count = config.valid_bleu_sentences or None  # 0 (off during training): all.
    sources, references = sources[:count], references[:count]
    template = translator = None
    candidates, seen = [], []
    for last_n in config.average_candidates:
        epochs = checkpoint_epochs(run, last_epoch, last_n)
        if not epochs or epochs in seen:
            continue
        seen.append(epochs)
        paths = [run.checkpoint_path(epoch) for epoch in epochs]
        # One template model and one translator (compiled once) for all.
        template, _ = average_checkpoints(paths, last_n=len(paths), model=template)
        if translator is None:
            translator = Translator(
                template, tokenizer, **config.translator_options(tokenizer)
            )
        result = evaluate_translations(
            translator,
            sources,
            references,
            beam_size=1,
            max_extra_length=config.max_extra_length,
            verbose=0,
        )
        candidates.append(
            {
                "last_n": last_n,
                "checkpoints": len(epochs),
                "epochs": [epochs[0], epochs[-1]],
                "val_bleu": result.bleu.score,
                "val_exact_match": result.exact_match,
            }
        )
        log(
            f"  average of the last {last_n} ({len(epochs)} checkpoints, epochs "
            f"{epochs[0]}-{epochs[-1]}): validation BLEU {result.bleu.score:.2f}, "
            f"exact match {result.exact_match:.1%} (greedy)",
            verbose,
        )
    if not candidates:
        return None
    chosen = best_candidate(candidates, monitor)
    seconds = time.monotonic() - start
    log(
        f"Chose the average of the last {chosen['last_n']} checkpoints by "
        f"{monitor} ({len(sources)} sentences, greedy; {seconds:.0f} s).",
        verbose,
    )
    return {
        "chosen": chosen["last_n"],
        "monitor": monitor,
        "candidates": candidates,
        "sentences": len(sources),
        "seconds": seconds,
    }


def best_candidate(candidates, monitor):
    """The candidate with the largest ``monitor`` value; ties: the larger N
    (a longer average is the smoother model)."""
    return max(candidates, key=lambda candidate: (candidate[monitor], candidate["last_n"]))
