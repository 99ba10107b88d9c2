"""SavedModel export: a fresh process with only tensorflow + tensorflow_text
serves the same translations as `Translator` and survives bad inputs. The
export and the serving run once per suite, under TensorFlow; under every
backend `Translator` returns the outputs that the SavedModel served, stored
in tests/fixtures/export_expected.json (see expectations.py)."""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import keras
import numpy as np
import pytest

import expectations
from conftest import FIXTURES
from expectations import assert_same, plain
from saved_model_client import PLAIN_INPUTS, WARMUP_REPLAY, WARMUP_SIGNATURES

from keras_transformer.export.saved_model import export_saved_model
from keras_transformer.models.transformer.translator import Translator

pytestmark = pytest.mark.slow

BEAM, ALPHA, EXTRA, MAX_SOURCE = 2, 0.6, 8, 24

SERVE = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text  # registers the SentencePiece ops
    assert "keras_transformer" not in sys.modules
    loaded = tf.saved_model.load(sys.argv[1])
    """
) + WARMUP_REPLAY + textwrap.dedent(
    """
    # As TF Serving at load: the warm-up requests first.
    out = {"warmup": replay_warmup()}
    serve = loaded.signatures["serving_default"]
    cases = json.loads(open(sys.argv[2]).read())
    pairs = cases.pop("_score")
    prefixed = cases.pop("_prefix")
    option_cases = cases.pop("_options")

    def texts(result):
        return {
            "translations": [t.decode("utf-8") for t in result["translations"].numpy()],
            "scores": result["scores"].numpy().tolist(),
        }

    prefix = loaded.signatures["translate_prefix"]
    strings = lambda values: tf.constant(values, dtype=tf.string)
    out["prefix"] = texts(prefix(sources=strings(prefixed["sources"]), prefixes=strings(prefixed["prefixes"])))
    out["prefix_empty"] = texts(prefix(sources=strings([]), prefixes=strings([])))
    try:
        prefix(sources=strings(["nine"]), prefixes=strings(["sieben " * 40]))
        out["prefix_too_long"] = "no error"
    except tf.errors.InvalidArgumentError as error:
        out["prefix_too_long"] = error.message
    sample = loaded.signatures["translate_sample"]
    out["sample"] = {
        str(seed): texts(sample(sentences=strings(prefixed["sources"]), seed=tf.constant(seed)))
        for seed in (3, 11)
    }
    out["sample_again"] = texts(sample(sentences=strings(prefixed["sources"]), seed=tf.constant(3)))
    out["sample_blank"] = texts(sample(sentences=strings(["", " "]), seed=tf.constant(1)))
    with_options = loaded.signatures["translate_options"]
    out["options"] = {
        name: texts(with_options(
            sentences=strings(cases["ordinary"]), alpha=tf.constant(alpha, tf.float32),
            min_length=tf.constant(min_length, tf.int32),
            repetition_penalty=tf.constant(penalty, tf.float32),
        ))
        for name, (alpha, min_length, penalty) in option_cases.items()
    }
    try:
        with_options(sentences=strings(["one"]), alpha=tf.constant(0.6), min_length=tf.constant(-1),
                     repetition_penalty=tf.constant(1.0))
        out["options_bad"] = "no error"
    except tf.errors.InvalidArgumentError as error:
        out["options_bad"] = error.message
    nbest = loaded.signatures["translate_nbest"]
    out["nbest"] = {}
    for name in ("ordinary", "blank", "empty_batch", "mixed_lengths"):
        result = nbest(sentences=tf.constant(cases[name], dtype=tf.string))
        out["nbest"][name] = {
            "translations": [[t.decode("utf-8") for t in row] for row in result["translations"].numpy()],
            "scores": result["scores"].numpy().tolist(),
        }
    score = loaded.signatures["score"]
    out["score"] = score(
        sources=tf.constant(pairs["sources"], dtype=tf.string),
        targets=tf.constant(pairs["targets"], dtype=tf.string),
    )["scores"].numpy().tolist()
    out["score_empty"] = score(
        sources=tf.constant([], dtype=tf.string), targets=tf.constant([], dtype=tf.string)
    )["scores"].numpy().tolist()
    for name, sentences in cases.items():
        result = serve(sentences=tf.constant(sentences, dtype=tf.string))
        out[name] = {
            "translations": [t.decode("utf-8") for t in result["translations"].numpy()],
            "scores": result["scores"].numpy().tolist(),
        }
    ids = loaded.signatures["translate_token_ids"](token_ids=tf.constant([[5, 6, 7], [8, 0, 0]], tf.int32))
    out["token_ids"] = ids["token_ids"].numpy().tolist()
    out["token_id_scores"] = ids["scores"].numpy().tolist()
    out["bad_token_ids"] = []
    for bad_id in (-1, %d):  # outside [0, vocabulary_size)
        try:
            loaded.signatures["translate_token_ids"](token_ids=tf.constant([[5, bad_id]], tf.int32))
            out["bad_token_ids"].append("no error")
        except tf.errors.InvalidArgumentError as error:
            out["bad_token_ids"].append(error.message)
    out["keras_transformer_imported"] = "keras_transformer" in sys.modules
    print(json.dumps(out))
    """
)


# A committed run directory (`keras-transformer train` of version 0.1.0, a
# tiny model trained for six updates): the same weights under every backend.
MODEL_DIR = os.path.join(FIXTURES, "run_directory_0_1_0")
VOCABULARY = 128

ORDINARY = ["twenty-one", "three hundred forty-five", "nine", "one thousand two"]
CASES = {
    "ordinary": ORDINARY,
    "empty_batch": [],
    "blank": ["", "   ", "\t"],
    "huge": ["nine " * 20000],  # 100,000 characters
    "mixed_lengths": [" ".join(["seven"] * n) for n in (1, 3, 10, 30, 60)],  # ~1 to 200 pieces
    "scripts": ["日本語のテキスト", "😀 twenty 🚀", "Ünïcödé ß"],
    "batch_1": ORDINARY[:1],
    "batch_2": ORDINARY[:2],
    "batch_7": (ORDINARY * 2)[:7],
}
SCORE_PAIRS = {
    "sources": ORDINARY + ["", "nine", "seven " * 40],
    "targets": ["einundzwanzig", "dreihundertfünfundvierzig", "", "tausend", "zwei", "", "sieben"],
}
PREFIX_CASES = {
    "sources": ["twenty-one", "three hundred forty-five", "nine", "one thousand two"],
    "prefixes": ["ein", "", "neun", "zwei"],
}
TOKEN_IDS = [[5, 6, 7], [8]]


def translator_outputs(translator):
    """What `Translator` returns for each request the SavedModel serves."""
    options = dict(beam_size=BEAM, alpha=ALPHA, max_extra_length=EXTRA)
    out = {}
    for name in ("ordinary", "mixed_lengths", "scripts", "batch_7", "huge"):
        texts, scores = translator.translate(CASES[name], return_scores=True, **options)
        out[name] = {"translations": texts, "scores": scores}
    # translate_nbest (k = the beam size) is translate(num_return=k).
    out["nbest"] = {}
    for name in ("ordinary", "mixed_lengths"):
        texts, scores = translator.translate(
            CASES[name], num_return=BEAM, return_scores=True, **options
        )
        out["nbest"][name] = {"translations": texts, "scores": scores}
    # translate_prefix is translate(target_prefix=...); translate_sample is
    # translate(sampling=True, seed=...) (the same samples on every backend).
    texts, scores = translator.translate(
        PREFIX_CASES["sources"], target_prefix=PREFIX_CASES["prefixes"], return_scores=True,
        **options,
    )
    out["prefix"] = {"translations": texts, "scores": scores}
    out["sample"] = {
        str(seed): translator.translate(
            PREFIX_CASES["sources"], **dict(options, beam_size=1), sampling=True, seed=seed
        )
        for seed in (3, 11)
    }
    # score is Translator.score (blank sources and targets included).
    out["score"] = translator.score(SCORE_PAIRS["sources"], SCORE_PAIRS["targets"])
    hypotheses, scores = translator.generate(TOKEN_IDS, **options)
    out["token_ids"] = {"ids": [h[0] for h in hypotheses], "scores": [s[0] for s in scores]}
    return plain(out)


def test_translator_returns_what_the_saved_model_served():
    """Under JAX and PyTorch: the outputs that the SavedModel served (the
    next test, under TensorFlow, checks them against the SavedModel and
    against the Translator there)."""
    if keras.config.backend() == "tensorflow":
        pytest.skip("under tensorflow the export test checks the Translator against the stored outputs")
    translator = Translator.from_directory(MODEL_DIR, max_source_length=MAX_SOURCE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # truncated sources
        outputs = translator_outputs(translator)
    assert_same(outputs, expectations.load("single"))


def _graph_nodes(version_dir):
    """Every node of a SavedModel's graphs (its functions included)."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(version_dir, "saved_model.pb"), "rb") as f:
        saved_model.ParseFromString(f.read())
    graph = saved_model.meta_graphs[0].graph_def
    return list(graph.node) + [node for f in graph.library.function for node in f.node_def]


def _while_loops(version_dir):
    """The while loops in a SavedModel's graphs (its functions included)."""
    return sum(node.op in ("While", "StatelessWhile") for node in _graph_nodes(version_dir))


def _saved_values(version_dir):
    """The number of values in a SavedModel's variables checkpoint (its
    object graph's entry aside)."""
    import tensorflow as tf

    path = os.path.join(version_dir, "variables", "variables")
    return sum(
        int(np.prod(shape)) for name, shape in tf.train.list_variables(path)
        if name != "_CHECKPOINTABLE_OBJECT_GRAPH"
    )


def _xla_ops(version_dir):
    """The op types of XLA's own (``Xla*``) in a SavedModel's graphs: a
    graph without XLA runs them by compiling each with XLA, per shape."""
    return sorted({node.op for node in _graph_nodes(version_dir) if node.op.startswith("Xla")})


def test_export_serves_like_the_translator(tmp_path):
    if keras.config.backend() != "tensorflow":
        pytest.skip(
            "the export runs once per suite, under the tensorflow backend; "
            "test_translator_returns_what_the_saved_model_served covers this backend"
        )
    version_dir = export_saved_model(
        MODEL_DIR, str(tmp_path / "export"), version=3, beam_size=BEAM, alpha=ALPHA,
        max_extra_length=EXTRA, max_source_length=MAX_SOURCE,
    )
    assert version_dir.endswith(os.path.join("export", "3"))
    for path in ("saved_model.pb", "variables", "assets/vocab.spm",
                 "assets.extra/tf_serving_warmup_requests"):
        assert os.path.exists(os.path.join(version_dir, path)), path
    # One loop per search: serving_default, translate_token_ids and
    # translate_prefix share one beam search; translate_nbest,
    # translate_constrained, translate_sample and translate_options (the
    # beam search with the repetition penalty) have their own; the
    # key/value cache grows inside each loop.
    assert _while_loops(version_dir) == 5
    # Stock TF Serving ops only: no op that needs XLA's compiler.
    assert _xla_ops(version_dir) == []
    # Each weight saved once (a float32 model: no compute-dtype copies).
    model = Translator.from_directory(MODEL_DIR).model
    assert _saved_values(version_dir) == sum(int(np.prod(w.shape)) for w in model.weights)

    cases_path = tmp_path / "cases.json"
    # translate_options: the export's values, then others.
    option_cases = {"export": [ALPHA, 0, 1.0], "changed": [0.0, 6, 2.0]}
    cases_path.write_text(json.dumps(
        dict(CASES, _score=SCORE_PAIRS, _prefix=PREFIX_CASES, _options=option_cases)
    ))
    script = tmp_path / "serve.py"
    script.write_text(SERVE % VOCABULARY)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("KERAS_BACKEND", None)
    result = subprocess.run(
        [sys.executable, str(script), version_dir, str(cases_path)],
        capture_output=True, text=True, env=env, timeout=600, cwd=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    assert served["keras_transformer_imported"] is False
    # The warm-up requests: serving_default on one sentence, then every
    # signature with its own inputs, each answered row for row.
    assert [name for name, *_ in served["warmup"]] == WARMUP_SIGNATURES
    for name, inputs, rows, answered, languages in served["warmup"]:
        assert inputs == sorted(PLAIN_INPUTS[name]), name
        assert answered == rows and languages is None, name
    assert len(served["token_ids"]) == 2
    # Out-of-range ids fail the request instead of wrapping.
    assert len(served["bad_token_ids"]) == 2
    for bad_id, error in zip((-1, VOCABULARY), served["bad_token_ids"]):
        assert f"[token_ids contains id] [{bad_id}] [outside [0, {VOCABULARY})" in error, error

    for name, sentences in CASES.items():
        got = served[name]
        assert len(got["translations"]) == len(sentences) == len(got["scores"]), name
        assert all(np.isfinite(got["scores"])), name
    assert served["empty_batch"] == {"translations": [], "scores": []}
    assert served["blank"] == {"translations": ["", "", ""], "scores": [0.0, 0.0, 0.0]}
    assert served["nbest"]["blank"] == {
        "translations": [["", ""]] * 3, "scores": [[0.0, 0.0]] * 3
    }
    assert served["nbest"]["empty_batch"] == {"translations": [], "scores": []}
    assert served["prefix_empty"] == {"translations": [], "scores": []}
    assert "a prefix leaves no room for EOS" in served["prefix_too_long"]
    assert served["sample_again"] == served["sample"]["3"]
    assert served["sample"]["3"] != served["sample"]["11"]
    assert served["sample_blank"] == {"translations": ["", ""], "scores": [0.0, 0.0]}
    assert served["score_empty"] == []

    translator = Translator.from_directory(MODEL_DIR, max_source_length=MAX_SOURCE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # truncated sources
        expected = translator_outputs(translator)
    for name in ("ordinary", "mixed_lengths", "scripts", "batch_7", "huge", "prefix", "score"):
        assert_same(served[name], expected[name], name)
    for name in ("ordinary", "mixed_lengths"):
        assert_same(served["nbest"][name], expected["nbest"][name], f"nbest {name}")
    for seed in ("3", "11"):
        assert served["sample"][seed]["translations"] == expected["sample"][seed], seed
    # translate_options: with the export's values it is serving_default;
    # with others, the Translator with those options (and not the same).
    assert_same(served["options"]["export"], served["ordinary"], "options at the export's")
    texts, scores = translator.translate(
        CASES["ordinary"], return_scores=True, beam_size=BEAM, max_extra_length=EXTRA,
        alpha=0.0, min_length=6, repetition_penalty=2.0,
    )
    assert_same(served["options"]["changed"], {"translations": texts, "scores": scores}, "options")
    assert served["options"]["changed"]["translations"] != served["ordinary"]["translations"]
    assert "min_length must be >= 0" in served["options_bad"]
    # The token-id signature: 0-padded ids in, the Translator's hypotheses
    # (EOS included, PAD after it) and scores out.
    for served_ids, ids in zip(served["token_ids"], expected["token_ids"]["ids"]):
        assert served_ids[: len(ids)] == ids
        assert set(served_ids[len(ids):]) <= {0}
    assert_same(served["token_id_scores"], expected["token_ids"]["scores"], "token_id_scores")
    if os.environ.get("KT_WRITE_EXPECTATIONS"):
        expectations.write("single", expected)
    else:
        assert_same(expected, expectations.load("single"))


def test_saved_model_cli_lists_every_signature_of_an_int8_export(tmp_path):
    model_dir = MODEL_DIR
    # The export itself always runs under TensorFlow (in a subprocess under
    # the other backends, which the multilingual export test covers), so
    # this one runs once per suite.
    if keras.config.backend() != "tensorflow":
        pytest.skip("the int8 export runs once per suite, under the tensorflow backend")
    # int8 (int8 kernels with float inputs, quantized before export): the signatures are the same
    # and serve what Translator(quantize="int8") translates.
    version_dir = export_saved_model(
        model_dir, str(tmp_path / "e"), beam_size=1, warmup=False, quantize="int8"
    )
    with open(os.path.join(version_dir, "assets.extra", "export_config.json")) as f:
        config = json.load(f)
    assert config["quantize"] == "int8" and config["n_best"] == 1
    assert config["decode_options"]["beam_size"] == 1
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    sentences = ["twenty-one", "three hundred forty-five", "nine"]
    served = tf.saved_model.load(version_dir).signatures["serving_default"](
        sentences=tf.constant(sentences)
    )
    quantized = Translator.from_directory(model_dir, quantize="int8")
    assert any("int8" in str(v.dtype) for v in quantized.model.weights)
    expected, scores = quantized.translate(sentences, beam_size=1, return_scores=True)
    assert [t.decode("utf-8") for t in served["translations"].numpy()] == expected
    np.testing.assert_allclose(served["scores"].numpy(), scores, atol=1e-3)
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    result = subprocess.run(
        [cli, "show", "--all", "--dir", version_dir], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    for signature in ("serving_default", "translate_token_ids", "translate_nbest", "score",
                      "translate_prefix", "translate_constrained", "translate_sample"):
        assert f"signature_def['{signature}']" in out
    block = out.split("signature_def['serving_default']")[1]
    assert "dtype: DT_STRING" in block.split("output(s)")[0]
    assert "shape: (-1)" in block.split("output(s)")[0]


def test_int8_quantization_collects_garbage_once(monkeypatch):
    """Keras' quantization deletes each float kernel with a full garbage
    collection (a scan of the whole heap); `Translator(quantize="int8")`
    runs one at the end."""
    import gc

    calls = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(generation) or 0)
    translator = Translator.from_directory(MODEL_DIR, quantize="int8")
    assert sum("int8" in str(v.dtype) for v in translator.model.weights) > 1
    assert len(calls) == 1, calls


def test_export_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="model.keras"):
        export_saved_model(str(tmp_path), str(tmp_path / "out"))
    with pytest.raises(ValueError, match="beam_size"):
        export_saved_model(str(tmp_path), str(tmp_path / "out"), beam_size=0)
