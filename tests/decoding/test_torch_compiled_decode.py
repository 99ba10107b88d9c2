"""The compiled PyTorch decode (``jit_compile=True`` on torch) runs
`Translator.translate`'s features through its compiled search step with
eager's outputs: beam search with n-best, forced prefixes (the user's and
a target-language tag), an ensemble of two models of different sizes,
and alignments (a forced pass over the search's outputs); the lexically
constrained beam search; seeded sampling from the ensemble with a
temperature, a top-k and a nucleus filter. A single model's beam search
(n-best, cache stages, a batch halved as its sentences finish) is checked
below too, and its greedy search in ``test_logits_processors.py``. The
tests of what is Dynamo's (graphs, guards, recompilations: the halved
batch, torch's recompilation limit) run its graphs through the "eager"
backend (`torch_steps.COMPILE_BACKEND`), which generates no code.

One compiled translator serves the module (each search kind compiles one
loop body for its batch shape); torch only.
"""

import keras
import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.data import SubwordTokenizer
from keras_transformer.decoding import Ensemble
from keras_transformer.models.transformer.translator import Translator

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "torch", reason="torch.compile of the search step"
)

SENTENCES = ["a b c d e f g h", "a c e g", "b d f h", "h g f e d c b a"] * 10
SOURCES = ["a b c", "h g f e", "d d", "b d f h a"]
LANGUAGES = ["de", "fr", "fr", "de"]
# Short outputs: the random models rarely end a sentence.
SETTINGS = {"max_extra_length": 6, "batch_size": 4}


@pytest.fixture(scope="module")
def translators():
    """An eager and a compiled translator over one ensemble (two random
    models of different sizes, one with learned positions) of a
    multilingual vocabulary whose tag is the output's first token."""
    from keras_transformer.utils.private_apis import reset_torch_compiler

    reset_torch_compiler()
    tokenizer = SubwordTokenizer.train(SENTENCES, 20, languages=["de", "fr"])
    keras.utils.set_random_seed(11)
    models = [
        Transformer(
            vocabulary_size=tokenizer.vocabulary_size, num_layers=1, d_model=16,
            num_heads=2, d_ff=32, dropout_rate=0.0,
        ),
        Transformer(
            vocabulary_size=tokenizer.vocabulary_size, num_layers=2, d_model=8,
            num_heads=2, d_ff=16, dropout_rate=0.0, positional_encoding="learned",
            max_length=24,
        ),
    ]  # fmt: skip
    ensemble = Ensemble(models, weights=[2, 1])
    eager, compiled = (
        Translator(ensemble, tokenizer, language_tag="target", jit_compile=jit)
        for jit in (False, True)
    )
    return eager, compiled


def _same(compiled, eager):
    texts, scores = compiled[0], compiled[1]
    assert texts == eager[0]
    np.testing.assert_allclose(
        np.asarray(scores, np.float64), np.asarray(eager[1], np.float64),
        rtol=1e-4, atol=1e-5,
    )
    for extra, expected in zip(compiled[2:], eager[2:]):
        assert extra == expected


def _translate(translator, **kwargs):
    return translator.translate(
        SOURCES, target_language=LANGUAGES, return_scores=True, **SETTINGS, **kwargs
    )


def test_compiled_beam_nbest_prefixes_languages_alignments_ensemble(translators):
    from keras_transformer.utils.private_apis import torch_compile_counts

    eager, compiled = translators
    arguments = dict(
        beam_size=3, num_return=2, alpha=0.6, return_alignments=True,
        target_prefix=["a", "", "h g", ""],
    )  # fmt: skip
    expected = _translate(eager, **arguments)
    got = _translate(compiled, **arguments)
    _same(got, expected)
    # Each output starts with its prefix (the tag is not printed).
    assert all(text.startswith("a") for text in got[0][0])
    assert all(text.startswith("h g") for text in got[0][2])
    assert all(len(a) >= 1 for row in got[2] for a in row)
    # The search ran through one compiled graph (no break); a second call
    # of the same shapes reuses it.
    assert torch_compile_counts()["graph_breaks"] == 0
    graphs = torch_compile_counts()["graphs"]
    assert graphs == 1
    _same(_translate(compiled, **arguments), expected)
    assert torch_compile_counts()["graphs"] == graphs



def test_compiled_constrained_search(translators):
    # The lexically constrained beam search (its own loop body: the
    # constraint state is part of the loop state) through the compiled step.
    from keras_transformer.utils.private_apis import torch_compile_counts

    eager, compiled = translators
    constraints = [["h g"], [], ["b", "d"], ["a"]]
    arguments = dict(beam_size=3, constraints=constraints)
    expected = _translate(eager, **arguments)
    graphs = torch_compile_counts()["graphs"]
    got = _translate(compiled, **arguments)
    _same(got, expected)
    # Every output holds its phrases (and so a finite score).
    for text, score, phrases in zip(got[0], got[1], constraints):
        assert np.isfinite(score)
        assert all(phrase in text for phrase in phrases), (text, phrases)
    assert torch_compile_counts()["graph_breaks"] == 0
    assert torch_compile_counts()["graphs"] == graphs + 1


def test_compiled_seeded_sampling_ensemble(translators):
    # Seeded sampling from the ensemble's distribution, with a temperature,
    # a top-k and a nucleus (top-p) filter, through greedy search's compiled
    # body.
    from keras_transformer.utils.private_apis import torch_compile_counts

    eager, compiled = translators
    arguments = dict(
        beam_size=1, num_return=2, sampling=True, temperature=0.8, top_k=6, top_p=0.9,
        seed=5,
    )
    expected = _translate(eager, **arguments)
    graphs = torch_compile_counts()["graphs"]
    got = _translate(compiled, **arguments)
    _same(got, expected)
    # Two samples per sentence, not all alike (the seed's noise reaches
    # every row).
    assert len({text for row in got[0] for text in row}) > 1
    # The filters change the samples (same seed, eager, without them).
    assert _translate(eager, **dict(arguments, top_k=None, top_p=1.0))[0] != expected[0]
    assert torch_compile_counts()["graph_breaks"] == 0
    assert torch_compile_counts()["graphs"] == graphs + 1


def test_compiled_stages_and_weights_read_once_follow_the_weights():
    # A mixed_bfloat16 model (each step reads its float32 weights cast to
    # bfloat16, cast once per search into tensors that the recorded step
    # reads by reference) through two cache stages (8 and 16 positions,
    # one compiled graph each): eager's outputs, and after new
    # weights are assigned, the new weights' outputs (a recorded step that
    # kept the first search's cast weights would repeat the old outputs).
    from keras_transformer.decoding import DecodeOptions, Generator, SearchInputs
    from keras_transformer.utils.private_apis import reset_torch_compiler, torch_compile_counts

    reset_torch_compiler()
    keras.utils.set_random_seed(5)
    model, other = (
        Transformer(vocabulary_size=32, num_layers=1, d_model=16, num_heads=2, d_ff=32,
                    dropout_rate=0.0, dtype="mixed_bfloat16")
        for _ in range(2)
    )  # fmt: skip
    raw = np.array([[5, 6, 7, 8], [9, 10, 0, 0]], dtype="int32")
    options = DecodeOptions(beam_size=3, num_return=2, alpha=0.6, max_extra_length=16)
    inputs = SearchInputs(max_lengths=np.array([16, 16], dtype="int32"))
    eager = Generator(model, jit_compile=False, cache_growth=8)
    compiled = Generator(model, jit_compile=True, cache_growth=8)

    def decode(generator):
        ids, scores = generator.decode(raw, options, 16, inputs)
        return keras.ops.convert_to_numpy(ids), keras.ops.convert_to_numpy(scores)

    def same(got, expected):
        # The same tokens; the scores within bfloat16's rounding (the
        # compiled step's fused kernels round fewer intermediates).
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1], rtol=2e-3)

    first = decode(eager)
    same(decode(compiled), first)
    # Random weights rarely end a hypothesis: the search ran every stage.
    assert (first[0] != 0).sum(axis=-1).max() > 8
    assert torch_compile_counts() == {"graph_breaks": 0, "graphs": 2, "frames": 2}

    model.set_weights(other.get_weights())
    second = decode(eager)
    assert not np.array_equal(second[0], first[0])
    same(decode(compiled), second)
    assert torch_compile_counts()["graphs"] == 2


def test_beam_search_halves_its_batch_as_sentences_finish(monkeypatch):
    # 16 sentences, 11 of which may not pass 3 tokens and one not 6
    # (per-row maximum lengths; the random model rarely ends a hypothesis
    # by itself): after the third step 5 still search and the search
    # continues on 8 rows (the 5 and 3 finished ones as padding), after the
    # sixth on 4. Eager and compiled outputs equal those of the search
    # without halving (every row decoded to the end), the n-best of the
    # dropped sentences included. Compiled: four shapes (sentences, cache
    # positions), (16, 4), (8, 8), (4, 8) and (4, 16); the one step at
    # (8, 4) is a loop's first, which runs eagerly (it records the model
    # step of the new shape), as does the first step at each of the other
    # four. A second request of the same shapes runs no step eagerly: the
    # step at (8, 4) compiles (a fifth graph), and the outputs are the same;
    # nor does it run the encoder's Keras layers (its recorded graph runs).
    # Graphs, guards and eager steps are Dynamo's, the same under every
    # ``torch.compile`` backend: "eager" runs the graphs without generating
    # code (the tests above check Inductor's outputs).
    from keras_transformer.decoding import DecodeOptions, Generator, SearchInputs
    from keras_transformer.decoding import search_loop, torch_steps
    from keras_transformer.decoding.torch_steps import TorchStepCompiler
    from keras_transformer.utils.private_apis import reset_torch_compiler, torch_compile_counts

    monkeypatch.setattr(torch_steps, "COMPILE_BACKEND", "eager")
    reset_torch_compiler()
    keras.utils.set_random_seed(3)
    model = Transformer(vocabulary_size=32, num_layers=1, d_model=16, num_heads=2, d_ff=32,
                        dropout_rate=0.0)  # fmt: skip
    raw = np.random.default_rng(0).integers(4, 32, size=(16, 5)).astype("int32")
    caps = np.array([3] * 11 + [6] + [16] * 4, dtype="int32")
    caps = caps[np.random.default_rng(1).permutation(16)]
    options = DecodeOptions(beam_size=3, num_return=2, alpha=0.6, max_extra_length=16)
    inputs = SearchInputs(max_lengths=caps)
    sizes = []
    halved_rows = search_loop.halved_rows

    def recording_halved_rows(done):
        rows = halved_rows(done)
        if rows is not None:
            sizes.append(len(rows[0]))
        return rows

    monkeypatch.setattr(search_loop, "halved_rows", recording_halved_rows)

    eager_steps = []
    eager_step = TorchStepCompiler._eager_step

    def counting_eager_step(body, state):
        eager_steps.append(1)
        return eager_step(body, state)

    monkeypatch.setattr(TorchStepCompiler, "_eager_step", staticmethod(counting_eager_step))

    encodes = []
    encode = model.encode

    def counting_encode(*args, **kwargs):
        encodes.append(1)
        return encode(*args, **kwargs)

    monkeypatch.setattr(model, "encode", counting_encode)

    def decode(jit_compile, generator=None):
        generator = generator or Generator(model, jit_compile=jit_compile, cache_growth=4)
        ids, scores = generator.decode(raw, options, 16, inputs)
        return keras.ops.convert_to_numpy(ids), keras.ops.convert_to_numpy(scores)

    with monkeypatch.context() as no_halving:
        no_halving.setattr(search_loop, "FEWEST_HALVED_SENTENCES", 16)
        expected = decode(False)
    assert sizes == []
    lengths = (expected[0] != 0).sum(axis=-1)
    np.testing.assert_array_equal(lengths.max(axis=1), caps)
    assert np.isfinite(expected[1]).all()
    compiled = Generator(model, jit_compile=True, cache_growth=4)
    graphs = []
    encodes.clear()
    for jit_compile, generator in ((False, None), (True, compiled), (True, compiled)):
        got = decode(jit_compile, generator)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-4, atol=1e-5)
        assert sizes == [8, 4]
        sizes.clear()
        graphs.append((torch_compile_counts()["graphs"], len(eager_steps), len(encodes)))
        encodes.clear()
    assert torch_compile_counts()["graph_breaks"] == 0
    # (graphs, eager steps, encoder calls) after the eager, first and second
    # compiled runs.
    assert graphs == [(0, 0, 1), (4, 5, 1), (5, 5, 0)]


def test_compiled_body_keeps_compiling_past_torch_default_limit(monkeypatch):
    # `compile_loop` compiles a search's loop step once per shape, and a
    # server meets more shapes than torch.compile's default of 8 (batch
    # sizes x source buckets x cache stages); past its limit torch would run
    # the step uncompiled. 11 shapes: 11 compilations, none uncompiled
    # (Dynamo's count and limit: the "eager" backend, no code generated).
    import torch

    from keras_transformer.decoding import torch_steps
    from keras_transformer.decoding.torch_steps import TorchStepCompiler
    from keras_transformer.utils.private_apis import reset_torch_compiler, torch_compile_counts

    monkeypatch.setattr(torch_steps, "COMPILE_BACKEND", "eager")
    reset_torch_compiler()

    def cond(state):
        return state["i"] < 3

    def body(state):
        return {"i": state["i"] + 1, "x": state["x"] * 2 + 1}

    compiler = TorchStepCompiler()
    for n in range(1, 12):
        # Three steps: the first of a new shape runs eagerly.
        loop = compiler.compile_loop(cond, body)
        state = loop({"i": torch.tensor(0), "x": torch.ones(n)})
        assert torch.equal(state["x"], torch.full((n,), 15.0))
    assert torch_compile_counts()["frames"] == 11
