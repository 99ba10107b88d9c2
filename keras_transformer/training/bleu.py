"""Corpus BLEU with sacreBLEU, reported with its signature.

Two numbers are in use and they differ by several points:

- `corpus_bleu`: cased, detokenized text, sacreBLEU's default ``13a``
  tokenizer; the comparable, reproducible figure (Post, 2018).
- `tokenized_bleu`: lowercased and tokenized, the way much Multi30k
  literature reports BLEU (Moses tokenizer + ``multi-bleu.perl``). sacreBLEU's
  ``13a`` tokenizer approximates Moses; the score is close to, not identical
  with, those papers' numbers.

Always print the signature next to a score, so the reader knows which it is.
"""

import dataclasses

from sacrebleu.metrics import BLEU


@dataclasses.dataclass(frozen=True)
class BleuResult:
    """A corpus BLEU score and how it was computed.

    Args:
        score: float. BLEU in 0..100.
        signature: str. sacreBLEU's signature, e.g.
            ``"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"``.
        precisions: tuple of float. 1- to 4-gram precisions in percent.
        brevity_penalty: float. The brevity penalty.
        hypothesis_length: int. Tokens in the hypotheses.
        reference_length: int. Tokens in the references.
    """

    score: float
    signature: str
    precisions: tuple
    brevity_penalty: float
    hypothesis_length: int
    reference_length: int

    def __str__(self):
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (
            f"BLEU = {self.score:.2f} {precisions} "
            f"(BP = {self.brevity_penalty:.3f}, hyp_len = "
            f"{self.hypothesis_length}, ref_len = {self.reference_length}) "
            f"{self.signature}"
        )


def corpus_bleu(hypotheses, references):
    """Cased, detokenized corpus BLEU (sacreBLEU defaults, ``13a``).

    Args:
        hypotheses: list of str. System outputs, detokenized.
        references: list of str. One reference per hypothesis.

    Returns:
        A `BleuResult`.

    Example:

    >>> corpus_bleu(["Ein Hund läuft."], ["Ein Hund läuft."]).score
    100.0...
    """
    return _score(BLEU(), hypotheses, references)


def tokenized_bleu(hypotheses, references, tokenize="13a"):
    """Lowercased, tokenized corpus BLEU, for comparison with Multi30k papers.

    Args:
        hypotheses: list of str. System outputs, detokenized.
        references: list of str. One reference per hypothesis.
        tokenize: str. sacreBLEU tokenizer, ``"13a"`` (Moses-like) or
            ``"intl"``. Defaults to ``"13a"``.

    Returns:
        A `BleuResult` whose signature says ``case:lc``.

    Example:

    ```python
    print(tokenized_bleu(outputs, references))
    ```
    """
    return _score(BLEU(lowercase=True, tokenize=tokenize), hypotheses, references)


def format_bleu_report(hypotheses, references, name=None):
    """Both scores with their signatures, as text to print.

    Args:
        hypotheses: list of str. System outputs, detokenized.
        references: list of str. One reference per hypothesis.
        name: str. Optional label, e.g. ``"test_2016_flickr"``.

    Returns:
        A str of three lines.

    Example:

    ```python
    print(format_bleu_report(outputs, references, name="test_2016_flickr"))
    ```
    """
    cased = corpus_bleu(hypotheses, references)
    lowercased = tokenized_bleu(hypotheses, references)
    header = f"BLEU on {name} ({len(hypotheses)} sentences)" if name else (
        f"BLEU ({len(hypotheses)} sentences)"
    )
    return "\n".join(
        [
            header,
            f"  cased detokenized sacreBLEU: {cased.score:6.2f}  {cased.signature}",
            f"  lowercased tokenized BLEU:   {lowercased.score:6.2f}  "
            f"{lowercased.signature}",
        ]
    )


def _score(metric, hypotheses, references):
    hypotheses = _as_strings("hypotheses", hypotheses)
    references = _as_strings("references", references)
    if len(hypotheses) != len(references):
        raise ValueError(
            "BLEU needs one reference per hypothesis. Received: "
            f"{len(hypotheses)} hypotheses, {len(references)} references."
        )
    if not hypotheses:
        raise ValueError("BLEU needs at least one hypothesis. Received none.")
    result = metric.corpus_score(hypotheses, [references])
    return BleuResult(
        score=float(result.score),
        signature=str(metric.get_signature()),
        precisions=tuple(float(p) for p in result.precisions),
        brevity_penalty=float(result.bp),
        hypothesis_length=int(result.sys_len),
        reference_length=int(result.ref_len),
    )


def _as_strings(name, texts):
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a list of str, not a single str.")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"{name}[{i}] must be a str. Received: {type(text).__name__}"
            )
    return texts
