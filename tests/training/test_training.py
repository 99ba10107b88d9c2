import math

import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import to_numpy


def paper_rate(step, d_model=512, warmup=4000):
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


@pytest.mark.parametrize("step", [1, 4000, 100_000, 1234])
def test_schedule_matches_the_formula(step):
    schedule = kt.TransformerSchedule(512)
    assert float(to_numpy(schedule(step))) == pytest.approx(paper_rate(step), rel=1e-5)


def test_schedule_is_safe_at_zero_and_serializable():
    schedule = kt.TransformerSchedule(256, warmup_steps=100)
    value = float(to_numpy(schedule(0)))
    assert math.isfinite(value) and value > 0
    restored = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(schedule), safe_mode=True
    )
    assert restored.get_config() == schedule.get_config()
    for bad in ({"d_model": 0}, {"d_model": 8, "warmup_steps": -1}):
        with pytest.raises(ValueError, match="Received"):
            kt.TransformerSchedule(**bad)


def test_schedule_decays_linearly_to_zero_at_decay_steps():
    schedule = kt.TransformerSchedule(512, warmup_steps=100, decay_steps=1000)
    for step in (50, 100, 400, 900):
        expected = paper_rate(step, warmup=100) * (1 - step / 1000)
        assert float(to_numpy(schedule(step))) == pytest.approx(expected, rel=1e-5)
    assert float(to_numpy(schedule(1000))) == 0.0
    assert float(to_numpy(schedule(5000))) == 0.0  # never negative
    restored = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(schedule), safe_mode=True
    )
    assert restored.get_config()["decay_steps"] == 1000
    with pytest.raises(ValueError, match="decay_steps must be an int above"):
        kt.TransformerSchedule(512, warmup_steps=100, decay_steps=100)


def test_optimizer_helper_is_the_papers_adam():
    optimizer = kt.transformer_optimizer(512)
    assert isinstance(optimizer, keras.optimizers.Adam)
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (0.9, 0.98, 1e-9)
    assert isinstance(optimizer._learning_rate, kt.TransformerSchedule)


def test_label_smoothed_loss_matches_hand_computation():
    eps, V = 0.1, 5
    logits = np.random.default_rng(0).normal(size=(2, 3, V)).astype("float32")
    labels = np.array([[1, 4, 0], [2, 0, 0]])
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected, count = 0.0, 0
    for b in range(2):
        for t in range(3):
            if labels[b, t] == 0:
                continue
            target = np.full(V, eps / V)
            target[labels[b, t]] += 1 - eps
            expected += -(target * log_p[b, t]).sum()
            count += 1
    loss = kt.LabelSmoothedCrossEntropy(label_smoothing=eps)
    assert float(to_numpy(loss(labels, logits))) == pytest.approx(expected / count, rel=1e-5)
    assert float(to_numpy(loss(np.zeros((2, 3), "int32"), logits))) == 0.0
    restored = kt.LabelSmoothedCrossEntropy.from_config(loss.get_config())
    assert restored.label_smoothing == eps
    with pytest.raises(ValueError, match="label_smoothing"):
        kt.LabelSmoothedCrossEntropy(label_smoothing=1.5)


def test_loss_and_metric_accept_only_the_models_padding_id():
    # The model masks padding by special_tokens.PAD_ID only; a loss or metric
    # ignoring another id would disagree with it, so it is refused.
    for make in (kt.LabelSmoothedCrossEntropy, kt.MaskedTokenAccuracy):
        assert make(pad_id=kt.PAD_ID).pad_id == kt.PAD_ID  # saved configs
        for bad in (1, -1, True):
            with pytest.raises(ValueError, match="pad_id must be 0"):
                make(pad_id=bad)


def _loss_and_gradient(function, labels, logits, weights=None):
    """Sum of the per-token losses (times ``weights``, per token, if given)
    and its gradient, on the current backend."""
    backend = keras.config.backend()
    if weights is None:
        weights = np.ones(labels.shape, "float32")
    if backend == "tensorflow":
        import tensorflow as tf

        z = tf.constant(logits)
        with tf.GradientTape() as tape:
            tape.watch(z)
            total = tf.reduce_sum(function(labels, z) * weights)
        return float(total), tape.gradient(total, z).numpy()
    if backend == "jax":
        import jax

        total, grad = jax.value_and_grad(
            lambda z: (function(labels, z) * weights).sum()
        )(logits)
        return float(total), np.asarray(grad)
    import torch

    z = torch.tensor(logits, requires_grad=True)
    total = (function(torch.tensor(labels), z) * torch.tensor(weights)).sum()
    total.backward()
    return float(total), z.grad.numpy()


@pytest.mark.parametrize("eps", [0.1, 0.0])
def test_every_loss_formulation_gives_the_same_values_and_gradients(eps):
    """Each backend uses its fastest formulation; all must be the same loss."""
    from keras_transformer.objectives import losses

    rng = np.random.default_rng(1)
    V = 50
    logits = rng.normal(scale=3.0, size=(3, 4, V)).astype("float32")
    labels = rng.integers(0, V, size=(3, 4)).astype("int32")
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    target = np.full((3, 4, V), eps / V)
    np.put_along_axis(target, labels[..., None], 1 - eps + eps / V, axis=-1)
    expected_loss = -(target * log_p).sum()
    expected_grad = np.exp(log_p) - target  # softmax - targets
    assert set(losses._FORMULATIONS) == {"tensorflow", "jax", "torch"}
    forms = {
        losses._logsumexp_form, losses._fused_softmax_form,
        losses._log_softmax_form, losses._custom_gradient_form,
    }  # fmt: skip
    assert set(losses._FORMULATIONS.values()) <= forms
    for form in forms:
        total, grad = _loss_and_gradient(
            lambda y, z: form(y, z, eps), labels, logits
        )
        assert total == pytest.approx(expected_loss, rel=1e-5), form.__name__
        np.testing.assert_allclose(grad, expected_grad, atol=1e-5, err_msg=form.__name__)



@pytest.mark.parametrize("eps", [0.1, 0.0])
def test_written_out_gradient_equals_the_differentiated_forms(eps):
    """`_custom_gradient_form` (its gradient written out, in place under
    PyTorch) gives the loss and gradient of the automatically
    differentiated forms, with an upstream gradient that differs per token
    (token weights, a padded position at 0) and large logits."""
    from keras_transformer.objectives import losses

    rng = np.random.default_rng(2)
    V = 37
    logits = rng.normal(scale=20.0, size=(2, 5, V)).astype("float32")
    labels = rng.integers(0, V, size=(2, 5)).astype("int32")
    weights = rng.uniform(0.5, 2.0, size=(2, 5)).astype("float32")
    weights[1, -1] = 0.0
    total, grad = _loss_and_gradient(
        lambda y, z: losses._custom_gradient_form(y, z, eps), labels, logits, weights
    )
    assert np.all(grad[1, -1] == 0.0)
    for form in (losses._logsumexp_form, losses._log_softmax_form):
        expected_total, expected_grad = _loss_and_gradient(
            lambda y, z: form(y, z, eps), labels, logits, weights
        )
        assert total == pytest.approx(expected_total, rel=1e-5), form.__name__
        np.testing.assert_allclose(grad, expected_grad, atol=2e-6, err_msg=form.__name__)


def test_masked_token_accuracy():
    metric = kt.MaskedTokenAccuracy()
    labels = np.array([[1, 2, 0, 0]])
    logits = np.eye(4)[[1, 3, 0, 0]][None].astype("float32")
    metric.update_state(labels, logits)
    assert float(to_numpy(metric.result())) == pytest.approx(0.5)
    assert kt.MaskedTokenAccuracy.from_config(metric.get_config()).pad_id == 0


def copy_task(rng, n=64, length=6, vocab=20):
    tokens = rng.integers(4, vocab, size=(n, length)).astype("int32")
    source = np.concatenate([tokens, np.full((n, 1), kt.EOS_ID, "int32")], 1)
    decoder = np.concatenate([np.full((n, 1), kt.BOS_ID, "int32"), tokens], 1)
    labels = source.copy()
    return {"encoder_token_ids": source, "decoder_token_ids": decoder}, labels


def compiled_tiny(dtype=None, vocab=20, warmup_steps=100):
    model = kt.Transformer(
        vocabulary_size=vocab, num_layers=1, d_model=32, num_heads=4, d_ff=64, dtype=dtype
    )
    model.compile(
        optimizer=kt.transformer_optimizer(32, warmup_steps=warmup_steps),
        loss=kt.LabelSmoothedCrossEntropy(),
        metrics=[kt.MaskedTokenAccuracy()],
    )
    return model


def test_fit_learns_a_copy_task(rng):
    inputs, labels = copy_task(rng, n=256)
    model = compiled_tiny()
    history = model.fit(inputs, labels, batch_size=32, epochs=10, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.75 * losses[0]
    # Chance is 1/16; the model must have learned to copy some tokens.
    assert history.history["token_accuracy"][-1] > 0.3


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_trains_with_finite_loss(rng, policy):
    inputs, labels = copy_task(rng)
    model = compiled_tiny(dtype=policy, warmup_steps=10)
    assert model.dtype_policy.name == policy
    logits = model(inputs)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    history = model.fit(inputs, labels, batch_size=32, epochs=3, verbose=0)
    assert all(np.isfinite(history.history["loss"]))
    assert history.history["loss"][-1] < history.history["loss"][0]
