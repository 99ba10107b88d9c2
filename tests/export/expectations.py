"""Committed expectations for the SavedModel export tests.

A SavedModel export takes about a minute, and it runs under the TensorFlow
backend whatever the suite's backend. So each export test exports and serves
once per suite, under TensorFlow, where it checks that the SavedModel serves
what `Translator` returns and that those are the outputs stored in
``tests/fixtures/export_expected.json``; under JAX and PyTorch a test checks
that `Translator` returns the stored outputs on the same weights. Served ==
Translator == stored (TensorFlow) and Translator == stored (JAX, PyTorch):
served == Translator under every backend.

``KT_WRITE_EXPECTATIONS=1`` (under the TensorFlow backend) rewrites an entry
from the current outputs, after the export test has checked them against the
SavedModel; review the diff before committing it.
"""

import json
import os

import numpy as np

from conftest import FIXTURES

EXPECTED = os.path.join(FIXTURES, "export_expected.json")
ATOL = 1e-3


def load(name):
    with open(EXPECTED, encoding="utf-8") as f:
        return json.load(f)[name]


def write(name, outputs):
    """Stores ``outputs`` under ``name`` when KT_WRITE_EXPECTATIONS is set."""
    if not os.environ.get("KT_WRITE_EXPECTATIONS"):
        return
    entries = {}
    if os.path.exists(EXPECTED):
        with open(EXPECTED, encoding="utf-8") as f:
            entries = json.load(f)
    entries[name] = json.loads(json.dumps(outputs))
    with open(EXPECTED, "w", encoding="utf-8") as f:
        json.dump(entries, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")


def plain(value):
    """NumPy values and tuples as JSON's lists, ints and floats."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def assert_same(got, expected, where="outputs"):
    """Equal strings and ints, floats within `ATOL`, the same structure."""
    got, expected = plain(got), plain(expected)
    if isinstance(expected, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(expected), (where, got, expected)
        for key in expected:
            assert_same(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), (where, got, expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and abs(got - expected) <= ATOL, (where, got, expected)
    else:
        assert got == expected, (where, got, expected)
