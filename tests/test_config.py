"""Tests for keras_transformer.config.TrainConfig."""

import dataclasses
import json

import pytest

from keras_transformer.config import DEFAULT_TASK_SETTINGS
from keras_transformer.config import USER_DATA_SETTINGS
from keras_transformer.config import TrainConfig
from keras_transformer.config import parse_overrides


def test_unknown_key_is_an_error_naming_it_and_listing_valid_keys():
    with pytest.raises(ValueError, match="epochz") as info:
        TrainConfig.from_dict({"epochs": 3, "epochz": 4})
    assert "Valid keys" in str(info.value) and "tokens_per_batch" in str(info.value)
    with pytest.raises(ValueError, match="learning_rate"):
        TrainConfig().replace(learning_rate=0.1)
    with pytest.raises(ValueError, match="nonsense"):
        parse_overrides(["nonsense=1"])


def test_yaml_and_json_files_load_the_same_config(tmp_path):
    values = {
        "preset": "tiny",
        "model_overrides": {"num_layers": 1, "dropout_rate": 0.2},
        "epochs": 3,
        "learning_rate_scale": 2,
        "train_src": "a.en",
        "train_tgt": "a.de",
    }
    (tmp_path / "run.json").write_text(json.dumps(values))
    (tmp_path / "run.yaml").write_text(
        "preset: tiny\nmodel_overrides:\n  num_layers: 1\n  dropout_rate: 0.2\n"
        "epochs: 3\nlearning_rate_scale: 2\ntrain_src: a.en\ntrain_tgt: a.de\n"
    )
    from_json = TrainConfig.from_file(tmp_path / "run.json")
    from_yaml = TrainConfig.from_file(tmp_path / "run.yaml")
    assert from_json == from_yaml
    assert from_yaml.model_overrides == {"num_layers": 1, "dropout_rate": 0.2}
    assert isinstance(from_yaml.learning_rate_scale, float)
    # save() writes JSON that loads back to an equal config.
    assert TrainConfig.from_file(from_yaml.save(tmp_path / "out.json")) == from_yaml

    (tmp_path / "bad.yaml").write_text("epochs: 3\nbatch_size: 64\n")
    with pytest.raises(ValueError, match="batch_size") as info:
        TrainConfig.from_file(tmp_path / "bad.yaml")
    assert "bad.yaml" in str(info.value)


def test_overrides_apply_and_the_original_is_unchanged():
    base = TrainConfig(epochs=3)
    changed = base.replace(epochs=5, seed=7)
    assert (base.epochs, base.seed) == (3, 0)
    assert (changed.epochs, changed.seed) == (5, 7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.epochs = 9
    parsed = parse_overrides(
        ["epochs=4", "learning_rate_scale=1e-1", "model_overrides.num_layers=1",
         "output_dir=runs/x", "time_budget_minutes=0.5"],
        base,
    )  # fmt: skip
    assert parsed.epochs == 4 and parsed.learning_rate_scale == pytest.approx(0.1)
    assert parsed.model_overrides == {"num_layers": 1}
    assert parsed.output_dir == "runs/x" and parsed.time_budget_minutes == 0.5


def test_type_and_value_validation_is_clear():
    with pytest.raises(TypeError, match="'epochs' must be int"):
        TrainConfig(epochs="ten")
    with pytest.raises(TypeError, match="epochs"):
        TrainConfig(epochs=2.5)
    with pytest.raises(TypeError, match="seed"):
        TrainConfig(seed=True)
    with pytest.raises(ValueError, match="warmup_steps must be positive"):
        TrainConfig(warmup_steps=0)
    with pytest.raises(ValueError, match="label_smoothing"):
        TrainConfig(label_smoothing=1.0)
    with pytest.raises(ValueError, match="Unknown preset 'huge'"):
        TrainConfig(preset="huge")
    with pytest.raises(ValueError, match="num_layerz"):
        TrainConfig(model_overrides={"num_layerz": 2})
    with pytest.raises(ValueError, match="vocabulary_size"):
        TrainConfig(model_overrides={"vocabulary_size": 100})
    with pytest.raises(ValueError, match="train_tgt"):
        TrainConfig(train_src="a.en")
    with pytest.raises(ValueError, match="backend"):
        TrainConfig(backend="theano")


def test_resolved_fills_auto_fields_by_data_kind():
    default_task = TrainConfig().resolved()
    assert default_task.uses_default_task
    for key, value in DEFAULT_TASK_SETTINGS.items():
        assert getattr(default_task, key) == value
    user = TrainConfig(train_src="a", train_tgt="b", epochs=2).resolved()
    assert user.epochs == 2  # Explicit values win.
    assert user.vocabulary_size == USER_DATA_SETTINGS["vocabulary_size"]
    assert default_task.resolved() == default_task
