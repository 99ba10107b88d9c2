"""Optional dependencies: TensorFlow is needed only by the TensorFlow
backend, the ``tf.data`` pipeline, graph tokenization and the SavedModel
export; the rest of the package runs without it (JAX, PyTorch)."""

import importlib.util


class MissingDependencyError(ImportError):
    """A feature needs a package that is not installed; the message names
    the feature, the package and how to install it."""


def is_installed(module):
    """Whether ``module`` (a top-level package name) can be imported,
    without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(feature, modules, install):
    """Raises `MissingDependencyError` unless every one of ``modules`` is
    installed: "<feature> needs <missing> (pip install <install>)"."""
    missing = [module for module in modules if not is_installed(module)]
    if missing:
        raise MissingDependencyError(
            f"{feature} needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed "
            f"(pip install {install})."
        )
