"""The ``keras-transformer`` command's start: the arguments first, the library after.

The console script (``keras_transformer.cli.startup:main``) calls `main`.
The package is then imported without its library (``keras_transformer``'s
``__init__`` sees the command's name in ``sys.argv[0]``), so `main` parses
the arguments with the parser alone, which is pure Python (`keras_transformer.options`, the
training config's fields): ``--help`` and argument errors answer without
Keras or TensorFlow. Before the library is imported, it

* sets ``KERAS_BACKEND`` from ``--backend``: Keras reads it once, when first
  imported, so the command does not need to run itself again (`cli.main`
  still does where Keras was imported before, e.g. ``main(argv)`` from
  Python, or where a training config names the backend);
* keeps TensorFlow's C++ log quiet (the lines it writes at import: cuInit,
  oneDNN, cpu_feature_guard), unless the user set ``TF_CPP_MIN_LOG_LEVEL``
  (then TensorFlow shows what it says) or passed ``--tf-log`` (everything
  is shown, as TensorFlow would by default). ``TF_CPP_MIN_LOG_LEVEL=3``
  hides the log of a running program; the lines TensorFlow 2.16 and later
  write while loading its libraries come before ``absl::InitializeLog()``
  and ignore it, so the library's import runs with the process' stderr
  (file descriptor 2) sent to ``/dev/null`` (Python's errors are exceptions,
  raised after it is restored).

Then it imports `COMMAND_MODULE` (which imports the library and registers
its Keras classes) by name and runs the subcommand there.
``tests/test_layering.py`` holds the module names of such tables to the
layers like imports.
"""

import contextlib
import importlib
import os
import sys

from keras_transformer.cli.parser import build_parser

# The module that runs a parsed command (it imports the library).
COMMAND_MODULE = "keras_transformer.cli.main"
TF_LOG_VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
# Fatal errors only: TensorFlow's C++ INFO, WARNING and ERROR lines are hidden
# (on a machine without a GPU it logs cuInit's failure as an ERROR; its real
# errors reach Python as exceptions).
QUIET_TF_LOG_LEVEL = "3"


@contextlib.contextmanager
def _native_stderr_silenced(silence):
    """Sends file descriptor 2 to /dev/null for the block (with ``silence``)."""
    if not silence:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def prepare_environment(args, environ=None, keras_imported=None):
    """Sets ``KERAS_BACKEND`` (from ``--backend``) and TensorFlow's log level
    in ``environ`` (default ``os.environ``) where Keras is not imported yet
    (``keras_imported``; default: whether it is in ``sys.modules``); returns
    whether TensorFlow's import should be silenced."""
    environ = os.environ if environ is None else environ
    if keras_imported is None:
        keras_imported = "keras" in sys.modules
    if keras_imported:
        return False
    backend = getattr(args, "backend", None)
    if backend is not None:
        environ["KERAS_BACKEND"] = backend
    if TF_LOG_VARIABLE in environ or getattr(args, "tf_log", False):
        return False  # The user chose what TensorFlow shows.
    environ[TF_LOG_VARIABLE] = QUIET_TF_LOG_LEVEL
    return True


def main(argv=None):
    """Runs the command line ``argv`` (default: ``sys.argv[1:]``); returns
    its exit code (see `keras_transformer.cli.main.main`)."""
    replace_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)  # --help and bad arguments end here.
    silence = prepare_environment(args)
    with _native_stderr_silenced(silence):
        command = importlib.import_module(COMMAND_MODULE)
    return command.run(parser, args, argv, replace_process)
