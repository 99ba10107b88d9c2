"""The README's keras-hub user story runs as written (issue #14).

The two blocks after the ``<!-- readme-story:... -->`` markers are run as a
user would: the Python block as a script (load a trained preset, generate,
fine-tune in full and with LoRA, save a new preset, generate; in the suite's
process), then the shell block, which reloads the new preset under JAX in a
fresh process. Only the model path changes: the committed
trained preset (tests/fixtures/numbers_preset) stands in for ``runs/numbers``.

Like the examples, it runs once per suite (under the PyTorch backend, so
that the reload crosses backends).
"""

import os
import re
import runpy
import shlex
import subprocess
import sys

import keras
import pytest

from conftest import REPO_ROOT

NUMBERS_PRESET = os.path.join(REPO_ROOT, "tests", "fixtures", "numbers_preset")


def readme_block(marker):
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    match = re.search(
        rf"<!-- readme-story:{marker} -->\s*```{marker}\n(.*?)```", text, flags=re.DOTALL
    )
    assert match, f"README.md has no block after <!-- readme-story:{marker} -->"
    return match.group(1)


def run(command, cwd, backend):
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return [line for line in result.stdout.splitlines() if line.startswith("[")]


def test_readme_user_story_runs_and_reloads_under_another_backend(tmp_path, monkeypatch, capsys):
    if keras.config.backend() != "torch":
        pytest.skip("the README story runs once per suite, under the torch backend")
    python = readme_block("python")
    assert python.count('"runs/numbers"') == 1
    assert len([line for line in python.splitlines() if line.strip()]) == 10
    script = tmp_path / "story.py"
    script.write_text(python.replace('"runs/numbers"', repr(NUMBERS_PRESET)))
    # The Python block runs as a script in this (PyTorch) process, from the
    # directory it writes into; the reload below is a fresh JAX process.
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert len(printed) == 2, printed
    before, after = (eval(line) for line in printed)  # printed lists of str
    assert before == ["dreihundertzwölf", "zweiundvierzig"]
    assert all(isinstance(t, str) and t for t in after)
    assert os.path.isfile(tmp_path / "presets" / "numbers_v2" / "model.weights.h5")

    bash = readme_block("bash")
    assert bash.startswith("KERAS_BACKEND=jax python ")
    command = shlex.split(bash.replace("\\\n", " "))
    assert command[1] == "python"
    reloaded = run([sys.executable] + command[2:], tmp_path, "jax")
    assert [eval(line) for line in reloaded] == [after]
