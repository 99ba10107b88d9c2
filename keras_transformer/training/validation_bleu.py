"""`ValidationBleu`: validation BLEU during training.

Greedy-decodes validation sentences every N optimizer updates (or each
epoch), scores them with sacreBLEU and puts ``val_bleu`` and
``val_exact_match`` into the epoch logs, where `keras.callbacks.CSVLogger`
and `keras.callbacks.TensorBoard` record them; each evaluation is also a row
of ``logs/validation.csv`` and a TensorBoard scalar at its update.
"""

import csv
import importlib
import math
import os

from keras_transformer.models.transformer.translator import Translator
from keras_transformer.options import DEFAULTS
from keras_transformer.training.evaluation import evaluate_translations
from keras_transformer.training.optimizer_state import UpdateCounter, ema_weights
from keras_transformer.utils.console import log


class ValidationBleu(UpdateCounter):
    """Validation BLEU during training: greedy decoding, sacreBLEU.

    Every ``every_steps`` optimizer updates, or at the end of each epoch when
    ``every_steps`` is None, translates ``sources`` greedily with a
    `keras_transformer.Translator` of the model being trained (with the
    moving average of the weights, when the optimizer keeps one) and scores
    the translations with `keras_transformer.training.evaluation.evaluate_translations`.

    Each epoch's logs get the latest ``val_bleu`` (cased detokenized
    sacreBLEU) and ``val_exact_match`` (NaN before the first evaluation), so
    that `keras.callbacks.CSVLogger`, `keras.callbacks.TensorBoard` and the
    `fit` history, which come later in the callback list, record them. Each
    evaluation is also a row of ``csv_path`` (epoch, update, scores, seconds)
    and, with ``tensorboard_dir``, an ``update_bleu`` / ``update_exact_match``
    scalar at its update.

    Args:
        tokenizer: the run's `TransformerTokenizer`.
        sources: list of str. Validation source sentences.
        references: list of str. Their references.
        every_steps: int or None. Evaluate every N updates; None: each epoch.
        accumulate_steps: int. Batches per optimizer update. Defaults to 1.
        max_extra_length: int. Output limit = source length + this.
        csv_path: str or None. Where to append one row per evaluation.
        tensorboard_dir: str or None. Event files of the per-update scalars.
        on_result: callable ``(values, updates)`` or None, called after each
            evaluation with its ``{"val_bleu": ..., "val_exact_match": ...}``
            (`BestCheckpoint.observe_logs`).
        verbose: int. 1 prints one line per evaluation.
        translator_options: dict or None. More `Translator` arguments
            (``language_tag``, ``target_language`` of a multilingual model:
            `TrainConfig.translator_options`).
    """

    def __init__(
        self,
        tokenizer,
        sources,
        references,
        every_steps=None,
        accumulate_steps=1,
        max_extra_length=DEFAULTS["max_extra_length"],
        csv_path=None,
        tensorboard_dir=None,
        on_result=None,
        verbose=1,
        translator_options=None,
    ):
        super().__init__(accumulate_steps)
        if not sources or len(sources) != len(references):
            raise ValueError(
                "ValidationBleu needs aligned, non-empty sources and references. "
                f"Received: {len(sources)} sources, {len(references)} references."
            )
        self.tokenizer = tokenizer
        self.translator_options = dict(translator_options or {})
        self.sources = list(sources)
        self.references = list(references)
        self.every_steps = every_steps
        self.max_extra_length = max_extra_length
        self.csv_path = csv_path
        self.tensorboard_dir = tensorboard_dir
        self.on_result = on_result
        self.verbose = verbose
        self.latest = {"val_bleu": math.nan, "val_exact_match": math.nan}
        self.results = []  # (updates, values) of every evaluation in this fit.
        self._translator = None
        self._writer = None
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_update(self, logs=None):
        if self.every_steps is not None and self.updates % self.every_steps == 0:
            self.evaluate()

    def on_epoch_end(self, epoch, logs=None):
        if self.every_steps is None:
            self.evaluate()
        if logs is not None:
            logs.update(self.latest)

    def evaluate(self):
        """Translates and scores the validation sentences now; returns the values."""
        model = self.model  # Under JAX: the current weights, synced.
        with ema_weights(model):
            if self._translator is None:
                # Kept: its compiled decoding serves every evaluation.
                self._translator = Translator(
                    model, self.tokenizer, **self.translator_options
                )
            result = evaluate_translations(
                self._translator,
                self.sources,
                self.references,
                beam_size=1,
                max_extra_length=self.max_extra_length,
                verbose=0,
            )
        self.latest = {"val_bleu": result.bleu.score, "val_exact_match": result.exact_match}
        self.results.append((self.updates, dict(self.latest)))
        log(
            f"Validation BLEU after {self.updates} updates: {result.bleu.score:.2f} "
            f"(exact match {result.exact_match:.1%}; {result.num_sentences} "
            f"sentences, greedy, {result.seconds:.1f} s)",
            self.verbose,
        )
        self._record(result)
        if self.on_result is not None:
            self.on_result(dict(self.latest), self.updates)
        return dict(self.latest)

    def _record(self, result):
        if self.csv_path is not None:
            new = not os.path.exists(self.csv_path)
            with open(self.csv_path, "a", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                if new:
                    writer.writerow(
                        ["epoch", "update", "val_bleu", "val_tokenized_bleu",
                         "val_exact_match", "seconds"]
                    )  # fmt: skip
                writer.writerow(
                    [self._epoch + 1, self.updates, f"{result.bleu.score:.4f}",
                     f"{result.tokenized_bleu.score:.4f}",
                     f"{result.exact_match:.6f}", f"{result.seconds:.2f}"]
                )  # fmt: skip
        if self.tensorboard_dir is not None:
            summary = load_tensorflow_summary()
            if self._writer is None:
                self._writer = summary.create_file_writer(self.tensorboard_dir)
            with self._writer.as_default(step=self.updates):
                summary.scalar("update_bleu", result.bleu.score)
                summary.scalar("update_exact_match", result.exact_match)
            self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def load_tensorflow_summary():
    """``tf.summary``, TensorBoard's writer.

    TensorFlow is loaded here, when a run that writes event files starts,
    and not when the package is imported: under JAX and PyTorch, `translate`
    and runs without TensorBoard never load it. It is loaded through
    `keras_transformer.utils.tensorflow_devices`, which hides its GPUs
    unless it is the backend.
    """
    return importlib.import_module("keras_transformer.utils.tensorflow_devices").tf.summary
