"""The package's import structure: layers that only import downward.

Reads every module of `keras_transformer` with `ast` (nothing is imported)
and fails on

* an import of a higher layer (the order is `LAYER_ORDER` below),
* a cycle among the package's modules,
* an import inside a function, except of an optional dependency
  (`OPTIONAL_DEPENDENCIES`), which the package imports only where it is used,
* a module imported by name (``importlib.import_module`` of a table's
  entry: lazy package attributes, the command line's start) that a module
  could not import: every string constant that names a module of the
  package counts as an import of it,
* a module of more than `MAX_MODULE_LINES` lines whose docstring does not say
  why it stays whole (`LONG_MODULE_REASON`: one concern a file, as keras-hub).
"""

import ast
import os

import pytest
from python_source import parse

pytestmark = pytest.mark.backend_independent  # reads the source with ast

PACKAGE = "keras_transformer"
PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PACKAGE)

# Lowest first. A module may import modules of its own layer or of a lower
# one. The model-agnostic decoding sits below the models, as keras-hub's
# samplers sit below its models; the objectives (loss, metric, schedule) sit
# below the models because the keras-hub task compiles with them.
LAYER_ORDER = (
    ("special_tokens", "utils", "version", "options"),
    ("layers",),
    ("objectives",),
    ("decoding",),
    ("models",),
    ("data",),
    ("training",),
    ("export", "convert"),
    ("cli", "__main__"),
)
# TensorFlow Text is optional under JAX and PyTorch: the graph tokenizer
# imports it at its first use.
OPTIONAL_DEPENDENCIES = {"jax", "torch", "ctranslate2", "matplotlib", "tensorflow_text"}


def _modules():
    """{dotted module name: path} of every module of the package."""
    modules = {}
    for directory, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _layer(module):
    """The index in `LAYER_ORDER` of ``module``; the package's own
    ``__init__`` is above every layer."""
    parts = module.split(".")
    if len(parts) == 1:
        return len(LAYER_ORDER)
    for index, names in enumerate(LAYER_ORDER):
        if parts[1] in names:
            return index
    raise AssertionError(f"{module} is in no layer of LAYER_ORDER: add its room there")


def _imports(module):
    """`_imports_of_source` of ``module``'s file."""
    with open(MODULES[module], encoding="utf-8") as f:
        return _imports_of_source(f.read(), module)


def _imports_of_source(source, module):
    """[(imported package module, line, inside a function)] of ``module``;
    ``from package.x import y`` counts as importing ``package.x.y`` when that
    is a module, else ``package.x``; a string constant that is the name of a
    module of the package (a table of modules imported by name) counts as a
    module-level import of it."""
    tree = parse(source)
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in MODULES and node.value.startswith(PACKAGE + ".") and (
                node.value != module
            ):
                found.append((node.value, node.lineno, False))
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = []
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                names.append(candidate if candidate in MODULES else node.module)
        else:
            continue
        in_function = False
        parent = parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function = True
            parent = parents.get(parent)
        found.extend((name, node.lineno, in_function) for name in names)
    return found


def test_every_module_is_in_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_point_downward():
    upward = []
    for module in MODULES:
        for imported, line, _ in _imports(module):
            if imported.split(".")[0] != PACKAGE or imported not in MODULES:
                continue
            if _layer(imported) > _layer(module):
                upward.append(f"{MODULES[module]}:{line}: {module} imports {imported}")
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


def test_no_function_level_imports():
    inside = []
    for module in MODULES:
        for imported, line, in_function in _imports(module):
            if in_function and imported.split(".")[0] not in OPTIONAL_DEPENDENCIES:
                inside.append(f"{MODULES[module]}:{line}: {imported}")
    assert not inside, "imports inside functions:\n" + "\n".join(inside)


def _cycle(graph):
    """One cycle of ``graph`` ({node: set of nodes}) as a list, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target, path)
                if cycle:
                    return cycle
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def _package_graph():
    """{module: package modules it imports}, a package's ``__init__`` aside
    (it imports its submodules, which import their siblings through it)."""
    graph = {}
    for module in MODULES:
        graph[module] = {
            imported
            for imported, _, _ in _imports(module)
            if imported in MODULES and imported != module and "." in imported
            and not MODULES[imported].endswith("__init__.py")
        }
    return graph


def test_no_import_cycles():
    cycle = _cycle(_package_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# A module longer than this says in its docstring, in a sentence starting
# with LONG_MODULE_REASON, why it is not split by concern.
MAX_MODULE_LINES = 500
LONG_MODULE_REASON = "Longer than the package's usual module because"


def _long_without_reason(source):
    """The line count of ``source`` when it is over `MAX_MODULE_LINES` and
    its docstring lacks `LONG_MODULE_REASON`; else None."""
    lines = source.count("\n")
    if lines <= MAX_MODULE_LINES:
        return None
    docstring = " ".join((ast.get_docstring(parse(source)) or "").split())
    return None if LONG_MODULE_REASON in docstring else lines


def test_a_long_module_says_why_in_its_docstring():
    long = []
    for module, path in sorted(MODULES.items()):
        with open(path, encoding="utf-8") as f:
            lines = _long_without_reason(f.read())
        if lines is not None:
            long.append(f"{module} ({lines} lines)")
    assert not long, (
        f"modules over {MAX_MODULE_LINES} lines: split them by concern, or say why one "
        f"stays whole in its docstring ({LONG_MODULE_REASON!r} ...): " + ", ".join(long)
    )


def test_the_checks_can_fail():
    """The checks above find what they look for (a hand-made graph and module)."""
    body = "x = 1\n" * MAX_MODULE_LINES
    assert _long_without_reason('"""A module."""\n' + body) == MAX_MODULE_LINES + 1
    reason = LONG_MODULE_REASON.replace(" usual ", "\nusual ")
    assert _long_without_reason(f'"""A module.\n\n{reason} ..."""\n' + body) is None
    assert _long_without_reason('"""A module."""\n' + body[6:]) is None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert _layer(f"{PACKAGE}.layers.attention") < _layer(f"{PACKAGE}.models.transformer")
    # A table's module name counts as an import of that module.
    name = "keras_transformer.training.config"
    assert (name, 1, False) in _imports_of_source(f"TABLE = {{'x': {name!r}}}\n", "m")
    with pytest.raises(AssertionError, match="no layer"):
        _layer(f"{PACKAGE}.unknown_room")
