"""Each example runs as a user would run it (short settings) and writes its
outputs. The examples are backend-agnostic scripts, so they run once per
suite, under the PyTorch backend, whose suite is the shortest (quickstart
also reloads its model under TensorFlow)."""

import json
import os
import subprocess
import sys

import keras
import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.slow

EXAMPLES = os.path.join(REPO_ROOT, "examples")


@pytest.fixture(autouse=True)
def _once_per_suite():
    if keras.backend.backend() != "torch":
        pytest.skip("examples run once per suite, under the torch backend")


# Runs example scripts' main(argv) one after another in this process: as
# `python SCRIPT ARGS...` would (each must return a true value, its exit
# status 0), printing one JSON line: the list of their stdouts.
RUN_CLIENTS = """
import contextlib, io, json, runpy, sys
outputs = []
for path, argv in json.loads(sys.argv[1]):
    main = runpy.run_path(path)["main"]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(argv), path
    outputs.append(stdout.getvalue())
print(json.dumps(outputs))
"""


def run_example(name, args, cwd):
    env = dict(os.environ, KERAS_BACKEND="torch", TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, name)] + args,
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


def test_quickstart_trains_translates_and_reloads_under_another_backend(tmp_path):
    out = run_example(
        "quickstart.py",
        ["--epochs", "1", "--output-dir", str(tmp_path / "run"), "--reload-backend", "tensorflow"],
        tmp_path,
    )
    assert "reloaded under tensorflow: same translations" in out
    assert os.path.getsize(tmp_path / "run" / "model.keras") > 0


def test_visualize_writes_non_empty_plots(tmp_path):
    out = run_example("visualize.py", ["--output-dir", str(tmp_path / "plots"), "--steps", "10"], tmp_path)
    for name in (
        "positional_encoding.png",
        "learning_rate.png",
        "training_curves.png",
        "encoder_self_attention.png",
        "decoder_cross_attention.png",
    ):
        path = tmp_path / "plots" / name
        assert path.exists() and path.stat().st_size > 5000, (name, out[-1000:])


def test_export_and_serve(tmp_path):
    out = run_example(
        "export_and_serve.py",
        ["--export-dir", str(tmp_path / "export"), "--steps", "10", "--beam-size", "2", "twenty-one"],
        tmp_path,
    )
    assert "'twenty-one' ->" in out
    assert (tmp_path / "export" / "1" / "saved_model.pb").exists()
    served = [line for line in out.splitlines() if line.startswith("'twenty-one' ->")]
    translation = served[0].split(" -> ", 1)[1].rsplit(" (score", 1)[0]

    # The REST and gRPC clients of docs/serving.md, without a server: their
    # requests answered by the SavedModel in a fresh TensorFlow-only process
    # (one for both clients: each script's main(argv), as its command line
    # runs it; each loads the SavedModel itself).
    version_dir = str(tmp_path / "export" / "1")
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    clients = [
        (os.path.join(EXAMPLES, name), ["--saved-model", version_dir, "twenty-one", "nine"])
        for name in ("rest_client.py", "grpc_client.py")
    ]
    result = subprocess.run(
        [sys.executable, "-c", RUN_CLIENTS, json.dumps(clients)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    rest, grpc = json.loads(result.stdout.strip().splitlines()[-1])
    rest = json.loads(rest.splitlines()[-1])
    assert [p["translations"] for p in rest["predictions"]][0] == eval(translation)
    assert len(rest["predictions"]) == 2 and isinstance(rest["predictions"][1]["scores"], float)
    assert f"'twenty-one' -> {translation}" in grpc
    assert grpc.count(" -> ") == 2


def test_train_translation_on_files(tmp_path):
    from keras_transformer.data import write_default_task

    data = tmp_path / "data"
    paths = write_default_task(str(data), num_train=600, num_valid=50, num_test=50)
    # The Multi30k layout: <split>.<lang>.gz is what the script looks for;
    # plain-text files under those names are read as well.
    names = {"train": "train", "valid": "val", "test": "test_2016_flickr"}
    for split, (en, de) in paths.items():
        os.rename(en, data / f"{names[split]}.en.gz")
        os.rename(de, data / f"{names[split]}.de.gz")
    out = run_example(
        "train_translation.py",
        ["--data", str(data), "--max-steps", "10", "--output-dir", str(tmp_path / "run"), "--preset", "tiny",
         "--vocabulary-size", "200"],
        tmp_path,
    )
    assert "BLEU" in out
    assert (tmp_path / "run" / "model.weights.h5").exists()
