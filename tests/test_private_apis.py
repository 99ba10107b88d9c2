"""Private APIs of Keras, keras-hub, TensorFlow (Text) and PyTorch are used
only in `keras_transformer/utils/private_apis.py`.

Reads every module of `keras_transformer` with `ast` and fails, anywhere but
in that module, on

* a private module: an import of, an attribute chain through, or a string
  constant (docstrings aside) naming ``keras.src``, ``keras_hub.src``,
  ``tensorflow.python``, ``tensorflow_text.python``, ``torch._*`` or
  ``torch.fx.experimental``;
* a private attribute of another library's object. An underscore name (one
  leading underscore, not a dunder) read or written as ``x._name``, or as
  ``getattr/setattr/hasattr/delattr(x, "_name")``, is refused when

  - ``_name`` is a private attribute of Keras' or keras-hub's classes
    (`keras_private_names`: what ``dir()`` and ``vars()`` show of a compiled
    model, a layer, an optimizer, a metric, a loss, a callback, a variable,
    and keras-hub's task, backbone, preprocessor, tokenizer and packer),
    except on ``self``/``cls`` inside a class that does not derive from
    Keras or keras-hub (the package's own plain classes may name their
    attributes freely);
  - or ``x`` is not ``self``/``cls``/``super()`` and no module of the
    package defines ``_name`` (as a function, a class, a module-level name
    or an attribute it assigns): an underscore attribute of an object of
    another library (``tensor._base``, ``optimizer._iterations``);

  and a method ``def _name`` in a class that derives from Keras or keras-hub
  with ``_name`` among Keras' and keras-hub's private names (an override of
  their private hooks, e.g. ``_resolve_auto_jit_compile``).

Whether a class derives from Keras or keras-hub is read from the source:
a base imported from ``keras``/``keras_hub``, or a class of the package that
does.
"""

import ast
import functools
import os
import re

import keras
import pytest
from python_source import parse

PACKAGE_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "keras_transformer"
)
ALLOWED = os.path.join(PACKAGE_DIR, "utils", "private_apis.py")
PRIVATE_MODULE = re.compile(
    r"^(keras|keras_hub)\.src\b|^tensorflow(_text)?\.python\b|^torch\._"
    r"|^torch\.fx\.experimental\b"
)
# A string naming a private module, also as a regular expression.
PRIVATE_MODULE_STRING = re.compile(r"\b(keras|keras_hub)\\?\.src\b")
FOREIGN_ROOTS = ("keras", "keras_hub")
ATTRIBUTE_FUNCTIONS = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name):
    return name.startswith("_") and not name.startswith("__")


@functools.cache
def keras_private_names():
    """Underscore names of Keras' and keras-hub's classes and instances."""
    inputs = keras.Input((2,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    model.compile(optimizer="adam", loss="mse")
    objects = [
        keras.Model, keras.layers.Layer, keras.layers.Dense(2), model,
        model.optimizer, keras.metrics.Mean(), keras.losses.Loss(),
        keras.callbacks.Callback(), keras.Variable(1.0),
        keras.optimizers.schedules.LearningRateSchedule,
    ]
    try:
        import keras_hub
    except ImportError:
        pass
    else:
        objects += [
            keras_hub.models.Seq2SeqLM, keras_hub.models.Backbone,
            keras_hub.models.Seq2SeqLMPreprocessor,
            keras_hub.tokenizers.SentencePieceTokenizer(),
            keras_hub.layers.StartEndPacker(sequence_length=4),
        ]
    names = set()
    for obj in objects:
        names.update(n for n in dir(obj) if _private(n))
        names.update(n for n in getattr(obj, "__dict__", {}) if _private(n))
    return frozenset(names)


def _modules():
    return dict(_parsed_modules())


@functools.cache
def _parsed_modules():
    modules = {}
    for directory, _, files in os.walk(PACKAGE_DIR):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as handle:
                    modules[path] = parse(handle.read(), path)
    return modules


def _dotted(node):
    """``a.b.c`` of a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


def _imported_names(tree):
    """{local name: dotted origin} of a module's imports."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _keras_classes(modules):
    """Names of the package's classes that derive from Keras or keras-hub."""
    bases = {}
    for tree in modules.values():
        imported = _imported_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                resolved = []
                for base in node.bases:
                    dotted = _dotted(base) or ""
                    head, _, rest = dotted.partition(".")
                    origin = imported.get(head, head)
                    resolved.append(f"{origin}.{rest}" if rest else origin)
                bases.setdefault(node.name, []).extend(resolved)
    derived = set()
    changed = True
    while changed:
        changed = False
        for name, names in bases.items():
            if name in derived:
                continue
            for base in names:
                root = base.split(".")[0]
                if root in FOREIGN_ROOTS or base.split(".")[-1] in derived:
                    derived.add(name)
                    changed = True
                    break
    return derived


def _package_names(modules):
    """Underscore names the package defines itself."""
    names = set()
    for tree in modules.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[-1])
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                names.add(node.args[1].value)
    return {name for name in names if isinstance(name, str) and _private(name)}


def _docstrings(tree):
    nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                nodes.add(id(body[0].value))
    return nodes


class _Checker(ast.NodeVisitor):
    def __init__(self, path, tree, keras_names, keras_classes, package_names):
        self.path = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))
        self.keras_names = keras_names
        self.keras_classes = keras_classes
        self.package_names = package_names
        self.docstrings = _docstrings(tree)
        self.classes = []  # enclosing classes: derives from Keras or keras-hub
        self.problems = []

    def report(self, node, text):
        self.problems.append(f"{self.path}:{node.lineno}: {text}")

    def visit_Import(self, node):
        for alias in node.names:
            if PRIVATE_MODULE.match(alias.name):
                self.report(node, f"import {alias.name}")

    def visit_ImportFrom(self, node):
        module = node.module or ""
        for alias in node.names:
            if PRIVATE_MODULE.match(module) or PRIVATE_MODULE.match(
                f"{module}.{alias.name}"
            ):
                self.report(node, f"from {module} import {alias.name}")

    def visit_ClassDef(self, node):
        derived = node.name in self.keras_classes
        for item in node.body:
            if (
                derived
                and isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                and item.name in self.keras_names
            ):
                self.report(item, f"overrides Keras/keras-hub's private {item.name}")
        self.classes.append(derived)
        self.generic_visit(node)
        self.classes.pop()

    def visit_Constant(self, node):
        if (
            isinstance(node.value, str)
            and id(node) not in self.docstrings
            and PRIVATE_MODULE_STRING.search(node.value)
        ):
            self.report(node, f"names a private module: {node.value!r}")

    def visit_Attribute(self, node):
        dotted = _dotted(node)
        if dotted and PRIVATE_MODULE.match(dotted):
            self.report(node, dotted)
            return
        self._check_name(node, node.value, node.attr)
        self.generic_visit(node)

    def visit_Call(self, node):
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in ATTRIBUTE_FUNCTIONS
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            self._check_name(node, node.args[0], node.args[1].value)
        self.generic_visit(node)

    def _check_name(self, node, receiver, name):
        if not _private(name):
            return
        own = (isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")) or (
            isinstance(receiver, ast.Call)
            and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super"
        )
        in_keras_class = bool(self.classes) and self.classes[-1]
        text = ast.unparse(receiver) + "." + name
        if name in self.keras_names and (not own or in_keras_class):
            self.report(node, f"{text}: a private attribute of Keras/keras-hub")
        elif not own and name not in self.package_names:
            self.report(node, f"{text}: a private attribute of another library")


def private_api_uses(modules):
    """``path:line: what`` for every private use outside `private_apis.py`."""
    keras_names = keras_private_names()
    keras_classes = _keras_classes(modules)
    package_names = _package_names(
        {path: tree for path, tree in modules.items() if path != ALLOWED}
    )
    problems = []
    for path, tree in modules.items():
        if path == ALLOWED:
            continue
        checker = _Checker(path, tree, keras_names, keras_classes, package_names)
        checker.visit(tree)
        problems += checker.problems
    return problems


def test_private_apis_are_used_only_in_private_apis():
    problems = private_api_uses(_modules())
    assert not problems, (
        "Private APIs outside keras_transformer/utils/private_apis.py (move each "
        "behind a function there, saying why no public API serves):\n"
        + "\n".join(problems)
    )


KINDS = [
    ("from keras.src.utils import backend_utils", "from keras.src.utils"),
    ("import torch._dynamo", "import torch._dynamo"),
    ("import torch\ntorch._dynamo.config.x = 1", "torch._dynamo"),
    ("x = 'keras.src.backend.torch.optimizers'", "private module"),
    ("def f(t):\n    return t._base", "t._base"),
    ("def f(t):\n    return getattr(t, '_base', None)", "t._base"),
    ("def f(optimizer):\n    return optimizer._iterations", "optimizer._iterations"),
    (
        "import keras\nclass M(keras.Model):\n"
        "    def _resolve_auto_jit_compile(self):\n        return True",
        "_resolve_auto_jit_compile",
    ),
    (
        "import keras\nclass M(keras.Model):\n"
        "    def f(self):\n        return self._flatten_layers()",
        "self._flatten_layers",
    ),
    # The package's own plain classes name their attributes freely.
    (
        "class Counter:\n    def __init__(self):\n        self._iterations = 0\n"
        "    def step(self):\n        self._iterations += 1\n",
        None,
    ),
]


def test_each_kind_of_private_use_is_found():
    # The package as it is, with one module added per kind of use.
    modules = _modules()
    for index, (source, _) in enumerate(KINDS):
        modules[os.path.join(PACKAGE_DIR, f"extra_{index}.py")] = parse(source)
    problems = private_api_uses(modules)
    for index, (source, found) in enumerate(KINDS):
        mine = [p for p in problems if p.startswith(f"keras_transformer/extra_{index}.py:")]
        if found is None:
            assert mine == [], source
        else:
            assert len(mine) == 1 and found in mine[0], (source, mine)
    assert len(problems) == sum(found is not None for _, found in KINDS), problems
