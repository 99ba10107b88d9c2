"""Prepared corpora on disk: shards written and read back, and the errors of a
damaged or foreign corpus, each naming the file."""

import collections
import io
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import sentencepiece as spm
from conftest import REPO_ROOT

from keras_transformer.data import PreparedCorpus
from keras_transformer.data.shard_format import ids_dtype, shard_path
from keras_transformer.data.shard_writer import write_shard
from keras_transformer.data.shards import write_prepared_corpus
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID


def _train_proto(text, vocabulary_size):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_writer=model,
        vocab_size=vocabulary_size,
        model_type="bpe",
        pad_id=PAD_ID,
        unk_id=UNK_ID,
        bos_id=BOS_ID,
        eos_id=EOS_ID,
        minloglevel=2,
    )
    return model.getvalue()


@pytest.fixture(scope="module")
def protos():
    words = ["alpha", "beta", "gamma", "delta", "river", "stone", "house"]
    text = [" ".join(words[(i + j) % 7] for j in range(i % 5 + 1)) for i in range(200)]
    return _train_proto(text, 40), _train_proto(text[::-1] + ["zeta eta"], 48)


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _random_pairs(rng, num_pairs, vocabulary_size=40):
    source = [
        rng.integers(4, vocabulary_size, rng.integers(0, 9)).tolist()
        for _ in range(num_pairs)
    ]
    target = [
        rng.integers(4, vocabulary_size, rng.integers(1, 12)).tolist()
        for _ in range(num_pairs)
    ]
    return source, target


def _written(tmp_path, protos, num_pairs=10, shard_size=3):
    rng = np.random.default_rng(0)
    source, target = _random_pairs(rng, num_pairs)
    corpus = write_prepared_corpus(
        tmp_path / "corpus", source, target, protos[0], shard_size=shard_size
    )
    return corpus, source, target


@pytest.mark.backend_independent
def test_written_pairs_read_back_exactly_across_shards(tmp_path, protos):
    corpus, source, target = _written(tmp_path, protos)
    assert (corpus.num_pairs, corpus.num_shards) == (10, 4)
    assert corpus.shard_names == [
        "shard-00000",
        "shard-00001",
        "shard-00002",
        "shard-00003",
    ]
    assert corpus.vocabulary_size == 40 and corpus.manifest["dtype"] == "uint16"
    with open(corpus.vocabulary_path, "rb") as f:
        assert f.read() == protos[0]
    read_source, read_target = [], []
    for index in range(corpus.num_shards):
        shard = corpus.shard(index)
        assert shard.source.dtype == np.uint16 and shard.offsets.shape == (
            shard.num_pairs + 1,
            2,
        )
        source_lengths, target_lengths = shard.lengths()
        # Pairs in reverse order: gather follows the order given.
        order = np.arange(shard.num_pairs)[::-1]
        for side, out, lengths in (("source", read_source, source_lengths),
                                   ("target", read_target, target_lengths)):  # fmt: skip
            ids, row_splits = shard.gather(order, side)
            assert ids.dtype == np.int32 and row_splits.dtype == np.int64
            rows = [
                ids[row_splits[k] : row_splits[k + 1]].tolist()
                for k in range(len(order))
            ]
            assert [len(row) for row in rows] == lengths[order].tolist()
            out.extend(rows[::-1])
    assert read_source == source and read_target == target
    # Repeated and empty selections.
    ids, row_splits = corpus.shard(1).gather([2, 2], "target")
    assert ids.tolist() == target[5] + target[5] and row_splits.tolist() == [
        0,
        len(target[5]),
        2 * len(target[5]),
    ]
    ids, row_splits = corpus.shard(1).gather([], "source")
    assert ids.size == 0 and row_splits.tolist() == [0]
    expected = collections.Counter(zip(map(len, source), map(len, target)))
    assert {(s, t): c for s, t, c in corpus.length_histogram.tolist()} == expected
    assert corpus.length_histogram.dtype == np.int64
    # No temporary file left behind.
    assert not [name for name in os.listdir(corpus.path) if name.startswith(".tmp")]


@pytest.mark.backend_independent
def test_manifest_is_strict_json_with_the_designed_keys(tmp_path, protos):
    corpus, _, _ = _written(tmp_path, protos)
    with open(os.path.join(corpus.path, "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["format"] == "keras-transformer-corpus" and manifest["version"] == 1
    assert manifest["complete"] is True
    assert (
        manifest["vocabulary"]["file"] == "vocab.spm"
        and len(manifest["vocabulary"]["sha256"]) == 64
    )
    assert (
        manifest["num_lines"],
        manifest["num_pairs"],
        manifest["num_skipped_empty"],
    ) == (10, 10, 0)
    assert [entry["num_pairs"] for entry in manifest["shards"]] == [3, 3, 3, 1]
    assert set(manifest["shards"][0]["crc32"]) == {"src", "tgt", "idx"}


@pytest.mark.backend_independent
def test_write_shard_checks_its_arrays(tmp_path):
    with pytest.raises(ValueError, match="2 source lengths but 1 target"):
        write_shard(tmp_path, "s", [4, 5], [1, 1], [6], [1], "uint16")
    with pytest.raises(
        ValueError, match="source_flat holds 2 ids but its lengths add up to 3"
    ):
        write_shard(tmp_path, "s", [4, 5], [1, 2], [6, 7], [1, 1], "uint16")
    with pytest.raises(ValueError, match=r"outside \[0, 65535\] of uint16"):
        write_shard(tmp_path, "s", [4, 70000], [2], [6], [1], "uint16")
    with pytest.raises(ValueError, match="dtype must be one of"):
        write_shard(tmp_path, "s", [4], [1], [6], [1], "int64")
    entry = write_shard(tmp_path, "s", [4, 70000], [2], [6], [1], "int32")
    assert (
        entry["num_source_tokens"] == 2
        and np.load(shard_path(tmp_path, "s", "src")).dtype == np.int32
    )
    assert ids_dtype(65536) == "uint16" and ids_dtype(65537) == "int32"


@pytest.mark.backend_independent
def test_errors_name_the_damaged_file(tmp_path, protos):
    corpus, _, _ = _written(tmp_path, protos)
    src = shard_path(corpus.path, "shard-00001", "src")
    with open(src, "rb") as f:
        original = f.read()

    # A flipped byte in the ids: only the CRC-32 sees it.
    damaged = bytearray(original)
    damaged[-1] ^= 0x01
    _write(src, bytes(damaged))
    with pytest.raises(
        ValueError, match=r"shard-00001\.src\.npy.* corrupt: its CRC-32"
    ):
        PreparedCorpus.open(corpus.path)
    PreparedCorpus.open(corpus.path, verify=False)  # sizes still right

    # Truncated.
    _write(src, original[:-2])
    with pytest.raises(ValueError, match=r"shard-00001\.src\.npy.* truncated"):
        PreparedCorpus.open(corpus.path, verify=False)
    with pytest.raises(ValueError, match=r"shard-00001\.src\.npy"):
        corpus.shard(1)

    # Missing.
    os.remove(src)
    with pytest.raises(ValueError, match=r"shard-00001\.src\.npy.* missing"):
        PreparedCorpus.open(corpus.path)
    _write(src, original)
    PreparedCorpus.open(corpus.path)

    # Offsets that do not match the ids.
    idx = shard_path(corpus.path, "shard-00002", "idx")
    offsets = np.load(idx)
    offsets[-1, 0] += 1
    np.save(idx, offsets)
    with pytest.raises(
        ValueError, match=r"offsets .*shard-00002\.idx\.npy.* do not match"
    ):
        PreparedCorpus.open(corpus.path, verify=False).shard(2)


@pytest.mark.backend_independent
def test_a_foreign_or_changed_vocabulary_is_refused(tmp_path, protos):
    corpus, _, _ = _written(tmp_path, protos)
    corpus.check_vocabulary(protos[0], "runs/a/vocab.spm")
    foreign = r"encoded with the vocabulary .*vocab\.spm.*not with 'runs/b/vocab.spm'"
    with pytest.raises(ValueError, match=foreign):
        corpus.check_vocabulary(protos[1], "runs/b/vocab.spm")
    with open(corpus.vocabulary_path, "wb") as f:
        f.write(protos[1])
    with pytest.raises(ValueError, match=r"vocab\.spm' is not the one the ids"):
        PreparedCorpus.open(corpus.path)


@pytest.mark.backend_independent
def test_not_a_corpus_another_version_and_incomplete(tmp_path, protos):
    with pytest.raises(
        ValueError, match="is not a prepared corpus: it has no manifest.json"
    ):
        PreparedCorpus.open(tmp_path)
    corpus, _, _ = _written(tmp_path, protos)
    manifest_path = os.path.join(corpus.path, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    _write(manifest_path, json.dumps(dict(manifest, version=2)).encode())
    with pytest.raises(ValueError, match="format version 2"):
        PreparedCorpus.open(corpus.path)
    _write(manifest_path, json.dumps(dict(manifest, format="other")).encode())
    with pytest.raises(ValueError, match="not the manifest of a prepared corpus"):
        PreparedCorpus.open(corpus.path)
    inputs = {"source": ["/data/a.en"], "target": ["/data/a.de"], "bytes": [[1, 1]]}
    settings = {"vocabulary": None, "vocabulary_size": 40, "seed": 3}
    incomplete = dict(manifest, complete=False, inputs=inputs, settings=settings)
    _write(manifest_path, json.dumps(incomplete).encode())
    with pytest.raises(ValueError, match=(
        r"incomplete: its preparation was interrupted after 4 shards; run the same command again "
        r"to resume it: keras-transformer preprocess --train-src /data/a.en --train-tgt /data/a.de "
        r"--output .*corpus --vocabulary-size 40 --shard-size 3 --seed 3"
    )):  # fmt: skip
        PreparedCorpus.open(corpus.path)
    with pytest.raises(ValueError, match=r"index must be an int in \[0, 3\]"):
        _written(tmp_path / "again", protos)[0].shard(4)


READ_WITHOUT_TENSORFLOW = """
import sys
for name in ("tensorflow", "tensorflow_text", "keras_hub"):
    sys.modules[name] = None
from keras_transformer.data import PreparedCorpus
from keras_transformer.data.shards import write_prepared_corpus
import keras_transformer.data as data
assert "make_dataset" in data.__all__ and "PreparedCorpus" in data.__all__
try:
    data.make_dataset
    raise SystemExit("data.make_dataset did not refuse without TensorFlow")
except ImportError as error:
    assert "make_dataset needs TensorFlow" in str(error), error
proto = open(sys.argv[1], "rb").read()
write_prepared_corpus(sys.argv[2], [[5, 6], [7]], [[8], [9, 10]], proto, shard_size=1)
corpus = PreparedCorpus.open(sys.argv[2])
ids, splits = corpus.shard(1).gather([0], "target")
assert ids.tolist() == [9, 10], ids
print("ok")
"""


@pytest.mark.skipif(
    keras.config.backend() == "tensorflow",
    reason="the TensorFlow backend needs TensorFlow",
)
def test_prepared_corpora_are_written_and_read_without_tensorflow(tmp_path, protos):
    (tmp_path / "vocab.spm").write_bytes(protos[0])
    done = subprocess.run(
        [sys.executable, "-c", READ_WITHOUT_TENSORFLOW, str(tmp_path / "vocab.spm"), str(tmp_path / "c")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[
        -3000:
    ]
