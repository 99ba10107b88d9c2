"""Parsing the package's own Python files for the AST tests (layering,
private APIs, signatures).

`parse` is `ast.parse` with the garbage collector paused. CPython 3.11 before
3.11.8 keeps the AST converter's recursion depth in per-interpreter state
(CPython issue gh-106905): a finalizer that parses Python while a collection
runs in the middle of a conversion leaves that depth wrong, and the outer
`ast.parse` then fails with ``SystemError: AST constructor recursion depth
mismatch``. In a test process where earlier tests left objects with such
finalizers, pausing the collector keeps them from running inside the parse.
"""

import ast
import gc


def parse(source, filename="<unknown>"):
    """``ast.parse(source, filename)`` with no garbage collection inside."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename)
    finally:
        if enabled:
            gc.enable()
