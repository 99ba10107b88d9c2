"""CTranslate2 export: the exported model scores and translates as ours.

A tiny model is trained briefly on the number-words task under the current
backend, exported, and decoded by CTranslate2: per-token log-probabilities
(`score_batch`) equal `token_log_probs` within 1e-4, and beam-4 (alpha 0.6)
and greedy translations are those of `keras_transformer.Translator`.
"""

import functools
import json
import os

import keras
import numpy as np
import pytest

ctranslate2 = pytest.importorskip(
    "ctranslate2", reason="ctranslate2 is not installed (the optional extra)"
)

from keras_transformer import Transformer, Translator  # noqa: E402
from keras_transformer.export.ctranslate2_converter import METADATA_FILENAME
from keras_transformer.export.ctranslate2_translator import CTranslate2Translator
from keras_transformer.export.ctranslate2_converter import export_ctranslate2
from keras_transformer.export.ctranslate2_converter import export_run_directory_to_ctranslate2
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.decoding.backends import jax_stateless_jit
from keras_transformer.decoding.forced import token_log_probs  # noqa: E402
from keras_transformer.special_tokens import EOS_ID  # noqa: E402

import small_models  # noqa: E402
from conftest import to_numpy  # noqa: E402
from small_models import VOCABULARY_SIZE, id_arrays  # noqa: E402

NUM_TEST = 32
MAX_EXTRA = 24  # German targets have more pieces than their sources


@pytest.fixture(scope="module")
def task():
    return small_models.task(NUM_TEST)


@pytest.fixture(scope="module")
def trained(task, tmp_path_factory):
    """A model trained a few seconds (its beams end with EOS), and its export."""
    tokenizer, pairs, _ = task
    model = small_models.trained_model(tokenizer, pairs, seed=3)
    directory = str(tmp_path_factory.mktemp("ct2") / "model")
    export_ctranslate2(model, tokenizer, directory)
    return model, directory


def _forced(model, tokenizer, sources, targets):
    encoder, _, labels = id_arrays(tokenizer, sources, targets)
    function = functools.partial(token_log_probs, model)
    if keras.config.backend() == "jax":  # one compilation, not one per op
        function = jax_stateless_jit(model, function)
    return to_numpy(function(encoder, labels)), labels


def _assert_scores_equal(model, tokenizer, directory, sources, targets):
    ours, labels = _forced(model, tokenizer, sources, targets)
    theirs = CTranslate2Translator(directory, intra_threads=1).score(
        tokenizer.encode(sources), tokenizer.encode(targets)
    )
    for row, log_probs in enumerate(theirs):
        length = int(np.sum(labels[row] != 0))
        assert log_probs.shape == (length,)  # the target tokens and EOS
        np.testing.assert_allclose(log_probs, ours[row, :length], rtol=0, atol=1e-4)


def test_score_batch_equals_forced_log_probs(task, trained):
    tokenizer, _, (sources, targets) = task
    model, directory = trained
    _assert_scores_equal(model, tokenizer, directory, sources, targets)


@pytest.mark.parametrize("beam_size", [4, 1])
def test_translations_and_scores_equal_the_translator(task, trained, beam_size):
    tokenizer, _, (sources, _) = task
    model, directory = trained
    translator = Translator(model, tokenizer, batch_size=NUM_TEST)
    kwargs = dict(beam_size=beam_size, alpha=0.6, max_extra_length=MAX_EXTRA)
    # The comparison means something only if our hypotheses end with EOS
    # before the length limit (there the two searches differ by design).
    hypotheses, _ = translator.generate(tokenizer.encode(sources), **kwargs)
    for ids, (hypothesis,) in zip(tokenizer.encode(sources), hypotheses):
        assert hypothesis[-1] == EOS_ID and len(hypothesis) < len(ids) + MAX_EXTRA

    ours, our_scores = translator.translate(sources, return_scores=True, **kwargs)
    exported = CTranslate2Translator(directory, intra_threads=1, batch_size=8)
    theirs, their_scores = exported.translate(sources, return_scores=True, **kwargs)
    assert theirs == ours
    np.testing.assert_allclose(their_scores, our_scores, rtol=0, atol=1e-4)


def test_min_length_and_repetition_options_reach_ctranslate2(task, trained):
    tokenizer, _, (sources, _) = task
    model, directory = trained
    translator = Translator(model, tokenizer, batch_size=NUM_TEST)
    exported = CTranslate2Translator(directory, intra_threads=1, batch_size=8)
    kwargs = dict(beam_size=4, alpha=0.6, max_extra_length=MAX_EXTRA)
    plain = exported.translate(sources, **kwargs)
    # min_length counts the output with EOS; CTranslate2's
    # min_decoding_length the tokens before it: every output of both holds
    # at least min_length tokens, and CTranslate2's shortest exactly that
    # many (no token more). The outputs themselves may differ: CTranslate2
    # bans EOS its own way, which moves its scores.
    ids = tokenizer.encode(sources)
    min_length = max(len(t) for t in tokenizer.encode(plain)) + 3
    longer = dict(kwargs, min_length=min_length)
    theirs, _ = exported.generate(ids, **longer)
    ours, _ = translator.generate(ids, **longer)
    assert min(len(h[0]) for h in theirs) == min_length
    assert min(len(h[0]) for h in ours) >= min_length
    assert all(h[0][-1] == EOS_ID for h in theirs)
    # The repetition options go through (CTranslate2's own implementation).
    for extra in ({"no_repeat_ngram_size": 1}, {"repetition_penalty": 3.0}):
        assert exported.translate(sources, **kwargs, **extra) != plain, extra
    with pytest.raises(ValueError, match="does not sample"):
        exported.translate(sources, beam_size=1, sampling=True)


def test_every_other_mapped_option_scores_equal(task, tmp_path):
    # The trained model is head-major, post-LN, sinusoidal, shared: this one
    # covers the other layout, pre-LN (final LayerNorms), learned positions,
    # separate source embeddings and more output ids than pieces.
    tokenizer, _, (sources, targets) = task
    keras.utils.set_random_seed(4)
    model = Transformer(
        vocabulary_size=VOCABULARY_SIZE + 8,
        num_layers=2,
        d_model=32,
        num_heads=4,
        d_ff=64,
        dropout_rate=0.0,
        projection_layout="qkv_major",
        normalization_position="pre",
        positional_encoding="learned",
        max_length=40,
        share_embeddings=False,
    )
    directory = export_ctranslate2(model, tokenizer, str(tmp_path / "ct2"))
    _assert_scores_equal(model, tokenizer, directory, sources[:8], targets[:8])
    with open(os.path.join(directory, METADATA_FILENAME)) as f:
        assert json.load(f)["max_positions"] == 40


def test_run_directory_and_int8_export(task, trained, tmp_path):
    tokenizer, _, (sources, _) = task
    model, float_directory = trained
    run = tmp_path / "run"
    run.mkdir()
    model.save(str(run / "model.keras"))
    tokenizer.save(str(run))
    int8_directory = export_run_directory_to_ctranslate2(
        str(run), str(tmp_path / "int8"), quantization="int8"
    )
    float_size = os.path.getsize(os.path.join(float_directory, "model.bin"))
    int8_size = os.path.getsize(os.path.join(int8_directory, "model.bin"))
    assert int8_size < 0.75 * float_size
    translations = CTranslate2Translator(
        int8_directory, compute_type="int8", intra_threads=1
    ).translate(sources[:4])
    assert len(translations) == 4 and all(isinstance(t, str) for t in translations)


def test_export_errors(task, trained, tmp_path):
    tokenizer, _, _ = task
    model, directory = trained
    with pytest.raises(RuntimeError, match="already exists"):
        export_ctranslate2(model, tokenizer, directory)
    with pytest.raises(ValueError, match="quantization must be"):
        export_ctranslate2(model, tokenizer, str(tmp_path / "a"), quantization="int3")
    larger = SubwordTokenizer.train(task[1][0] + task[1][1], VOCABULARY_SIZE + 1)
    with pytest.raises(ValueError, match="not trained together"):
        export_ctranslate2(model, larger, str(tmp_path / "b"))
    with pytest.raises(ValueError, match="keras_transformer.Transformer"):
        export_ctranslate2(keras.Sequential(), tokenizer, str(tmp_path / "c"))
    with pytest.raises(FileNotFoundError, match="vocab.spm"):
        export_ctranslate2(model, str(tmp_path), str(tmp_path / "d"))
    with pytest.raises(FileNotFoundError, match="model.keras"):
        export_run_directory_to_ctranslate2(str(tmp_path), str(tmp_path / "e"))
    with pytest.raises(FileNotFoundError, match=METADATA_FILENAME):
        CTranslate2Translator(str(tmp_path))
