"""The score processors every search shares (`logits_processors`): each on
a hand-made example, then through the searches, compiled as each backend
compiles them (XLA under JAX and TensorFlow's ``jit_compile=True``, a
TensorFlow graph of dynamic batch, ``torch.compile`` without graph breaks),
with the uncompiled search's outputs."""

import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer import Transformer
from keras_transformer.decoding.generate import Generator
from keras_transformer.decoding.logits_processors import (
    StepContext,
    no_repeat_ngram,
    penalize_repetition,
    process_scores,
    step_scores,
)
from keras_transformer.decoding.options import DecodeOptions, SearchInputs, SearchRequest
from keras_transformer.decoding.search_loop import NEG_INF
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

MAX_LENGTH = 14


def _np(x):
    return ops.convert_to_numpy(x)


def test_repetition_penalty_divides_positive_and_multiplies_negative_scores():
    scores = np.array([[1.0, -1.0, 2.0, -2.0, 4.0, -4.0]], "float32")
    # Tokens 2 (BOS), 4 and 5 written; 3 is after index: PAD there.
    sequences = np.array([[BOS_ID, 4, 5, PAD_ID]], "int32")
    out = _np(penalize_repetition(ops.convert_to_tensor(scores), sequences, 2, 2.0))
    # PAD (0) is "written" too (the columns after index): harmless, every
    # search masks it afterwards.
    np.testing.assert_allclose(out, [[0.5, -1.0, 1.0, -2.0, 2.0, -8.0]])


def test_no_repeat_ngram_bans_the_tokens_that_would_repeat_an_ngram():
    scores = np.zeros((2, 8), "float32")
    # Row 0: 5 6 7 5 -> the bigram (5, 6) was seen: 6 is banned after 5.
    # Row 1: 5 6 5 6 -> (6, 5) seen; after 6, 5 is banned; with trigrams,
    # (5, 6, 5) seen: after "5 6", 5 is banned.
    sequences = np.array(
        [[BOS_ID, 5, 6, 7, 5, PAD_ID], [BOS_ID, 5, 6, 5, 6, PAD_ID]], "int32"
    )
    def banned(index, size):
        # PAD takes the writes of the n-grams that do not match (every
        # search masks it anyway): left out here.
        out = _np(no_repeat_ngram(ops.convert_to_tensor(scores), sequences, index, size))
        return [sorted(set(np.flatnonzero(row == NEG_INF).tolist()) - {PAD_ID}) for row in out]

    assert banned(4, 2) == [[6], [5]]
    assert banned(4, 3) == [[], [5]]
    # Before an n-gram is complete nothing is banned; a 1-gram bans every
    # written token.
    assert banned(1, 3) == [[], []]
    assert banned(2, 1) == [[BOS_ID, 5, 6], [BOS_ID, 5, 6]]


def test_process_scores_applies_only_what_the_request_enables():
    scores = ops.convert_to_tensor(np.full((1, 8), -1.0, "float32"))
    sequences = np.array([[BOS_ID, 5, 5, PAD_ID]], "int32")
    inputs = SearchInputs(repetition_penalty=3.0)
    assert process_scores(scores, sequences, 2, SearchRequest(), inputs) is scores
    both = _np(process_scores(
        scores, sequences, 2, SearchRequest(penalize_repetition=True, no_repeat_ngram_size=1),
        inputs,
    ))
    assert both[0, 5] == NEG_INF and both[0, 4] == -1.0 and both[0, BOS_ID] == NEG_INF


@pytest.mark.parametrize("min_length, row_0_prefix", [(2, 7), (4, EOS_ID)])
def test_step_scores_ban_and_force_tokens_and_keep_the_vocabulary_static(
    min_length, row_0_prefix
):
    # The scores a beam search chooses from, against the rules written out:
    # never PAD or BOS; EOS not before min_length; nothing but EOS at a row's
    # last position (row 1); a row inside its forced prefix (row 0) only the
    # prefix's token, even where the rules above ban it (EOS before
    # min_length). Under TensorFlow, also traced with the batch unknown,
    # where the scores must keep their static vocabulary size (beam
    # search's two-stage top-k needs it).
    n, k, vocab, index = 3, 2, 10, 1
    logits = np.random.default_rng(3).normal(size=(n * k, vocab)).astype("float32")
    row_max = np.array([6, index + 1, 6], "int32")
    prefix_ids = np.array([[5, row_0_prefix], [0, 0], [6, 8]], "int32")
    prefix_lengths = np.array([2, 0, 0], "int32")

    def scores(logits):
        rows = ops.shape(logits)[0] // k
        context = StepContext(
            SearchRequest(beam_size=k), SearchInputs(min_length=min_length), index,
            ops.zeros((ops.shape(logits)[0], 4), "int32"), row_max, prefix_ids, prefix_lengths,
        )
        return step_scores(logits, (rows, k), context, on_logits=False)

    next_length = index + 1
    banned = np.zeros((n, k, vocab), bool)
    banned[..., [PAD_ID, BOS_ID]] = True
    if next_length < min_length:
        banned[..., EOS_ID] = True
    at_max = next_length >= row_max
    banned[at_max] |= np.arange(vocab) != EOS_ID
    forcing = index < prefix_lengths
    banned[forcing] = np.arange(vocab) != prefix_ids[forcing, index][:, None]
    runs = [scores(ops.convert_to_tensor(logits))]
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        traced = tf.function(scores, input_signature=[tf.TensorSpec([None, vocab])])
        runs.append(traced(logits))
        assert traced.get_concrete_function().structured_outputs[1].shape[-1] == vocab
    for log_probs, selectable in runs:
        log_probs, selectable = _np(log_probs), _np(selectable)
        np.testing.assert_array_equal(selectable, np.where(banned, NEG_INF, log_probs))
        assert (selectable[1, :, EOS_ID] == NEG_INF).all() == (min_length > next_length)
        assert (selectable[0, :, row_0_prefix] > NEG_INF).all()


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(5)
    return Transformer(
        vocabulary_size=24, num_layers=1, d_model=16, num_heads=2, d_ff=32, dropout_rate=0.0
    )


def _raw_sources():
    rng = np.random.default_rng(1)
    ids = rng.integers(4, 24, (3, 6)).astype("int32")
    ids[1, 3:] = PAD_ID
    return ids


def _repeated_ngrams(sequence, size):
    tokens = [BOS_ID] + [int(t) for t in sequence if t not in (PAD_ID, EOS_ID)]
    grams = [tuple(tokens[i:i + size]) for i in range(len(tokens) - size + 1)]
    return len(grams) - len(set(grams))


@pytest.mark.parametrize("beam_size", [1, 3])
def test_compiled_searches_apply_the_processors_as_eager(model, beam_size, monkeypatch):
    from keras_transformer.decoding import torch_steps
    from keras_transformer.utils.private_apis import reset_torch_compiler, torch_compile_counts

    if keras.config.backend() == "torch":
        reset_torch_compiler()
        if beam_size == 1:
            # Inductor's code for the processors' operations is checked in
            # beam search's body; greedy search's is checked here for what
            # is Dynamo's (one graph, no break, no recompilation per step),
            # the same under the "eager" backend, which generates no code.
            monkeypatch.setattr(torch_steps, "COMPILE_BACKEND", "eager")
    raw = _raw_sources()
    plain = DecodeOptions(beam_size=beam_size, num_return=1, max_extra_length=MAX_LENGTH)
    options = plain.replace(no_repeat_ngram_size=2, repetition_penalty=1.8)
    eager = Generator(model, jit_compile=False, cache_growth=None)
    compiled = Generator(model, jit_compile=True)
    expected = eager.decode(raw, options, MAX_LENGTH)
    got = compiled.decode(raw, options, MAX_LENGTH)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-4, atol=1e-5)
    # The options did something: the random model repeats itself without.
    unprocessed = eager.decode(raw, plain, MAX_LENGTH)
    assert sum(_repeated_ngrams(row[0], 2) for row in unprocessed[0]) > 0
    assert sum(_repeated_ngrams(row[0], 2) for row in got[0]) == 0
    if keras.config.backend() == "torch":
        # One graph serves every step (a guard that saw a value change at
        # each step would recompile the step until torch's limit).
        assert torch_compile_counts() == {"graph_breaks": 0, "graphs": 1, "frames": 1}
    # A new penalty is a new runtime value: no new compiled search.
    functions = len(compiled._functions)
    compiled.decode(raw, options.replace(repetition_penalty=1.2), MAX_LENGTH)
    assert len(compiled._functions) == functions
    if keras.config.backend() == "torch":
        assert torch_compile_counts()["graphs"] == 1
