"""Every decoding option is defined once (`keras_transformer.options`) and
reaches every surface: the CLI's flags, `DecodeOptions` (hence the
`Translator`'s and the keras-hub task's keywords), a run's decoding
defaults, the SavedModel (an input of ``translate_options`` or an export
argument) and the CTranslate2 translator.

The source checks read the package with `ast` (nothing is imported);
the surface checks build the parser and read the dataclasses.
"""

import ast
import dataclasses
import os

import pytest
from python_source import parse

from keras_transformer import options as decode_options
from keras_transformer.cli.parser import build_parser
from keras_transformer.decoding.options import DecodeOptions, SearchInputs
from keras_transformer.training.config import TrainConfig

pytestmark = pytest.mark.backend_independent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIR = os.path.join(ROOT, "keras_transformer")
DEFINITIONS = os.path.join(PACKAGE_DIR, "options.py")


def _literal(node):
    try:
        return True, ast.literal_eval(node)
    except ValueError:
        return False, None


def _restated_defaults(source, path):
    """``path:line: name=value`` for each literal equal to a decoding
    option's default given to a parameter, keyword or field of its name."""
    found = []
    # num_return=1 is also "the best hypothesis only", a count written on
    # purpose (the n-best signature's searches ask for 1 or k).
    defaults = {
        o.name: o.default for o in decode_options.OPTIONS
        if o.default is not None and o.name != "num_return"
    }

    def check(name, value_node):
        if name not in defaults or value_node is None:
            return
        known, value = _literal(value_node)
        if known and type(value) is type(defaults[name]) and value == defaults[name]:
            found.append(f"{path}:{value_node.lineno}: {name}={value!r}")

    for node in ast.walk(parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            for arg, default in zip(positional[len(positional) - len(args.defaults):],
                                    args.defaults):
                check(arg.arg, default)
            for arg, default in zip(args.kwonlyargs, args.kw_defaults):
                check(arg.arg, default)
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg is not None:
                    check(keyword.arg, keyword.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            check(node.target.id, node.value)
    return found


def _package_sources():
    for directory, _, files in os.walk(PACKAGE_DIR):
        for name in sorted(files):
            path = os.path.join(directory, name)
            if name.endswith(".py") and path != DEFINITIONS:
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, ROOT), f.read()


def test_no_decoding_default_is_written_twice():
    restated = [line for path, source in _package_sources()
                for line in _restated_defaults(source, path)]
    assert not restated, (
        "decoding defaults restated (use keras_transformer.options.DEFAULTS):\n"
        + "\n".join(restated)
    )


def test_the_restated_default_check_can_fail():
    source = "def f(beam_size=4, alpha=0.5):\n    g(max_extra_length=50, min_length=1)\n"
    assert _restated_defaults(source, "x.py") == [
        "x.py:1: beam_size=4", "x.py:2: max_extra_length=50"
    ]


def _flags(command):
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    return {
        action.dest: action for action in subparsers.choices[command]._actions
        if action.option_strings
    }


@pytest.mark.parametrize("option", decode_options.OPTIONS, ids=lambda o: o.name)
def test_every_option_reaches_every_surface(option):
    # DecodeOptions: a field of the same name and default (so a keyword of
    # Translator.translate, TransformerSeq2SeqLM.generate and
    # evaluate_translations, which take its fields).
    fields = {f.name: f for f in dataclasses.fields(DecodeOptions)}
    assert fields[option.name].default == option.default
    # The CLI: its flag in each command it names, with the option's type.
    if option.flag is not None:
        for command in option.commands:
            flags = _flags(command)
            assert option.name in flags, (command, option.flag)
            assert option.flag in flags[option.name].option_strings
    # A run's decoding default: a TrainConfig key with the same default.
    train_fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    if option.run_default:
        assert train_fields[option.name].default == option.default
    # The SavedModel: a runtime input of translate_options, or fixed at
    # export (an export_saved_model keyword: any DecodeOptions field), or
    # a sentence saying where it goes.
    if option.saved_model == decode_options.SAVED_MODEL_INPUT:
        assert not option.compiled  # a tensor of the compiled search
        assert option.name in decode_options.SAVED_MODEL_INPUTS
    elif option.saved_model != decode_options.SAVED_MODEL_FIXED:
        assert " " in option.saved_model  # a reason, not a stray keyword
    # A runtime option is a SearchInputs field (a tensor input).
    if not option.compiled:
        assert option.name in {f.name for f in dataclasses.fields(SearchInputs)}
    # CTranslate2: a translate_batch keyword, or a reason.
    assert option.ctranslate2
    if option.ctranslate2.isidentifier():
        ctranslate2 = pytest.importorskip("ctranslate2")
        assert option.ctranslate2 in ctranslate2.Translator.translate_batch.__doc__


def test_decode_options_fields_are_the_definitions():
    assert [f.name for f in dataclasses.fields(DecodeOptions)] == sorted(
        decode_options.BY_NAME, key=[f.name for f in dataclasses.fields(DecodeOptions)].index
    )
    assert {f.name for f in dataclasses.fields(DecodeOptions)} == set(decode_options.BY_NAME)
