"""Importing a Hugging Face Marian (OPUS-MT format) checkpoint.

A small randomly initialized ``MarianMTModel`` (built here, saved with
``save_pretrained``; no network) is converted, and the run directory is
compared with Hugging Face: logits, greedy and beam search, the source
ids, the CLI and its refusals.

Beam search is compared with the length penalty off on both sides
(``alpha=0`` here, ``length_penalty=0.0`` in Hugging Face): this package
divides by ``((5 + |Y|) / 6) ** alpha`` and Hugging Face by
``|Y| ** length_penalty``, which agree only at 0. Repetition penalties
are off (Hugging Face's defaults); pad is a bad word in Hugging Face (as in
the OPUS-MT generation configs), PAD and BOS are never chosen here.
"""

import json
import os
import shutil
import sys
import textwrap

import keras
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "export"))

from marian_checkpoint import (  # noqa: E402
    make_marian_directory,
    marian_source_ids,
    marian_text,
    pad_rows,
)
from saved_model_client import SERVE_PRELUDE, serve  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from keras_transformer.cli.main import main  # noqa: E402
from keras_transformer.convert import ConversionError, convert_marian  # noqa: E402
from keras_transformer.models.transformer.transformer_loader import (  # noqa: E402
    load_preset_model,
)
from keras_transformer.models.transformer.translator import Translator  # noqa: E402

MAX_EXTRA_LENGTH = 12
# The random model favours EOS (its output bias), so outputs end soon after
# this many tokens (EOS included: Hugging Face counts the start token, so
# the same number means the same here and there).
MIN_LENGTH = 5


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    """(Marian directory, HF model, vocab.json, source sentences, run dir)."""
    root = tmp_path_factory.mktemp("marian")
    directory = str(root / "opus-mt-xx-yy")
    model, vocabulary, text = make_marian_directory(directory)
    run = str(root / "run")
    assert main(["convert", "--from", "marian", directory, "--output-dir", run]) == 0
    sentences = text[:6] + ["", "Dog dog dog dog ball."]
    return directory, model, vocabulary, sentences, run


@pytest.fixture(scope="module")
def translator(marian):
    """One `Translator` of the converted run for the tests that only
    translate and score with it: its compiled searches are traced once per
    shape and option structure for all of them."""
    return Translator.from_directory(marian[4])


def _package_rows(run, vocabulary):
    """The Marian id of each package id (the embedding row it took)."""
    import sentencepiece as spm

    target = spm.SentencePieceProcessor(model_file=os.path.join(run, "vocab.spm"))
    pad = len(vocabulary) - 1
    rows = []
    for package_id in range(target.get_piece_size()):
        piece = target.id_to_piece(package_id)
        rows.append({0: pad, 1: 1, 2: pad, 3: 0}.get(package_id, vocabulary.get(piece, 1)))
    return np.array(rows)


def test_run_directory_and_config(marian):
    _, _, vocabulary, _, run = marian
    assert sorted(os.listdir(run)) == [
        "assets", "config.json", "metadata.json", "model.weights.h5",
        "model.weights.h5.sha256", "preprocessor.json", "source_tokenizer.json", "source_vocab.spm", "task.json",
        "tokenizer.json", "train_config.json", "vocab.spm",
    ]  # fmt: skip
    # A keras-hub preset too, with both SentencePiece models as its assets.
    for side, name in (("tokenizer", "vocab.spm"), ("source_tokenizer", "source_vocab.spm")):
        with open(os.path.join(run, "assets", side, "vocabulary.spm"), "rb") as f:
            assert f.read() == open(os.path.join(run, name), "rb").read(), side
    task = json.load(open(os.path.join(run, "task.json")))["config"]
    assert task["decode_options"]["beam_size"] == 3 and task["decode_options"]["alpha"] == 0.0
    config = json.load(open(os.path.join(run, "train_config.json")))
    # generation_config.json: num_beams 3, length_penalty 0, max_length 40.
    assert (config["beam_size"], config["alpha"], config["max_extra_length"]) == (3, 0.0, 39)
    model = load_preset_model(run)  # The weights once: the preset's.
    assert model.activation == "swish" and model.sinusoid_layout == "split"
    assert model.output_bias and model.layer_norm_epsilon == 1e-5
    # Marian's ids plus one: its pad row is both PAD and BOS.
    assert model.vocabulary_size == len(vocabulary) + 1


def test_logits_equal_hugging_face(marian):
    directory, hf_model, vocabulary, sentences, run = marian
    translator = Translator.from_directory(run)
    pad = len(vocabulary) - 1
    sentences = [s for s in sentences if s]
    marian_ids = marian_source_ids(directory, vocabulary, sentences)
    package_ids = [ids + [3] for ids in translator.source_tokenizer.encode(sentences)]
    rows = _package_rows(run, vocabulary)
    # The source tokenizer gives Marian's ids, renumbered.
    assert [[int(rows[i]) for i in ids] for ids in package_ids] == marian_ids
    targets = [[5, 9, 12, 30], [7], [3, 4, 40], [], [20, 21], [8, 8, 8, 8, 8], [9]]
    targets = targets[: len(sentences)]
    decoder = pad_rows([[pad] + t for t in targets], pad)
    with torch.no_grad():
        source = torch.tensor(pad_rows(marian_ids, pad))
        expected = hf_model(
            input_ids=source, attention_mask=source != pad, decoder_input_ids=torch.tensor(decoder)
        ).logits.numpy()
    to_package = {int(m): p for p, m in reversed(list(enumerate(rows)))}
    package_decoder = np.vectorize(lambda i: to_package[int(i)])(decoder)
    package_decoder[decoder == pad] = 0
    package_decoder[:, 0] = 2  # BOS: Marian's start token, its pad
    logits = keras.ops.convert_to_numpy(
        translator.model({
            "encoder_token_ids": pad_rows(package_ids, 0).astype("int32"),
            "decoder_token_ids": package_decoder.astype("int32"),
        })
    )  # fmt: skip
    # An id that shares its Marian row with n others has log(n) less bias.
    counts = np.bincount(rows)[rows]
    real = np.arange(decoder.shape[1])[None] <= np.array([len(t) for t in targets])[:, None]
    difference = np.abs(logits + np.log(counts) - expected[..., rows])[real]
    assert difference.max() < 1e-4
    # So the log-probabilities of every token are Marian's.
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected_log_probs = expected - np.log(np.exp(expected).sum(-1, keepdims=True))
    assert np.abs(log_probs[..., 3:] - expected_log_probs[..., rows[3:]])[real].max() < 1e-4


@pytest.mark.parametrize("beam_size", [1, 3])
def test_search_equals_hugging_face_generate(marian, translator, beam_size):
    _assert_search_equals_hugging_face(marian, translator, beam_size)


@pytest.mark.parametrize("beam_size", [1, 3])
@pytest.mark.parametrize(
    "repetition",
    [{"no_repeat_ngram_size": 2}, {"repetition_penalty": 1.7, "no_repeat_ngram_size": 3}],
    ids=["no_repeat_ngram", "penalty_and_ngram"],
)
def test_repetition_options_equal_hugging_face_generate(marian, translator, beam_size, repetition):
    # Hugging Face's semantics: the penalty on the logits in greedy search,
    # on the log-probabilities in beam search; n-grams over the output with
    # its start token. The random model repeats itself, so the options
    # change its outputs (checked) and the comparison means something.
    texts = _assert_search_equals_hugging_face(marian, translator, beam_size, **repetition)
    plain = translator.translate(
        marian[3], beam_size=beam_size, alpha=0.0, max_extra_length=MAX_EXTRA_LENGTH,
        min_length=MIN_LENGTH,
    )
    assert texts != plain


def _assert_search_equals_hugging_face(marian, translator, beam_size, **extra):
    """Our search and Hugging Face's ``generate`` with the same settings give
    the same tokens; returns our texts."""
    directory, hf_model, vocabulary, sentences, run = marian
    options = dict(
        beam_size=beam_size, alpha=0.0, max_extra_length=MAX_EXTRA_LENGTH, min_length=MIN_LENGTH,
        **extra,
    )
    texts = translator.translate(sentences, **options)
    hypotheses, _ = translator.generate(translator.source_tokenizer.encode(sentences), **options)
    rows = _package_rows(run, vocabulary)
    expected_ids, expected_texts = [], []
    for ids in marian_source_ids(directory, vocabulary, sentences):
        with torch.no_grad():
            generated = hf_model.generate(
                torch.tensor([ids]), num_beams=beam_size, length_penalty=0.0,
                do_sample=False, early_stopping=False, min_length=MIN_LENGTH, **extra,
                # The same limit: here the source's tokens (EOS excluded)
                # plus N, EOS included; Hugging Face counts the start
                # token and no EOS (it stops there).
                max_length=len(ids) - 1 + MAX_EXTRA_LENGTH,
            )  # fmt: skip
        output = generated[0].tolist()[1:]
        expected_ids.append(output[: output.index(0)] if 0 in output else output)
        expected_texts.append(marian_text(directory, vocabulary, output))
    # The same tokens (as Marian ids), up to EOS ...
    outputs = [[int(rows[t]) for t in best[0][:-1]] for best in hypotheses]
    assert outputs == expected_ids
    # ... and the same text, every output (the checkpoint keeps out the
    # words of the source side, which Marian's tokenizer writes as raw
    # pieces: `make_marian_directory`).
    assert texts == expected_texts
    # Not trivially equal: the outputs are neither empty nor all the same.
    assert len({t for t in texts if t}) > 2, texts
    return texts


def test_convert_refuses_before_any_work(marian, tmp_path, capsys):
    directory = marian[0]

    def variant(name, edit=None, remove=None):
        copy = tmp_path / name
        shutil.copytree(directory, copy)
        if remove:
            os.remove(copy / remove)
        if edit:
            config = json.load(open(copy / "config.json"))
            config.update(edit)
            json.dump(config, open(copy / "config.json", "w"))
        return str(copy)

    cases = [
        (variant("bart", {"model_type": "bart"}), "'bart' model, not a Marian one"),
        (variant("prenorm", {"normalize_before": True}), "normalize_before=True (pre-norm"),
        (variant("sizes", {"decoder_layers": 3}), "encoder_layers=2 and decoder_layers=3 differ"),
        (variant("gelu_new", {"activation_function": "gelu_new"}), "activation_function='gelu_new'"),
        (variant("no_spm", remove="target.spm"), "lacks target.spm"),
        (variant("no_weights", remove="model.safetensors"), "lacks model.safetensors or pytorch_model.bin"),
    ]  # fmt: skip
    for source, message in cases:
        output = tmp_path / ("run-" + os.path.basename(source))
        with pytest.raises(ConversionError, match=message.replace("(", r"\(")):
            convert_marian(source, output)
        assert not output.exists()
    # The CLI: one line naming the problem, no traceback, exit status 1.
    source, message = cases[0]
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", "--from", "marian", source, "--output-dir", str(tmp_path / "cli")])
    error = capsys.readouterr().err
    assert exit_info.value.code == 1 and message in error and "Traceback" not in error
    assert len(error.strip().splitlines()) == 1
    assert not (tmp_path / "cli").exists()


def test_unused_weight_is_refused(marian, tmp_path):
    """Every weight of the checkpoint must find its place."""
    directory = marian[0]
    copy = tmp_path / "extra"
    shutil.copytree(directory, copy)
    from keras_transformer.convert.marian import read_safetensors

    tensors = read_safetensors(str(copy / "model.safetensors"))
    tensors["model.encoder.layernorm_embedding.weight"] = np.ones(16, "float32")
    _write_safetensors(str(copy / "model.safetensors"), tensors)
    with pytest.raises(ConversionError, match="no place for: encoder.layernorm_embedding.weight"):
        convert_marian(str(copy), str(tmp_path / "run"))


def _write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        data = np.ascontiguousarray(value, "<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}  # fmt: skip
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(encoded).to_bytes(8, "little") + encoded + b"".join(blobs))


def _hugging_face_scores(marian, sources, targets):
    """Hugging Face's total log P(target + </s> | source) of each pair."""
    import sentencepiece as spm

    directory, hf_model, vocabulary, _, _ = marian
    pad = len(vocabulary) - 1
    target_spm = spm.SentencePieceProcessor(model_file=os.path.join(directory, "target.spm"))
    totals = []
    for source_ids, target in zip(marian_source_ids(directory, vocabulary, sources), targets):
        labels = [vocabulary[p] for p in target_spm.encode(target, out_type=str)] + [0]
        with torch.no_grad():
            logits = hf_model(
                input_ids=torch.tensor([source_ids]),
                decoder_input_ids=torch.tensor([[pad] + labels[:-1]]),
            ).logits[0]
        log_probs = torch.log_softmax(logits, -1)
        totals.append(float(log_probs[torch.arange(len(labels)), torch.tensor(labels)].sum()))
    return np.array(totals)


TARGETS = ["Ein hund spielt im park.", "Zwei kinder laufen über die straße.", "Die frau trägt einen hut."]


def test_score_equals_hugging_face(marian, translator):
    """Forced decoding tokenizes sources with the source model and targets
    with the target model."""
    sources = marian[3][:3]
    scores = translator.score(sources, TARGETS)
    np.testing.assert_allclose(scores, _hugging_face_scores(marian, sources, TARGETS), atol=1e-4)


def test_ctranslate2_export_scores_and_translates(marian, tmp_path):
    pytest.importorskip("ctranslate2")
    from keras_transformer.export.ctranslate2_converter import (
        export_run_directory_to_ctranslate2,
    )
    from keras_transformer.export.ctranslate2_translator import CTranslate2Translator

    _, _, _, sentences, run = marian
    output = str(tmp_path / "ct2")
    export_run_directory_to_ctranslate2(run, output)
    assert os.path.isfile(os.path.join(output, "source_vocab.spm"))
    exported = CTranslate2Translator(output, intra_threads=1)
    translator = Translator.from_directory(run)
    sources = sentences[:3]
    token_scores = exported.score(
        translator.source_tokenizer.encode(sources), translator.tokenizer.encode(TARGETS)
    )
    totals = [float(np.sum(s)) for s in token_scores]
    np.testing.assert_allclose(totals, _hugging_face_scores(marian, sources, TARGETS), atol=1e-3)
    options = dict(beam_size=3, alpha=0.0, max_extra_length=MAX_EXTRA_LENGTH)
    # (Blank lines: CTranslate2Translator returns "" without decoding.)
    sentences = [s for s in sentences if s]
    assert exported.translate(sentences, **options) == translator.translate(sentences, **options)


SERVE = SERVE_PRELUDE + textwrap.dedent(
    """
    out = {
        "translations": plain(loaded.signatures["serving_default"](
            sentences=strings(case["sentences"])))["translations"],
        "scores": plain(loaded.signatures["score"](
            sources=strings(case["sources"]), targets=strings(case["targets"])))["scores"],
    }
    print(json.dumps(out))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(keras.config.backend() != "tensorflow", reason="one export: TensorFlow's run")
def test_saved_model_serves_like_the_translator(marian, tmp_path):
    from keras_transformer.export.saved_model import export_saved_model

    _, _, _, sentences, run = marian
    sentences = [s for s in sentences if s]  # blank ones give "" there
    options = dict(beam_size=3, alpha=0.0, max_extra_length=MAX_EXTRA_LENGTH)
    version_dir = export_saved_model(run, str(tmp_path / "export"), warmup=False, **options)
    sources = sentences[:3]
    served = serve(tmp_path, SERVE, version_dir, {
        "sentences": sentences, "sources": sources, "targets": TARGETS,
    })  # fmt: skip
    assert served["translations"] == Translator.from_directory(run).translate(sentences, **options)
    np.testing.assert_allclose(
        served["scores"], _hugging_face_scores(marian, sources, TARGETS), atol=1e-4
    )


def test_fine_tuning_lowers_the_loss(marian):
    """The imported model trains with `fit` (its output bias and shared
    PAD/BOS rows included): a few updates on a few pairs lower the loss."""
    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy

    _, _, _, sentences, run = marian
    translator = Translator.from_directory(run)
    model = translator.model
    sources = translator.source_tokenizer.encode(sentences[:3])
    targets = translator.tokenizer.encode(TARGETS)
    inputs = {
        "encoder_token_ids": pad_rows([s + [3] for s in sources], 0).astype("int32"),
        "decoder_token_ids": pad_rows([[2] + t for t in targets], 0).astype("int32"),
    }
    labels = pad_rows([t + [3] for t in targets], 0).astype("int32")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=LabelSmoothedCrossEntropy(0.1))
    before = float(model.evaluate(inputs, labels, verbose=0))
    model.fit(inputs, labels, epochs=10, batch_size=3, verbose=0)
    after = float(model.evaluate(inputs, labels, verbose=0))
    assert np.isfinite(before) and after < before - 0.5, (before, after)
    assert np.all(np.isfinite(keras.ops.convert_to_numpy(model.token_embedding.bias)))


def _write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def test_train_init_from_fine_tunes_the_converted_model(marian, tmp_path):
    """``train --init-from`` continues from the converted model: the
    sources are prepared with its source SentencePiece model and the
    targets with its target one, the loss falls, and the new run
    translates with both models."""
    import sentencepiece as spm

    from keras_transformer.data import PreparedCorpus
    from marian_checkpoint import ENGLISH, GERMAN, corpus

    _, _, _, _, run = marian
    sources, targets = corpus(ENGLISH, 48, 7), corpus(GERMAN, 48, 8)
    src = _write_lines(tmp_path / "train.en", sources)
    tgt = _write_lines(tmp_path / "train.de", targets)
    output = str(tmp_path / "tuned")
    argv = [
        "train", "--backend", keras.config.backend(), "--init-from", run,
        "--train-src", src, "--train-tgt", tgt, "--valid-src", src, "--valid-tgt", tgt,
        "--set", "bucketing=packed",
        "--output-dir", output, "--set", "model_overrides.dropout_rate=0.0",
        "--set", "epochs=4", "--set", "steps_per_epoch=3", "--set", "tokens_per_batch=256",
        "--set", "max_length=32", "--set", "warmup_steps=6", "--set", "final_model=last",
        "--set", "eval_sentences=0", "--set", "num_samples=0", "--set", "verbose=0",
    ]  # fmt: skip
    assert main(argv) == 0
    history = json.load(open(os.path.join(output, "results.json")))
    with open(os.path.join(output, "logs", "history.csv"), encoding="utf-8") as f:
        rows = [line.split(",") for line in f.read().split()]
    losses = [float(row[rows[0].index("loss")]) for row in rows[1:]]
    assert history["steps"] == 12 and len(losses) == 4
    assert losses[-1] < losses[0] - 0.3, losses
    # The source side was encoded with the source model, the target side
    # with the target one (they segment the same text differently).
    source_model = spm.SentencePieceProcessor(model_file=os.path.join(run, "source_vocab.spm"))
    target_model = spm.SentencePieceProcessor(model_file=os.path.join(run, "vocab.spm"))
    shard = PreparedCorpus.open(os.path.join(output, "corpus")).shard(0)
    for side, model, text in (("source", source_model, sources), ("target", target_model, targets)):
        ids, splits = shard.gather(np.arange(3), side)
        assert [ids[splits[k] : splits[k + 1]].tolist() for k in range(3)] == model.encode(text[:3])
    assert source_model.encode(sources[:3]) != target_model.encode(sources[:3])
    # The model's architecture is the converted one (swish, output bias).
    tuned, start = (Translator.from_directory(d).model for d in (output, run))
    assert tuned.get_config() == dict(start.get_config(), dropout_rate=0.0)
    assert history["final_metrics"]["val_loss"] < 20
    # The new run is a run directory like any other.
    assert open(os.path.join(output, "source_vocab.spm"), "rb").read() == open(
        os.path.join(run, "source_vocab.spm"), "rb"
    ).read()
    inputs = _write_lines(tmp_path / "input.en", sources[:2])
    translations = str(tmp_path / "output.de")
    argv = ["translate", "--backend", keras.config.backend(), "--model-dir", output,
            "--input", inputs, "--output", translations, "--max-extra-length", "5"]  # fmt: skip
    assert main(argv) == 0
    lines = open(translations, encoding="utf-8").read().splitlines()
    expected = Translator.from_directory(output).translate(sources[:2], max_extra_length=5)
    assert lines == expected


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--init-from", "MISSING"], "does not exist"),
        (["--init-from", "MARIAN"], "is not a finished run directory"),
        (["--init-from", "RUN", "--preset", "tiny"], "remove preset"),
        (["--init-from", "RUN", "--set", "vocabulary_size=100"], "remove vocabulary_size"),
        (["--init-from", "RUN", "--set", "model_overrides.num_layers=1"], "only dropout_rate"),
    ],
)
def test_train_init_from_refuses_before_any_work(marian, tmp_path, capsys, flags, message):
    directory, _, _, _, run = marian
    names = {"MISSING": str(tmp_path / "missing"), "MARIAN": directory, "RUN": run}
    output = tmp_path / "out"
    src = _write_lines(tmp_path / "a.en", ["A dog."])
    argv = ["train", "--backend", keras.config.backend(), "--train-src", src, "--train-tgt", src,
            "--output-dir", str(output)] + [names.get(flag, flag) for flag in flags]  # fmt: skip
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code in (1, 2)
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1, error
    assert not output.exists()


def test_preprocess_with_a_run_encodes_each_side_with_its_model(marian, tmp_path, capsys):
    """``preprocess --vocabulary RUN`` takes the run's source model too; a
    corpus encoded with the target model only is refused by ``--init-from``."""
    import sentencepiece as spm

    from keras_transformer.data import PreparedCorpus

    _, _, _, sentences, run = marian
    src = _write_lines(tmp_path / "a.en", sentences[:4])
    tgt = _write_lines(tmp_path / "a.de", TARGETS + ["Ein hund."])
    both, target_only = str(tmp_path / "both"), str(tmp_path / "target_only")
    assert main(["preprocess", "--train-src", src, "--train-tgt", tgt, "--output", both,
                 "--vocabulary", run]) == 0  # fmt: skip
    vocabulary = os.path.join(run, "vocab.spm")
    assert main(["preprocess", "--train-src", src, "--train-tgt", tgt, "--output", target_only,
                 "--vocabulary", vocabulary]) == 0  # fmt: skip
    source_model = spm.SentencePieceProcessor(model_file=os.path.join(run, "source_vocab.spm"))
    for directory, model in ((both, source_model), (target_only, None)):
        ids, splits = PreparedCorpus.open(directory).shard(0).gather(np.arange(1), "source")
        model = model or spm.SentencePieceProcessor(model_file=vocabulary)
        assert ids[splits[0] : splits[1]].tolist() == model.encode(sentences[0])
    capsys.readouterr()
    argv = ["train", "--backend", keras.config.backend(), "--init-from", run,
            "--train-corpus", target_only, "--output-dir", str(tmp_path / "out")]  # fmt: skip
    with pytest.raises(SystemExit):
        main(argv)
    error = capsys.readouterr().err.strip()
    assert "encoded its sources with vocab.spm" in error and len(error.splitlines()) == 1, error


# --- the keras-hub task: its preprocessor's source tokenizer ---


def _padded(rows, width):
    """``rows`` padded with PAD (0) to ``width`` columns."""
    return np.array([row + [0] * (width - len(row)) for row in rows])


def _unnamed(value):
    if isinstance(value, dict):
        return {k: _unnamed(v) for k, v in value.items() if k not in ("name", "date_saved")}
    if isinstance(value, list):
        return [_unnamed(v) for v in value]
    return value


def _source_and_target_models(run):
    import sentencepiece as spm

    return tuple(
        spm.SentencePieceProcessor(model_file=os.path.join(run, name))
        for name in ("source_vocab.spm", "vocab.spm")
    )


def test_keras_hub_task_translates_with_the_source_model(marian, tmp_path):
    """``TransformerSeq2SeqLM.from_preset(run)`` tokenizes the sources with
    ``source_vocab.spm``: its translations and scores are the
    `Translator`'s, and stay so through ``save_to_preset``."""
    from keras_transformer.models.transformer.transformer_seq_2_seq_lm import (
        TransformerSeq2SeqLM,
    )
    from keras_transformer.models.transformer.transformer_seq_2_seq_lm_preprocessor import (
        TransformerSeq2SeqLMPreprocessor,
    )

    _, _, _, sentences, run = marian
    sentences = [s for s in sentences if s][:4]
    source_model, target_model = _source_and_target_models(run)
    # The two models segment these sources differently: a task that
    # tokenized them with the target model would give other ids.
    for sentence in sentences:
        assert source_model.encode(sentence) != target_model.encode(sentence)
    options = dict(beam_size=2, alpha=0.0, max_extra_length=MAX_EXTRA_LENGTH, min_length=MIN_LENGTH)
    texts, scores = Translator.from_directory(run).translate(sentences, return_scores=True, **options)
    lm = TransformerSeq2SeqLM.from_preset(run)
    encoder_ids = keras.ops.convert_to_numpy(
        lm.preprocessor.generate_preprocess(sentences)["encoder_token_ids"]
    )
    expected_ids = [ids + [3] for ids in source_model.encode(sentences)]
    np.testing.assert_array_equal(encoder_ids, _padded(expected_ids, encoder_ids.shape[1]))
    lm_texts, lm_scores = lm.generate(sentences, return_scores=True, **options)
    assert lm_texts == texts
    np.testing.assert_allclose(lm_scores, scores, atol=1e-5)
    preset = str(tmp_path / "preset")
    lm.save_to_preset(preset)
    saved = open(os.path.join(preset, "assets", "source_tokenizer", "vocabulary.spm"), "rb").read()
    assert saved == open(os.path.join(run, "source_vocab.spm"), "rb").read()
    # The converter wrote the files save_to_preset writes (layer names and
    # the date aside).
    for name in ("config.json", "tokenizer.json", "source_tokenizer.json", "preprocessor.json"):
        written, resaved = (json.load(open(os.path.join(d, name))) for d in (run, preset))
        assert _unnamed(written) == _unnamed(resaved), name
    for loaded in (TransformerSeq2SeqLM.from_preset(preset), Translator.from_directory(preset)):
        run_texts, run_scores = (
            loaded.generate(sentences, return_scores=True, **options)
            if isinstance(loaded, TransformerSeq2SeqLM)
            else loaded.translate(sentences, return_scores=True, **options)
        )
        assert run_texts == texts
        np.testing.assert_allclose(run_scores, scores, atol=1e-5)
    # keras-hub's own loaders and the .keras format keep it too.
    source_proto = open(os.path.join(run, "source_vocab.spm"), "rb").read()
    assert TransformerSeq2SeqLMPreprocessor.from_preset(preset).source_tokenizer.proto == source_proto
    lm.save(str(tmp_path / "task.keras"))
    reloaded = keras.saving.load_model(str(tmp_path / "task.keras"), compile=False)
    assert reloaded.preprocessor.source_tokenizer.proto == source_proto
    # A preset whose source vocabulary is gone is refused, naming the file.
    os.remove(os.path.join(preset, "assets", "source_tokenizer", "vocabulary.spm"))
    with pytest.raises(ValueError, match="source_tokenizer.*vocabulary.spm' is missing"):
        TransformerSeq2SeqLM.from_preset(preset)


def test_keras_hub_task_fits_on_strings_with_the_source_model(marian):
    """``fit`` on string pairs: the encoder ids come from the source model
    (eagerly and in ``tf.data``, where keras-hub's ``fit`` runs the
    preprocessor), the decoder ids from the target model; the loss falls."""
    import tensorflow as tf

    from keras_transformer.models.transformer.transformer_seq_2_seq_lm import (
        TransformerSeq2SeqLM,
    )

    _, _, _, sentences, run = marian
    source_model, target_model = _source_and_target_models(run)
    lm = TransformerSeq2SeqLM.from_preset(run, dtype="float32")
    pairs = {"encoder_text": sentences[:3], "decoder_text": TARGETS}
    x, y, _ = lm.preprocessor(pairs)
    (graph_x, graph_y, _), = list(
        tf.data.Dataset.from_tensor_slices(pairs).batch(3).map(lm.preprocessor).as_numpy_iterator()
    )
    encoder_ids = [ids + [3] for ids in source_model.encode(sentences[:3])]
    labels = [ids + [3] for ids in target_model.encode(TARGETS)]
    for inputs, outputs in ((x, y), (graph_x, graph_y)):
        inputs = keras.ops.convert_to_numpy(inputs["encoder_token_ids"])
        np.testing.assert_array_equal(inputs, _padded(encoder_ids, inputs.shape[1]))
        outputs = keras.ops.convert_to_numpy(outputs)
        np.testing.assert_array_equal(outputs, _padded(labels, outputs.shape[1]))
    lm.compile(optimizer=keras.optimizers.Adam(1e-3))
    before = float(lm.evaluate(pairs, batch_size=3, verbose=0)[0])
    lm.fit(pairs, batch_size=3, epochs=8, verbose=0)
    after = float(lm.evaluate(pairs, batch_size=3, verbose=0)[0])
    assert np.isfinite(before) and after < before - 0.3, (before, after)
