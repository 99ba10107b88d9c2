"""The ``keras-transformer`` command (also ``python -m keras_transformer``).

Thin on purpose: it parses arguments (`keras_transformer.cli.parser`),
selects the Keras backend, and runs a subcommand
(`keras_transformer.cli.commands`), which calls the library.

The backend comes from ``--backend``, else the training config's
``backend`` key, else ``KERAS_BACKEND``. Keras reads it once, when it is
first imported. The console script starts in `keras_transformer.cli.startup`,
which parses the arguments and sets ``KERAS_BACKEND`` from ``--backend``
before this module (and with it Keras and the library) is imported. Where
Keras runs on another backend all the same (``main(argv)`` called from
Python, ``python -m keras_transformer``, a training config's ``backend:``),
the command runs itself again with ``KERAS_BACKEND`` set (replacing the
process with ``os.execve``; one more interpreter start).

Under JAX, ``train``, ``translate``, ``evaluate`` and ``score`` keep their
compiled functions on disk (JAX's persistent compilation cache, in
``~/.cache/keras_transformer/jax``; ``KERAS_TRANSFORMER_COMPILATION_CACHE``
names another directory, or ``0`` turns it off; ``JAX_COMPILATION_CACHE_DIR``
wins when set): the next run of the same model loads them instead of
compiling (`enable_compilation_cache`), and ``train`` ends by compiling
``translate``'s search for one sentence of its new model there.

Every failure ends in one line, ``keras-transformer <command>: error: ...``
naming the file or argument at fault, and a non-zero exit code (2 for bad
arguments or configs, 1 for everything else); ``--debug`` shows the
traceback instead.
"""

import os
import subprocess
import sys
import zipfile

import keras

# The library's Keras classes register as these import (the command's
# launcher imports the package without them, `keras_transformer.cli.startup`).
from keras_transformer import layers, models, objectives  # noqa: F401
from keras_transformer.cli.commands import _COMMANDS
from keras_transformer.cli.parser import _REEXEC_MARKER, build_parser
from keras_transformer.cli.train_command import _train_config
from keras_transformer.utils.dependencies import MissingDependencyError


def _requested_backend(args):
    backend = getattr(args, "backend", None)
    if backend is None and args.command == "train":
        backend = _train_config(args).backend
    return backend or os.environ.get("KERAS_BACKEND")


def _ensure_backend(backend, argv, replace_process):
    """Returns None when Keras runs on ``backend``, else the re-run's exit code.

    With ``replace_process`` (the real command line) the re-run replaces this
    process (``os.execve``); otherwise (``main(argv)`` called from Python) it
    runs as a child process.
    """
    if backend is None or keras.config.backend() == backend:
        return None
    if os.environ.get(_REEXEC_MARKER):
        raise RuntimeError(
            f"Could not switch Keras to the {backend!r} backend (it runs on "
            f"{keras.config.backend()!r}); is ~/.keras/keras.json overriding it?"
        )
    env = dict(os.environ, KERAS_BACKEND=backend, **{_REEXEC_MARKER: "1"})
    command = [sys.executable, "-m", "keras_transformer", *argv]
    if replace_process:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, command, env)
    return subprocess.run(command, env=env).returncode


# The commands whose compilations are kept on disk under JAX.
_CACHED_COMMANDS = ("train", "translate", "evaluate", "score")
COMPILATION_CACHE_VARIABLE = "KERAS_TRANSFORMER_COMPILATION_CACHE"


def compilation_cache_directory(environ=None):
    """The directory of the on-disk compilation cache, or None when
    ``KERAS_TRANSFORMER_COMPILATION_CACHE`` turns it off (``0``, ``off``)."""
    environ = os.environ if environ is None else environ
    setting = environ.get(COMPILATION_CACHE_VARIABLE, "").strip()
    if setting.lower() in ("0", "off", "false", "no"):
        return None
    if setting:
        return setting
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "keras_transformer", "jax")


def enable_compilation_cache(command):
    """Turns on JAX's persistent compilation cache for ``command`` (one of
    `_CACHED_COMMANDS`, under the JAX backend); returns its directory, or
    None where it stays off.

    Each compiled function (the beam search of each batch shape, the
    model's variable initializers) is written there, keyed by the program
    and the JAX version, and read back by the next process that compiles the
    same program: a second ``translate`` with the same model starts without
    compiling. A directory that cannot be created leaves the cache off.
    """
    if keras.config.backend() != "jax" or command not in _CACHED_COMMANDS:
        return None
    import jax

    if jax.config.jax_compilation_cache_dir:  # JAX_COMPILATION_CACHE_DIR
        return jax.config.jax_compilation_cache_dir
    directory = compilation_cache_directory()
    if directory is None:
        return None
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", directory)
    # Every compilation: the small ones (initializers) add up at start-up.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return directory


# Errors a user can cause (bad files, arguments, directories, a feature's
# missing dependency): their message is the whole story. Anything else is
# reported as an internal error.
_USER_ERRORS = (
    ValueError, OSError, zipfile.BadZipFile, RuntimeError, EOFError, MissingDependencyError,
)


def _error_message(error):
    """The error as one line (user errors: their message; others: type and message)."""
    if isinstance(error, _USER_ERRORS):
        message = str(error) or type(error).__name__
    else:
        message = f"internal error: {type(error).__name__}: {error}"
    message = " ".join(message.split())
    return message if len(message) <= 2000 else message[:2000] + " ..."


def main(argv=None):
    """Runs the command line ``argv`` (default: ``sys.argv[1:]``); returns its exit code.

    Errors end in one line on stderr and ``SystemExit`` with code 2 (bad
    arguments or configuration) or 1; ``--debug`` (or the environment
    variable ``KERAS_TRANSFORMER_TRACEBACK=1``) re-raises them instead.
    """
    replace_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    return run(parser, parser.parse_args(argv), argv, replace_process)


def run(parser, args, argv, replace_process):
    """Runs the parsed command ``args`` (of ``argv``, parsed by ``parser``);
    returns its exit code. ``replace_process``: the real command line, whose
    backend switch replaces the process (else it runs a child process)."""
    debug = getattr(args, "debug", False) or bool(
        os.environ.get("KERAS_TRANSFORMER_TRACEBACK")
    )
    prefix = f"keras-transformer {args.command}: error: "
    hint = "" if debug else " (--debug shows the traceback)"
    try:
        # Configuration errors (unknown keys, wrong types) stop here.
        backend = _requested_backend(args)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except Exception as error:
        if debug:
            raise
        parser.exit(2, f"{prefix}{_error_message(error)}\n")
    try:
        code = _ensure_backend(backend, argv, replace_process)
        if code is not None:
            return code
        if replace_process:  # the command line, not main(argv) from Python
            enable_compilation_cache(args.command)
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except Exception as error:
        if debug:
            raise
        message = _error_message(error)
        if not isinstance(error, _USER_ERRORS):
            message += hint
        parser.exit(1, f"{prefix}{message}\n")


if __name__ == "__main__":
    sys.exit(main())
