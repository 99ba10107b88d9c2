"""Tests for keras_transformer.run_directory: one run per directory, atomic writes."""

import json
import os

import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.training import run_directory
from keras_transformer.utils import file_io
from keras_transformer.training.run_directory import RunDirectory
from keras_transformer.training.run_directory import RunDirectoryError


def strict_json(path):
    """Parses ``path`` as strict JSON (NaN/Infinity are errors)."""

    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant} in {path}")

    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse)


def tiny_model():
    return Transformer(vocabulary_size=24, num_layers=1, d_model=16, num_heads=2, d_ff=32)


CONFIG = {"output_dir": "runs/x", "epochs": 2, "vocabulary_size": 128}


def write_run(path, config=CONFIG, finished=False, backup=False, config_file="config.json"):
    """A run directory; by default of earlier versions, whose TrainConfig
    is config.json (today's runs write train_config.json)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / config_file).write_text(json.dumps(config))
    (path / "vocab.spm").write_bytes(b"vocab")
    if finished:
        (path / "model.keras").write_bytes(b"model")
        (path / "results.json").write_text("{}")
    if backup:
        (path / "backup").mkdir()
        (path / "backup" / "training_metadata.json").write_text('{"epoch": 1}')
        tiny_model().save_weights(str(path / "backup" / "latest.weights.h5"))


def contents(path):
    """{relative path: bytes} of every file under ``path``."""
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                files[os.path.relpath(full, path)] = f.read()
    return files


def test_non_finite_numbers_are_written_as_null(tmp_path):
    path = tmp_path / "results.json"
    file_io.atomic_write_json(
        path, {"loss": float("nan"), "scores": [1.5, float("inf")], "n": np.float32(2)}
    )
    assert strict_json(path) == {"loss": None, "scores": [1.5, None], "n": 2.0}
    assert os.listdir(tmp_path) == ["results.json"]  # No temporary file left.


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "results.json"
    file_io.atomic_write_json(path, {"good": 1})
    with pytest.raises(TypeError):
        file_io.atomic_write_json(path, {"bad": object()})
    assert strict_json(path) == {"good": 1}
    assert os.listdir(tmp_path) == ["results.json"]


def test_non_finite_weights_never_replace_a_good_file(tmp_path):
    model = tiny_model()
    path = tmp_path / "epoch_001.weights.h5"
    file_io.save_weights(model, path)
    good = path.read_bytes()
    variable = model.weights[0]
    variable.assign(np.full(variable.shape, np.nan, "float32"))
    with pytest.raises(ValueError, match="non-finite.*" + variable.path):
        file_io.save_weights(model, path)
    with pytest.raises(ValueError, match="non-finite"):
        file_io.save_model(model, tmp_path / "model.keras")
    assert path.read_bytes() == good
    # The good file and its checksum; no temporary file left.
    assert sorted(os.listdir(tmp_path)) == ["epoch_001.weights.h5", "epoch_001.weights.h5.sha256"]


def test_path_spelling_does_not_matter(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spellings = ["runs/x", "runs/x/", "./runs/x", "runs//x", str(tmp_path / "runs" / "x")]
    assert len({RunDirectory(path).path for path in spellings}) == 1
    write_run(tmp_path / "runs" / "x", backup=True)
    # The output_dir saved in config.json is not compared: a resume under
    # another spelling (or after `mv`) is the same run.
    for path in spellings:
        assert RunDirectory(path).claim(dict(CONFIG, output_dir=path)) == "resume"


def test_empty_missing_or_vocabulary_only_directories_start_a_new_run(tmp_path):
    assert RunDirectory(tmp_path / "missing").claim(CONFIG) == "new"
    assert RunDirectory(tmp_path).claim(CONFIG) == "new"
    (tmp_path / "vocab.spm").write_bytes(b"vocab")  # A vocabulary to reuse.
    assert RunDirectory(tmp_path).claim(CONFIG) == "new"
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))  # Killed early.
    assert RunDirectory(tmp_path).claim(CONFIG) == "new"


@pytest.mark.parametrize(
    "setup, reason",
    [
        (lambda p: write_run(p, finished=True), "finished run"),
        (lambda p: write_run(p, backup=True, config=dict(CONFIG, vocabulary_size=64)),
         "other settings \\(vocabulary_size: 64 -> 128\\)"),
        (lambda p: (p.mkdir(), (p / "notes.txt").write_text("mine")), "holds no run.*notes.txt"),
        (lambda p: (write_run(p), (p / "checkpoints").mkdir(),
                    (p / "checkpoints" / "epoch_003.weights.h5").write_bytes(b"x")),
         "no backup"),
    ],
    ids=["finished", "other-settings", "foreign", "checkpoints-without-backup"],
)  # fmt: skip
def test_another_run_is_refused_and_overwrite_moves_it_aside(tmp_path, setup, reason):
    path = tmp_path / "run"
    setup(path)
    before = contents(path)
    with pytest.raises(RunDirectoryError, match=reason):
        RunDirectory(path).claim(CONFIG, may_change={"epochs"})
    assert contents(path) == before  # Refused: nothing touched.

    run = RunDirectory(str(path) + "/")
    assert run.claim(CONFIG, may_change={"epochs"}, overwrite=True) == "new"
    assert not path.exists()
    assert run.moved_to.startswith(str(path) + ".old-")
    assert contents(run.moved_to) == before  # Moved whole, never mixed.


def test_a_resumable_change_resumes(tmp_path):
    write_run(tmp_path, backup=True)
    changed = dict(CONFIG, epochs=5)
    assert RunDirectory(tmp_path).claim(changed, may_change={"epochs"}) == "resume"
    with pytest.raises(RunDirectoryError, match="epochs: 2 -> 5"):
        RunDirectory(tmp_path).claim(changed)


def test_a_truncated_backup_is_refused_naming_the_file(tmp_path):
    write_run(tmp_path, backup=True)
    weights = tmp_path / "backup" / "latest.weights.h5"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(RunDirectoryError, match="latest.weights.h5.*truncated"):
        RunDirectory(tmp_path).claim(CONFIG)
    # BackupAndRestore(double_checkpoint=True) falls back to the older copy.
    (tmp_path / "backup" / "latest.weights.h5.bkp").write_bytes(data)
    assert RunDirectory(tmp_path).claim(CONFIG) == "resume"


def test_load_model_errors_name_the_file(tmp_path):
    model_path = tmp_path / "model.keras"
    tiny_model().save(str(model_path))
    data = model_path.read_bytes()
    model_path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="model.keras.*not a valid .keras file") as info:
        file_io.load_model(model_path)
    assert "File not found" not in str(info.value)
    with pytest.raises(FileNotFoundError, match="missing.keras"):
        file_io.load_model(tmp_path / "missing.keras")


def test_a_run_started_before_new_config_keys_existed_can_resume(tmp_path):
    """config.json of an older version lacks the keys added since; the run
    used their defaults, so it is the same run (issue #15's new keys)."""
    from keras_transformer import TrainConfig
    from keras_transformer.training.trainer import _claim

    config = TrainConfig(output_dir=str(tmp_path / "run"), epochs=3).resolved()
    saved = config.to_dict()
    for key in ("accumulate_steps", "ema_decay", "keep_best", "patience", "final_model"):
        saved.pop(key)
    write_run(tmp_path / "run", config=saved)
    run = RunDirectory(tmp_path / "run")
    assert _claim(run, config, overwrite=False, verbose=0) == run_directory.NEW
    # A key that differs from what the old run used still refuses.
    with pytest.raises(RunDirectoryError, match=r"accumulate_steps: 1 -> 2"):
        _claim(run, config.replace(accumulate_steps=2), overwrite=False, verbose=0)


# A keras-hub preset's config.json, which a finished run of today holds
# beside its train_config.json.
BACKBONE_CONFIG = {
    "module": "keras_transformer.models.transformer.transformer_backbone",
    "class_name": "TransformerBackbone",
    "config": {"vocabulary_size": 128},
    "registered_name": "keras_transformer>TransformerBackbone",
}


@pytest.mark.parametrize("config_file", ["train_config.json", "config.json"])
def test_runs_of_today_and_of_earlier_versions_are_claimed_alike(tmp_path, config_file):
    run = tmp_path / "run"
    write_run(run, backup=True, config_file=config_file)
    assert RunDirectory(run).saved_config_path() == str(run / config_file)
    assert RunDirectory(run).claim(dict(CONFIG, epochs=5), may_change={"epochs"}) == "resume"
    with pytest.raises(RunDirectoryError, match="vocabulary_size: 128 -> 64"):
        RunDirectory(run).claim(dict(CONFIG, vocabulary_size=64))
    # Where the run writes its config is train_config.json either way.
    assert RunDirectory(run).config_path == str(run / "train_config.json")


def test_a_preset_config_json_is_not_a_train_config(tmp_path):
    # A finished run of today: config.json is the backbone's, the
    # TrainConfig is train_config.json.
    write_run(tmp_path / "run", finished=True, config_file="train_config.json")
    (tmp_path / "run" / "config.json").write_text(json.dumps(BACKBONE_CONFIG))
    assert RunDirectory(tmp_path / "run").saved_config_path() == str(
        tmp_path / "run" / "train_config.json"
    )
    with pytest.raises(RunDirectoryError, match="finished run"):
        RunDirectory(tmp_path / "run").claim(CONFIG)
    # A preset alone (no train_config.json) holds no run.
    preset = tmp_path / "preset"
    preset.mkdir()
    (preset / "config.json").write_text(json.dumps(BACKBONE_CONFIG))
    assert RunDirectory(preset).saved_config_path() is None
    with pytest.raises(RunDirectoryError, match="holds no run \\(no train_config.json\\)"):
        RunDirectory(preset).claim(CONFIG)
