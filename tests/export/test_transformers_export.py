"""Hugging Face Transformers export: the exported ``MarianMTModel``
directory computes and translates as the model does.

A tiny model is trained briefly on the number-words task under the current
backend (the paper's interleaved sinusoid, so the export permutes the
model dimension; LayerNorm epsilon 1e-6 where Marian has 1e-5), exported,
and loaded with ``MarianMTModel`` and ``MarianTokenizer``: the tokenizer
gives the package's source ids, the logits agree within 1e-4, and greedy
and beam search give `Translator`'s outputs. Beam search is compared with
the length penalty off on both sides (they differ in formula otherwise, see
`keras_transformer.export.transformers_exporter`). A converted OPUS-MT
format checkpoint exports back to its own weights and ids; models Marian
cannot express are refused.
"""

import itertools
import json
import os
import sys
import tempfile

import keras
import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "convert"))

from marian_checkpoint import make_marian_directory  # noqa: E402

from keras_transformer import Transformer, Translator  # noqa: E402
from keras_transformer.cli.main import main  # noqa: E402
from keras_transformer.convert import convert_marian  # noqa: E402
from keras_transformer.convert.marian import read_safetensors  # noqa: E402
from keras_transformer.data.default_task import default_task_splits  # noqa: E402
from keras_transformer.decoding.ensemble import Ensemble  # noqa: E402
from keras_transformer.export.transformers_exporter import (  # noqa: E402
    TransformersExportError,
    export_to_transformers,
)
from keras_transformer.models.transformer.subword_tokenizer import (  # noqa: E402
    SubwordTokenizer,
)
from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy  # noqa: E402
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID  # noqa: E402

import small_models  # noqa: E402

VOCABULARY_SIZE = 64
NUM_TEST = 16
MAX_EXTRA = 24
LENGTH = 24


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(tokenizer, test sources, model, run directory, exported directory)."""
    splits = default_task_splits(seed=0, num_train=2000, num_valid=0, num_test=NUM_TEST)
    source, target = splits["train"]
    tokenizer = SubwordTokenizer.train(
        itertools.chain(source, target), vocabulary_size=VOCABULARY_SIZE
    )
    keras.utils.set_random_seed(3)
    model = Transformer(
        vocabulary_size=VOCABULARY_SIZE, num_layers=2, d_model=32, num_heads=4,
        d_ff=64, dropout_rate=0.0,
    )  # fmt: skip
    model.compile(optimizer=keras.optimizers.Adam(5e-3), loss=LabelSmoothedCrossEntropy(0.1))
    encoder = np.zeros((len(source), LENGTH), "int32")
    decoder = np.zeros((len(source), LENGTH), "int32")
    labels = np.zeros((len(source), LENGTH), "int32")
    for row, (s, t) in enumerate(zip(tokenizer.encode(source), tokenizer.encode(target))):
        s, t = s + [EOS_ID], t + [EOS_ID]
        encoder[row, : len(s)] = s
        labels[row, : len(t)] = t
        decoder[row, : len(t)] = [BOS_ID] + t[:-1]
    model.fit({"encoder_token_ids": encoder, "decoder_token_ids": decoder}, labels,
              batch_size=100, epochs=3, verbose=0)  # fmt: skip
    root = tmp_path_factory.mktemp("transformers")
    run = root / "run"
    run.mkdir()
    model.save(str(run / "model.keras"))
    tokenizer.save(str(run))
    exported = str(root / "marian")
    assert main(["export", "--model-dir", str(run), "--export-dir", exported,
                 "--format", "transformers", "--beam-size", "4"]) == 0  # fmt: skip
    return tokenizer, splits["test"][0], model, str(run), exported




def test_directory_and_tokenizer(trained):
    tokenizer, sources, _, _, exported = trained
    assert sorted(os.listdir(exported)) == [
        "config.json", "generation_config.json", "model.safetensors", "source.spm",
        "target.spm", "tokenizer_config.json", "vocab.json",
    ]  # fmt: skip
    vocab = _json(exported, "vocab.json")
    config = _json(exported, "config.json")
    generation = _json(exported, "generation_config.json")
    # EOS 0, UNK 1, the pieces in order, PAD and BOS (the start token) last.
    assert (vocab["</s>"], vocab["<unk>"], vocab["<pad>"], vocab["<s>"]) == (0, 1, 62, 63)
    assert (config["eos_token_id"], config["pad_token_id"], config["decoder_start_token_id"]) == (0, 62, 63)
    assert generation["num_beams"] == 4 and generation["bad_words_ids"] == [[62], [63]]
    hf_tokenizer = transformers.MarianTokenizer.from_pretrained(exported)
    package = {PAD_ID: 62, 1: 1, BOS_ID: 63, EOS_ID: 0}
    expected = [[package.get(i, i - 2) for i in ids] + [0] for ids in tokenizer.encode(sources)]
    assert hf_tokenizer(sources).input_ids == expected


def _json(directory, name):
    with open(os.path.join(directory, name), encoding="utf-8") as f:
        return json.load(f)


def _hf(exported):
    return transformers.MarianMTModel.from_pretrained(exported).eval()


def _to_marian(ids):
    return [{PAD_ID: 62, 1: 1, BOS_ID: 63, EOS_ID: 0}.get(i, i - 2) for i in ids]


def test_logits_equal(trained):
    tokenizer, sources, model, _, exported = trained
    assert small_models.marian_logits_error(model, exported, tokenizer, sources) < 1e-4


@pytest.mark.parametrize("beam_size", [1, 4])
def test_search_equals_translator(trained, beam_size):
    tokenizer, sources, model, _, exported = trained
    translator = Translator(model, tokenizer, batch_size=NUM_TEST)
    kwargs = dict(beam_size=beam_size, alpha=0.0, max_extra_length=MAX_EXTRA)
    ours, _ = translator.generate(tokenizer.encode(sources), **kwargs)
    texts = translator.translate(sources, **kwargs)
    hf_model, hf_tokenizer = _hf(exported), transformers.MarianTokenizer.from_pretrained(exported)
    theirs, their_texts = [], []
    for ids, (hypothesis,) in zip(tokenizer.encode(sources), ours):
        # Our outputs end with EOS before the limit (there the searches differ).
        assert hypothesis[-1] == EOS_ID and len(hypothesis) < len(ids) + MAX_EXTRA
        with torch.no_grad():
            generated = hf_model.generate(
                torch.tensor([_to_marian(ids) + [0]]), num_beams=beam_size,
                length_penalty=0.0, early_stopping=False, do_sample=False,
                max_length=len(ids) + MAX_EXTRA + 1,
            )[0].tolist()[1:]  # fmt: skip
        theirs.append(generated[: generated.index(0) + 1])
        their_texts.append(hf_tokenizer.decode(generated, skip_special_tokens=True))
    assert theirs == [_to_marian(h[0]) for h in ours]
    assert their_texts == texts
    assert len(set(texts)) > NUM_TEST // 2  # not trivially equal


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    root = tmp_path_factory.mktemp("opus")
    directory = str(root / "opus-mt-xx-yy")
    _, _, text = make_marian_directory(directory)
    run = str(root / "run")
    convert_marian(directory, run)
    return directory, run, text[:20]


def test_opus_mt_round_trip(marian, tmp_path):
    directory, run, sentences = marian
    exported = export_to_transformers(run, str(tmp_path / "back"))
    original = read_safetensors(os.path.join(directory, "model.safetensors"))
    back = read_safetensors(os.path.join(exported, "model.safetensors"))
    assert sorted(back) == sorted(original)
    for name, value in original.items():
        np.testing.assert_allclose(back[name], value, rtol=0, atol=2e-6, err_msg=name)
    assert _json(exported, "vocab.json") == _json(directory, "vocab.json")
    config = _json(exported, "config.json")
    original_config = _json(directory, "config.json")
    for key in ("vocab_size", "pad_token_id", "eos_token_id", "decoder_start_token_id",
                "d_model", "activation_function", "encoder_layers", "encoder_ffn_dim"):  # fmt: skip
        assert config[key] == original_config[key], key
    generation = _json(exported, "generation_config.json")
    assert generation["num_beams"] == 3 and generation["bad_words_ids"] == [[277]]
    ours = transformers.MarianTokenizer.from_pretrained(exported)
    theirs = transformers.MarianTokenizer.from_pretrained(directory)
    assert ours(sentences).input_ids == theirs(sentences).input_ids


def test_refusals_before_any_work(trained, tmp_path):
    tokenizer, _, model, run, _ = trained
    exists = tmp_path / "exists"
    exists.mkdir()
    with pytest.raises(TransformersExportError, match="exists"):
        export_to_transformers(run, str(exists))
    assert os.listdir(exists) == []
    with pytest.raises(TransformersExportError, match="ensemble"):
        export_to_transformers([run, run], str(tmp_path / "a"))
    with pytest.raises(TransformersExportError, match="ensemble"):
        export_to_transformers(Ensemble([model, model]), str(tmp_path / "a"), tokenizer)
    small = dict(vocabulary_size=VOCABULARY_SIZE, num_layers=1, d_model=8, num_heads=2, d_ff=8)
    cases = [
        (dict(normalization_position="pre"), "normalization_position='pre' \\(pre-norm"),
        (dict(positional_encoding="learned", max_length=16), "positional_encoding='learned'"),
        (dict(share_embeddings=False), "share_embeddings=False"),
    ]
    for options, message in cases:
        with pytest.raises(TransformersExportError, match=message):
            export_to_transformers(Transformer(**small, **options), str(tmp_path / "a"), tokenizer)
    assert sorted(os.listdir(tmp_path)) == ["exists"]
    # The CLI: one line, exit status 1.
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "--model-dir", run, "--export-dir", str(exists), "--format", "transformers"])
    assert exit_info.value.code == 1


def test_from_preset_converts_a_marian_directory(marian, tmp_path, monkeypatch):
    keras_hub = pytest.importorskip("keras_hub")
    from keras_transformer.models import TransformerSeq2SeqLM
    from keras_transformer.models.transformer import transformer_preset_converters as converters

    directory, run, sentences = marian
    sentences = sentences[:6]
    # The random model favours EOS: min_length makes the outputs differ.
    expected = Translator.from_directory(run).translate(sentences, min_length=5)
    # Each load converts into a new directory under $TMPDIR and removes it
    # once the model is loaded, also when the load fails.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    conversions = []

    def convert(source, output, convert=converters.CONVERTERS["marian"]):
        conversions.append(output)
        convert(source, output)

    monkeypatch.setitem(converters.CONVERTERS, "marian", convert)
    ours = TransformerSeq2SeqLM.from_preset(directory, min_length=5)
    theirs = keras_hub.models.Seq2SeqLM.from_preset(directory, min_length=5)
    with pytest.raises(ValueError, match="no_such_dtype"):
        TransformerSeq2SeqLM.from_preset(directory, dtype="no_such_dtype")
    assert [os.path.dirname(c) for c in conversions] == [str(temporary)] * 3
    assert os.listdir(temporary) == []
    # Outside from_preset: removed at exit (or by remove_converted_preset).
    outside = converters.converted_preset(directory)
    assert os.listdir(temporary) == [os.path.basename(outside)]
    converters.remove_unscoped_presets()  # As at exit.
    assert os.listdir(temporary) == []
    assert isinstance(theirs, TransformerSeq2SeqLM)
    converted = list(TransformerSeq2SeqLM.from_preset(run, min_length=5).generate(sentences))
    reference = Transformer.from_preset(run)  # The converted run's weights (its preset).
    for task in (ours, theirs):
        for a, b in zip(task.backbone.get_weights(), reference.get_weights()):
            np.testing.assert_array_equal(a, b)
        assert list(task.generate(sentences)) == converted
    # The Translator's texts too (the checkpoint keeps out the words of the
    # source side, whose pieces the task's detokenizer and the Translator's
    # would write differently: `make_marian_directory`).
    assert converted == expected
    assert len(set(expected)) > 2


def test_onnx_through_optimum_translates_as_the_translator(trained, tmp_path):
    """Optimum's ONNX export of the exported directory, decoded greedily by
    ONNX Runtime, gives `Translator`'s outputs."""
    pytest.importorskip("optimum.onnxruntime")
    from optimum.exporters.onnx import main_export
    from optimum.onnxruntime import ORTModelForSeq2SeqLM

    tokenizer, sources, model, _, exported = trained
    onnx_dir = str(tmp_path / "onnx")
    main_export(exported, onnx_dir, task="text2text-generation-with-past")
    ort_model = ORTModelForSeq2SeqLM.from_pretrained(onnx_dir)
    hf_tokenizer = transformers.MarianTokenizer.from_pretrained(exported)
    translator = Translator(model, tokenizer, batch_size=NUM_TEST)
    ours, _ = translator.generate(
        tokenizer.encode(sources), beam_size=1, max_extra_length=MAX_EXTRA
    )
    texts = translator.translate(sources, beam_size=1, max_extra_length=MAX_EXTRA)
    theirs, their_texts = [], []
    for ids in tokenizer.encode(sources):
        generated = ort_model.generate(
            torch.tensor([_to_marian(ids) + [0]]), num_beams=1, do_sample=False,
            max_length=len(ids) + MAX_EXTRA + 1,
        )[0].tolist()[1:]  # fmt: skip
        theirs.append(generated[: generated.index(0) + 1] if 0 in generated else generated)
        their_texts.append(hf_tokenizer.decode(generated, skip_special_tokens=True))
    assert theirs == [_to_marian(h[0]) for h in ours]
    assert their_texts == texts
