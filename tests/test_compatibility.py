"""Files written by keras_transformer 0.1.0 load and give the same numbers.

The fixtures were saved by the version before the package's modules moved
(their configs name modules such as ``keras_transformer.model`` and
``keras_transformer.hub.tokenizer``); Keras finds the classes by their
registered names, which must never change (``transformer_keras_model.keras``,
an older `Transformer` file, is checked in test_hub.py):

* ``run_directory_0_1_0/``: a run directory of ``keras-transformer train``
  (``model.keras``, ``vocab.spm``, ``config.json``, ``results.json``);
* ``numbers_preset/``: a keras-hub preset of the task (``save_to_preset``).

Both hold a `Transformer` (logits out), the model of earlier versions; the
backbone of today's task is a `TransformerBackbone` (hidden states out), so
these files also check that the old model still loads where a backbone is
expected, with the same numbers.
"""

import importlib
import json
import os
import shutil

import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import FIXTURES

RUN_DIRECTORY = os.path.join(FIXTURES, "run_directory_0_1_0")
INPUTS = {
    "encoder_token_ids": np.array([[2, 10, 20, 30, 3, 0, 0], [2, 40, 3, 0, 0, 0, 0]], "int32"),
    "decoder_token_ids": np.array([[2, 11, 12, 13], [2, 50, 60, 0]], "int32"),
}
REGISTERED_NAMES = (
    "keras_transformer>Transformer",
    "keras_transformer>TransformerBackbone",
    "keras_transformer>TransformerSeq2SeqLM",
    "keras_transformer>TransformerSeq2SeqLMPreprocessor",
    "keras_transformer>TransformerTokenizer",
    "keras_transformer>LabelSmoothedCrossEntropy",
    "keras_transformer>MaskedTokenAccuracy",
    "keras_transformer>TransformerSchedule",
)


def _logits(model):
    return keras.ops.convert_to_numpy(model(INPUTS, training=False))


def test_registered_names_are_stable():
    for name in REGISTERED_NAMES:
        assert keras.saving.get_registered_object(name) is not None, name


def test_run_directory_model_loads_with_the_same_logits():
    expected = np.load(os.path.join(FIXTURES, "run_directory_0_1_0_logits.npy"))
    model = keras.saving.load_model(
        os.path.join(RUN_DIRECTORY, "model.keras"), compile=True, safe_mode=True
    )
    assert isinstance(model, kt.Transformer)
    np.testing.assert_allclose(_logits(model), expected, atol=1e-4)
    # The same file through the package's loaders.
    np.testing.assert_allclose(
        _logits(kt.Translator.from_directory(RUN_DIRECTORY).model), expected, atol=1e-4
    )
    np.testing.assert_allclose(
        _logits(kt.Transformer.from_preset(RUN_DIRECTORY)), expected, atol=1e-4
    )
    # As a backbone: the same `Transformer`, whose projected decoder output
    # is those logits.
    backbone = kt.TransformerBackbone.from_preset(RUN_DIRECTORY)
    assert type(backbone) is kt.Transformer
    hidden = kt.TransformerBackbone.from_config(backbone.get_config())
    hidden.set_weights(backbone.get_weights())
    outputs = hidden(INPUTS, training=False)["decoder_sequence_output"]
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(hidden.logits(outputs)), expected, atol=1e-4
    )


def test_run_directory_translates_as_before():
    with open(os.path.join(FIXTURES, "run_directory_0_1_0_translations.json"), encoding="utf-8") as f:
        recorded = json.load(f)
    translator = kt.Translator.from_directory(RUN_DIRECTORY)
    translations = translator.translate(recorded["inputs"], beam_size=recorded["beam_size"])
    assert translations == recorded["translations"]


def test_run_directory_loads_as_a_keras_hub_task(tmp_path):
    task = kt.TransformerSeq2SeqLM.from_preset(RUN_DIRECTORY)
    assert task.backbone.num_layers == 1 and task.backbone.d_model == 32
    # The run's max_length (32, not the preprocessor's default 128).
    assert task.preprocessor.encoder_sequence_length == 32
    # The run's decoding settings (config.json) become the task's defaults.
    run = tmp_path / "run"
    shutil.copytree(RUN_DIRECTORY, run)
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    config.update(beam_size=6, alpha=1.0, max_extra_length=20)
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    task = kt.TransformerSeq2SeqLM.from_preset(str(run))
    assert (task.beam_size, task.alpha, task.max_extra_length) == (6, 1.0, 20)


def test_preset_written_before_loads():
    """Its translations are checked where it serves as the trained model
    (models/transformer/test_hub.py, test_translator.py)."""
    preset = os.path.join(FIXTURES, "numbers_preset")
    task = kt.TransformerSeq2SeqLM.from_preset(preset)
    assert isinstance(task.backbone, kt.Transformer) and task.backbone.num_layers == 2
    assert task.preprocessor.tokenizer.id_to_token(kt.EOS_ID) == "</s>"
    # The task's settings of its task.json (not the defaults: beam 4 and
    # max_extra_length 16 there, the preprocessor's 24 tokens).
    assert (task.beam_size, task.max_extra_length, task.batch_size) == (4, 16, 32)
    assert task.preprocessor.encoder_sequence_length == 24
    # The task's logits are its `Transformer`'s, whose weights loaded.
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(task(INPUTS)), _logits(task.backbone)
    )
    fresh = kt.TransformerSeq2SeqLM.from_preset(preset, load_weights=False)
    assert not np.allclose(_logits(fresh.backbone), _logits(task.backbone))
    assert isinstance(kt.Translator.from_directory(preset).model, kt.Transformer)
    assert type(kt.Transformer.from_preset(preset)) is kt.Transformer
    # keras-hub's `from_preset` of the tokenizer and the preprocessor, whose
    # backbone class today is `TransformerBackbone`, loads them too.
    _check_tokenizer_and_preprocessor_presets(preset, task.preprocessor)


def _check_tokenizer_and_preprocessor_presets(preset, preprocessor):
    tokenizer = kt.TransformerTokenizer.from_preset(preset)
    assert tokenizer.proto == preprocessor.tokenizer.proto
    loaded = kt.TransformerSeq2SeqLMPreprocessor.from_preset(preset)
    assert loaded.get_config() == preprocessor.get_config()
    assert loaded.tokenizer.proto == preprocessor.tokenizer.proto


@pytest.mark.parametrize("old_path", ["keras_transformer.model", "keras_transformer.hub"])
def test_old_deep_import_paths_are_gone(old_path):
    """The CHANGELOG lists the old deep paths as removed; the public names
    moved to `keras_transformer` itself."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old_path)


def test_preset_written_before_resaves_with_a_backbone(tmp_path):
    """The old preset's task, rebuilt on a `TransformerBackbone` with its
    weights, saves a preset of today's layout that keras-hub's own
    `Seq2SeqLM.from_preset` finds, and translates as before."""
    import keras_hub

    old = kt.TransformerSeq2SeqLM.from_preset(os.path.join(FIXTURES, "numbers_preset"))
    backbone = kt.TransformerBackbone.from_config(old.backbone.get_config())
    backbone.set_weights(old.backbone.get_weights())
    task = kt.TransformerSeq2SeqLM(
        backbone, old.preprocessor, decode_options=old.decode_options
    )
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(task(INPUTS)), keras.ops.convert_to_numpy(old(INPUTS))
    )
    task.save_to_preset(str(tmp_path / "preset"))
    config = json.loads((tmp_path / "preset" / "config.json").read_text(encoding="utf-8"))
    assert config["registered_name"] == "keras_transformer>TransformerBackbone"
    sources = ["three hundred twelve", "forty"]
    expected = old.generate(sources, beam_size=2)
    for loaded in (
        kt.TransformerSeq2SeqLM.from_preset(str(tmp_path / "preset")),
        keras_hub.models.Seq2SeqLM.from_preset(str(tmp_path / "preset")),
    ):
        assert type(loaded) is kt.TransformerSeq2SeqLM
        assert type(loaded.backbone) is kt.TransformerBackbone
        assert loaded.generate(sources, beam_size=2) == expected
    _check_tokenizer_and_preprocessor_presets(str(tmp_path / "preset"), old.preprocessor)
