"""Tests for corpus BLEU (keras_transformer.bleu)."""

import math

import pytest
import sacrebleu

from keras_transformer.training.bleu import BleuResult
from keras_transformer.training.bleu import corpus_bleu
from keras_transformer.training.bleu import format_bleu_report
from keras_transformer.training.bleu import tokenized_bleu

HYPOTHESES = [
    "Zwei junge Männer stehen draußen.",
    "Ein Hund läuft über die Wiese.",
    "Eine Frau spielt Gitarre auf der Bühne.",
]
REFERENCES = [
    "Zwei junge Männer sind im Freien.",
    "Ein Hund rennt über die Wiese.",
    "Eine Frau spielt auf der Bühne Gitarre.",
]


def test_identical_text_scores_100_with_signature():
    result = corpus_bleu(REFERENCES, REFERENCES)
    assert isinstance(result, BleuResult)
    assert result.score == pytest.approx(100.0)
    for part in ("nrefs:1", "case:mixed", "tok:13a", "smooth:exp", "version:"):
        assert part in result.signature


def test_hand_computed_value():
    # Precisions 5/6, 3/5, 2/4, 1/3 and no brevity penalty.
    result = corpus_bleu(["the cat sat on the mat"], ["the cat sat on a mat"])
    expected = 100 * math.exp(sum(map(math.log, (5 / 6, 3 / 5, 2 / 4, 1 / 3))) / 4)
    assert result.score == pytest.approx(expected, abs=1e-6)
    assert result.brevity_penalty == pytest.approx(1.0)
    assert result.hypothesis_length == result.reference_length == 6


def test_matches_sacrebleu():
    ours = corpus_bleu(HYPOTHESES, REFERENCES)
    theirs = sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES])
    assert ours.score == pytest.approx(theirs.score)
    assert 0 < ours.score < 100
    assert len(ours.precisions) == 4


def test_tokenized_bleu_is_lowercased():
    hypotheses = [h.upper() for h in REFERENCES]
    assert corpus_bleu(hypotheses, REFERENCES).score < 10
    result = tokenized_bleu(hypotheses, REFERENCES)
    assert result.score == pytest.approx(100.0)
    assert "case:lc" in result.signature and "tok:13a" in result.signature
    intl = tokenized_bleu(hypotheses, REFERENCES, tokenize="intl")
    assert "tok:intl" in intl.signature


def test_length_mismatch_names_both_counts():
    with pytest.raises(ValueError, match="3 hypotheses, 2 references"):
        corpus_bleu(HYPOTHESES, REFERENCES[:2])
    with pytest.raises(ValueError, match="2 hypotheses, 3 references"):
        tokenized_bleu(HYPOTHESES[:2], REFERENCES)


def test_input_errors():
    with pytest.raises(ValueError, match="at least one"):
        corpus_bleu([], [])
    with pytest.raises(TypeError, match="single str"):
        corpus_bleu("a sentence", "a sentence")
    with pytest.raises(TypeError, match=r"hypotheses\[1\]"):
        corpus_bleu(["a", 3], ["a", "b"])


def test_format_bleu_report():
    text = format_bleu_report(HYPOTHESES, REFERENCES, name="val")
    cased = corpus_bleu(HYPOTHESES, REFERENCES)
    lowercased = tokenized_bleu(HYPOTHESES, REFERENCES)
    assert "val" in text and "3 sentences" in text
    assert f"{cased.score:.2f}" in text and cased.signature in text
    assert f"{lowercased.score:.2f}" in text and lowercased.signature in text
    assert str(cased).startswith(f"BLEU = {cased.score:.2f}")
