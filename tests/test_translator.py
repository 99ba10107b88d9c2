"""Tests for keras_transformer.Translator (tokenize, batch, search, detokenize)."""

import itertools
import os

import keras
import numpy as np
import pytest

import keras_transformer
from keras_transformer import Transformer, Translator
from keras_transformer.data.tokenizer import SubwordTokenizer
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

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
        decoder = np.array([[BOS_ID] + output], "int32")
        logits = keras.ops.convert_to_numpy(
            model({"encoder_token_ids": source, "decoder_token_ids": decoder})
        )[0, -1].astype("float64")
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
