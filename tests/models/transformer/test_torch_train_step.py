"""The compiled PyTorch training step (models/transformer/torch_train_step.py):
one graph per batch shape, no graph break, no recompilation, and the same
weights as Keras' eager step."""

import keras
import numpy as np
import pytest

from keras_transformer.models.transformer.torch_train_step import (
    CompiledTorchTrainStep,
)
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.objectives.schedules import (
    TransformerSchedule,
    transformer_optimizer,
)
from keras_transformer.utils.private_apis import (
    reset_torch_compiler,
    torch_compile_counts,
)

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "torch", reason="the PyTorch backend's train step"
)

VOCABULARY = 24


def _model(optimizer=None, **compile_options):
    keras.utils.set_random_seed(7)
    model = Transformer(
        vocabulary_size=VOCABULARY, num_layers=1, d_model=16, num_heads=2,
        d_ff=32, dropout_rate=0.0,
    )
    # Adam's epsilon of 1e-9 turns float noise in gradients that are zero in
    # exact arithmetic (the key bias, which softmax ignores) into steps of
    # +-lr; a larger one keeps eager and compiled comparable.
    optimizer = optimizer or keras.optimizers.Adam(
        TransformerSchedule(16, warmup_steps=4), 0.9, 0.98, epsilon=1e-3
    )
    model.compile(optimizer=optimizer, loss=LabelSmoothedCrossEntropy(), **compile_options)
    return model


def _batches(rng, shapes, repeats):
    """(x, y) pairs: ``repeats`` batches of each (batch, source, target) shape."""
    batches = []
    for batch, source, target in shapes:
        for _ in range(repeats):
            x = {
                "encoder_token_ids": rng.integers(1, VOCABULARY, (batch, source)),
                "decoder_token_ids": rng.integers(1, VOCABULARY, (batch, target)),
            }
            y = rng.integers(0, VOCABULARY, (batch, target))
            batches.append((x, y))
    return batches


def _fit(model, batches, backend=None):
    if backend is not None:
        model.train_function = CompiledTorchTrainStep(model, backend=backend)

    def generator():
        yield from batches

    model.fit(generator(), epochs=1, steps_per_epoch=len(batches), verbose=0)
    return [np.array(v.numpy()) for v in model.trainable_variables]


def _assert_close(actual, expected):
    for got, want in zip(actual, expected):
        np.testing.assert_allclose(
            np.asarray(got, dtype=float), np.asarray(want, dtype=float), atol=2e-5
        )


def test_one_graph_per_shape_without_breaks_or_recompilation(rng):
    """Graph breaks and recompilations are Dynamo's (the same under every
    ``torch.compile`` backend); "eager" runs the recorded graph without
    generating code, so that the test takes seconds."""
    batches = _batches(rng, [(4, 7, 5), (2, 9, 6)], repeats=3)
    eager = _fit(_model(jit_compile=False), batches)
    reset_torch_compiler()
    model = _model(jit_compile=True)
    compiled = _fit(model, batches, backend="eager")
    counts = torch_compile_counts()
    assert counts["graph_breaks"] == 0
    # Six steps of two shapes: two graphs, each compiled once.
    assert counts["graphs"] == 2
    assert len(model.train_function.compiled_steps) == 2
    assert int(model.optimizer.iterations) == 6
    _assert_close(compiled, eager)


def test_jit_compile_selects_the_compiled_step():
    model = _model(jit_compile=True)
    model.make_train_function()
    assert isinstance(model.train_function, CompiledTorchTrainStep)
    model = _model(jit_compile=False)
    model.make_train_function()
    assert not isinstance(model.train_function, CompiledTorchTrainStep)


def test_accumulation_and_ema_equal_eager(rng):
    """Under accumulation the update and the accumulating batches are two
    graphs; weights, moving averages, accumulators and counters follow
    eager's."""
    batches = _batches(rng, [(4, 7, 5)], repeats=4)

    def model(jit_compile):
        optimizer = keras.optimizers.Adam(
            TransformerSchedule(16, warmup_steps=4), 0.9, 0.98, epsilon=1e-3,
            gradient_accumulation_steps=2, use_ema=True, ema_momentum=0.9,
        )
        return _model(optimizer, jit_compile=jit_compile)

    reference = model(False)
    eager = _fit(reference, batches)
    compiled_model = model(True)
    compiled = _fit(compiled_model, batches, backend="eager")
    assert len(compiled_model.train_function.compiled_steps) == 2
    assert int(compiled_model.optimizer.iterations) == 2
    _assert_close(compiled, eager)
    _assert_close(
        [v.numpy() for v in compiled_model.optimizer.variables],
        [v.numpy() for v in reference.optimizer.variables],
    )


@pytest.mark.slow
def test_inductor_weights_equal_eager(rng):
    """The generated code (Inductor's kernels, the fused Adam update) against
    eager, with the package's optimizer and schedule. About a minute of C++
    compilation on 2 cores, once per machine (Inductor caches it)."""
    batches = _batches(rng, [(4, 7, 5)], repeats=3)
    eager = _fit(_model(jit_compile=False), batches)
    model = _model(jit_compile=True)
    compiled = _fit(model, batches)
    assert model.train_function.backend == "inductor"
    _assert_close(compiled, eager)


def test_out_of_range_ids_raise_before_the_step(rng):
    model = _model(transformer_optimizer(16, warmup_steps=4), jit_compile=True)
    (x, y), = _batches(rng, [(2, 5, 4)], repeats=1)
    x["decoder_token_ids"][0, 1] = VOCABULARY
    before = [np.array(v.numpy()) for v in model.trainable_variables]
    with pytest.raises(ValueError, match=f"decoder_token_ids contains id {VOCABULARY}"):
        _fit(model, [(x, y)], backend="eager")
    assert not model.train_function.compiled_steps
    for expected, variable in zip(before, model.trainable_variables):
        np.testing.assert_array_equal(variable.numpy(), expected)
