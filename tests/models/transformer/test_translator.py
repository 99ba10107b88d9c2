"""Tests for keras_transformer.Translator (tokenize, batch, search, detokenize)."""

import itertools
import os

import keras
import numpy as np
import pytest

import keras_transformer
from keras_transformer import Transformer, Translator
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID
from conftest import FIXTURES

_WORDS = (
    "two young men dogs girl play run in the snow red blue house near a big small"
).split()


@pytest.fixture(scope="module")
def tokenizer():
    sentences = [
        " ".join(words)
        for words in itertools.islice(itertools.permutations(_WORDS, 5), 0, 4000, 7)
    ]
    return SubwordTokenizer.train(sentences, vocabulary_size=60)


@pytest.fixture(scope="module")
def translator(tokenizer):
    keras.utils.set_random_seed(11)
    model = Transformer(
        vocabulary_size=tokenizer.vocabulary_size,
        num_layers=2,
        d_model=32,
        num_heads=4,
        d_ff=64,
        dropout_rate=0.0,
    )
    # Small buckets keep the number of compiled shapes (and test time) low.
    return Translator(model, tokenizer, batch_size=4, length_bucket=16)


def _ids(translator, n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(4, translator.tokenizer.vocabulary_size, n).tolist()


def test_translator_is_exported():
    assert keras_transformer.Translator is Translator


def test_batch_mixing_short_and_long_sentences_equals_each_alone(translator):
    short, long = _ids(translator, 1, 0), _ids(translator, 99, 1)
    kwargs = dict(beam_size=4, max_extra_length=12)
    together, together_scores = translator.generate([short, long], **kwargs)
    alone = [translator.generate([ids], **kwargs) for ids in (short, long)]
    for i in range(2):
        assert together[i] == alone[i][0][0]
        np.testing.assert_allclose(together_scores[i], alone[i][1][0], rtol=1e-4)
        hypothesis = together[i][0]
        assert hypothesis[-1] == EOS_ID
        assert len(hypothesis) <= len((short, long)[i]) + 12


def test_translate_strings_in_input_order(translator):
    sentences = [
        "two dogs play",
        "a big red house near the snow in the blue",
        "girl",
        "men run",
    ]
    translations, scores = translator.translate(
        sentences, max_extra_length=6, return_scores=True
    )
    assert len(translations) == len(scores) == 4
    assert all(isinstance(t, str) for t in translations)
    assert all(isinstance(s, float) and np.isfinite(s) for s in scores)
    # Order: each sentence's translation is the one it gets on its own.
    assert translator.translate(sentences[2:3], max_extra_length=6) == [translations[2]]
    assert translator.translate([]) == []
    with pytest.raises(TypeError, match="list of str"):
        translator.translate("two dogs")


def _greedy_reference(model, source_ids, max_extra_length, alpha):
    """Greedy decoding written out: the full model re-run on the prefix,
    argmax over the tokens search may choose (not PAD or BOS), EOS forced at
    the output limit (input tokens + max_extra_length). Returns the tokens
    and the score: summed log-probabilities / ((5 + |Y|) / 6) ** alpha."""
    source = np.array([source_ids + [EOS_ID]], "int32")
    limit = len(source_ids) + max_extra_length
    output, log_prob = [], 0.0
    while not output or output[-1] != EOS_ID:
        # One fixed shape (the prefix, then PAD): the causal mask makes the
        # logits at the prefix's last position independent of what follows,
        # and predict_on_batch compiles once instead of once per length.
        decoder = np.zeros((1, limit), "int32")
        decoder[0, : len(output) + 1] = [BOS_ID] + output
        logits = np.asarray(
            model.predict_on_batch({"encoder_token_ids": source, "decoder_token_ids": decoder})
        )[0, len(output)].astype("float64")
        log_probs = logits - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
        logits[[PAD_ID, BOS_ID]] = -np.inf
        token = EOS_ID if len(output) + 1 == limit else int(np.argmax(logits))
        output.append(token)
        log_prob += log_probs[token]
    return output, log_prob / ((5 + len(output)) / 6) ** alpha


def test_greedy_output_is_the_argmax_sequence(translator):
    # (A random model with tied embeddings tends to repeat one token; the
    # scores check the log-probability of every step as well.)
    for seed, length in ((3, 1), (4, 6)):
        ids = _ids(translator, length, seed)
        (hypotheses,), (scores,) = translator.generate(
            [ids], beam_size=1, alpha=0.6, max_extra_length=6
        )
        expected, expected_score = _greedy_reference(translator.model, ids, 6, 0.6)
        assert hypotheses[0] == expected
        np.testing.assert_allclose(scores[0], expected_score, rtol=1e-4)


def test_n_best_and_greedy(translator):
    sentences = ["two dogs play", "girl"]
    n_best, scores = translator.translate(
        sentences, num_return=3, return_scores=True, max_extra_length=6
    )
    assert [len(t) for t in n_best] == [3, 3] and [len(s) for s in scores] == [3, 3]
    for row in scores:
        assert row == sorted(row, reverse=True)
    greedy = translator.translate(sentences, beam_size=1, max_extra_length=6)
    assert all(isinstance(t, str) for t in greedy)


def test_empty_string_translates_without_error(translator):
    (hypothesis,), _ = translator.generate([[]], max_extra_length=6)
    assert hypothesis[0][-1] == EOS_ID and len(hypothesis[0]) <= 6
    assert isinstance(translator.translate([""], max_extra_length=6)[0], str)
    # With room for one token only, the output is the end token alone.
    assert translator.translate([""], max_extra_length=1) == [""]


def test_out_of_vocabulary_ids_raise_a_clear_error(translator):
    size = translator.model.source_vocabulary_size
    with pytest.raises(ValueError, match=r"source token ids must be in \[0, "):
        translator.generate([[5, 6], [7, size + 3]])
    with pytest.raises(ValueError, match="must be in"):
        translator.generate([[-1]])


def test_long_inputs_are_truncated_with_eos_kept(tokenizer, translator):
    short = Translator(
        translator.model, tokenizer, max_source_length=8, batch_size=4, length_bucket=16
    )
    short.generator = translator.generator  # share compiled functions
    ids = _ids(translator, 20, 2)
    with pytest.warns(UserWarning, match="truncated"):
        truncated, _ = short.generate([ids], max_extra_length=6)
    expected, _ = translator.generate([ids[:7]], max_extra_length=6)
    assert truncated == expected


@pytest.mark.skipif(keras.config.backend() == "torch", reason="torch is not traced")
def test_no_retracing_for_new_batches_in_a_bucket(translator):
    translator.translate(["two dogs", "girl", "men run", "a house"], max_extra_length=6)
    count = translator.generator.trace_count
    translator.translate(
        ["a big red house", "men run in the snow", "snow", "red blue"],
        max_extra_length=6,
    )
    assert translator.generator.trace_count == count


def test_attention_weights(translator):
    weights = translator.attention_weights("two dogs play", max_extra_length=6)
    source, target = weights["source_pieces"], weights["target_pieces"]
    assert source[-1] == target[-1] == "</s>"
    layers, heads = 2, 4
    s, t = len(source), len(target)
    assert weights["encoder_self_attention"].shape == (layers, heads, s, s)
    assert weights["decoder_cross_attention"].shape == (layers, heads, t, s)
    assert weights["decoder_self_attention"].shape == (layers, heads, t, t)
    cross = weights["decoder_cross_attention"]
    np.testing.assert_allclose(cross.sum(-1), 1.0, rtol=1e-5)
    forced = translator.attention_weights("two dogs play", translation="girl run")
    assert forced["translation"] == "girl run"


def test_from_directory_round_trip(tmp_path, translator):
    translator.model.save(os.path.join(tmp_path, "model.keras"))
    translator.tokenizer.save(str(tmp_path))
    loaded = Translator.from_directory(str(tmp_path), batch_size=4)
    sentences = ["two dogs play"]
    assert loaded.translate(sentences, max_extra_length=6) == (
        translator.translate(sentences, max_extra_length=6)
    )


def test_progress_bar_and_argument_errors(translator, capsys):
    translator.translate(["girl"] * 5, max_extra_length=6, batch_size=4, verbose=True)
    assert "5/5" in capsys.readouterr().out
    with pytest.raises(ValueError, match="beam_size"):
        translator.translate(["girl"], beam_size=0)
    with pytest.raises(ValueError, match="num_return"):
        translator.translate(["girl"], beam_size=2, num_return=3)
    with pytest.raises(ValueError, match="batch_size"):
        Translator(translator.model, translator.tokenizer, batch_size=0)


# --- issue #13: one DecodeOptions path, sampling, scoring, prefixes, alignments ---

_SENTENCES = ["two dogs play", "a big red house near the snow", "girl", "men run"]


def test_decode_options_object_equals_keyword_arguments(translator):
    from keras_transformer.decoding import DecodeOptions

    options = DecodeOptions(beam_size=2, alpha=0.0, max_extra_length=6)
    assert translator.translate(_SENTENCES, options) == translator.translate(
        _SENTENCES, beam_size=2, alpha=0.0, max_extra_length=6
    )
    # Keyword arguments override the options object.
    assert translator.translate(_SENTENCES, options, beam_size=1) == (
        translator.translate(_SENTENCES, beam_size=1, max_extra_length=6)
    )


def test_sampling_with_top_k_1_or_tiny_temperature_is_greedy(translator):
    greedy = translator.generate(
        translator.tokenizer.encode(_SENTENCES), beam_size=1, max_extra_length=6
    )
    for options in (dict(top_k=1), dict(temperature=1e-4), dict(top_k=1, top_p=0.5)):
        sampled = translator.generate(
            translator.tokenizer.encode(_SENTENCES),
            beam_size=1, sampling=True, seed=3, max_extra_length=6, **options,
        )
        assert sampled[0] == greedy[0], options
        np.testing.assert_allclose(
            np.stack(sampled[1]), np.stack(greedy[1]), rtol=1e-4, err_msg=str(options)
        )


def test_seed_reproduces_samples_independently_of_the_batch(translator):
    kwargs = dict(beam_size=1, sampling=True, num_return=3, max_extra_length=8)
    ids = translator.tokenizer.encode(_SENTENCES)
    first, first_scores = translator.generate(ids, seed=5, **kwargs)
    again, again_scores = translator.generate(ids, seed=5, **kwargs)
    other, _ = translator.generate(ids, seed=6, **kwargs)
    assert first == again
    np.testing.assert_allclose(np.stack(first_scores), np.stack(again_scores), rtol=1e-5)
    assert other != first
    assert [len(row) for row in first] == [3] * 4
    # Samples of one sentence differ from each other (a random model is
    # close to uniform over 60 ids).
    assert len({tuple(h) for h in first[1]}) > 1
    # Sentence 0 alone (a batch of one, another shape) samples the same.
    alone, _ = translator.generate(ids[:1], seed=5, **kwargs)
    assert alone[0] == first[0]


def test_score_equals_the_beam_score_of_its_output(translator):
    ids = translator.tokenizer.encode(_SENTENCES)
    hypotheses, scores = translator.generate(
        ids, beam_size=3, num_return=2, alpha=0.0, max_extra_length=6
    )
    sources = [s for s in ids for _ in range(2)]
    targets = [h[:-1] for row in hypotheses for h in row]  # EOS re-appended
    totals, token_scores = translator.score_token_ids(
        sources, targets, return_token_scores=True
    )
    np.testing.assert_allclose(
        totals, np.concatenate(scores).astype("float64"), rtol=1e-4, atol=1e-4
    )
    assert [len(t) for t in token_scores] == [len(h) for row in hypotheses for h in row]
    np.testing.assert_allclose([sum(t) for t in token_scores], totals, rtol=1e-5)
    # The text level tokenizes and calls the same function.
    texts = ["zwei hunde", "ein rotes haus", "", "x"]
    assert translator.score(_SENTENCES, texts) == pytest.approx(
        translator.score_token_ids(ids, translator.tokenizer.encode(texts)), rel=1e-5
    )


@pytest.mark.parametrize(
    "search", [dict(beam_size=1), dict(beam_size=3), dict(beam_size=1, sampling=True, seed=1)]
)
def test_target_prefixes_are_honoured(translator, search):
    prefixes = ["red blue house", "", "snow", "the big small girl run"]
    prefix_ids = translator.tokenizer.encode(prefixes)
    assert len({len(p) for p in prefix_ids}) > 2  # lengths differ in the batch
    hypotheses, scores = translator.generate(
        translator.tokenizer.encode(_SENTENCES),
        target_prefix_ids=prefix_ids, max_extra_length=10, alpha=0.0, **search,
    )
    for (hypothesis,), prefix in zip(hypotheses, prefix_ids):
        assert hypothesis[: len(prefix)] == prefix
        assert hypothesis[-1] == EOS_ID
    # The prefix tokens count in the score: it is the forced pass's total.
    totals = translator.score_token_ids(
        translator.tokenizer.encode(_SENTENCES), [h[0][:-1] for h in hypotheses]
    )
    np.testing.assert_allclose(totals, [s[0] for s in scores], rtol=1e-4, atol=1e-4)
    texts = translator.translate(
        _SENTENCES, target_prefix=prefixes, max_extra_length=10, **search
    )
    for text, prefix in zip(texts, prefixes):
        assert text.startswith(prefix)


def test_alignments_index_the_source_tokens(translator):
    texts, scores, aligned = translator.translate(
        _SENTENCES, beam_size=2, num_return=2, max_extra_length=6,
        return_scores=True, return_alignments=True,
    )
    hypotheses, _ = translator.generate(
        translator.tokenizer.encode(_SENTENCES), beam_size=2, num_return=2, max_extra_length=6
    )
    for source, row, hypothesis_row in zip(
        translator.tokenizer.encode(_SENTENCES), aligned, hypotheses
    ):
        for alignment, hypothesis in zip(row, hypothesis_row):
            assert len(alignment) == len(hypothesis)
            assert all(0 <= a <= len(source) for a in alignment)  # EOS included
    single = translator.translate(
        _SENTENCES[:1], max_extra_length=6, return_alignments=True, alignment_layer=0
    )
    assert len(single) == 2 and isinstance(single[1][0][0], int)


def test_bad_decode_arguments_raise_before_compiling(translator):
    count = translator.generator.trace_count
    bad = [
        (dict(beam_size=2, num_return=3), "num_return"),
        (dict(sampling=True, beam_size=1, top_p=0.0), "top_p"),
        (dict(sampling=True, beam_size=1, top_p=1.5), "top_p"),
        (dict(sampling=True, beam_size=1, temperature=0.0), "temperature"),
        (dict(sampling=True, beam_size=1, top_k=0), "top_k"),
        (dict(sampling=True, beam_size=4), "beam_size"),
        (dict(top_k=5), "sampling=True"),
        (dict(beam_sizes=4), "Unknown decode option"),
        (dict(target_prefix=["two"] * 3), "target_prefix"),
        (dict(target_prefix="two"), "target_prefix"),
        (dict(target_prefix=["red blue house near"] + [""] * 3, max_extra_length=2),
         "target_prefix of sentence 0"),
        (dict(alignment_layer=5), "alignment_layer"),
    ]
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=message):
            translator.translate(_SENTENCES, **kwargs)
    with pytest.raises(ValueError, match="one target per source"):
        translator.score(_SENTENCES, _SENTENCES[:2])
    with pytest.raises(ValueError, match="quantize"):
        Translator(translator.model, translator.tokenizer, quantize="int4")
    assert translator.generator.trace_count == count


NUMBERS_PRESET = os.path.join(FIXTURES, "numbers_preset")


def test_alignments_are_monotone_on_number_words():
    """On the committed trained preset (tests/fixtures/make_numbers_preset.py).

    Where the German keeps the English order ("three thousand four hundred"
    -> "drei|tausend|vier|hundert": no "-und-" inversions) and each output
    piece is one whole German number word (so that it has one source word
    to align to), the last layer's cross-attention walks the source left
    to right.
    """
    from keras_transformer.data import default_task_splits

    words = {"ein", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
             "hundert", "tausend"}  # fmt: skip
    translator = Translator.from_directory(NUMBERS_PRESET, batch_size=64)
    src, tgt = default_task_splits(seed=0)["test"]
    pairs = [(s, t) for s, t in zip(src, tgt) if "-" not in s and " " in s][:96]
    texts, aligned = translator.translate([s for s, _ in pairs], return_alignments=True)
    checked = 0
    for (sentence, reference), text, alignment in zip(pairs, texts, aligned):
        pieces = translator.tokenizer.id_to_piece(translator.tokenizer.encode([text])[0])
        if text != reference or not all(p.lstrip("\u2581") in words for p in pieces):
            continue
        tokens = alignment[:-1]  # EOS excluded
        assert tokens == sorted(tokens), (sentence, pieces, alignment)
        checked += 1
    assert checked >= 20, checked
