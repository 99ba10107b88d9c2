"""Relative positions (``positional_encoding="relative"``) through the
exports: a model trained briefly under the current backend, saved as a run
directory, scores and translates in CTranslate2 (every backend) and in the
SavedModel (TensorFlow's run: the export's own process is TensorFlow's
under every backend) as `keras_transformer.Translator` does."""

import keras
import numpy as np
import pytest
import tensorflow as tf

ctranslate2 = pytest.importorskip(
    "ctranslate2", reason="ctranslate2 is not installed (the optional extra)"
)

from keras_transformer import Translator  # noqa: E402
from keras_transformer.decoding.forced import token_log_probs  # noqa: E402
from keras_transformer.export.ctranslate2_converter import (  # noqa: E402
    export_run_directory_to_ctranslate2,
)
from keras_transformer.export.ctranslate2_translator import (  # noqa: E402
    CTranslate2Translator,
)
from keras_transformer.export.saved_model import export_saved_model  # noqa: E402
from keras_transformer.special_tokens import EOS_ID  # noqa: E402

import small_models  # noqa: E402
from conftest import to_numpy  # noqa: E402
from small_models import id_arrays  # noqa: E402

pytestmark = pytest.mark.slow

MAX_EXTRA = 24
# Smaller than most sentences' lengths, so that clipping matters.
MAX_RELATIVE_POSITION = 4


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A relative-position model trained a few seconds, as a run directory."""
    tokenizer, pairs, test_pairs = small_models.task(num_test=16)
    model = small_models.trained_model(
        tokenizer, pairs, seed=5, positional_encoding="relative",
        max_relative_position=MAX_RELATIVE_POSITION,
    )
    directory = tmp_path_factory.mktemp("relative") / "run"
    directory.mkdir()
    model.save(str(directory / "model.keras"))
    tokenizer.save(str(directory))
    return model, tokenizer, str(directory), test_pairs


def test_ctranslate2_scores_and_translates_as_the_translator(run, tmp_path):
    model, tokenizer, directory, (sources, targets) = run
    exported = export_run_directory_to_ctranslate2(directory, str(tmp_path / "ct2"))
    translator = CTranslate2Translator(exported, intra_threads=1, batch_size=8)

    encoder, _, labels = id_arrays(tokenizer, sources, targets)
    ours = to_numpy(token_log_probs(model, encoder, labels))
    theirs = translator.score(tokenizer.encode(sources), tokenizer.encode(targets))
    for row, log_probs in enumerate(theirs):
        length = int(np.sum(labels[row] != 0))
        np.testing.assert_allclose(log_probs, ours[row, :length], rtol=0, atol=1e-4)

    kwargs = dict(beam_size=4, alpha=0.6, max_extra_length=MAX_EXTRA)
    ours = Translator(model, tokenizer, batch_size=16)
    hypotheses, _ = ours.generate(tokenizer.encode(sources), **kwargs)
    # Outputs that end before the length limit (where the searches differ
    # by design), and longer than the clipping distance.
    assert all(h[0][-1] == EOS_ID for h in hypotheses)
    assert max(len(h[0]) for h in hypotheses) > MAX_RELATIVE_POSITION + 1
    expected, expected_scores = ours.translate(sources, return_scores=True, **kwargs)
    received, scores = translator.translate(sources, return_scores=True, **kwargs)
    assert received == expected
    np.testing.assert_allclose(scores, expected_scores, rtol=0, atol=1e-4)
    # Compiled decoding (XLA, TensorFlow graphs) does not retrace for other
    # sentences of the same shapes, nor for another runtime alpha.
    traces = ours.generator.trace_count
    assert traces > 0 or keras.config.backend() == "torch"  # torch: not traced
    ours.translate(sources[::-1], **dict(kwargs, alpha=1.0))
    assert ours.generator.trace_count == traces


@pytest.mark.skipif(
    keras.config.backend() != "tensorflow",
    reason="the export runs in a TensorFlow-backend process under every backend: "
    "TensorFlow's run exports and serves once per suite; this backend's Translator "
    "is checked against CTranslate2's above",
)
def test_saved_model_serves_as_the_translator(run, tmp_path):
    pytest.importorskip("tensorflow_text")
    model, tokenizer, directory, (sources, _) = run
    version_dir = export_saved_model(
        directory, str(tmp_path / "export"), warmup=False, beam_size=2, alpha=0.6,
        max_extra_length=MAX_EXTRA,
    )
    loaded = tf.saved_model.load(version_dir)
    served = loaded.signatures["serving_default"](
        sentences=tf.constant(sources, dtype=tf.string)
    )
    translations = [t.decode("utf-8") for t in served["translations"].numpy()]
    expected, expected_scores = Translator(model, tokenizer, batch_size=16).translate(
        sources, beam_size=2, alpha=0.6, max_extra_length=MAX_EXTRA, return_scores=True
    )
    assert translations == expected
    np.testing.assert_allclose(
        served["scores"].numpy(), expected_scores, rtol=0, atol=1e-4
    )
