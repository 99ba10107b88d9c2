"""The architecture's options are defined once (`transformer_options`): the
backbone's constructor, its validation and its config follow the table."""

import inspect

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
