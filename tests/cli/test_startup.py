"""The command starts fast and quiet (issue 49, item 7).

The console script (``keras_transformer.cli.startup:main``) parses the arguments
before it imports the library: ``--help`` of every subcommand answers
without Keras, TensorFlow, JAX or PyTorch and writes nothing on stderr;
``--backend`` is set before Keras is imported (no second start); TensorFlow's
C++ log stays hidden unless the user set ``TF_CPP_MIN_LOG_LEVEL``.
"""

import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

from keras_transformer.cli.parser import COMMANDS
from keras_transformer.cli.startup import QUIET_TF_LOG_LEVEL, prepare_environment

pytestmark = pytest.mark.backend_independent  # fresh processes that choose their backend

HEAVY = ("keras", "tensorflow", "jax", "torch", "keras_hub", "h5py")
NUMBERS_PRESET = os.path.join(REPO_ROOT, "tests", "fixtures", "numbers_preset")

# As the console script starts: under the command's name, its entry point
# imported (pip's script for ``keras_transformer.cli.startup:main``).
CONSOLE_SCRIPT = """
import sys
commands, sys.argv = sys.argv[1:], ["/venv/bin/keras-transformer", *sys.argv[1:]]
from keras_transformer.cli.startup import main
"""
# Every subcommand's --help in one fresh process started as the console
# script starts; prints the heavy modules then imported.
HELP_OF_EVERY_COMMAND = CONSOLE_SCRIPT + """
import contextlib, io
for command in commands:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main([*command.split(), "--help"])
        except SystemExit as exit:
            assert exit.code == 0, (command, exit.code)
    assert "usage: keras-transformer" in out.getvalue(), command
print(sorted({name.split(".")[0] for name in sys.modules} & set(%r)))
""" % (HEAVY,)


def _run(argv, env=None, stdin=None):
    return subprocess.run(
        [sys.executable, *argv], cwd=REPO_ROOT, env=env, input=stdin,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_help_of_every_subcommand_imports_no_framework_and_is_silent():
    commands = ["", *(command.name for command in COMMANDS)]
    done = _run(["-c", HELP_OF_EVERY_COMMAND, *commands])
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]", done.stdout
    assert done.stderr == ""


def test_translate_sets_the_backend_first_and_prints_no_tensorflow_log():
    """``--backend tensorflow`` under ``KERAS_BACKEND=jax``: Keras starts on
    TensorFlow at once (the re-run marker makes a second start fail), and
    nothing but the translation is printed."""
    env = dict(os.environ, KERAS_BACKEND="jax", KERAS_TRANSFORMER_CLI_REEXEC="1")
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    done = _run(
        ["-c", CONSOLE_SCRIPT + "sys.exit(main())", "translate", "--backend", "tensorflow",
         "--model-dir", NUMBERS_PRESET],
        env=env, stdin="three hundred twelve\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "dreihundertzwölf\n"
    assert done.stderr == ""


def test_the_users_tensorflow_log_level_is_kept():
    class Args:
        backend = "torch"

    environ = {}
    assert prepare_environment(Args(), environ, keras_imported=False) is True
    assert environ == {"KERAS_BACKEND": "torch", "TF_CPP_MIN_LOG_LEVEL": QUIET_TF_LOG_LEVEL}
    environ = {"TF_CPP_MIN_LOG_LEVEL": "0"}  # The user's: shown, not silenced.
    assert prepare_environment(Args(), environ, keras_imported=False) is False
    assert environ == {"KERAS_BACKEND": "torch", "TF_CPP_MIN_LOG_LEVEL": "0"}
    environ = {}  # Keras already runs: nothing to set.
    assert prepare_environment(Args(), environ, keras_imported=True) is False
    assert environ == {}

    class Verbose(Args):
        tf_log = True

    environ = {}  # --tf-log: TensorFlow's own default, everything shown.
    assert prepare_environment(Verbose(), environ, keras_imported=False) is False
    assert environ == {"KERAS_BACKEND": "torch"}


def test_the_command_is_known_by_its_name():
    from keras_transformer import started_as_the_command

    assert started_as_the_command("/venv/bin/keras-transformer")
    assert started_as_the_command("C:/venv/Scripts/keras-transformer.exe")
    assert started_as_the_command("C:/venv/Scripts/keras-transformer-script.py")
    for other in ("/usr/bin/python", "-c", "keras-transformer-tools", "my-keras-transformer", ""):
        assert not started_as_the_command(other), other
