"""Tests for keras_transformer.config.TrainConfig."""

import dataclasses
import json
import os

import pytest

from keras_transformer.training.config import DEFAULT_TASK_SETTINGS
from keras_transformer.training.config import USER_DATA_SETTINGS
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.config import parse_overrides
from conftest import FIXTURES, REPO_ROOT


@pytest.mark.backend_independent
def test_unknown_key_is_an_error_naming_it_and_listing_valid_keys():
    with pytest.raises(ValueError, match="epochz") as info:
        TrainConfig.from_dict({"epochs": 3, "epochz": 4})
    assert "Valid keys" in str(info.value) and "tokens_per_batch" in str(info.value)
    with pytest.raises(ValueError, match="learning_rate"):
        TrainConfig().replace(learning_rate=0.1)
    with pytest.raises(ValueError, match="nonsense"):
        parse_overrides(["nonsense=1"])


@pytest.mark.backend_independent
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


@pytest.mark.backend_independent
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


@pytest.mark.backend_independent
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


@pytest.mark.backend_independent
def test_resolved_fills_auto_fields_by_data_kind():
    default_task = TrainConfig().resolved()
    assert default_task.uses_default_task
    for key, value in DEFAULT_TASK_SETTINGS.items():
        assert getattr(default_task, key) == value
    user = TrainConfig(train_src="a", train_tgt="b", epochs=2).resolved()
    assert user.epochs == 2  # Explicit values win.
    assert user.vocabulary_size == USER_DATA_SETTINGS["vocabulary_size"]
    assert default_task.resolved() == default_task


# --- issue #15: training keys, the CLI flags made from them, Keras-free import ---


@pytest.mark.parametrize(
    "values, key",
    [
        (dict(accumulate_steps=0), "accumulate_steps"),
        (dict(ema_decay=1.0), "ema_decay"),
        (dict(ema_decay=0.0), "ema_decay"),
        (dict(patience=0, keep_best="loss"), "patience"),
        (dict(patience=3), "patience"),  # Watches keep_best's value: needs it.
        (dict(keep_best="accuracy"), "keep_best"),
        (dict(keep_best="bleu"), "keep_best"),  # Needs validation BLEU.
        (dict(final_model="mean"), "final_model"),
        (dict(final_model="best"), "final_model"),  # Needs keep_best.
        (dict(final_model="average", ema_decay=0.999), "final_model"),
        (dict(eval_every_steps=0, valid_bleu_sentences=10), "eval_every_steps"),
        (dict(eval_every_steps=100), "eval_every_steps"),  # BLEU is off.
        (dict(valid_bleu_sentences=-1), "valid_bleu_sentences"),
        (dict(train_src="a", train_tgt="b", keep_best="loss"), "keep_best"),
        (dict(average_last_n=[]), "average_last_n"),
        (dict(average_last_n=[3, 0]), "average_last_n"),
        (dict(average_last_n=0), "average_last_n"),
        # A list chooses the average on validation BLEU: it needs the
        # final model to be an average, and validation files for your data.
        (dict(average_last_n=[3, 5], keep_best="loss"), "average_last_n"),
        (dict(average_last_n=[3, 5], ema_decay=0.999), "average_last_n"),
        (dict(average_last_n=[3, 5], train_src="a", train_tgt="b"), "average_last_n"),
    ],
)
@pytest.mark.backend_independent
def test_training_keys_are_validated_naming_the_key(values, key):
    with pytest.raises(ValueError, match=key):
        TrainConfig(**values)


@pytest.mark.backend_independent
def test_training_keys_accept_good_values_and_resolve_the_final_model():
    assert TrainConfig().resolved().final_model == "average"
    assert TrainConfig(ema_decay=0.999).resolved().final_model == "last"
    config = TrainConfig(
        train_src="a", train_tgt="b", valid_src="c", valid_tgt="d", accumulate_steps=8,
        ema_decay=0.9999, valid_bleu_sentences=None, eval_every_steps=500,
        keep_best="bleu", patience=10,
    ).resolved()  # fmt: skip
    assert config.final_model == "best"
    assert config.resolved() == config
    with pytest.raises(TypeError, match="'ema_decay' must be float or null"):
        TrainConfig(ema_decay="high")


@pytest.mark.backend_independent
def test_average_last_n_takes_one_n_or_candidates_to_choose_from():
    assert TrainConfig(average_last_n=5).average_candidates == [5]
    assert TrainConfig().average_candidates is None  # Auto until resolved.
    assert TrainConfig().resolved().average_candidates == [3]
    candidates = [8, 3, 12, 3]
    config = TrainConfig(average_last_n=candidates)
    candidates.append(1)  # The config keeps its own copy.
    assert config.average_last_n == [8, 3, 12, 3]
    assert config.average_candidates == [3, 8, 12]
    assert parse_overrides(["average_last_n=3,5,8"]).average_last_n == [3, 5, 8]
    assert parse_overrides(["average_last_n=[3, 5]"]).average_last_n == [3, 5]
    assert parse_overrides(["average_last_n=4"]).average_last_n == 4
    with pytest.raises(TypeError, match="'average_last_n' must be int or a list of int"):
        parse_overrides(["average_last_n=3,five"])
    with pytest.raises(TypeError, match="'average_last_n' must be int or a list of int"):
        TrainConfig(average_last_n=[3, True])


@pytest.mark.backend_independent
def test_every_key_but_two_is_a_train_flag_and_old_spellings_still_work():
    from keras_transformer.cli.main import _train_config
    from keras_transformer.cli.main import build_parser

    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]
    flags = {action.dest: action.option_strings for action in train._actions}
    for name in TrainConfig.field_names():
        if name in ("model_overrides", "backend"):  # --set model_overrides.X=, --backend
            continue
        assert "--" + name.replace("_", "-") in flags[name], name
    assert "--lr-scale" in flags["learning_rate_scale"]
    assert "--time-budget" in flags["time_budget_minutes"]

    args = parser.parse_args(
        ["train", "--lr-scale", "0.5", "--time-budget", "2", "--accumulate-steps", "4",
         "--ema-decay", "0.999", "--valid-bleu-sentences", "null", "--keep-best", "bleu",
         "--patience", "3", "--eval-every-steps", "50", "--jit-compile", "false",
         "--verbose", "2", "--train-src", "a.en", "--train-tgt", "a.de",
         "--valid-src", "v.en", "--valid-tgt", "v.de"]
    )  # fmt: skip
    config = _train_config(args)
    assert (config.learning_rate_scale, config.time_budget_minutes) == (0.5, 2.0)
    assert (config.accumulate_steps, config.ema_decay) == (4, 0.999)
    assert config.valid_bleu_sentences is None and config.keep_best == "bleu"
    assert (config.patience, config.eval_every_steps) == (3, 50)
    assert config.jit_compile is False and config.verbose == 2
    config = _train_config(parser.parse_args(["train", "--average-last-n", "3,5,8"]))
    assert config.average_last_n == [3, 5, 8]
    with pytest.raises(ValueError, match="accumulate_steps"):
        _train_config(parser.parse_args(["train", "--accumulate-steps", "0"]))
    with pytest.raises(TypeError, match="'epochs' must be int"):
        _train_config(parser.parse_args(["train", "--epochs", "many"]))


REGISTERED = """
import keras_transformer as kt
import keras
for name in ("Transformer", "MultiHeadAttention", "LabelSmoothedCrossEntropy",
             "MaskedTokenAccuracy", "TransformerSchedule", "TransformerTokenizer",
             "TransformerSeq2SeqLM", "TransformerSeq2SeqLMPreprocessor"):
    assert keras.saving.get_registered_object("keras_transformer>" + name), name
from keras_transformer import Transformer, layers
assert kt.Transformer is Transformer and kt.layers is layers
print("ok")
"""


def run_python(code, *args):
    import subprocess
    import sys

    root = REPO_ROOT
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


LOAD_AFTER_IMPORT_ORDER = """
import sys
import keras_transformer as kt
import keras
assert keras.saving.get_registered_object("keras_transformer>Transformer")
model = keras.saving.load_model(sys.argv[1])  # safe_mode: no custom_objects
assert type(model).__name__ == "Transformer", type(model)
print("ok")
"""


def test_importing_the_package_registers_its_keras_classes_and_a_keras_file_loads():
    """``import keras_transformer`` alone registers every serializable class;
    after importing the package, then keras, a .keras file loads (a fresh
    process, so no other test's imports help; both checks in one)."""
    path = os.path.join(FIXTURES, "transformer_keras_model.keras")
    run_python(REGISTERED + LOAD_AFTER_IMPORT_ORDER, path)


@pytest.mark.backend_independent
def test_the_wmt14_recipe_holds_the_papers_base_setting():
    """examples/wmt14_en_de_base.yaml (docs/wmt14.md): the paper's §5-6 values."""
    config = TrainConfig.from_file(
        os.path.join(REPO_ROOT, "examples", "wmt14_en_de_base.yaml")
    ).replace(train_src="t.en", train_tgt="t.de", valid_src="v.en", valid_tgt="v.de")
    config = config.resolved()
    assert (config.preset, config.vocabulary_size) == ("base", 37000)
    assert 24000 <= config.tokens_per_batch * config.accumulate_steps <= 26000
    assert (config.warmup_steps, config.max_steps, config.label_smoothing) == (4000, 100000, 0.1)
    assert (config.final_model, config.average_last_n) == ("average", 5)
    assert (config.beam_size, config.alpha, config.max_extra_length) == (4, 0.6, 50)
