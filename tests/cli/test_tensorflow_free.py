"""The command line under JAX and PyTorch on a machine without TensorFlow.

One child process, where ``tensorflow`` and ``tensorflow_text`` cannot be
imported (as if not installed), runs ``train`` on the number-words task
(shrunk to a few updates of a tiny model), then ``translate``, ``evaluate``,
``score``, ``average-checkpoints``, ``info`` and ``export`` (which must say,
in one line, that the SavedModel needs TensorFlow) with the run it wrote
(a keras-hub preset too, read without keras-hub).
A second child, with TensorFlow installed but keras-hub not, translates and
checks that the package itself imported no TensorFlow under JAX or PyTorch.
"""

import json
import os
import subprocess
import sys

import keras
import pytest

from conftest import REPO_ROOT

CHILD = """
import sys

for name in ("tensorflow", "tensorflow_text"):
    sys.modules[name] = None  # importing them raises ImportError
import keras
from keras_transformer.cli.main import main


def run(*argv):
    print("=== " + argv[0], flush=True)
    try:
        code = main(list(argv))
    except SystemExit as exit:
        code = exit.code
    print(f"=== exit {code}", flush=True)


run_dir, workdir = sys.argv[1], sys.argv[2]
tiny = ["model_overrides.num_layers=1", "model_overrides.d_model=32",
        "model_overrides.num_heads=2", "model_overrides.d_ff=64", "warmup_steps=10",
        "verbose=0"]
run("train", "--output-dir", run_dir, "--vocabulary-size", "128", "--max-length", "8",
    "--tokens-per-batch", "256", "--epochs", "2", "--steps-per-epoch", "3",
    "--eval-sentences", "4", "--beam-size", "1", "--backend", keras.config.backend(),
    *[arg for value in tiny for arg in ("--set", value)])
run("translate", "--model-dir", run_dir, "--input", f"{workdir}/input.en",
    "--beam-size", "2", "--max-extra-length", "8")
run("evaluate", "--model-dir", run_dir, "--max-sentences", "8", "--beam-size", "2",
    "--max-extra-length", "8")
run("score", "--model-dir", run_dir, "--src", f"{workdir}/input.en",
    "--tgt", f"{workdir}/input.de")
run("average-checkpoints", f"{run_dir}/checkpoints", "--last-n", "2",
    "--output", f"{workdir}/averaged.keras")
run("info")
run("export", "--model-dir", run_dir, "--export-dir", f"{workdir}/exported")
loaded = sorted(name for name, module in sys.modules.items()
                if name.split(".")[0] in ("tensorflow", "tensorflow_text") and module)
print("=== tensorflow modules loaded:", loaded, flush=True)
"""


# TensorFlow installed, keras-hub not (keras-hub imports TensorFlow whenever
# it is installed): the package's own translate path must not import it.
TRANSLATE_WITH_TENSORFLOW_INSTALLED = """
import sys

sys.modules["keras_hub"] = None
from keras_transformer.cli.main import main

code = main(["translate", "--model-dir", sys.argv[1], "--beam-size", "1"])
loaded = sorted(name for name, module in sys.modules.items()
                if name.split(".")[0] in ("tensorflow", "tensorflow_text") and module)
print("=== tensorflow modules loaded:", loaded, flush=True)
sys.exit(code)
"""


def _sections(stdout):
    """{command: (its stdout lines, exit code)} of the child's output."""
    sections, name, lines = {}, None, []
    for line in stdout.split("\n"):
        if line.startswith("=== exit "):
            sections[name] = (lines, line[len("=== exit "):])
            name, lines = None, []
        elif line.startswith("=== "):
            name = line[len("=== "):]
        elif name is not None:
            lines.append(line)
    return sections


@pytest.mark.skipif(
    keras.config.backend() == "tensorflow", reason="the TensorFlow backend needs TensorFlow"
)
def test_train_translate_evaluate_without_tensorflow(tmp_path):
    (tmp_path / "input.en").write_text("twenty-one\n\nthree hundred forty-five\n")
    (tmp_path / "input.de").write_text("einundzwanzig\n\ndreihundertfünfundvierzig\n")
    run_dir = tmp_path / "run"
    env = dict(
        os.environ,
        KERAS_BACKEND=keras.config.backend(),
        PYTHONPATH=os.pathsep.join([REPO_ROOT, os.path.join(REPO_ROOT, "tests")]),
    )
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(run_dir), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    sections = _sections(done.stdout)
    for command in ("train", "translate", "evaluate", "score", "average-checkpoints", "info"):
        assert sections[command][1] == "0", (command, done.stdout[-2000:], done.stderr[-3000:])
    for name in ("model.weights.h5", "vocab.spm", "train_config.json"):
        assert (run_dir / name).is_file(), name
    assert not (run_dir / "model.keras").exists()  # The weights once.
    # The run is a keras-hub preset too, written without keras-hub; the
    # commands below read it as one (its backbone config and weights).
    for name in ("model.weights.h5", "task.json", "tokenizer.json", "preprocessor.json"):
        assert (run_dir / name).is_file(), name
    backbone = json.loads((run_dir / "config.json").read_text())
    assert backbone["registered_name"] == "keras_transformer>TransformerBackbone"

    # One translation line per input line, the blank line kept blank.
    translations = sections["translate"][0]
    assert len(translations) == 3 and translations[1] == "", translations
    report = "\n".join(sections["evaluate"][0])
    assert "Exact match on the default task test:" in report and "of 8 sentences" in report
    assert "cased detokenized sacreBLEU:" in report, report
    scores = [line for line in sections["score"][0] if line]
    assert len(scores) == 3 and all(float(s) < 0 for s in scores), scores
    assert (tmp_path / "averaged.keras").is_file()
    assert f"backend: {keras.config.backend()}" in "\n".join(sections["info"][0])

    # The SavedModel export refuses in one line, saying what to install.
    assert sections["export"][1] == "1"
    errors = [line for line in done.stderr.splitlines() if "keras-transformer export" in line]
    assert len(errors) == 1 and "needs tensorflow" in errors[0], done.stderr[-3000:]
    assert "pip install tensorflow" in errors[0] and "Traceback" not in done.stderr
    assert "tensorflow modules loaded: []" in done.stdout

    done = subprocess.run(
        [sys.executable, "-c", TRANSLATE_WITH_TENSORFLOW_INSTALLED, str(run_dir)],
        input="twenty-one\n", cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tensorflow modules loaded: []" in done.stdout, done.stdout[-2000:]
