"""Lexically constrained decoding (Post & Vilar, 2018): every finished output
contains every constraint phrase, its tokens contiguous; with no constraints
the search is the unconstrained one; n-best, greedy and ensembles; bad
constraints are refused, naming ``constraints``, before any compilation.
"""

import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer import Transformer
from keras_transformer.data import SubwordTokenizer
from keras_transformer.decoding import Ensemble
from keras_transformer.decoding.constraints import _advance_constraints, constraint_phrases
from keras_transformer.decoding.search import SearchInputs, SearchRequest, beam_search
from keras_transformer.models.transformer.translator import Translator
from keras_transformer.special_tokens import EOS_ID, PAD_ID

VOCABULARY = 40
SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a", "ab cd ef gh"] * 8
SOURCES = ["a b c d", "h g", "c e g a b", "d"]


def _contains(sequence, phrase):
    """Whether ``phrase`` occurs in ``sequence`` as contiguous tokens."""
    n = len(phrase)
    return any(list(sequence[i : i + n]) == list(phrase) for i in range(len(sequence) - n + 1))


def _until_eos(sequence):
    sequence = list(sequence)
    return sequence[: sequence.index(EOS_ID) + 1] if EOS_ID in sequence else sequence


@pytest.fixture(scope="module")
def translator():
    keras.utils.set_random_seed(11)
    model = Transformer(
        vocabulary_size=VOCABULARY, num_layers=1, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0,
    )
    tokenizer = SubwordTokenizer.train(SENTENCES, 24)
    return Translator(model, tokenizer, batch_size=4)


@pytest.fixture(scope="module")
def random_constraints(translator):
    """One to three phrases of one to three random ids per sentence (the
    last sentence has none)."""
    rng = np.random.default_rng(5)
    size = translator.tokenizer.vocabulary_size
    rows = [
        [list(rng.integers(4, size, rng.integers(1, 4))) for _ in range(rng.integers(1, 4))]
        for _ in SOURCES[:-1]
    ]
    return rows + [[]]


def _table_model(vocabulary=20, seed=0):
    """``tokens_to_logits`` whose logits depend on the last token only."""
    table = np.random.default_rng(seed).normal(size=(vocabulary, vocabulary)) * 3

    def tokens_to_logits(ids, cache, index):
        logits = ops.take(ops.convert_to_tensor(table, "float32"), ops.reshape(ids, (-1,)), 0)
        return logits, cache

    return tokens_to_logits


def test_search_meets_every_constraint_and_none_is_the_plain_search():
    tokens_to_logits = _table_model()
    constraints = np.zeros((3, 2, 3), np.int32)
    constraints[0, 0, :2] = [7, 8]
    constraints[0, 1, 0] = 11
    constraints[1, 0, :3] = [5, 6, 9]
    # Row 2: no phrase.
    request = SearchRequest(beam_size=4, num_return=2)
    inputs = SearchInputs(batch_size=3, alpha=0.6)
    ids, scores = beam_search(
        tokens_to_logits, {}, 16, request, inputs.replace(constraint_ids=constraints)
    )
    ids, scores = ops.convert_to_numpy(ids), ops.convert_to_numpy(scores)
    assert np.isfinite(scores[:, 0]).all()
    for row in range(3):
        phrases = [[t for t in p if t != PAD_ID] for p in constraints[row]]
        for sequence, score in zip(ids[row], scores[row]):
            if np.isfinite(score):
                assert all(_contains(_until_eos(sequence), p) for p in phrases if p)

    # Without phrases (all PAD) the constrained search keeps the plain one's
    # choices: one bank, filled by score.
    plain_ids, plain_scores = beam_search(tokens_to_logits, {}, 16, request, inputs)
    empty_ids, empty_scores = beam_search(
        tokens_to_logits, {}, 16, request,
        inputs.replace(constraint_ids=np.zeros((3, 1, 2), np.int32)),
    )
    np.testing.assert_array_equal(ops.convert_to_numpy(empty_ids), ops.convert_to_numpy(plain_ids))
    np.testing.assert_allclose(
        ops.convert_to_numpy(empty_scores), ops.convert_to_numpy(plain_scores), rtol=1e-6
    )


def test_a_phrase_counts_only_when_its_tokens_are_contiguous():
    phrases = constraint_phrases(np.array([[[5, 6], [9, 0]]], np.int32), PAD_ID)
    met = ops.zeros((1, 3, 4), dtype="bool")
    progress = ops.full((1, 3), -1, dtype="int32")
    # Three hypotheses: 5 6 | 5 7 6 | 9 5 5 6.
    for step in ([5, 5, 9], [6, 7, 5], [0, 6, 5], [0, 0, 6]):
        met, progress = _advance_constraints(
            phrases, met, progress, ops.convert_to_tensor(np.array([step], np.int32))
        )
    count = ops.convert_to_numpy(ops.sum(ops.cast(met, "int32"), axis=2))[0]
    assert count.tolist() == [2, 0, 3]


def test_translator_outputs_contain_the_constraints(translator, random_constraints):
    source_ids = translator.tokenizer.encode(SOURCES)
    for options in (dict(beam_size=4, num_return=3), dict(beam_size=1)):
        hypotheses, scores = translator.generate(
            source_ids, constraint_ids=random_constraints, **options
        )
        for row, phrases in enumerate(random_constraints):
            assert np.isfinite(scores[row][0])
            for sequence, score in zip(hypotheses[row], scores[row]):
                if np.isfinite(score):
                    assert sequence[-1] == EOS_ID
                    for phrase in phrases:
                        assert _contains(sequence, phrase), (row, sequence, phrase)

    texts = translator.translate(SOURCES[:2], constraints=[["a b", "g"], ["c d e"]])
    assert "a b" in texts[0] and "g" in texts[0] and "c d e" in texts[1]


def test_no_constraints_leave_the_outputs_unchanged(translator):
    plain = translator.translate(SOURCES, num_return=2, return_scores=True)
    assert translator.translate(
        SOURCES, num_return=2, return_scores=True, constraints=[[]] * len(SOURCES)
    ) == plain


def test_an_ensemble_of_two_copies_meets_the_constraints(translator, random_constraints):
    model = translator.model
    ensemble = Translator(Ensemble([model, model]), translator.tokenizer, batch_size=4)
    source_ids = translator.tokenizer.encode(SOURCES)
    single, single_scores = translator.generate(
        source_ids, constraint_ids=random_constraints, num_return=2
    )
    hypotheses, scores = ensemble.generate(
        source_ids, constraint_ids=random_constraints, num_return=2
    )
    assert hypotheses == single
    np.testing.assert_allclose(np.array(scores), np.array(single_scores), rtol=1e-4, atol=1e-5)
    for row, phrases in enumerate(random_constraints):
        for sequence, score in zip(hypotheses[row], scores[row]):
            if np.isfinite(score):
                assert all(_contains(sequence, phrase) for phrase in phrases)


def test_bad_constraints_are_refused_before_any_compilation(translator, monkeypatch):
    def no_compilation(static):
        raise AssertionError("compiled")

    monkeypatch.setattr(translator.generator, "_compiled", no_compilation)
    cases = [
        ([["a"]], "one list of phrases per sentence"),
        ("a", "one list of phrases per sentence"),
        ([["a", ""], []], "empty phrase"),
        ([["a", " "], []], "empty phrase"),
        (["a b", []], "must be a list of str"),
        ([["a b c d e f g h " * 3], []], "output holds at most"),
    ]
    for constraints, message in cases:
        with pytest.raises(ValueError, match=message) as error:
            translator.translate(SOURCES[:2], constraints=constraints, max_extra_length=4)
        assert "constraints" in str(error.value)
    with pytest.raises(ValueError, match="constraints"):
        translator.translate(
            SOURCES[:1], constraints=[["a"]], beam_size=1, sampling=True, seed=1
        )
