"""Evaluation: translate a test set, score it, report the scores.

`evaluate_translations` translates with a `Translator` and scores the
hypotheses three ways: exact match (the default task's score), cased
detokenized sacreBLEU and lowercased tokenized BLEU (see
`keras_transformer.training.bleu`); `format_evaluation` prints them with their
signatures. Training uses them for the final score and, greedily on the
validation set, for validation BLEU (`keras_transformer.training.validation_bleu`); the
``keras-transformer evaluate`` command for any test set.

Example:

```python
translator = Translator.from_directory("runs/multi30k")
result = evaluate_translations(translator, sources, references)
print(format_evaluation(result, "test_2016_flickr", exact_match=False))
```
"""

import dataclasses
import time

import numpy as np

from keras_transformer.training import bleu as bleu_lib


@dataclasses.dataclass(frozen=True)
class EvaluationResult:
    """Scores of translations against references.

    Args:
        num_sentences: int. Sentences scored.
        exact_match: float. Fraction of hypotheses equal to their reference.
        bleu: `keras_transformer.training.bleu.BleuResult`. Cased detokenized BLEU.
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
        """The scores and signatures (no hypotheses), for ``results.json``."""
        return {
            "num_sentences": self.num_sentences,
            "exact_match": self.exact_match,
            "bleu": self.bleu.score,
            "bleu_signature": self.bleu.signature,
            "tokenized_bleu": self.tokenized_bleu.score,
            "tokenized_bleu_signature": self.tokenized_bleu.signature,
            "seconds": self.seconds,
        }


def evaluate_translations(
    translator,
    sources,
    references,
    options=None,
    batch_size=None,
    verbose=1,
    **option_overrides,
):
    """Translates ``sources`` and scores them against ``references``.

    Args:
        translator: a `keras_transformer.Translator`.
        sources: list of str.
        references: list of str, one per source.
        options: a `DecodeOptions` (default: its defaults, the paper's beam
            search); ``option_overrides`` (``beam_size=``, ``alpha=``,
            ``min_length=``, ... any `DecodeOptions` field) replace its
            values.
        batch_size: int. Defaults to the translator's.
        verbose: 0 (silent) or 1 (a progress bar for long inputs).

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
    references = list(references)
    start = time.monotonic()
    hypotheses = translator.translate(
        list(sources),
        options=options,
        batch_size=batch_size,
        verbose="auto" if verbose else False,
        **option_overrides,
    )
    seconds = time.monotonic() - start
    exact = float(
        np.mean([h.strip() == r.strip() for h, r in zip(hypotheses, references)])
    )
    return EvaluationResult(
        num_sentences=len(sources),
        exact_match=exact,
        bleu=bleu_lib.corpus_bleu(hypotheses, references),
        tokenized_bleu=bleu_lib.tokenized_bleu(hypotheses, references),
        hypotheses=hypotheses,
        seconds=seconds,
    )


def format_evaluation(evaluation, name, exact_match=True, bleu=True):
    """Lines to print: exact match and/or both BLEU scores with signatures.

    Args:
        evaluation: an `EvaluationResult`.
        name: str. What was scored, e.g. ``"test set"``.
        exact_match: bool. Include the exact-match line.
        bleu: bool. Include both BLEU scores.

    Returns:
        A str of one to four lines.
    """
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


def format_samples(sources, references, hypotheses):
    """Sample translations as lines to print (``ok`` marks exact matches)."""
    lines = ["Sample translations:"]
    for source, reference, hypothesis in zip(sources, references, hypotheses):
        mark = "ok" if hypothesis == reference else "  "
        lines.append(f"  {mark} {source}\n       -> {hypothesis}\n     ref {reference}")
    return "\n".join(lines)
