"""The package's functions take few parameters.

Reads every module of `keras_transformer` with `ast` (nothing is imported)
and fails on a function or method with more than `MAX_PARAMETERS`
parameters (positional, keyword-only, ``*args`` and ``**kwargs`` each
count; ``self`` and ``cls`` do not), as flax's ``beam_search`` (7) and
keras-hub's ``BeamSampler.__call__`` (8). Settings that travel together
go in one options object (`DecodeOptions`, `SearchRequest`,
`SearchInputs`, `CacheFunctions`).

Constructors of configuration objects are exempt: a dataclass's generated
``__init__`` (not in the source), and the ``__init__`` of a class with a
``get_config`` (a Keras layer, model or callback whose constructor takes
flat configuration values and returns them from ``get_config``, keras-hub's
convention). Anything else over the limit must be in `ALLOWED`, with why.
"""

import ast
import os

import pytest
from python_source import parse

pytestmark = pytest.mark.backend_independent  # reads the source with ast

PACKAGE = "keras_transformer"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_PARAMETERS = 8

# "path/to/module.py:Qualified.name": why it keeps more parameters.
_LAYER_CALL = (
    "a Keras layer's call: inputs, masks and caches named per side, passed "
    "by keyword, as keras-hub's TransformerDecoder.call (12 parameters)"
)
_SENTENCEPIECE = "SentencePiece trainer options, one parameter per trainer flag"
ALLOWED = {
    "keras_transformer/layers/attention.py:MultiHeadAttention.call": _LAYER_CALL,
    "keras_transformer/layers/decoder.py:TransformerDecoderLayer.call": _LAYER_CALL,
    "keras_transformer/models/transformer/translator.py:Translator.__init__": (
        "a translator's construction settings (sizes, compilation, quantization, "
        "languages) as flat keyword arguments, like a Keras layer's constructor"
    ),
    "keras_transformer/models/transformer/translator.py:Translator.translate": (
        "the user-facing text call: decode settings travel as one DecodeOptions; "
        "the rest are per-sentence inputs and what to return, named as the CLI's flags"
    ),
    "keras_transformer/models/transformer/translator.py:Translator.generate": (
        "the token-level twin of Translator.translate, same keyword arguments"
    ),
    "keras_transformer/models/transformer/transformer_seq_2_seq_lm.py:"
    "TransformerSeq2SeqLM.generate": (
        "keras-hub's Seq2SeqLM.generate entry point, forwarding Translator.translate's "
        "keyword arguments"
    ),
    "keras_transformer/models/transformer/sentencepiece_vocabulary.py:"
    "sentencepiece_trainer_arguments": _SENTENCEPIECE,
    "keras_transformer/training/validation_bleu.py:ValidationBleu.__init__": (
        "a Keras callback's constructor taking TrainConfig values"
    ),
    "keras_transformer/training/trainer.py:_fit": (
        "the training run's parts built by train (config, run directory, "
        "tokenizer, splits, datasets) and how it runs (resume, callbacks, "
        "verbosity, processes)"
    ),
}


def parameter_count(function):
    arguments = function.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    count = len([name for name in names if name not in ("self", "cls")])
    return count + (arguments.vararg is not None) + (arguments.kwarg is not None)


def _functions(tree, prefix="", config_class=False):
    """``(qualified name, node, inside a class with get_config)``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            has_config = any(
                isinstance(item, ast.FunctionDef) and item.name == "get_config"
                for item in node.body
            )
            yield from _functions(node, f"{prefix}{node.name}.", has_config)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", node, config_class
            yield from _functions(node, f"{prefix}{node.name}.<locals>.")


def wide_functions(root=ROOT):
    """``{"module.py:name": parameter count}`` over the limit, exemptions
    for configuration-object constructors applied, `ALLOWED` not."""
    found = {}
    for directory, _, files in os.walk(os.path.join(root, PACKAGE)):
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            path = os.path.join(directory, file)
            with open(path, encoding="utf-8") as handle:
                tree = parse(handle.read(), path)
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            for name, node, config_class in _functions(tree):
                count = parameter_count(node)
                if count <= MAX_PARAMETERS:
                    continue
                if config_class and node.name == "__init__":
                    continue
                found[f"{relative}:{name}"] = count
    return found


def test_no_function_takes_more_than_eight_parameters():
    wide = wide_functions()
    offenders = {name: count for name, count in wide.items() if name not in ALLOWED}
    assert not offenders, (
        f"functions with more than {MAX_PARAMETERS} parameters (put settings "
        f"that travel together in an options object): {offenders}"
    )
    stale = sorted(set(ALLOWED) - set(wide))
    assert not stale, f"ALLOWED entries that no longer apply: {stale}"


def test_parameter_count_counts_every_kind(tmp_path):
    package = tmp_path / PACKAGE
    package.mkdir()
    (package / "module.py").write_text(
        "def narrow(a, b, c, d, e, f, g, h): pass\n"
        "def wide(self, a, b, c, d, e, f, *args, g, **kwargs): pass\n"
        "class Layer:\n"
        "    def __init__(self, a, b, c, d, e, f, g, h, i): pass\n"
        "    def get_config(self): pass\n"
        "class Plain:\n"
        "    def __init__(self, a, b, c, d, e, f, g, h, i): pass\n"
        "    def method(self, a, b, c, d, e, f, g, h, i=1): pass\n"
    )
    assert wide_functions(str(tmp_path)) == {
        f"{PACKAGE}/module.py:wide": 9,
        f"{PACKAGE}/module.py:Plain.__init__": 9,
        f"{PACKAGE}/module.py:Plain.method": 9,
    }
