"""Builds the API reference (HTML, with pdoc) from the package's docstrings.

    pip install -e ".[docs]"
    python docs/build_api_reference.py site/api     # then open site/api/index.html

Every public module is rendered: the package and each module under it whose
name has no leading underscore (``__main__`` modules excepted). Docstrings
are read as Google style (``Args:``, ``Returns:``), the style of the package.
tests/test_docs.py builds it under the TensorFlow backend and fails on any
warning pdoc emits.
"""

import os
import pkgutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def public_modules():
    """``keras_transformer`` and its public modules and subpackages (pdoc
    renders each subpackage's modules in turn)."""
    import keras_transformer

    return ["keras_transformer"] + sorted(
        module.name
        for module in pkgutil.iter_modules(keras_transformer.__path__, "keras_transformer.")
        if not module.name.rsplit(".", 1)[1].startswith("_")
        # pdoc renders the package's ``__all__`` submodules with the package.
        and module.name.rsplit(".", 1)[1] not in getattr(keras_transformer, "__all__", ())
    )


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
