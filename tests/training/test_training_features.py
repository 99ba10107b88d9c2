"""Gradient accumulation, the moving average of the weights, validation BLEU,
the best checkpoint, patience and the final model (issue #15).

Two tiny `train` runs are shared by the tests (module-scoped): ``features``
(accumulation, EMA, validation BLEU every update, keep_best, final_model
"last") and ``patience`` (a frozen model, so validation BLEU never improves).
"""

import contextlib
import csv
import dataclasses
import io
import json
import math
import os

import keras
import numpy as np
import pytest

from keras_transformer.training.best_checkpoint import BestCheckpoint
from keras_transformer.training.stop_conditions import StepLimit
from keras_transformer.training.optimizer_state import ema_weights
from keras_transformer.training.checkpoints import average_checkpoints
from keras_transformer.training.checkpoints import list_checkpoints
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.model_selection import best_candidate
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.models.transformer.transformer_loader import load_preset_model
from keras_transformer.objectives.schedules import TransformerSchedule
from keras_transformer.utils.private_apis import (
    schedule_at_update_count as _count_updates_in_schedule,
)
from keras_transformer.training.run_model import fit_schedule
from keras_transformer.training.run_model import build_model
from keras_transformer.training.run_model import build_optimizer
from keras_transformer.training.trainer import train
from conftest import to_numpy

TINY = dict(
    model_overrides=dict(num_layers=1, d_model=32, num_heads=2, d_ff=64),
    vocabulary_size=64,
    max_length=8,  # One bucket shape: fewer compilations.
    tokens_per_batch=128,
    warmup_steps=10,
    eval_sentences=0,
    verbose=0,
)


def weights(model):
    return [np.array(to_numpy(v)) for v in model.trainable_variables]


def max_difference(first, second):
    return max(float(np.max(np.abs(a - b))) for a, b in zip(first, second))


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --- gradient accumulation ---


def tiny_transformer():
    keras.utils.set_random_seed(0)
    return Transformer(
        vocabulary_size=64, num_layers=1, d_model=16, num_heads=2, d_ff=32, dropout_rate=0.0
    )


def full_batch(size=8):
    """Pairs with no padding at all: every micro-batch has the same number of
    non-pad target tokens. The label-smoothed loss is a mean over a batch's
    non-pad tokens, so only then is the mean over the big batch exactly the
    mean of the micro-batch means (and the accumulated update the big one)."""
    rng = np.random.default_rng(0)
    source = rng.integers(4, 64, size=(size, 6)).astype("int32")
    target = rng.integers(4, 64, size=(size, 5)).astype("int32")
    decoder = np.concatenate([np.full((size, 1), 2, "int32"), target[:, :-1]], 1)
    return {"encoder_token_ids": source, "decoder_token_ids": decoder}, target


def fit_with_accumulation(accumulate_steps):
    """Two updates of a batch of 8 pairs, in ``accumulate_steps`` micro-batches."""
    model = tiny_transformer()
    optimizer = keras.optimizers.SGD(
        TransformerSchedule(16, warmup_steps=4, scale=10.0),
        gradient_accumulation_steps=accumulate_steps if accumulate_steps > 1 else None,
    )
    if accumulate_steps > 1:
        _count_updates_in_schedule(optimizer)  # As `build_optimizer` does.
    # XLA's compilation costs more than these few steps, except under JAX
    # (whose eager mode is slower still).
    jit_compile = keras.config.backend() == "jax"
    model.compile(optimizer=optimizer, loss=LabelSmoothedCrossEntropy(), jit_compile=jit_compile)
    inputs, labels = full_batch()
    before = weights(model)
    model.fit(
        inputs, labels, batch_size=8 // accumulate_steps, epochs=2, shuffle=False, verbose=0
    )
    assert int(to_numpy(optimizer.iterations)) == 2  # Updates, not batches.
    return before, weights(model)


def test_accumulated_micro_batches_update_like_one_big_batch():
    """4 accumulated micro-batches give the update of one batch 4 times larger.

    SGD, so that the update is linear in the gradient: Adam divides by the
    gradient's magnitude, which turns the float noise of gradients that are
    zero in exact arithmetic (attention's key biases: softmax ignores a shift
    of all logits) into steps of +-lr. The warmup schedule is evaluated at
    the update count (the second update uses the rate of step 1 in both
    runs), else the second updates would differ.
    """
    before, big = fit_with_accumulation(1)
    _, accumulated = fit_with_accumulation(4)
    assert max_difference(before, big) > 0.01  # The updates are not negligible.
    assert max_difference(big, accumulated) < 1e-5


def test_build_optimizer_accumulates_and_counts_updates_in_the_schedule():
    config = TrainConfig(accumulate_steps=4, warmup_steps=10, learning_rate_scale=1.0)
    optimizer = build_optimizer(config.resolved(), d_model=32)
    assert optimizer.gradient_accumulation_steps == 4
    schedule = TransformerSchedule(32, warmup_steps=10)
    for batches in (0, 3, 4, 7, 8, 41):
        optimizer._iterations.assign(batches)
        assert int(to_numpy(optimizer.iterations)) == batches // 4
        rate = float(to_numpy(optimizer.learning_rate))
        assert rate == pytest.approx(float(to_numpy(schedule(batches // 4))), rel=1e-6)
    plain = build_optimizer(TrainConfig(warmup_steps=10).resolved(), d_model=32)
    assert not plain.gradient_accumulation_steps and not plain.use_ema


def test_build_optimizer_decays_to_zero_at_decay_steps():
    config = TrainConfig(warmup_steps=10, decay_steps=50, learning_rate_scale=1.0)
    optimizer = build_optimizer(config.resolved(), d_model=32)
    optimizer.iterations.assign(50)
    assert float(to_numpy(optimizer.learning_rate)) == 0.0
    optimizer.iterations.assign(25)
    assert float(to_numpy(optimizer.learning_rate)) == pytest.approx(
        32**-0.5 * 25**-0.5 * 0.5, rel=1e-5
    )
    with pytest.raises(ValueError, match="decay_steps must exceed warmup_steps"):
        TrainConfig(warmup_steps=10, decay_steps=10)


def test_schedule_counts_updates_of_accumulated_batches():
    config = TrainConfig(epochs=10, accumulate_steps=4)
    # 30 batches: 8 updates per epoch (a pass rounds up), 32 batches for fit.
    assert fit_schedule(config.resolved(), num_batches=30) == (10, 32)
    assert fit_schedule(config.replace(max_steps=5).resolved(), 30) == (1, 20)
    assert fit_schedule(config.replace(steps_per_epoch=3).resolved(), 30) == (10, 12)


class FakeModel:
    def __init__(self, iterations=0):
        self.stop_training = False
        self.optimizer = type("Optimizer", (), {"iterations": iterations})()


def test_step_limit_counts_updates_not_batches():
    limit = StepLimit(max_steps=3, accumulate_steps=2)
    limit.set_model(FakeModel(iterations=1))  # Resumed after one update.
    limit.on_train_begin()
    for batch in range(3):
        limit.on_train_batch_end(batch)
        assert not limit.model.stop_training, batch
    limit.on_train_batch_end(3)  # The 4th batch completes the 3rd update.
    assert limit.stopped and limit.updates == 3


# --- exponential moving average ---


class RecordWeights(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.trajectory = []

    def on_train_batch_end(self, batch, logs=None):
        self.trajectory.append(weights(self.model))


@pytest.mark.parametrize("accumulate_steps", [1, 2])
def test_final_weights_are_the_moving_average_of_the_trajectory(accumulate_steps):
    decay = 0.5
    config = TrainConfig(
        ema_decay=decay, accumulate_steps=accumulate_steps, warmup_steps=4,
        learning_rate_scale=1.0,
    ).resolved()  # fmt: skip
    optimizer = build_optimizer(config, d_model=16)
    assert optimizer.use_ema
    assert optimizer.ema_momentum == pytest.approx(decay ** (1 / accumulate_steps))
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=optimizer, loss="mse")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    recorder = RecordWeights()
    model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=0, callbacks=[recorder])

    # By hand: Keras moves the average after every batch, with momentum 0
    # until the first update is applied (the average starts as the weights).
    momentum = decay ** (1 / accumulate_steps)
    average = None
    for batch, raw in enumerate(recorder.trajectory):
        m = 0.0 if batch // accumulate_steps == 0 else momentum
        average = [r if a is None else m * a + (1 - m) * r
                   for a, r in zip(average or [None] * len(raw), raw)]  # fmt: skip
    if accumulate_steps == 1:  # The textbook EMA over updates.
        textbook = recorder.trajectory[0]
        for raw in recorder.trajectory[1:]:
            textbook = [decay * a + (1 - decay) * r for a, r in zip(textbook, raw)]
        assert max_difference(textbook, average) < 1e-6
    final = weights(model)  # `fit` ends by putting the average in.
    assert max_difference(final, average) < 1e-5
    assert max_difference(final, recorder.trajectory[-1]) > 1e-3


# --- shared runs ---


@pytest.fixture(scope="module")
def features(tmp_path_factory):
    """Accumulation, EMA, validation BLEU after every update, keep_best."""
    directory = tmp_path_factory.mktemp("features") / "run"
    config = TrainConfig(
        output_dir=str(directory), steps_per_epoch=2, epochs=2, accumulate_steps=2,
        ema_decay=0.5, valid_bleu_sentences=8, eval_every_steps=1, keep_best="bleu",
        final_model="last", **TINY,
    )  # fmt: skip
    return config, train(config)


@pytest.fixture(scope="module")
def patience(tmp_path_factory):
    """A model that does not learn (tiny learning rate): BLEU never improves."""
    directory = tmp_path_factory.mktemp("patience") / "run"
    config = TrainConfig(
        output_dir=str(directory), steps_per_epoch=4, epochs=2, learning_rate_scale=1e-9,
        valid_bleu_sentences=8, eval_every_steps=1, keep_best="bleu", patience=2,
        **TINY,
    )  # fmt: skip
    return config, train(config)


def weight_score(model):
    """A score that differs between averages of checkpoints: the sum of the
    first trainable variable."""
    return float(np.sum(to_numpy(model.trainable_variables[0]), dtype=np.float64))


@pytest.fixture(scope="module")
def selected(tmp_path_factory):
    """Three epochs; the final average is chosen among the last 1, 2, 5 or 9.

    A tiny model's translations of the default task's validation numbers are
    all wrong (exact match 0 for every average), so the selection's decoding
    runs for real but its score is replaced by `weight_score` of the
    translated model: the test can then tell which average was chosen.
    """
    import keras_transformer.training.model_selection as final_model

    real = final_model.evaluate_translations
    calls = []

    def scored_by_weights(translator, sources, references, **kwargs):
        result = real(translator, sources, references, **kwargs)
        calls.append((len(sources), kwargs["beam_size"]))
        return dataclasses.replace(result, exact_match=weight_score(translator.model))

    directory = tmp_path_factory.mktemp("selected") / "run"
    config = TrainConfig(
        output_dir=str(directory), steps_per_epoch=2, epochs=3, valid_bleu_sentences=16,
        average_last_n=[9, 1, 5, 2], **dict(TINY, verbose=2),
    )  # fmt: skip
    log = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(log):
        patch.setattr(final_model, "evaluate_translations", scored_by_weights)
        result = train(config)
    return config, result, log.getvalue(), calls


def test_the_average_is_chosen_on_the_validation_set(selected):
    config, result, log, calls = selected
    selection = result.average_selection
    # 5 and 9 would both average all three checkpoints: 9 is not scored again.
    assert [c["last_n"] for c in selection["candidates"]] == [1, 2, 5]
    assert [c["checkpoints"] for c in selection["candidates"]] == [1, 2, 3]
    assert [c["epochs"] for c in selection["candidates"]] == [[3, 3], [2, 3], [1, 3]]
    # Greedy decoding of the first valid_bleu_sentences; exact match decides
    # on the default task.
    assert calls == [(16, 1)] * 3
    assert selection["sentences"] == 16 and selection["monitor"] == "val_exact_match"
    recorded = json.loads(open(os.path.join(result.output_dir, "results.json")).read())
    assert recorded["average_selection"] == json.loads(json.dumps(selection))

    # Each candidate's score is its own average's; the best is chosen and saved.
    checkpoints = list_checkpoints(os.path.join(result.output_dir, "checkpoints"))
    model, averages = None, []
    for candidate in selection["candidates"]:
        model, _ = average_checkpoints(checkpoints, last_n=candidate["checkpoints"], model=model)
        averages.append(weights(model))
        assert candidate["val_exact_match"] == pytest.approx(weight_score(model), rel=1e-6)
    scores = [c["val_exact_match"] for c in selection["candidates"]]
    assert len(set(scores)) == 3  # Distinct: the choice means something.
    best = scores.index(max(scores))
    assert selection["chosen"] == selection["candidates"][best]["last_n"]
    assert f"Chose the average of the last {selection['chosen']} checkpoints" in log
    assert result.final_model == "average"
    assert len(result.averaged_checkpoints) == best + 1
    saved = load_preset_model(result.output_dir)
    assert max_difference(weights(saved), averages[best]) == 0.0


def test_ties_between_candidate_averages_go_to_the_longer_average():
    candidates = [
        {"last_n": 3, "val_bleu": 40.0},
        {"last_n": 5, "val_bleu": 41.0},
        {"last_n": 8, "val_bleu": 41.0},
        {"last_n": 12, "val_bleu": 39.0},
    ]
    assert best_candidate(candidates, "val_bleu")["last_n"] == 8
    assert best_candidate(candidates[:2], "val_bleu")["last_n"] == 5


def test_validation_bleu_is_logged_every_update_and_each_epoch(features):
    config, result = features
    run = result.output_dir
    assert result.steps == 4 and result.stop_reason is None
    rows = read_csv(os.path.join(run, "logs", "validation.csv"))
    assert [int(row["update"]) for row in rows] == [1, 2, 3, 4]
    assert [int(row["epoch"]) for row in rows] == [1, 1, 2, 2]
    # Each epoch's logs (history, history.csv) hold its last evaluation.
    history = read_csv(os.path.join(run, "logs", "history.csv"))
    assert len(history) == 2 and "val_bleu" in history[0] and "val_exact_match" in history[0]
    for epoch, row in zip(history, (rows[1], rows[3])):
        assert float(epoch["val_bleu"]) == pytest.approx(float(row["val_bleu"]), abs=1e-3)
    assert result.history["val_bleu"] == pytest.approx(
        [float(rows[1]["val_bleu"]), float(rows[3]["val_bleu"])], abs=1e-3
    )
    results = json.loads(open(os.path.join(run, "results.json")).read())
    assert "val_bleu" in results["final_metrics"] and results["final_model"] == "last"


def test_validation_bleu_goes_to_tensorboard_by_update(features):
    pytest.importorskip("tensorboard")
    import tensorflow as tf

    directory = os.path.join(features[1].output_dir, "logs", "validation")
    steps = {}
    for name in os.listdir(directory):
        for event in tf.compat.v1.train.summary_iterator(os.path.join(directory, name)):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(event.step)
    assert sorted(steps["update_bleu"]) == [1, 2, 3, 4]
    assert "epoch_bleu" in steps  # Keras' TensorBoard callback, from the epoch logs.


def test_the_best_checkpoint_is_kept_beside_the_epoch_checkpoints(features):
    _, result = features
    run = result.output_dir
    rows = read_csv(os.path.join(run, "logs", "validation.csv"))
    scores = [float(row["val_bleu"]) for row in rows]
    best = json.loads(open(os.path.join(run, "checkpoints", "best", "best.json")).read())
    assert best["monitor"] == "val_bleu"
    assert best["value"] == pytest.approx(max(scores), abs=1e-3)
    assert best["update"] == scores.index(max(scores)) + 1  # The first of equals.
    assert result.best["update"] == best["update"]
    assert os.path.isfile(result.best["path"])
    # Not an epoch checkpoint: averaging a checkpoint directory ignores it.
    names = [os.path.basename(p) for p in list_checkpoints(os.path.join(run, "checkpoints"))]
    assert names == ["epoch_001.weights.h5", "epoch_002.weights.h5"]


def test_the_final_model_is_the_moving_average(features):
    config, result = features
    saved = load_preset_model(result.output_dir)
    final = weights(saved)
    assert max_difference(final, weights(result.model)) == 0.0
    # The last epoch checkpoint holds the raw weights and, in the optimizer
    # state, their moving average: the final model.
    model = build_model(config.resolved(), result.tokenizer.vocabulary_size)
    model.optimizer.build(model.trainable_variables)
    model.load_weights(os.path.join(result.output_dir, "checkpoints", "epoch_002.weights.h5"))
    assert max_difference(weights(model), final) > 1e-4
    with ema_weights(model):
        assert max_difference(weights(model), final) < 1e-6
    assert max_difference(weights(model), final) > 1e-4  # The raw weights are back.


def test_patience_stops_training_and_the_best_checkpoint_is_the_final_model(patience):
    config, result = patience
    # Evaluations after updates 1 (the best), 2 and 3 (no better): stop.
    assert result.stop_reason == "patience" and result.steps == 3
    assert result.final_model == "best" and result.config.final_model == "best"
    assert result.best["update"] == 1
    best = build_model(config.resolved(), result.tokenizer.vocabulary_size)
    best.optimizer.build(best.trainable_variables)
    best.load_weights(result.best["path"])
    saved = load_preset_model(result.output_dir)
    assert max_difference(weights(best), weights(saved)) == 0.0
    state = json.loads(open(os.path.join(result.output_dir, "checkpoints", "best",
                                         "best.json")).read())  # fmt: skip
    assert state["evaluations_without_improvement"] == 2


# --- BestCheckpoint alone ---


def compiled_dense():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_best_checkpoint_keeps_the_best_and_resumes(tmp_path):
    model = compiled_dense()
    best = BestCheckpoint(str(tmp_path), monitor="val_bleu", patience=2, verbose=0)
    best.set_model(model)
    best.on_train_begin()
    for update, value in enumerate([1.0, 3.0, math.nan, 2.5], start=1):
        best.observe(value, update)
    assert (best.best, best.best_step, best.wait) == (3.0, 2, 2)
    assert best.stopped and model.stop_training
    state = json.loads((tmp_path / "best.json").read_text())
    assert state == {"monitor": "val_bleu", "value": 3.0, "update": 2,
                     "evaluations_without_improvement": 2}  # fmt: skip

    resumed = BestCheckpoint(str(tmp_path), monitor="val_bleu", resume=True, verbose=0)
    resumed.set_model(compiled_dense())
    resumed.on_train_begin()
    assert (resumed.best, resumed.best_step, resumed.wait) == (3.0, 2, 2)
    assert resumed.observe(3.5, 7) and resumed.wait == 0

    # A new run (not a resume) does not inherit an earlier attempt's best.
    fresh = BestCheckpoint(str(tmp_path), monitor="val_loss", verbose=0)
    fresh.set_model(compiled_dense())
    fresh.on_train_begin()
    assert not (tmp_path / "best.weights.h5").exists() and fresh.best is None
    assert fresh.observe(2.0, 1) and not fresh.observe(2.5, 2)  # Lower is better.
    assert fresh.observe(1.0, 3) and fresh.best == 1.0


def test_best_checkpoint_never_keeps_non_finite_weights(tmp_path):
    model = compiled_dense()
    best = BestCheckpoint(str(tmp_path), verbose=0)
    best.set_model(model)
    best.on_train_begin()
    model.layers[0].kernel.assign(np.full((3, 2), np.nan, "float32"))
    assert not best.observe(5.0, 1)
    assert best.best is None and not (tmp_path / "best.weights.h5").exists()
