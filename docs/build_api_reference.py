"""Builds the API reference (HTML, with pdoc) from the package's docstrings.

    pip install -e ".[docs]"
    python docs/build_api_reference.py site/api     # then open site/api/index.html

Every public module is rendered: the package and each module under it whose
name has no leading underscore (``__main__`` modules excepted). Docstrings
are read as Google style (``Args:``, ``Returns:``), the style of the package.
tests/test_docs.py builds it under the TensorFlow backend and fails on any
warning pdoc emits.
"""

import importlib
import os
import pkgutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _public(name):
    return not any(part.startswith("_") for part in name.split(".")[1:])


def _reached(name):
    """The modules pdoc renders for the spec ``name``: the module, and for a
    package its public submodules, only those named in its ``__all__``
    where it defines one (pdoc's rule), recursively."""
    module = importlib.import_module(name)
    found = {name}
    if not hasattr(module, "__path__"):
        return found
    listed = getattr(module, "__all__", None)
    for child in pkgutil.iter_modules(module.__path__, name + "."):
        short = child.name.rsplit(".", 1)[1]
        if _public(child.name) and (listed is None or short in listed):
            found |= _reached(child.name)
    return found


def public_modules():
    """Specs for pdoc that render ``keras_transformer`` and every public
    module under it, each once. A namespace of the package (``layers``,
    ``models``, ...) defines ``__all__``, which pdoc reads as the list of
    its submodules to render, so the modules it leaves out are added as
    specs of their own."""
    import keras_transformer

    specs, covered = ["keras_transformer"], _reached("keras_transformer")
    for module in sorted(
        (m.name for m in pkgutil.walk_packages(keras_transformer.__path__, "keras_transformer.")),
        key=lambda name: (name.count("."), name),
    ):
        if _public(module) and module not in covered:
            specs.append(module)
            covered |= _reached(module)
    return specs


# Pages that must exist in every build (the test checks them).
MODULES = (
    "keras_transformer",
    "keras_transformer.layers",
    "keras_transformer.decoding",
    "keras_transformer.training",
    "keras_transformer.export.saved_model",
)


def build(output_directory):
    """Renders the reference into ``output_directory``."""
    import pathlib

    import pdoc
    import pdoc.render

    import keras_transformer

    # Names that the package resolves on first use (its module __getattr__:
    # the tf.data pipeline, which imports TensorFlow) are bound here, so that
    # pdoc, which reads the module's namespace, finds every name of __all__.
    for name in keras_transformer.__all__:
        if name not in vars(keras_transformer):
            setattr(keras_transformer, name, getattr(keras_transformer, name))
    pdoc.render.configure(docformat="google", search=True, show_source=False)
    pdoc.pdoc(*public_modules(), output_directory=pathlib.Path(output_directory))


if __name__ == "__main__":
    os.environ.setdefault("PDOC_ALLOW_EXEC", "1")
    sys.path.insert(0, ROOT)
    build(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "site", "api"))
