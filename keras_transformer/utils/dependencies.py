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


def lazy_attributes(package, names):
    """The ``__getattr__`` of a package that imports its public names when
    first used (PEP 562): ``{name: module}``. The package then imports
    without its modules, as the command line's parser needs
    (`keras_transformer.training.config` without the trainer and Keras);
    ``tests/test_layering.py`` holds the tables' modules to the layers like
    imports."""

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        setattr(importlib.import_module(package), name, value)
        return value

    __getattr__.names = dict(names)
    return __getattr__


def resolve_lazy_attributes(package):
    """Sets every name of ``package``'s `lazy_attributes` table now.

    Needed once the library is imported: importing a submodule sets the
    package attribute of its name to the module, which then hides a lazy
    name equal to it (``keras_transformer.decoding.generate``, the function
    of ``decoding/generate.py``) from ``__getattr__``."""
    names = package.__getattr__.names
    for name, module in names.items():
        setattr(package, name, getattr(importlib.import_module(module), name))


def lazy_names(package, names):
    """The ``__getattr__`` of a package whose public names ``names`` need an
    optional dependency: ``{name: (module, needs)}``. A name imports its
    ``module`` when first used and is kept in ``package``'s namespace; where
    ``module`` cannot be imported, it raises `MissingDependencyError`
    "<package>.<name> needs <needs> (<the ImportError>)", so that a public
    name never depends on what is installed (no missing attribute)."""

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, needs = names[name]
        try:
            value = getattr(importlib.import_module(module), name)
        except ImportError as error:
            raise MissingDependencyError(
                f"{package}.{name} needs {needs} ({error})."
            ) from error
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
