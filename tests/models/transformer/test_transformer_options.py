"""The architecture's options are defined once (`transformer_options`): the
backbone's constructor, its validation and its config follow the table."""

import inspect

import keras
import pytest

from keras_transformer import Transformer
from keras_transformer.models.transformer.transformer_backbone import TransformerBackbone
from keras_transformer.models.transformer.transformer_options import (
    ARCHITECTURE_OPTIONS,
    NOT_DEFAULT,
    REQUIRED,
    WHEN_USED,
    check_architecture,
)

# Constructor arguments that are not architecture options.
NOT_OPTIONS = {"self", "kwargs", "dtype", "int8_inputs"}

SMALL = dict(vocabulary_size=40, num_layers=1, d_model=16, num_heads=2, d_ff=32)


def test_the_constructor_takes_every_option_with_the_tables_default():
    parameters = inspect.signature(TransformerBackbone.__init__).parameters
    assert set(parameters) - NOT_OPTIONS == {o.name for o in ARCHITECTURE_OPTIONS}
    for option in ARCHITECTURE_OPTIONS:
        default = parameters[option.name].default
        expected = inspect.Parameter.empty if option.default is REQUIRED else option.default
        assert default == expected, option.name


def test_config_holds_each_option_by_its_rule():
    config = Transformer(**SMALL).get_config()
    for option in ARCHITECTURE_OPTIONS:
        # The paper's model: options saved where they differ from the
        # default or where used are absent.
        assert (option.name in config) == (option.saved not in (NOT_DEFAULT, WHEN_USED))
    other = Transformer(**SMALL, activation="gelu", positional_encoding="relative")
    config = other.get_config()
    assert config["activation"] == "gelu" and config["max_relative_position"] == 16
    assert "sinusoid_layout" not in config
    rebuilt = Transformer.from_config(config)
    assert rebuilt.get_config() == config


def test_one_validation_names_the_option():
    valid = {o.name: o.default for o in ARCHITECTURE_OPTIONS if o.default is not REQUIRED}
    valid.update(SMALL)
    assert check_architecture(valid)["source_vocabulary_size"] == 40
    for name, value, message in (
        ("num_heads", 3, "d_model must be divisible by num_heads"),
        ("d_ff", 0, "d_ff"),
        ("dropout_rate", 1.0, "dropout_rate"),
        ("positional_encoding", "rotary", "positional_encoding"),
        ("projection_layout", "kv", "projection_layout"),
        ("normalization_position", "middle", "normalization_position"),
        ("sinusoid_layout", "odd", "sinusoid_layout"),
        ("source_vocabulary_size", 50, "needs share_embeddings=False"),
    ):
        with pytest.raises(ValueError, match=message):
            check_architecture(dict(valid, **{name: value}))
    # An option's check runs only where the option is used.
    check_architecture(dict(valid, max_length=0, max_relative_position=0))
    with pytest.raises(ValueError, match="max_length"):
        check_architecture(dict(valid, max_length=0, positional_encoding="learned"))
    with pytest.raises(ValueError, match="max_relative_position"):
        check_architecture(dict(valid, max_relative_position=0, positional_encoding="relative"))


def test_a_position_scheme_is_one_registration(monkeypatch):
    """The backbone builds positions from the registry
    (`keras_transformer.layers.position_schemes`): a scheme registered
    there is a valid ``positional_encoding`` that builds, saves, reloads
    and decodes, with the options it reads checked and saved for it only."""
    import numpy as np

    from keras_transformer.decoding.sources import model_max_positions
    from keras_transformer.layers import position_schemes

    with pytest.raises(ValueError, match="positional_encoding must be one of"):
        Transformer(**SMALL, positional_encoding="none")
    # A scheme registered for this test only.
    monkeypatch.delitem(position_schemes.POSITION_SCHEMES, "none", raising=False)
    position_schemes.register_position_scheme(position_schemes.PositionScheme("none"))
    with pytest.raises(ValueError, match="registered already"):
        position_schemes.register_position_scheme(position_schemes.PositionScheme("none"))
    model = Transformer(**SMALL, positional_encoding="none", max_length=-1)  # not read
    assert model.encoder_position is None and model.decoder_position is None
    config = model.get_config()
    assert config["positional_encoding"] == "none"
    assert "max_relative_position" not in config  # saved where a scheme reads it
    again = Transformer.from_config(config)
    ids = sources = np.array([[5, 6, 7, 2]])
    targets = np.array([[1, 5, 6]])
    again.set_weights(model.get_weights())
    inputs = {"encoder_token_ids": sources, "decoder_token_ids": targets}
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(again(inputs)), keras.ops.convert_to_numpy(model(inputs)),
        atol=1e-6,
    )
    # Without positions added, the encoder sees a bag of tokens: permuted
    # sources give permuted outputs.
    outputs = keras.ops.convert_to_numpy(model.encode(ids)[0])
    shuffled = keras.ops.convert_to_numpy(model.encode(ids[:, [2, 0, 1, 3]])[0])
    np.testing.assert_allclose(outputs[:, [2, 0, 1, 3]], shuffled, atol=1e-5)
    assert model_max_positions(model) is None
    learned = Transformer(**SMALL, positional_encoding="learned", max_length=32)
    assert model_max_positions(learned) == 32
