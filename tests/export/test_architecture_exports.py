"""Every architecture option through the exporters: for each option set to a
value other than the paper's, the CTranslate2 export and the Transformers
(Marian) export either represent the model (CTranslate2's scores, Marian's
logits equal ours) or refuse it naming the option, before writing anything.
The SavedModel runs the model's own layers, so it represents every option
(the export tests)."""

import os

import keras
import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.decoding.forced import token_log_probs
from keras_transformer.models.transformer.transformer_options import ARCHITECTURE_OPTIONS

import small_models
from conftest import to_numpy
from small_models import VOCABULARY_SIZE, id_arrays

pytestmark = pytest.mark.backend_independent  # the exporters read the weights as arrays

BASE = dict(vocabulary_size=VOCABULARY_SIZE, num_layers=2, d_model=16, num_heads=2, d_ff=32,
            dropout_rate=0.0)  # fmt: skip
# Each option's other value (with the options it needs), applied to BASE.
VARIANTS = {
    "share_embeddings": dict(share_embeddings=False),
    "source_vocabulary_size": dict(share_embeddings=False, source_vocabulary_size=VOCABULARY_SIZE),
    "positional_encoding": dict(positional_encoding="learned"),
    "max_length": dict(positional_encoding="learned", max_length=48),
    "max_relative_position": dict(positional_encoding="relative", max_relative_position=3),
    "normalization_position": dict(normalization_position="pre"),
    "logits_dtype": dict(logits_dtype=None),
    "projection_layout": dict(projection_layout="qkv_major"),
    "activation": dict(activation="gelu"),
    "layer_norm_epsilon": dict(layer_norm_epsilon=1e-5),
    "sinusoid_layout": dict(sinusoid_layout="split"),
    "output_bias": dict(output_bias=True),
}
# The options whose other values BASE itself shows (sizes), or that
# inference does not read (dropout).
SHOWN_BY_BASE = {"vocabulary_size", "num_layers", "d_model", "num_heads", "d_ff", "dropout_rate"}


def test_every_option_has_a_variant():
    assert {o.name for o in ARCHITECTURE_OPTIONS} == set(VARIANTS) | SHOWN_BY_BASE


@pytest.fixture(scope="module")
def task():
    return small_models.task(num_test=8)


def _model(option):
    keras.utils.set_random_seed(11)
    model = Transformer(**BASE, **VARIANTS[option])
    if option == "output_bias":  # a zero bias would show nothing
        bias = model.token_embedding.bias
        bias.assign(np.random.default_rng(0).normal(size=bias.shape).astype("float32"))
    return model


def _assert_refused_by_name(error, option, directory):
    values = [str(value) for value in VARIANTS[option].values()]
    message = str(error)
    assert any(name in message for name in [option, *values]), (option, message)
    assert not os.path.exists(directory), "refused after writing"


@pytest.mark.parametrize("option", sorted(VARIANTS))
def test_ctranslate2_represents_or_refuses(option, task, tmp_path):
    pytest.importorskip("ctranslate2", reason="ctranslate2 is not installed (the optional extra)")
    from keras_transformer.export.ctranslate2_converter import export_ctranslate2
    from keras_transformer.export.ctranslate2_translator import CTranslate2Translator

    tokenizer, _, (sources, targets) = task
    model = _model(option)
    directory = str(tmp_path / "ct2")
    try:
        export_ctranslate2(model, tokenizer, directory)
    except ValueError as error:
        _assert_refused_by_name(error, option, directory)
        return
    encoder, _, labels = id_arrays(tokenizer, sources, targets)
    ours = to_numpy(token_log_probs(model, encoder, labels))
    theirs = CTranslate2Translator(directory, intra_threads=1).score(
        tokenizer.encode(sources), tokenizer.encode(targets)
    )
    for row, log_probs in enumerate(theirs):
        length = int(np.sum(labels[row] != 0))
        np.testing.assert_allclose(log_probs, ours[row, :length], rtol=0, atol=1e-4)


@pytest.mark.parametrize("option", sorted(VARIANTS))
def test_transformers_represents_or_refuses(option, task, tmp_path):
    pytest.importorskip("transformers", reason="the marian extra")
    pytest.importorskip("torch")
    from keras_transformer.export.transformers_exporter import (
        TransformersExportError,
        export_to_transformers,
    )

    tokenizer, _, (sources, _) = task
    model = _model(option)
    directory = str(tmp_path / "marian")
    try:
        export_to_transformers(model, directory, vocabulary=tokenizer)
    except TransformersExportError as error:
        _assert_refused_by_name(error, option, directory)
        return
    assert small_models.marian_logits_error(model, directory, tokenizer, sources) < 1e-4
