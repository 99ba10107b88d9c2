"""The ``train`` command: the `TrainConfig` of a config file, the flags and
``--set``; the run; and, under JAX, the compilation of the new model's
translation into the on-disk cache.
"""

import os
import signal
import subprocess
import sys
import time

import keras

from keras_transformer.cli.model_flags import _run_config
from keras_transformer.cli.parser import _train_flag_fields
from keras_transformer.training.config import TrainConfig, parse_overrides
from keras_transformer.training.trainer import train
from keras_transformer.training.update_backup import SIGTERM_STOP


def _train_config(args):
    """The `TrainConfig` of ``train``: file, then flags, then --set."""
    if getattr(args, "_config", None) is not None:
        return args._config

    config = TrainConfig.from_file(args.config) if args.config else TrainConfig()
    keys = [field.name for field in _train_flag_fields()]
    flags = {key: getattr(args, key) for key in keys if hasattr(args, key)}
    if "backend" in args:
        flags["backend"] = args.backend
    config = config.replace(**flags)
    config = parse_overrides(args.overrides, config)
    args._config = config
    return config


def _run_train(args):

    result = train(_train_config(args), overwrite=args.overwrite)
    if result.model_path is not None and result.stop_reason != SIGTERM_STOP:
        _fill_translate_cache(result.output_dir)
    if result.stop_reason == SIGTERM_STOP:
        # 128 + SIGTERM, as a shell reports a process that SIGTERM ended: the
        # run is unfinished (a scheduler should run the command again).
        return 128 + signal.SIGTERM
    return 1 if result.stop_reason == "NaN loss" else 0


# A sentence of a few pieces: its search has the shape of every sentence of
# up to 15 pieces (the Translator's first length bucket).
_WARM_UP_SENTENCE = "a"


def _fill_translate_cache(run_dir):
    """Runs ``keras-transformer translate --model-dir RUN_DIR`` once on one
    short sentence, under JAX with the on-disk compilation cache on
    (`keras_transformer.cli.main.enable_compilation_cache`), so that the
    first ``translate`` of the new model reads its compiled functions from
    the cache instead of compiling them.

    A child process runs ``translate`` exactly as the user will (its flag
    parsing, backend selection and cache settings) and takes the loaded
    model's memory with it when it ends. It uses ``translate``'s default flags (the run's
    beam size, alpha and length limit; batch size 1; the first length
    bucket). Nothing is done under another backend or without the cache;
    a model of several target languages is skipped (``translate`` needs
    ``--target-language`` there), and a failure is reported, not raised:
    the run is complete.
    """
    if keras.config.backend() != "jax":
        return
    import jax

    directory = jax.config.jax_compilation_cache_dir
    if not directory:
        return
    run_config = _run_config(run_dir)
    if run_config is not None and run_config.target_languages:
        return
    start = time.perf_counter()
    env = dict(os.environ, KERAS_BACKEND="jax", KERAS_TRANSFORMER_COMPILATION_CACHE=directory)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "keras_transformer", "translate", "--model-dir", run_dir],
        input=_WARM_UP_SENTENCE + "\n", env=env, capture_output=True, text=True,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no message"]
        print(f"Could not compile the translation of one sentence: {lines[-1]}")
        return
    print(
        f"Compiled the translation of one sentence into {directory} "
        f"({time.perf_counter() - start:.1f} s): `keras-transformer translate` of this "
        "model starts without compiling."
    )
