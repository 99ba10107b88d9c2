"""The token-id contract (issue #12): ids and labels outside [0, V) raise a
clear error naming the input at every entry point, eagerly and inside
compiled steps, on every backend; nothing wraps, gives NaN or trains
silently."""

import itertools

import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import to_numpy
from keras_transformer.layers.token_checks import TokenIdCheck, check_token_ids

V = 64
BACKEND = keras.config.backend()


def message(name, token_id):
    """The error text, also as TensorFlow's Assert prints it ("[a] [69] [b]")."""
    return rf"{name} contains id\]? \[?{token_id}\]? \[?outside \[0, {V}\)"


def compiled_error():
    """What a failed check inside a compiled step raises on this backend."""
    if BACKEND == "tensorflow":
        import tensorflow as tf

        return tf.errors.InvalidArgumentError  # from the graph's Assert
    return ValueError  # JAX: host check before the jitted step; torch: eager


def tiny_model():
    model = kt.Transformer(vocabulary_size=V, num_layers=1, d_model=16, num_heads=2, d_ff=32)
    model.compile(optimizer="adam", loss=kt.LabelSmoothedCrossEntropy())
    return model


@pytest.fixture(scope="module")
def model():
    """Shared by tests whose errors come before any compiled step runs."""
    return tiny_model()


def batch():
    x = {
        "encoder_token_ids": np.array([[5, 6, 7, 0]] * 4, "int32"),
        "decoder_token_ids": np.array([[2, 8, 9, 0]] * 4, "int32"),
    }
    return x, np.array([[8, 9, 3, 0]] * 4, "int32")


def with_bad_id(what, bad_id):
    """A batch whose ``what`` ("encoder_token_ids", ... or "labels") holds ``bad_id``."""
    x, y = batch()
    if what == "labels":
        y[1, 1] = bad_id
    else:
        x[what][1, 1] = bad_id
    return x, y


def as_generator(x, y):
    """Data Keras cannot inspect up front, so only the in-graph checks see it."""

    def generate():
        while True:
            yield x, y

    return generate()


CASES = [
    ("encoder_token_ids", -1),  # wrapped to the last embedding row before
    ("encoder_token_ids", 69),
    ("decoder_token_ids", -1),
    ("decoder_token_ids", V),  # NaN logits under JAX before
]
LABEL_CASES = [("labels", 69), ("labels", -3)]  # trained silently before


@pytest.mark.parametrize("bad_id", [-1, V, 69])
def test_check_token_ids_names_the_input_and_the_id(bad_id):
    ids = keras.ops.convert_to_tensor(np.array([[3, bad_id, 0]], "int32"))
    with pytest.raises(ValueError, match=message("encoder_token_ids", bad_id)):
        check_token_ids(ids, V, "encoder_token_ids")
    good = keras.ops.convert_to_tensor(np.array([[0, V - 1]], "int32"))
    assert to_numpy(check_token_ids(good, V, "x")).tolist() == [[0, V - 1]]
    # An ignored id (a label padding id outside the vocabulary) passes.
    padded = keras.ops.convert_to_tensor(np.array([[-100, 5, -100]], "int32"))
    check_token_ids(padded, V, "labels", ignore_id=-100)
    check_token_ids(keras.ops.zeros((0, 3), "int32"), V, "x")


def compiled(function):
    """``function`` as the backend's compiled step runs it."""
    if BACKEND == "tensorflow":
        import tensorflow as tf

        return tf.function(function)
    if BACKEND == "jax":
        import jax

        return jax.jit(function)
    return function  # Keras runs PyTorch eagerly.


@pytest.mark.skipif(
    BACKEND == "jax",
    reason="inside jax.jit nothing is checked (a host callback would cost ~4 ms "
    "per step); the Transformer checks batches before its jitted steps",
)
@pytest.mark.parametrize("bad_id", [-1, 69])
def test_check_token_ids_inside_a_compiled_function(bad_id):
    def step(ids):
        return keras.ops.sum(check_token_ids(ids, V, "labels", ignore_id=-100))

    step = compiled(step)
    good = keras.ops.convert_to_tensor(np.array([[1, V - 1, -100]], "int32"))
    assert int(to_numpy(step(good))) == V - 100
    bad = keras.ops.convert_to_tensor(np.array([[1, bad_id, -100]], "int32"))
    with pytest.raises(Exception, match=message("labels", bad_id)):
        to_numpy(step(bad))


def test_token_id_check_layer_config_round_trip():
    layer = TokenIdCheck(V, input_name="decoder_token_ids", name="check")
    restored = TokenIdCheck.from_config(layer.get_config())
    assert (restored.vocabulary_size, restored.input_name) == (V, "decoder_token_ids")
    with pytest.raises(ValueError, match="vocabulary_size"):
        TokenIdCheck(0)


@pytest.mark.parametrize("what, bad_id", CASES)
def test_model_call_rejects_out_of_range_ids(model, what, bad_id):
    x, _ = with_bad_id(what, bad_id)
    with pytest.raises(ValueError, match=message(what, bad_id)):
        model(x)
    x, _ = batch()
    assert np.isfinite(to_numpy(model(x))).all()


@pytest.mark.parametrize("what, bad_id", CASES)
def test_predict_rejects_out_of_range_ids(model, what, bad_id):
    x, _ = with_bad_id(what, bad_id)
    with pytest.raises(ValueError, match=message(what, bad_id)):
        model.predict(x, verbose=0)


@pytest.mark.parametrize("what, bad_id", [CASES[1], CASES[2]] + LABEL_CASES)
def test_fit_and_evaluate_reject_out_of_range_arrays_before_any_step(model, what, bad_id):
    weights = [to_numpy(w) for w in model.weights]
    x, y = with_bad_id(what, bad_id)
    with pytest.raises(ValueError, match=message(what, bad_id)):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match=message(what, bad_id)):
        model.evaluate(x, y, verbose=0)
    good_x, good_y = batch()
    with pytest.raises(ValueError, match=message(what, bad_id)):
        model.fit(good_x, good_y, validation_data=(x, y), verbose=0)
    # Nothing ran: the model is untouched (and usable, even under JAX).
    for before, after in zip(weights, model.weights):
        np.testing.assert_array_equal(before, to_numpy(after))


def test_compiled_train_step_rejects_out_of_range_ids(model):
    # A generator bypasses the up-front array check: the check of the
    # compiled step (TF graph Assert; under JAX the host check of each batch
    # before the jitted step; PyTorch eager) must fire, and leave the model
    # usable.
    weights = [to_numpy(w) for w in model.weights]
    for what, bad_id in [CASES[0], CASES[3]] + LABEL_CASES:
        x, y = with_bad_id(what, bad_id)
        with pytest.raises(compiled_error(), match=message(what, bad_id)):
            model.fit(as_generator(x, y), steps_per_epoch=1, verbose=0)
        with pytest.raises(compiled_error(), match=message(what, bad_id)):
            model.evaluate(as_generator(x, y), steps=1, verbose=0)
    for before, after in zip(weights, model.weights):
        np.testing.assert_array_equal(before, to_numpy(after))


def test_compiled_predict_step_rejects_out_of_range_ids(model):
    x, _ = with_bad_id("decoder_token_ids", -1)
    with pytest.raises(compiled_error(), match=message("decoder_token_ids", -1)):
        model.predict(as_generator(x, None), steps=1, verbose=0)
    good, _ = batch()
    assert np.isfinite(model.predict(as_generator(good, None), steps=1, verbose=0)).all()


def test_padding_labels_and_in_range_ids_train(model):
    x, y = batch()
    x["encoder_token_ids"][0, 0] = V - 1  # the largest id is in range
    y[:, 2:] = 0  # padding labels carry no loss and are allowed
    history = model.fit(x, y, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


# --- the tf.data pipeline (the SavedModel's translate_token_ids signature is
# tested in tests/export/test_export.py, which already exports a model) ---


@pytest.fixture(scope="module")
def tokenizer_and_pairs():
    from keras_transformer.data import SubwordTokenizer, default_task_splits

    source, target = default_task_splits(num_train=200, num_valid=10, num_test=10)["train"]
    tokenizer = SubwordTokenizer.train(itertools.chain(source, target), vocabulary_size=120)
    return tokenizer, source, target


def test_make_dataset_rejects_a_tokenizer_larger_than_the_model(tokenizer_and_pairs):
    from keras_transformer.data import make_dataset

    tokenizer, source, target = tokenizer_and_pairs
    make_dataset(source, target, tokenizer, max_length=16, vocabulary_size=120)
    with pytest.raises(ValueError, match=r"id \d+ outside \[0, 40\) \(vocabulary_size=40\)"):
        make_dataset(source, target, tokenizer, max_length=16, vocabulary_size=40)
    with pytest.raises(ValueError, match="vocabulary_size must be a positive int"):
        make_dataset(source, target, tokenizer, max_length=16, vocabulary_size=0)
