"""Named model sizes: the paper's base and big (Table 3) and two CPU-sized ones.

Keras-free (like `keras_transformer.config`), so that a training config can
be validated, and the CLI can pick the Keras backend, before Keras is
imported.
"""

import ast
import functools
import importlib.util
import inspect
import sys

PRESETS = {
    # Trains in minutes on 2 CPU cores (the embedded default task, tests).
    "tiny": dict(
        vocabulary_size=8000,
        num_layers=2,
        d_model=128,
        num_heads=4,
        d_ff=512,
        dropout_rate=0.1,
    ),
    # A real translation model for CPU budgets (Multi30k in ~25 minutes).
    "small": dict(
        vocabulary_size=8000,
        num_layers=3,
        d_model=256,
        num_heads=4,
        d_ff=1024,
        dropout_rate=0.1,
    ),
    # The paper's Table 3 "base": 65M parameters with a 37,000-token vocabulary.
    "base": dict(
        vocabulary_size=37000,
        num_layers=6,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        dropout_rate=0.1,
    ),
    # The paper's Table 3 "big": 213M parameters.
    "big": dict(
        vocabulary_size=37000,
        num_layers=6,
        d_model=1024,
        num_heads=16,
        d_ff=4096,
        dropout_rate=0.3,
    ),
}


def model_argument_names():
    """The keyword arguments of `Transformer` (what ``model_overrides`` may set).

    Read from ``Transformer.__init__``'s signature when `keras_transformer.model`
    is already imported, else from the source of ``model.py`` (parsed, not
    imported), so that validating a config does not import Keras.
    """
    model = sys.modules.get("keras_transformer.model")
    if model is not None:
        parameters = inspect.signature(model.Transformer.__init__).parameters
        names = [name for name in parameters if name not in ("self", "kwargs")]
    else:
        names = list(_parsed_argument_names())
    return names + ["name"]


@functools.lru_cache(maxsize=None)
def _parsed_argument_names():
    """``Transformer.__init__``'s keyword names from ``model.py``'s syntax tree."""
    origin = importlib.util.find_spec("keras_transformer.model").origin
    with open(origin, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=origin)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Transformer":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    arguments = item.args.args + item.args.kwonlyargs
                    return tuple(a.arg for a in arguments if a.arg != "self")
    raise RuntimeError(f"No Transformer.__init__ in {origin!r}")


def resolve_preset(name, overrides=None):
    """The constructor arguments of preset ``name`` with ``overrides`` applied."""
    if name not in PRESETS:
        raise ValueError(
            f"Unknown preset {name!r}. Available presets: {sorted(PRESETS)}"
        )
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(model_argument_names()))
    if unknown:
        raise ValueError(
            f"Unknown model argument(s) {unknown} for preset {name!r}. "
            f"Valid arguments: {sorted(model_argument_names())}"
        )
    return {**PRESETS[name], **overrides}
