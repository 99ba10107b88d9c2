"""keras-hub model family: tokenizer, preprocessor, Seq2SeqLM task, presets (issue #14)."""

import collections
import json
import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf

import keras_transformer as kt
from keras_transformer.data import SubwordTokenizer, default_task_splits, make_dataset
from keras_transformer.decoding import DecodeOptions
from keras_transformer.models.transformer import transformer_presets as preset_lib
from keras_transformer.utils.private_apis import one_garbage_collection
from conftest import FIXTURES

VOCABULARY_SIZE = 64
TINY = dict(num_layers=1, d_model=32, num_heads=2, d_ff=64, dropout_rate=0.0)
OTHER_BACKEND = {"tensorflow": "jax", "jax": "torch", "torch": "tensorflow"}


@pytest.fixture(scope="module")
def data():
    splits = default_task_splits(seed=0, num_train=320, num_valid=10, num_test=40)
    src, tgt = splits["train"]
    subword = SubwordTokenizer.train(src + tgt, VOCABULARY_SIZE)
    return {"src": src, "tgt": tgt, "test_src": splits["test"][0], "subword": subword}


@pytest.fixture(scope="module")
def trained(data, tmp_path_factory):
    """A tiny TransformerSeq2SeqLM trained a few epochs on number words, and its preset."""
    keras.utils.set_random_seed(0)
    tokenizer = kt.TransformerTokenizer(proto=data["subword"].proto)
    preprocessor = kt.TransformerSeq2SeqLMPreprocessor(
        tokenizer, encoder_sequence_length=24, decoder_sequence_length=32
    )
    backbone = kt.Transformer(vocabulary_size=VOCABULARY_SIZE, **TINY)
    lm = kt.TransformerSeq2SeqLM(backbone, preprocessor, beam_size=2, max_extra_length=12)
    lm.compile(warmup_steps=20, learning_rate_scale=2.0)
    history = lm.fit(
        {"encoder_text": data["src"], "decoder_text": data["tgt"]},
        batch_size=32,
        epochs=4,
        verbose=0,
    )
    preset = str(tmp_path_factory.mktemp("preset"))
    lm.save_to_preset(preset)
    return {"lm": lm, "history": history.history, "preset": preset}


def weights(model):
    return [np.asarray(keras.ops.convert_to_numpy(w)) for w in model.weights]


# --- tokenizer and preprocessor ---


def test_tokenizer_ids_equal_subword_tokenizer(data):
    tokenizer = kt.TransformerTokenizer(proto=data["subword"].proto)
    assert (tokenizer.pad_token_id, tokenizer.start_token_id, tokenizer.end_token_id) == (
        kt.PAD_ID,
        kt.BOS_ID,
        kt.EOS_ID,
    )
    sentences = data["src"][:20] + data["tgt"][:20]
    ids = [list(map(int, row)) for row in tokenizer(sentences)]
    assert ids == data["subword"].encode(sentences)
    assert tokenizer.detokenize(ids) == sentences


def test_tokenizer_refuses_other_reserved_ids(data):
    import io

    proto = io.BytesIO()
    # SentencePiece's defaults: <unk>=0, <s>=1, </s>=2, no <pad>.
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(data["src"][:300]), model_writer=proto, vocab_size=40
    )
    with pytest.raises(ValueError, match="does not reserve the ids"):
        kt.TransformerTokenizer(proto=proto.getvalue())


def _rows(encoder, decoder, labels):
    """Pairs as tuples of unpadded id lists (the order of batches differs)."""
    rows = []
    for e, d, y in zip(encoder, decoder, labels):
        rows.append(
            (tuple(int(t) for t in e if t), tuple(int(t) for t in d if t), tuple(int(t) for t in y if t))
        )
    return collections.Counter(rows)


def test_preprocessor_output_equals_pipeline(data):
    src, tgt = data["src"][:40], data["tgt"][:40]
    preprocessor = kt.TransformerSeq2SeqLMPreprocessor(
        kt.TransformerTokenizer(proto=data["subword"].proto),
        encoder_sequence_length=40,
        decoder_sequence_length=40,
    )
    x, y, sample_weight = preprocessor({"encoder_text": src, "decoder_text": tgt})
    x = {k: np.asarray(keras.ops.convert_to_numpy(v)) for k, v in x.items()}
    y = np.asarray(keras.ops.convert_to_numpy(y))
    np.testing.assert_array_equal(np.asarray(keras.ops.convert_to_numpy(sample_weight)), y != 0)
    assert x["decoder_token_ids"][0, 0] == kt.BOS_ID
    dataset, _ = make_dataset(src, tgt, data["subword"], shuffle=False, max_length=40)
    expected = collections.Counter()
    for inputs, labels in dataset.as_numpy_iterator():
        expected += _rows(inputs["encoder_token_ids"], inputs["decoder_token_ids"], labels)
    assert sum(expected.values()) == 40
    assert _rows(x["encoder_token_ids"], x["decoder_token_ids"], y) == expected


def test_preprocessor_runs_in_tf_data(data):
    preprocessor = kt.TransformerSeq2SeqLMPreprocessor(
        kt.TransformerTokenizer(proto=data["subword"].proto),
        encoder_sequence_length=24,
        decoder_sequence_length=32,
    )
    pairs = {"encoder_text": data["src"][:8], "decoder_text": data["tgt"][:8]}
    keras.utils.set_random_seed(3)  # Must not break the TF Text resource.
    dataset = tf.data.Dataset.from_tensor_slices(pairs).batch(8).map(preprocessor)
    (x, y, _), = list(dataset.as_numpy_iterator())
    eager_x, eager_y, _ = preprocessor(pairs)
    np.testing.assert_array_equal(y, keras.ops.convert_to_numpy(eager_y))
    np.testing.assert_array_equal(
        x["encoder_token_ids"], keras.ops.convert_to_numpy(eager_x["encoder_token_ids"])
    )
    with pytest.raises(ValueError, match="'encoder_text' and 'decoder_text'"):
        preprocessor({"source": ["one"]})


# --- the task ---


def test_fit_on_strings_lowers_the_loss(trained):
    loss = trained["history"]["loss"]
    assert loss[-1] < loss[0] - 0.5, loss
    lm = trained["lm"]
    assert isinstance(lm.loss, kt.LabelSmoothedCrossEntropy)
    assert lm.loss.label_smoothing == 0.1
    config = lm.optimizer.get_config()
    assert (config["beta_1"], config["beta_2"], config["epsilon"]) == (0.9, 0.98, 1e-9)


def test_generate_equals_translator(trained, data):
    lm = trained["lm"]
    sentences = data["test_src"][:8]
    translator = kt.Translator(lm.backbone, data["subword"])
    expected = translator.translate(sentences, beam_size=2, max_extra_length=12)
    assert lm.generate(sentences) == expected
    # One tokenizer: the task's `Translator` reads the preprocessor's own.
    assert lm.translator().tokenizer is lm.preprocessor.tokenizer
    assert lm.generate(sentences[0]) == expected[0]
    greedy = translator.translate(sentences, beam_size=1, max_extra_length=12)
    assert lm.generate(sentences, beam_size=1) == greedy
    texts, scores = lm.generate(sentences, num_return=2, return_scores=True)
    assert len(texts[0]) == 2 and scores[0][0] >= scores[0][1]


def test_preset_round_trip(trained, data):
    lm = trained["lm"]
    files = set(os.listdir(trained["preset"]))
    assert {"config.json", "model.weights.h5", "task.json", "tokenizer.json", "assets"} <= files
    loaded = kt.TransformerSeq2SeqLM.from_preset(trained["preset"])
    for a, b in zip(weights(lm.backbone), weights(loaded.backbone)):
        np.testing.assert_allclose(a, b, atol=1e-6)
    tokenizer = loaded.preprocessor.tokenizer
    assert tokenizer.proto == lm.preprocessor.tokenizer.proto
    assert tokenizer.get_vocabulary() == lm.preprocessor.tokenizer.get_vocabulary()
    assert (loaded.beam_size, loaded.alpha, loaded.max_extra_length) == (2, 0.6, 12)
    assert loaded.preprocessor.decoder_sequence_length == 32
    sentences = data["test_src"][:12]
    assert loaded.generate(sentences) == lm.generate(sentences)
    # keras-hub's own entry points find the family's classes.
    import keras_hub

    assert isinstance(keras_hub.models.Backbone.from_preset(trained["preset"]), kt.Transformer)
    backbone = kt.Transformer.from_preset(trained["preset"])
    np.testing.assert_allclose(weights(backbone)[0], weights(lm.backbone)[0], atol=1e-6)
    assert kt.TransformerTokenizer.from_preset(trained["preset"]).proto == tokenizer.proto


def test_preset_loads_under_another_backend(trained, data):
    sentences = data["test_src"][:12]
    script = (
        "import json, sys, numpy as np, keras, keras_transformer as kt\n"
        "lm = kt.TransformerSeq2SeqLM.from_preset(sys.argv[1])\n"
        "print(json.dumps({'texts': lm.generate(json.loads(sys.argv[2])),"
        " 'sums': [float(np.sum(keras.ops.convert_to_numpy(w))) for w in lm.backbone.weights]}))\n"
    )
    env = dict(os.environ, KERAS_BACKEND=OTHER_BACKEND[keras.config.backend()])
    result = subprocess.run(
        [sys.executable, "-c", script, trained["preset"], json.dumps(sentences)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    other = json.loads(result.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(
        other["sums"], [float(np.sum(w)) for w in weights(trained["lm"].backbone)], rtol=1e-5, atol=1e-5
    )
    assert other["texts"] == trained["lm"].generate(sentences)


def test_run_directory_is_a_preset(trained, data, tmp_path):
    lm = trained["lm"]
    run = tmp_path / "run"
    run.mkdir()
    lm.backbone.save(str(run / "model.keras"))
    data["subword"].save(str(run))
    (run / "config.json").write_text(json.dumps({"beam_size": 3, "alpha": 0.5, "max_length": 24}))
    loaded = kt.TransformerSeq2SeqLM.from_preset(str(run))
    assert (loaded.beam_size, loaded.alpha) == (3, 0.5)
    sentences = data["test_src"][:8]
    expected = kt.Translator(lm.backbone, data["subword"]).translate(
        sentences, beam_size=3, alpha=0.5, max_extra_length=50
    )
    assert loaded.generate(sentences) == expected
    assert isinstance(kt.Transformer.from_preset(str(run)), kt.Transformer)
    # A run directory with a preset/ inside loads that preset.
    shutil.copytree(trained["preset"], str(run / "preset"))
    (run / "model.keras").unlink()
    assert kt.TransformerSeq2SeqLM.from_preset(str(run)).beam_size == 2


def test_enable_lora_trains_only_lora_weights(trained, data):
    lm = kt.TransformerSeq2SeqLM.from_preset(trained["preset"])
    lm.backbone.enable_lora(8)
    names = {w.path.split("/")[-1] for w in lm.trainable_weights}
    assert names == {"lora_kernel_a", "lora_kernel_b"}
    # Per layer pair: encoder qkv; decoder qkv, query, key_value.
    assert len(lm.trainable_weights) == 2 * 4 * TINY["num_layers"]
    before = {w.path: np.array(keras.ops.convert_to_numpy(w)) for w in lm.weights}
    lm.compile(optimizer=keras.optimizers.Adam(1e-3))
    lm.fit({"encoder_text": data["src"][:32], "decoder_text": data["tgt"][:32]}, batch_size=16, verbose=0)
    changed = {
        w.path.split("/")[-1]
        for w in lm.weights
        if not np.array_equal(before[w.path], keras.ops.convert_to_numpy(w))
    }
    # lora_kernel_b starts at zero, so after the first step only it moves.
    assert changed and changed <= {"lora_kernel_a", "lora_kernel_b"}, changed


# --- presets: registry and bad input ---


def test_presets_registry_separates_architectures_from_trained(trained):
    presets = kt.Transformer.presets
    assert {presets[name]["kind"] for name in ("tiny", "small", "base", "big")} == {"architecture"}
    model = kt.Transformer.from_preset("tiny", vocabulary_size=40)
    assert model.vocabulary_size == 40 and model.num_layers == 2
    kt.register_trained_preset("numbers_tiny", trained["preset"], "test model")
    try:
        assert kt.Transformer.presets["numbers_tiny"]["kind"] == "trained"
        assert kt.TransformerSeq2SeqLM.from_preset("numbers_tiny").beam_size == 2
    finally:
        preset_lib.TRAINED_PRESETS.pop("numbers_tiny")
    with pytest.raises(ValueError, match="'base' is an architecture preset"):
        kt.TransformerSeq2SeqLM.from_preset("base")
    with pytest.raises(ValueError, match="architecture preset"):
        kt.register_trained_preset("tiny", trained["preset"])


def _copy(preset, tmp_path, name):
    target = tmp_path / name
    shutil.copytree(preset, str(target))
    return target


def test_preset_without_weights_or_tokenizer(trained, tmp_path):
    no_weights = _copy(trained["preset"], tmp_path, "no_weights")
    (no_weights / "model.weights.h5").unlink()
    with pytest.raises(ValueError, match=r"no weights: .*model\.weights\.h5"):
        kt.TransformerSeq2SeqLM.from_preset(str(no_weights))
    no_tokenizer = _copy(trained["preset"], tmp_path, "no_tokenizer")
    (no_tokenizer / "assets" / "tokenizer" / "vocabulary.spm").unlink()
    with pytest.raises(ValueError, match=r"no tokenizer: .*vocabulary\.spm"):
        kt.TransformerSeq2SeqLM.from_preset(str(no_tokenizer))
    run = tmp_path / "run"
    run.mkdir()
    trained["lm"].backbone.save(str(run / "model.keras"))
    with pytest.raises(ValueError, match=r"vocab\.spm.*missing \(no tokenizer\)"):
        kt.TransformerSeq2SeqLM.from_preset(str(run))


def test_preset_with_mismatched_tokenizer(trained, data, tmp_path):
    too_big = _copy(trained["preset"], tmp_path, "too_big")
    bigger = SubwordTokenizer.train(data["src"] + data["tgt"], VOCABULARY_SIZE + 16)
    (too_big / "assets" / "tokenizer" / "vocabulary.spm").write_bytes(bigger.proto)
    with pytest.raises(ValueError, match=r"vocabulary\.spm' has 80 pieces but the model has vocabulary_size=64"):
        kt.TransformerSeq2SeqLM.from_preset(str(too_big))
    import io

    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(data["src"][:300]), model_writer=proto, vocab_size=40
    )
    reserved = _copy(trained["preset"], tmp_path, "reserved")
    (reserved / "assets" / "tokenizer" / "vocabulary.spm").write_bytes(proto.getvalue())
    with pytest.raises(ValueError, match=r"vocabulary\.spm' does not reserve the ids"):
        kt.TransformerSeq2SeqLM.from_preset(str(reserved))


def test_preset_of_another_architecture(trained, tmp_path):
    other = _copy(trained["preset"], tmp_path, "bart")
    config = json.loads((other / "config.json").read_text())
    config["registered_name"] = "keras_hub>BartBackbone"
    (other / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"config\.json' describes a keras_hub>BartBackbone"):
        kt.TransformerSeq2SeqLM.from_preset(str(other))
    with pytest.raises(ValueError, match="another architecture"):
        kt.Transformer.from_preset(str(other))


def test_keras_file_saved_before_backbone_loads():
    """A .keras file written when Transformer subclassed keras.Model directly."""
    import keras_hub

    model = keras.saving.load_model(
        os.path.join(FIXTURES, "transformer_keras_model.keras"), safe_mode=True
    )
    assert isinstance(model, kt.Transformer)
    assert isinstance(model, keras_hub.models.Backbone)
    inputs = {
        "encoder_token_ids": np.array([[5, 6, 7, 3, 0]], "int32"),
        "decoder_token_ids": np.array([[2, 8, 9]], "int32"),
    }
    expected = np.load(os.path.join(FIXTURES, "transformer_keras_model_logits.npy"))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model(inputs)), expected, atol=1e-5)


# --- a trained preset (tests/fixtures/numbers_preset, made by make_numbers_preset.py) ---

NUMBERS_PRESET = os.path.join(FIXTURES, "numbers_preset")


@pytest.fixture(scope="module")
def numbers():
    splits = default_task_splits(seed=0)
    src, tgt = splits["test"]
    return {"lm": kt.TransformerSeq2SeqLM.from_preset(NUMBERS_PRESET), "src": src[:64], "tgt": tgt[:64]}


def test_trained_preset_translates_and_keeps_its_settings(numbers):
    lm = numbers["lm"]
    assert lm.decode_options == DecodeOptions(max_extra_length=16)
    translations = lm.generate(numbers["src"], batch_size=64)
    exact = np.mean([a == b for a, b in zip(translations, numbers["tgt"])])
    assert exact >= 0.95, exact
    numbers["translations"] = translations


def test_quantize_int8_keeps_translations_of_a_trained_preset(numbers, tmp_path):
    expected = numbers.get("translations") or numbers["lm"].generate(numbers["src"], batch_size=64)
    # Translator(quantize="int8"): int8 kernels with float inputs, in place.
    translator = kt.Translator.from_directory(NUMBERS_PRESET, quantize="int8", batch_size=64)
    assert any("int8" in str(v.dtype) for v in translator.model.weights)
    quantized = translator.translate(numbers["src"], max_extra_length=16)
    identical = np.mean([a == b for a, b in zip(quantized, expected)])
    assert identical >= 0.95, identical
    # The task's quantize("int8") is the same quantization.
    lm = kt.TransformerSeq2SeqLM.from_preset(NUMBERS_PRESET)
    with one_garbage_collection():  # not one per deleted float kernel
        lm.quantize("int8")
    assert lm.backbone.get_config()["dtype"]["class_name"] == "DTypePolicyMap"
    # int8 kernels move the logits, by a small fraction of their range.
    inputs = {
        "encoder_token_ids": np.array([[41, 52, 10, 49, 3, 0]], "int32"),
        "decoder_token_ids": np.array([[2, 41, 39, 43]], "int32"),
    }
    logits = keras.ops.convert_to_numpy(numbers["lm"].backbone(inputs))
    quantized_logits = keras.ops.convert_to_numpy(lm.backbone(inputs))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(translator.model(inputs)), quantized_logits)
    assert not np.array_equal(logits, quantized_logits)
    assert np.abs(logits - quantized_logits).max() < 0.05 * np.ptp(logits)
    # A quantized preset reloads quantized, with the same weights.
    lm.save_to_preset(str(tmp_path))
    reloaded = kt.TransformerSeq2SeqLM.from_preset(str(tmp_path))
    assert reloaded.backbone.get_config()["dtype"]["class_name"] == "DTypePolicyMap"
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(reloaded.backbone(inputs)), quantized_logits)


def test_generate_takes_the_decode_options(numbers):
    lm = numbers["lm"]
    sentences = numbers["src"][:4]
    greedy = lm.generate(sentences, beam_size=1)
    # top_k=1 sampling is greedy search; a seed makes sampling reproducible.
    assert lm.generate(sentences, beam_size=1, sampling=True, top_k=1, seed=3) == greedy
    sampled = lm.generate(sentences, beam_size=1, sampling=True, temperature=5.0, seed=7)
    assert lm.generate(sentences, beam_size=1, sampling=True, temperature=5.0, seed=7) == sampled
    options = DecodeOptions(beam_size=1)
    assert lm.generate(sentences, options=options) == greedy
    # decoder_text: target prefixes, one per source ("" for none).
    prefixed = lm.generate(
        {"encoder_text": sentences[:2], "decoder_text": ["vier", ""]}, beam_size=1
    )
    assert prefixed[0].startswith("vier") and prefixed[1] == greedy[1]
    # constraints: target phrases every output contains.
    constrained = lm.generate(sentences[:2], constraints=[["sieben"], []], beam_size=2)
    assert "sieben" in constrained[0]
    assert "acht" in lm.generate(sentences[0], constraints=["acht"], beam_size=2)
    with pytest.raises(ValueError, match="constraints"):
        lm.generate(sentences[:2], constraints=[["sieben"]])
    texts, scores = lm.generate(sentences[:2], num_return=3, return_scores=True)
    assert [len(t) for t in texts] == [3, 3] and all(list(s) == sorted(s, reverse=True) for s in scores)
    # Bad options are refused with their name, before any compilation.
    for bad, name in (({"top_p": 1.5, "sampling": True, "beam_size": 1}, "top_p"),
                      ({"num_return": 5}, "num_return"), ({"temperature": 0.5}, "temperature"),
                      ({"beam_size": 0}, "beam_size")):  # fmt: skip
        with pytest.raises(ValueError, match=name):
            lm.generate(sentences, **bad)
    with pytest.raises(ValueError, match="2 prefixes for 4 sources"):
        lm.generate({"encoder_text": sentences, "decoder_text": ["", ""]})
    with pytest.raises(ValueError, match="Unknown decode option"):
        lm.generate(sentences, beam_width=2)


def test_translator_and_cli_accept_a_preset_directory(numbers, tmp_path, capsys):
    from keras_transformer.cli import main as cli

    translator = kt.Translator.from_directory(NUMBERS_PRESET)
    sentences = numbers["src"][:4]
    assert translator.translate(sentences, max_extra_length=16) == numbers["lm"].generate(sentences)
    source = tmp_path / "src.txt"
    source.write_text("\n".join(sentences) + "\n")
    assert cli.main(["translate", "--model-dir", NUMBERS_PRESET, "--input", str(source)]) == 0
    # The preset's generation defaults (max_extra_length=16) apply.
    assert capsys.readouterr().out.splitlines() == numbers["lm"].generate(sentences)
    # A run directory with the preset in preset/ is found too.
    run = tmp_path / "run"
    shutil.copytree(NUMBERS_PRESET, str(run / "preset"))
    from keras_transformer.models.transformer.transformer_loader import find_trained_model

    assert find_trained_model(str(run)).kind == "preset"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="No trained model in .*empty"):
        kt.Translator.from_directory(str(empty))
    # A corrupt config.json is named, not reported as "no trained model".
    (run / "preset" / "config.json").write_text('{"registered_name": ')
    with pytest.raises(ValueError, match=r"Cannot read the preset file .*config\.json"):
        kt.Translator.from_directory(str(run))
