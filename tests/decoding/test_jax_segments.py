"""JAX's beam search halves its batch as sentences finish: its loops run
one compiled segment at a time (`backends.jax_search_jit`), with the
outputs of the search compiled whole; JAX only."""

import keras
import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.decoding import DecodeOptions, Generator, SearchInputs, backends
from keras_transformer.decoding import search_loop

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "jax", reason="jax.jit of a search's segments"
)


def test_beam_search_halves_its_batch_and_follows_the_weights(monkeypatch):
    # 16 sentences, 11 of which may not pass 3 tokens and one not 6
    # (per-row maximum lengths; the random model rarely ends a hypothesis
    # by itself): after the third step 5 still search and the search
    # continues on 8 rows, after the sixth on 4. The outputs, n-best of the
    # dropped sentences included, equal the search compiled whole (every
    # row decoded to the end); a second request of the same shapes traces
    # nothing; new weights give the new weights' outputs (the segments
    # read the weights as inputs, not as constants). Greedy search, which
    # does not halve, runs compiled whole: no segment after its probe.
    keras.utils.set_random_seed(3)
    model, other = (
        Transformer(vocabulary_size=32, num_layers=1, d_model=16, num_heads=2, d_ff=32,
                    dropout_rate=0.0)
        for _ in range(2)
    )  # fmt: skip
    raw = np.random.default_rng(0).integers(4, 32, size=(16, 5)).astype("int32")
    caps = np.array([3] * 11 + [6] + [16] * 4, dtype="int32")
    caps = caps[np.random.default_rng(1).permutation(16)]
    options = DecodeOptions(beam_size=3, num_return=2, alpha=0.6, max_extra_length=16)
    inputs = SearchInputs(max_lengths=caps)
    sizes, segments = [], []
    halved_rows, search_segment = backends.halved_rows, backends.search_segment

    def recording_halved_rows(done):
        rows = halved_rows(done)
        if rows is not None:
            sizes.append(len(rows[0]))
        return rows

    def recording_search_segment(segment):
        segments.append((segment.kind, segment.stage, segment.entry))
        return search_segment(segment)

    monkeypatch.setattr(backends, "halved_rows", recording_halved_rows)
    monkeypatch.setattr(backends, "search_segment", recording_search_segment)

    def decode(generator, options=options):
        ids, scores = generator.decode(raw, options, 16, inputs)
        return keras.ops.convert_to_numpy(ids), keras.ops.convert_to_numpy(scores)

    def same(got, expected):
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-4, atol=1e-5)

    # Compiled whole: its probe (the first call of a shape) finds no
    # halving where no batch halves.
    whole = Generator(model, cache_growth=4)
    with monkeypatch.context() as no_halving:
        no_halving.setattr(search_loop, "FEWEST_HALVED_SENTENCES", 16)
        expected = decode(whole)
    assert sizes == [] and segments == [("probe", None, None)]
    lengths = (expected[0] != 0).sum(axis=-1)
    np.testing.assert_array_equal(lengths.max(axis=1), caps)
    assert np.isfinite(expected[1]).all()
    generator = Generator(model, cache_growth=4)
    segments.clear()
    same(decode(generator), expected)
    assert sizes == [8, 4]
    # Cache stages of 4, 8 and 16 positions: the third step ends the first
    # stage's loop (5 sentences still search: 8 rows), the sixth the next
    # loop of the second stage (4 rows).
    assert segments == [
        ("probe", None, None), ("loop", 0, "first"), ("loop", 0, "halve"),
        ("loop", 1, "grow"), ("loop", 1, "halve"), ("loop", 2, "grow"),
        ("finish", None, None),
    ]
    traces = generator.trace_count
    sizes.clear()
    same(decode(generator), expected)
    assert sizes == [8, 4]
    assert generator.trace_count == traces

    model.set_weights(other.get_weights())
    second = decode(whole)
    assert not np.array_equal(second[0], expected[0])
    same(decode(generator), second)
    assert generator.trace_count == traces

    segments.clear()
    decode(generator, DecodeOptions(beam_size=1, max_extra_length=16))
    assert segments == [("probe", None, None)]
