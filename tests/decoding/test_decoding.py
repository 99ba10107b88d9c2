"""Tests for keras_transformer.decoding: greedy/beam search and cached decoding."""

import contextlib
import importlib
import itertools

import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer import Transformer
from keras_transformer.decoding import (
    DecodeOptions,
    Generator,
    CacheFunctions,
    SearchInputs,
    SearchRequest,
    beam_search,
    compile_for_backend,
    compiled_decode,
    generate,
    greedy_search,
    length_penalty,
)
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

from conftest import to_numpy

# --- a toy "model": logits from a table indexed by (row, position, last token) ---

TOY_VOCAB = 6  # PAD, UNK, BOS, EOS and two words; PAD and BOS are never chosen.
TOY_MAX_LENGTH = 3


def _toy_tables(num_rows, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 2, (num_rows, TOY_MAX_LENGTH, TOY_VOCAB, TOY_VOCAB)).astype(
        "float32"
    )


def _toy_tokens_to_logits(tables):
    table = ops.convert_to_tensor(tables)
    vocab = TOY_VOCAB

    def tokens_to_logits(token_ids, cache, index):
        # cache["row"] says which batch element (and so which table) a
        # hypothesis belongs to; beam search must keep it aligned.
        flat = ops.reshape(table, (-1, vocab))
        rows = ops.cast(cache["row"], "int32")
        position = ops.minimum(ops.cast(index, "int32"), TOY_MAX_LENGTH - 1)
        lookup = (rows * TOY_MAX_LENGTH + position) * vocab + token_ids[:, 0]
        return ops.take(flat, lookup, axis=0), cache

    return tokens_to_logits


def _brute_force(table, alpha, max_length=TOY_MAX_LENGTH):
    """Every hypothesis (ending with EOS, forced at max_length) and its score."""
    log_probs = table - np.log(np.exp(table).sum(-1, keepdims=True))
    words = [t for t in range(TOY_VOCAB) if t not in (PAD_ID, BOS_ID, EOS_ID)]
    results = []
    for length in range(1, max_length + 1):
        for prefix in itertools.product(words, repeat=length - 1):
            tokens = list(prefix) + [EOS_ID]
            previous, total = BOS_ID, 0.0
            for position, token in enumerate(tokens):
                total += log_probs[position, previous, token]
                previous = token
            penalty = ((5 + length) / 6) ** alpha
            results.append((total / penalty, tokens))
    return sorted(results, key=lambda r: -r[0])


def _strip(sequence):
    sequence = list(sequence)
    return sequence[: sequence.index(EOS_ID) + 1] if EOS_ID in sequence else sequence


def test_length_penalty():
    np.testing.assert_allclose(to_numpy(length_penalty(1, 0.6)), 1.0, rtol=1e-6)
    np.testing.assert_allclose(
        to_numpy(length_penalty(np.array([7, 15]), 0.6)),
        [(12 / 6) ** 0.6, (20 / 6) ** 0.6],
        rtol=1e-6,
    )
    np.testing.assert_allclose(to_numpy(length_penalty(30, 0.0)), 1.0)


@pytest.mark.parametrize(
    "alpha, python_loop", [(0.0, False), (0.6, False), (1.5, False), (0.6, True)]
)
def test_exhaustive_beam_search_equals_brute_force(alpha, python_loop):
    # With 3 selectable words and length 3 at most, 12 beams hold every
    # candidate (at most 3 * 4 per step), so beam search is exact and must
    # return the true n-best.
    tables = _toy_tables(2, seed=int(alpha * 10))
    sequences, scores = beam_search(
        _toy_tokens_to_logits(tables),
        {"row": np.arange(2, dtype="int32")},
        max_length=TOY_MAX_LENGTH,
        request=SearchRequest(beam_size=12, num_return=4, python_loop=python_loop),
        inputs=SearchInputs(alpha=alpha),
    )
    sequences, scores = to_numpy(sequences), to_numpy(scores)
    assert sequences.shape == (2, 4, TOY_MAX_LENGTH)
    for row in range(2):
        expected = _brute_force(tables[row], alpha)[:4]
        np.testing.assert_allclose(scores[row], [s for s, _ in expected], rtol=1e-5)
        assert [_strip(s) for s in sequences[row]] == [t for _, t in expected]


def test_exhaustive_beam_search_with_prefixes_equals_brute_force():
    # Row 0 forces [4], row 1 [5, 4] (then EOS, the maximum length), row 2
    # nothing: the n-best are the brute-force n-best among the hypotheses
    # that start with the prefix, with the prefix's log-probs counted, and no
    # hypothesis appears twice (one live beam while the prefix is forced).
    tables = _toy_tables(3, seed=5)
    prefixes = [[4], [5, 4], []]
    sequences, scores = beam_search(
        _toy_tokens_to_logits(tables),
        {"row": np.arange(3, dtype="int32")},
        max_length=TOY_MAX_LENGTH,
        request=SearchRequest(beam_size=12, num_return=3),
        inputs=SearchInputs(
            alpha=0.6,
            prefix_ids=np.array([[4, 0], [5, 4], [0, 0]], "int32"),
            prefix_lengths=np.array([1, 2, 0], "int32"),
        ),
    )
    sequences, scores = to_numpy(sequences), to_numpy(scores)
    for row, prefix in enumerate(prefixes):
        expected = [
            (score, tokens)
            for score, tokens in _brute_force(tables[row], 0.6)
            if tokens[: len(prefix)] == prefix and len(tokens) > len(prefix)
        ]
        n = min(3, len(expected))
        got = [_strip(s) for s in sequences[row, :n]]
        assert got == [t for _, t in expected[:n]], row
        np.testing.assert_allclose(scores[row, :n], [s for s, _ in expected[:n]], rtol=1e-5)
        # Fewer hypotheses than num_return (row 1): empty slots, no duplicates.
        assert np.all(np.isneginf(scores[row, n:]))


def test_greedy_prefix_and_token_choice_hook():
    tables = _toy_tables(2, seed=9)
    fn = _toy_tokens_to_logits(tables)
    cache = {"row": np.arange(2, dtype="int32")}
    sequences, scores = greedy_search(
        fn, cache, TOY_MAX_LENGTH,
        inputs=SearchInputs(
            alpha=0.0,
            prefix_ids=np.array([[5, 5], [4, 0]], "int32"),
            prefix_lengths=np.array([2, 1], "int32"),
        ),
    )
    sequences = to_numpy(sequences)
    assert list(sequences[0, :2]) == [5, 5] and sequences[0, 2] == EOS_ID
    assert sequences[1, 0] == 4
    # The hook picks the tokens (here: the least probable selectable one,
    # forbidden tokens at NEG_INF never), and the score is theirs.
    def worst(selectable, index):
        return ops.argmin(ops.where(selectable < -1e8, 1e9, selectable), axis=-1)

    sequences, scores = greedy_search(fn, cache, TOY_MAX_LENGTH, choose_token=worst)
    for row in range(2):
        log_probs = tables[row] - np.log(np.exp(tables[row]).sum(-1, keepdims=True))
        previous, total, expected = BOS_ID, 0.0, []
        for position in range(TOY_MAX_LENGTH):
            options = [t for t in range(TOY_VOCAB) if t not in (PAD_ID, BOS_ID)]
            if position == TOY_MAX_LENGTH - 1:
                options = [EOS_ID]
            token = min(options, key=lambda t: log_probs[position, previous, t])
            total += log_probs[position, previous, token]
            expected.append(token)
            previous = token
            if token == EOS_ID:
                break
        assert _strip(to_numpy(sequences)[row]) == expected
        np.testing.assert_allclose(to_numpy(scores)[row], total, rtol=1e-5)


@pytest.mark.parametrize("python_loop", [False])
def test_beam_size_one_equals_greedy_toy(python_loop):
    tables = _toy_tables(3, seed=7)
    cache = {"row": np.arange(3, dtype="int32")}
    fn = _toy_tokens_to_logits(tables)
    greedy, greedy_scores = greedy_search(
        fn, cache, TOY_MAX_LENGTH, SearchRequest(beam_size=1, python_loop=python_loop)
    )
    beam, beam_scores = beam_search(
        fn, cache, TOY_MAX_LENGTH, SearchRequest(beam_size=1, python_loop=python_loop),
        SearchInputs(alpha=0.0),
    )
    np.testing.assert_array_equal(to_numpy(beam)[:, 0], to_numpy(greedy))
    np.testing.assert_allclose(
        to_numpy(beam_scores)[:, 0], to_numpy(greedy_scores), rtol=1e-6
    )


def _traced(function):
    """``function`` compiled by the backend, so that tensors in it are
    symbolic (values unknown when the search is built)."""
    if keras.config.backend() == "jax":
        import jax

        return jax.jit(function)
    import tensorflow as tf

    return tf.function(function)


def _prefers_two_tokens_under_negative_alpha():
    """A toy table whose best hypothesis under alpha = -1 is [4, EOS]:
    p(EOS) = 0.427 and p(4) = 0.5 first, then p(EOS | 4) ~ 1, so
    score([EOS]) = log 0.427 = -0.85 < score([4, EOS]) = 7/6 log 0.5 = -0.81."""
    probabilities = np.full((TOY_MAX_LENGTH, TOY_VOCAB, TOY_VOCAB), 1.0 / TOY_VOCAB)
    first = {PAD_ID: 1e-9, BOS_ID: 1e-9, EOS_ID: 0.427, 4: 0.5, 5: 0.036, 1: 0.037}
    probabilities[0, BOS_ID] = [first[token] for token in range(TOY_VOCAB)]
    probabilities[1, 4] = 1e-9
    probabilities[1, 4, EOS_ID] = 1.0
    return np.log(np.stack([probabilities] * 2)).astype("float32")


@pytest.mark.skipif(keras.config.backend() == "torch", reason="torch is not traced")
def test_traced_negative_alpha_keeps_beam_search_exact():
    # Inside a compiled search alpha cannot be checked; the early-stopping
    # bound must then still hold. For alpha < 0 the penalty shrinks with
    # length, so a live hypothesis's best reachable score is at the shortest
    # length, not at the maximum: stopping after [EOS] would miss [4, EOS].
    alpha = -1.0
    tables = _prefers_two_tokens_under_negative_alpha()
    search = _traced(
        lambda a: beam_search(
            _toy_tokens_to_logits(tables),
            {"row": ops.arange(2, dtype="int32")},
            max_length=TOY_MAX_LENGTH,
            request=SearchRequest(beam_size=4),
            inputs=SearchInputs(alpha=a),
        )
    )
    sequences, scores = search(ops.convert_to_tensor(np.float32(alpha)))
    sequences, scores = to_numpy(sequences), to_numpy(scores)
    for row in range(2):
        best_score, best = _brute_force(tables[row], alpha)[0]
        assert best == [4, EOS_ID]
        assert _strip(sequences[row, 0]) == best
        np.testing.assert_allclose(scores[row, 0], best_score, rtol=1e-5)


def test_min_length_and_per_row_max_lengths():
    # A model that always wants to stop: EOS is forbidden until min_length,
    # and rows end (EOS forced) at their own maximum length.
    def eager_to_stop(token_ids, cache, index):
        logits = ops.one_hot(ops.full((ops.shape(token_ids)[0],), EOS_ID), 8) * 5.0
        return logits, cache

    sequences, _ = greedy_search(
        eager_to_stop, {}, 10, inputs=SearchInputs(batch_size=2, min_length=4)
    )
    for row in to_numpy(sequences):
        assert list(row[:4]).index(EOS_ID) == 3
    # A model that never wants to stop.
    def never_stop(token_ids, cache, index):
        logits = ops.one_hot(ops.full((ops.shape(token_ids)[0],), 5), 8) * 5.0
        return logits, cache

    for search in (greedy_search, beam_search):
        sequences, scores = search(
            never_stop, {}, 10,
            inputs=SearchInputs(max_lengths=np.array([3, 7]), batch_size=2),
        )
        sequences = to_numpy(sequences).reshape(2, -1, 10)[:, 0]
        assert list(sequences[0]) == [5, 5, EOS_ID] + [PAD_ID] * 7
        assert list(sequences[1]) == [5] * 6 + [EOS_ID] + [PAD_ID] * 3
        assert np.all(np.isfinite(to_numpy(scores)))


def test_search_argument_errors():
    fn = _toy_tokens_to_logits(_toy_tables(1, 0))
    cache = {"row": np.zeros((1,), "int32")}
    with pytest.raises(ValueError, match="num_return"):
        beam_search(fn, cache, 3, SearchRequest(beam_size=2, num_return=3))
    # The early-stopping bound assumes alpha >= 0: a negative alpha is
    # refused as a Python number and as a concrete tensor alike.
    for alpha in (-0.5, ops.convert_to_tensor(-0.5), np.float32(-0.5)):
        with pytest.raises(ValueError, match="alpha must be >= 0"):
            beam_search(fn, cache, 3, SearchRequest(beam_size=2), SearchInputs(alpha=alpha))
    with pytest.raises(ValueError, match="max_length"):
        greedy_search(fn, cache, 0)
    with pytest.raises(ValueError, match="batch_size"):
        greedy_search(fn, {}, 3)


# --- the Transformer ---

MAX_LENGTH = 16


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(7)
    return Transformer(
        vocabulary_size=64,
        num_layers=2,
        d_model=32,
        num_heads=4,
        d_ff=64,
        dropout_rate=0.0,
    )


@pytest.fixture(scope="module")
def sources():
    """Sources of 1, 3, 8 and 13 tokens (EOS included), padded to 16."""
    rng = np.random.default_rng(3)
    ids = np.zeros((4, 16), "int32")
    for row, length in enumerate([1, 3, 8, 13]):
        ids[row, : length - 1] = rng.integers(4, 64, length - 1)
        ids[row, length - 1] = EOS_ID
    return ids, np.array([16, 5, 11, 16], "int32")


def _decode(generator, sources, **options):
    """`Generator.decode` of the EOS-terminated ``sources``: their ids
    without EOS (and without the last column, always PAD), which
    `prepare_sources` turns back into the same encoder ids, with their
    maximum lengths as output caps."""
    ids, max_lengths = sources
    raw = np.where(ids == EOS_ID, PAD_ID, ids)[:, :-1]
    options = DecodeOptions(max_extra_length=MAX_LENGTH, **options)
    return generator.decode(raw, options, MAX_LENGTH, SearchInputs(max_lengths=max_lengths))


@pytest.fixture(scope="module")
def cached_results(model, sources):
    """Compiled cached decoding, greedy and beam 4 (3 best), computed once."""
    generator = Generator(model)
    greedy = _decode(generator, sources, beam_size=1, alpha=0.6)
    beam = _decode(generator, sources, beam_size=4, alpha=0.6, num_return=3)
    return {"greedy": greedy, "beam": beam, "generator": generator}


def test_cached_greedy_equals_full_recomputation(model, sources, cached_results):
    # Sources of 1 to 13 tokens with per-row output limits: compiled cached
    # decoding vs the decoder re-run on the whole prefix at every step.
    max_lengths = sources[1]
    cached_sequences, cached_scores = cached_results["greedy"]
    sequences, scores = _decode(
        Generator(model, use_cache=False), sources, beam_size=1, alpha=0.6
    )
    np.testing.assert_array_equal(cached_sequences, sequences)
    np.testing.assert_allclose(cached_scores, scores, rtol=1e-4, atol=1e-5)
    for row, limit in enumerate(max_lengths):
        assert EOS_ID in cached_sequences[row, 0, :limit]


@pytest.mark.parametrize(
    "options",
    [{"dtype": "mixed_bfloat16"}, {"positional_encoding": "learned", "max_length": 32}],
)
def test_cached_greedy_equals_full_recomputation_bf16_and_learned(sources, options):
    # The Multi30k headline decodes a mixed_bfloat16 model; learned positions
    # index a table by absolute position in both paths.
    keras.utils.set_random_seed(5)
    variant = Transformer(
        vocabulary_size=64, num_layers=2, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0, **options,
    )
    ids, max_lengths = sources
    with _no_grad():
        inputs = SearchInputs(alpha=0.6, max_lengths=max_lengths)
        cached, cached_scores = generate(
            variant, ids, MAX_LENGTH, SearchRequest(beam_size=1), inputs
        )
        uncached, scores = generate(
            variant, ids, MAX_LENGTH, SearchRequest(beam_size=1, use_cache=False), inputs
        )
    np.testing.assert_array_equal(to_numpy(cached), to_numpy(uncached))
    tolerance = 2e-2 if "dtype" in options else 1e-5
    np.testing.assert_allclose(
        to_numpy(cached_scores), to_numpy(scores), rtol=tolerance, atol=tolerance
    )


def test_beam_scores_equal_full_forward_log_probability(model, sources, cached_results):
    # score = sum_t log p(y_t | y_<t, x) over the tokens, EOS included,
    # divided by ((5 + |Y|) / 6) ** alpha; recomputed by one uncached forward
    # pass over all returned hypotheses.
    ids, max_lengths = sources
    sequences, scores = cached_results["beam"]
    batch, num_return, _ = sequences.shape
    hypotheses = [
        _strip(sequences[r, n]) for r in range(batch) for n in range(num_return)
    ]
    decoder_ids = np.zeros((len(hypotheses), MAX_LENGTH), "int32")
    for i, tokens in enumerate(hypotheses):
        assert tokens[-1] == EOS_ID and len(tokens) <= max_lengths[i // num_return]
        decoder_ids[i, : len(tokens)] = [BOS_ID] + tokens[:-1]
    logits = to_numpy(
        model(
            {
                "encoder_token_ids": np.repeat(ids, num_return, axis=0),
                "decoder_token_ids": decoder_ids,
            }
        )
    ).astype("float64")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = [
        log_probs[i, np.arange(len(t)), t].sum() / ((5 + len(t)) / 6) ** 0.6
        for i, t in enumerate(hypotheses)
    ]
    np.testing.assert_allclose(scores.reshape(-1), expected, rtol=1e-4)
    # Best first.
    assert np.all(np.diff(scores, axis=1) <= 1e-6)


def test_beam_size_one_equals_greedy_model(model, sources, cached_results):
    # Beam search with one beam (which `DecodeOptions` cannot ask for),
    # compiled as `Generator` compiles, against the compiled greedy search.
    ids, max_lengths = sources
    request = SearchRequest(search="beam", beam_size=1)
    search = compile_for_backend(
        model,
        lambda x, lengths: generate(
            model, x, MAX_LENGTH, request, SearchInputs(alpha=0.0, max_lengths=lengths)
        ),
    )
    beam, _ = search(ops.convert_to_tensor(ids), ops.convert_to_tensor(max_lengths))
    np.testing.assert_array_equal(to_numpy(beam), cached_results["greedy"][0])


@pytest.mark.skipif(keras.config.backend() == "torch", reason="torch is not traced")
def test_generator_does_not_retrace_for_new_inputs(sources, cached_results):
    ids, max_lengths = sources
    generator = cached_results["generator"]
    count = generator.trace_count
    _decode(generator, (ids[::-1].copy(), max_lengths[::-1].copy()), beam_size=1)
    _decode(generator, (ids, np.minimum(max_lengths, 9)), beam_size=1, alpha=1.0)
    assert generator.trace_count == count


def test_uncached_prefix_decoding_in_a_python_loop(model, sources, cached_results):
    # The benchmark's baseline: the decoder re-run on the prefix only (padded
    # to a multiple of 4), one step at a time in a Python loop.
    ids, max_lengths = sources
    ids, max_lengths = ids[1:3], max_lengths[1:3]
    with _no_grad():
        request = SearchRequest(
            beam_size=1, use_cache=False, python_loop=True,
            decode_fn=compiled_decode(model), prefix_multiple=8,
        )
        sequences, _ = generate(
            model, ids, MAX_LENGTH, request, SearchInputs(alpha=0.6, max_lengths=max_lengths)
        )
    np.testing.assert_array_equal(to_numpy(sequences), cached_results["greedy"][0][1:3])


def test_two_stage_top_candidates_equal_one_top_k():
    from keras_transformer.decoding.beam import top_candidates

    rng = np.random.default_rng(0)
    candidates = rng.normal(size=(3, 4, 64)).astype("float32")
    candidates[:, 1:] -= 1.0  # most of the best from beam 0, some from the others
    flat = candidates.reshape(3, -1)
    order = np.argsort(-flat, axis=1)[:, :8]
    log_probs, beams, tokens = (
        to_numpy(x) for x in top_candidates(ops.convert_to_tensor(candidates), 8, 64)
    )
    np.testing.assert_allclose(log_probs, np.take_along_axis(flat, order, 1))
    np.testing.assert_array_equal(beams, order // 64)
    np.testing.assert_array_equal(tokens, order % 64)
    assert len(set(beams.reshape(-1).tolist())) > 1


@pytest.mark.parametrize("length", [8000, 4 * 37 * 41, 8009])
def test_blocked_top_k_equals_top_k(length):
    # 8000: 125 blocks of 64; 6068 = 4 * 37 * 41: 82 blocks of 74; 8009 is a
    # prime (no block length divides it): plain top-k.
    from keras_transformer.decoding.beam import _block_length, blocked_top_k

    rng = np.random.default_rng(length)
    x = rng.normal(size=(3, 4, length)).astype("float32")
    x[0, 0, :] -= 5.0
    x[0, 0, 17 : 17 + 9] += 20.0  # the best 8 of a row inside one or two blocks
    x[1, 2, -8:] += 20.0  # ... and in the last block
    x[2, 1, :] = -1.0e9  # a dead row: everything at NEG_INF but one entry
    x[2, 1, 5] = 0.0
    values, indices = (to_numpy(t) for t in blocked_top_k(ops.convert_to_tensor(x), 8))
    order = np.argsort(-x, axis=-1, kind="stable")[..., :8]
    expected = np.take_along_axis(x, order, -1)
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(np.take_along_axis(x, indices, -1), expected)
    live = np.ones((3, 4), bool)
    live[2, 1] = False  # ties at NEG_INF: any of them
    np.testing.assert_array_equal(indices[live], order[live])
    assert indices.dtype == np.int32 and (indices >= 0).all() and (indices < length).all()
    assert (_block_length(length) is not None) == (length != 8009)


def test_cache_lengths_double_then_jump_to_the_buffer():
    from keras_transformer.decoding.search import cache_lengths

    assert cache_lengths(16) == [16]
    assert cache_lengths(10) == [10]
    assert cache_lengths(33) == [16, 33]
    assert cache_lengths(64) == [16, 32, 64]
    assert cache_lengths(80) == [16, 32, 80]
    assert cache_lengths(16, first=4) == [4, 8, 16]


@pytest.mark.parametrize(
    "search", [dict(beam_size=1), dict(beam_size=4, num_return=3)],
    ids=["greedy", "beam"],
)
def test_growing_cache_equals_one_full_buffer(model, sources, cached_results, search):
    # The cache grows 4 -> 8 -> 16 positions while beams are reordered; the
    # outputs must be those of one 16-position buffer (the fixture's
    # Generator: cache_lengths(16) is one stage). The random model rarely
    # ends a sentence, so rows run through every stage to their limits.
    generator = Generator(model, cache_growth=4)
    sequences, scores = _decode(generator, sources, alpha=0.6, **search)
    expected = cached_results["greedy" if search["beam_size"] == 1 else "beam"]
    assert np.max(np.sum(expected[0] != PAD_ID, axis=-1)) > 8  # the last stage ran
    np.testing.assert_array_equal(sequences, expected[0])
    np.testing.assert_allclose(scores, expected[1], rtol=1e-5, atol=1e-6)


def _while_loops(function):
    """The while loops in the TensorFlow graph of a `Generator`'s compiled
    ``function`` (its nested functions included)."""
    from keras_transformer.decoding.generate import tf_decode_signature

    graph = function.get_concrete_function(*tf_decode_signature()).graph.as_graph_def()
    nodes = list(graph.node) + [
        node for f in graph.library.function for node in f.node_def
    ]
    return sum(node.op in ("While", "StatelessWhile") for node in nodes)


@pytest.mark.skipif(
    keras.config.backend() != "tensorflow", reason="TensorFlow graphs"
)
def test_a_tensorflow_graph_grows_the_cache_inside_one_loop(model, sources, cached_results):
    # The buffer length is a tensor in the graph: the stages 4 -> 8 -> 16
    # run as one while loop whose body grows the cache (its body traced
    # once), with the outputs of one 16-position buffer; under XLA, whose
    # loops keep their shapes, one loop per stage.
    from keras_transformer.decoding.generate import StaticDecode

    generator = Generator(model, cache_growth=4)
    sequences, scores = _decode(generator, sources, beam_size=4, alpha=0.6, num_return=3)
    np.testing.assert_array_equal(sequences, cached_results["beam"][0])
    np.testing.assert_allclose(scores, cached_results["beam"][1], rtol=1e-5, atol=1e-6)
    static = StaticDecode.from_options(
        DecodeOptions(max_extra_length=MAX_LENGTH, beam_size=4, num_return=3),
        cache_growth=4,
    )
    assert _while_loops(generator._compiled(static)) == 1
    xla = Generator(model, cache_growth=4, jit_compile=True)
    assert _while_loops(xla._compiled(static)) == 3


@pytest.mark.skipif(
    keras.config.backend() != "tensorflow", reason="TensorFlow graphs"
)
def test_a_tensorflow_graph_drops_finished_sentences(model, sources, monkeypatch):
    # The batch dimension is dynamic in the graph: a sentence whose best
    # hypotheses cannot change any more leaves the batch (fewer rows
    # decoded), with the outputs of decoding every row to the end (XLA,
    # whose loops keep their shapes, keeps every row).
    import tensorflow as tf

    rows = tf.Variable(0, dtype=tf.int32)
    decode_step = model.decode_step

    def counting_step(token_ids, cache, index):
        rows.assign_add(tf.shape(token_ids)[0])
        return decode_step(token_ids, cache, index)

    monkeypatch.setattr(model, "decode_step", counting_step)
    results = {}
    for jit_compile in (False, True):
        rows.assign(0)
        generator = Generator(model, jit_compile=jit_compile)
        results[jit_compile] = _decode(generator, sources, beam_size=4, alpha=0.6, num_return=3)
        results[jit_compile, "rows"] = int(rows.numpy())
    np.testing.assert_array_equal(results[False][0], results[True][0])
    np.testing.assert_allclose(results[False][1], results[True][1], rtol=1e-5, atol=1e-6)
    # Limits 16, 5, 11 and 16: the rows of the short sentences leave early.
    assert results[False, "rows"] < 0.9 * results[True, "rows"], results


def _mixed_bfloat16_model():
    keras.utils.set_random_seed(5)
    return Transformer(
        vocabulary_size=64, num_layers=2, d_model=32, num_heads=4, d_ff=64,
        dropout_rate=0.0, dtype="mixed_bfloat16",
    )


def _variable_casts(generator, loop_only=False):
    """Cast ops of a variable's value in ``generator``'s TensorFlow graph of
    a beam search (in the loop's body only, with ``loop_only``)."""
    from keras_transformer.decoding.generate import StaticDecode, tf_decode_signature

    static = StaticDecode.from_options(
        DecodeOptions(max_extra_length=MAX_LENGTH, beam_size=4), cache_growth=16
    )
    graph = generator._compiled(static).get_concrete_function(
        *tf_decode_signature()).graph.as_graph_def()
    functions = [(f.signature.name, f.node_def) for f in graph.library.function]
    count = 0
    for name, nodes in [("", graph.node)] + functions:
        if loop_only and "body" not in name:
            continue
        reads = {node.name for node in nodes if node.op == "ReadVariableOp"}
        count += sum(
            node.op == "Cast" and node.input[0].split(":")[0] in reads for node in nodes
        )
    return count


@pytest.mark.skipif(
    keras.config.backend() != "tensorflow", reason="TensorFlow graphs"
)
def test_a_tensorflow_graph_casts_the_weights_once_per_search(sources, monkeypatch):
    # A mixed_bfloat16 model reads its float32 kernels cast to bfloat16: in a
    # graph without XLA the loop's body would read and cast every kernel at
    # every step; they are cast once, before the loop, to the same values.
    # The module (the package's `decoding.generate` name is the function).
    generate_module = importlib.import_module("keras_transformer.decoding.generate")
    variant = _mixed_bfloat16_model()

    def variable_casts_in_loop(generator):
        return _variable_casts(generator, loop_only=True)

    generator = Generator(variant)
    once = _decode(generator, sources, beam_size=4, alpha=0.6)
    assert variable_casts_in_loop(generator) == 0
    monkeypatch.setattr(
        generate_module, "_weights_cast_once", lambda model: contextlib.nullcontext()
    )
    every_step = Generator(variant)
    np.testing.assert_array_equal(once[0], _decode(every_step, sources, beam_size=4, alpha=0.6)[0])
    np.testing.assert_array_equal(once[1], _decode(every_step, sources, beam_size=4, alpha=0.6)[1])
    assert variable_casts_in_loop(every_step) > 0


@pytest.mark.skipif(
    keras.config.backend() != "tensorflow", reason="TensorFlow graphs"
)
def test_a_graph_traced_with_stored_casts_reads_copies_instead_of_casting(sources):
    # The SavedModel's searches read a mixed_bfloat16 model's float32
    # kernels from bfloat16 copies made at export: no cast of a weight at
    # any request, the same outputs.
    from keras_transformer.utils.private_apis import stored_cast_reads

    variant = _mixed_bfloat16_model()
    variable_casts = _variable_casts
    cast_per_search = Generator(variant)
    expected = _decode(cast_per_search, sources, beam_size=4, alpha=0.6)
    assert variable_casts(cast_per_search) > 0
    with stored_cast_reads([variant]) as copies:
        stored = Generator(variant)
        result = _decode(stored, sources, beam_size=4, alpha=0.6)
        assert variable_casts(stored) == 0
    # One copy per float32 kernel, embedding and bias the layers read cast.
    assert len(copies) >= 2 * 10
    assert {copy.dtype for copy in copies} == {"bfloat16"}
    np.testing.assert_array_equal(result[0], expected[0])
    np.testing.assert_array_equal(result[1], expected[1])


def test_cache_growth_is_checked():
    with pytest.raises(ValueError, match="cache_growth"):
        Generator(None, cache_growth=0)
    with pytest.raises(ValueError, match="cache_growth"):
        SearchRequest(cache_growth=0)
    with pytest.raises(ValueError, match="grow needs stages"):
        greedy_search(
            _toy_tokens_to_logits(_toy_tables(1, 0)), {"row": np.zeros((1,), "int32")},
            TOY_MAX_LENGTH, cache_functions=CacheFunctions(grow=lambda cache, length: cache),
        )


def test_search_request_and_generator_arguments_are_checked():
    with pytest.raises(ValueError, match="search must be one of"):
        SearchRequest(search="nucleus")
    for search in ("greedy", "sample"):
        with pytest.raises(ValueError, match="search has no beams"):
            SearchRequest(search=search, beam_size=4)
    with pytest.raises(ValueError, match="temperature must be a number > 0"):
        SearchRequest(search="sample", beam_size=1, temperature=0.0)
    with pytest.raises(ValueError, match="jit_compile"):
        Generator(None, jit_compile="yes")
    assert SearchRequest(beam_size=1).kind == "greedy"
    assert SearchRequest().kind == "beam"


def _no_grad():
    if keras.config.backend() == "torch":
        import torch

        return torch.no_grad()
    import contextlib

    return contextlib.nullcontext()


def test_prepare_sources_truncates_appends_eos_and_caps_limits():
    from keras_transformer.decoding.sources import check_vocabulary, prepare_sources

    ids = np.array([[5, 6, 7, 8, 9], [5, 0, 0, 0, 0], [0, 0, 0, 0, 0]], "int32")
    encoder, limits = prepare_sources(ids, max_source_length=4, max_extra_length=10)
    assert to_numpy(encoder).tolist() == [
        [5, 6, 7, EOS_ID], [5, EOS_ID, 0, 0], [EOS_ID, 0, 0, 0]
    ]
    assert to_numpy(limits).tolist() == [13, 11, 10]
    # A learned-position model: sources and outputs stop at max_positions.
    encoder, limits = prepare_sources(ids, 256, 10, max_positions=3)
    assert to_numpy(encoder).tolist() == [[5, 6, EOS_ID], [5, EOS_ID, 0], [EOS_ID, 0, 0]]
    assert to_numpy(limits).tolist() == [3, 3, 3]
    # No tokens at all (a batch of blank strings).
    encoder, limits = prepare_sources(np.zeros((2, 0), "int32"), 8, 5)
    assert to_numpy(encoder).tolist() == [[EOS_ID], [EOS_ID]]
    assert to_numpy(limits).tolist() == [5, 5]
    check_vocabulary(60, 64)  # a padded model vocabulary is fine
    with pytest.raises(ValueError, match="tokenizer has 65 pieces but the model only 64"):
        check_vocabulary(65, 64)
