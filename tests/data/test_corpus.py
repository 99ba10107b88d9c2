"""`prepare_corpus`: text files in, shards holding exactly the pairs of the
text out; the vocabulary and ids of `SubwordTokenizer`; resuming, reusing,
and refusing another preparation or bad input files without touching what
is prepared."""

import ast
import collections
import gzip
import itertools
import os

import numpy as np
import pytest

from keras_transformer.data import (
    PreparedCorpus,
    SubwordTokenizer,
    read_lines,
    read_parallel,
)
from keras_transformer.data import corpus_encoding
from keras_transformer.data import vocabulary_trainer_process
from keras_transformer.data.corpus import prepare_corpus
from keras_transformer.data.text_files import write_lines

WORDS = ["the", "dog", "runs", "fast", "over", "green", "grass", "while", "a", "small", "child", "laughs", "near", "an", "old", "red", "house", "and", "birds", "sing"]  # fmt: skip
GERMAN = ["der", "Hund", "läuft", "schnell", "über", "grünes", "Gras", "während", "ein", "kleines", "Kind", "lacht", "nahe", "einem", "alten", "roten", "Haus", "und", "Vögel", "singen"]  # fmt: skip


def _sentences(rng, count, words):
    return [" ".join(rng.choice(words, rng.integers(2, 9))) for _ in range(count)]


def _write_corpus(directory, counts=(9, 6, 8), empty_lines=((2, 3),)):
    """File pairs: the first plain, the others gzip; ``empty_lines`` are
    (file, line) pairs whose source (even) or target (odd) is blank."""
    rng = np.random.default_rng(0)
    os.makedirs(directory, exist_ok=True)
    all_src, all_tgt = [], []
    for index, count in enumerate(counts):
        src, tgt = _sentences(rng, count, WORDS), _sentences(rng, count, GERMAN)
        for file, line in empty_lines:
            if file == index:
                (src if line % 2 == 0 else tgt)[line] = "  "
        suffix = "" if index == 0 else ".gz"
        write_lines(os.path.join(directory, f"part{index}.en{suffix}"), src)
        write_lines(os.path.join(directory, f"part{index}.de{suffix}"), tgt)
        all_src += src
        all_tgt += tgt
    return all_src, all_tgt


def _read_all(corpus):
    pairs = []
    for index in range(corpus.num_shards):
        shard = corpus.shard(index)
        order = np.arange(shard.num_pairs)
        sides = [shard.gather(order, side) for side in ("source", "target")]
        for k in order:
            pairs.append(
                tuple(ids[splits[k] : splits[k + 1]].tolist() for ids, splits in sides)
            )
    return pairs


def _prepare(tmp_path, name="out", **kwargs):
    kwargs.setdefault("vocabulary_size", 72)
    kwargs.setdefault("shard_size", 7)
    kwargs.setdefault("verbose", 0)
    return prepare_corpus(
        str(tmp_path / "text" / "part*.en*"), str(tmp_path / "text" / "part*.de*"),
        str(tmp_path / name), **kwargs,
    )  # fmt: skip


def _snapshot(directory):
    """Every file of a directory with its inode, mtime and bytes."""
    snapshot = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        status = os.stat(path)
        with open(path, "rb") as f:
            snapshot[name] = (status.st_ino, status.st_mtime_ns, f.read())
    return snapshot


def test_shards_hold_exactly_the_pairs_of_the_text(tmp_path):
    src, _ = _write_corpus(tmp_path / "text", empty_lines=((0, 2), (1, 3), (2, 7)))
    corpus = _prepare(tmp_path)
    # read_parallel gives the pairs (a glob: part0 plain, part1 and 2 gzip).
    text_src, text_tgt, stats = read_parallel(
        str(tmp_path / "text" / "part*.en*"), str(tmp_path / "text" / "part*.de*")
    )
    assert stats.num_skipped_empty == 3 and len(text_src) == 20
    tokenizer = SubwordTokenizer.load(corpus.path)
    expected = list(zip(tokenizer.encode(text_src), tokenizer.encode(text_tgt)))
    assert _read_all(corpus) == expected
    manifest = corpus.manifest
    assert (
        manifest["num_lines"],
        manifest["num_pairs"],
        manifest["num_skipped_empty"],
    ) == (23, 20, 3)
    # Shard k holds the pairs of lines [7k, 7k + 7): shard 0 misses line 2,
    # shard 1 line 12 (9 + 3), shard 2 line 22 (15 + 7).
    assert [entry["num_pairs"] for entry in manifest["shards"]] == [6, 6, 7, 1]
    lengths = collections.Counter((len(s), len(t)) for s, t in expected)
    assert {(s, t): c for s, t, c in corpus.length_histogram.tolist()} == lengths
    assert manifest["inputs"]["source"] == [
        str(tmp_path / "text" / name)
        for name in ("part0.en", "part1.en.gz", "part2.en.gz")
    ]
    # One line per shard: a skipped line leaves its shard empty.
    single = _prepare(
        tmp_path, "single", shard_size=1, vocabulary_size=None, vocabulary=corpus.path
    )
    assert single.num_shards == 23 and _read_all(single) == expected
    assert [
        i for i, e in enumerate(single.manifest["shards"]) if not e["num_pairs"]
    ] == [2, 12, 22]
    with gzip.open(tmp_path / "text" / "part1.en.gz", "rt") as f:  # really gzip
        assert f.readline().strip() == src[9]


def test_the_vocabulary_and_ids_are_subword_tokenizers(tmp_path):
    """The vocabulary is byte for byte the one `SubwordTokenizer.train`
    learns, and the ids those of its TF Text `tokenize`, on text that
    SentencePiece normalizes (NFKC, spaces)."""
    rng = np.random.default_rng(1)
    src = _sentences(rng, 40, WORDS) + [
        "Café  déjà-vu, naïve résumé!", "Ｆｕｌｌ ｗｉｄｔｈ ① ﬁne ½ —  x²",
        "1,234.56 km/h? (yes) \u00a0 tab\there", "e\u0301 Å Å ǅ Ⅻ ㎏",
    ]  # fmt: skip
    tgt = _sentences(rng, 40, GERMAN) + [
        "Straße «Grüße» 42 €", "ＡＢＣ ｶﾀｶﾅ ﬂ", "„Zitat“ – 3½ Uhr…", "ß ẞ ĳ ℌ",
    ]  # fmt: skip
    write_lines(tmp_path / "text" / "part0.en", src)
    write_lines(tmp_path / "text" / "part0.de", tgt)
    corpus = _prepare(tmp_path, vocabulary_size=150, seed=5, shard_size=15)
    trained = SubwordTokenizer.train(itertools.chain(src, tgt), 150, seed=5)
    with open(corpus.vocabulary_path, "rb") as f:
        assert f.read() == trained.proto
    expected = [
        (list(s), list(t))
        for s, t in zip(
            trained.tokenize(src), trained.tokenize(tgt)
        )
    ]
    assert _read_all(corpus) == expected
    assert corpus.manifest["dtype"] == "uint16" and corpus.vocabulary_size == 150


@pytest.mark.backend_independent
def test_a_sampled_vocabulary_depends_on_the_seed_only(tmp_path, capsys):
    """With more sentences than input_sentence_size, the vocabulary is
    learned from a sample of the sentence positions (source line i is
    position i, target line i is num_lines + i) drawn by NumPy from the seed
    (SentencePiece's own sampler ignores its seed)."""
    _write_corpus(tmp_path / "text", counts=(90, 60), empty_lines=((1, 4),))
    kwargs = {"vocabulary_size": 100, "input_sentence_size": 150, "seed": 3}
    corpus = _prepare(tmp_path, "a", **kwargs, verbose=1)
    log = capsys.readouterr().out
    again = _prepare(tmp_path, "b", **kwargs)
    other = _prepare(tmp_path, "c", **dict(kwargs, seed=4))
    assert again.vocabulary_sha256 == corpus.vocabulary_sha256
    assert other.vocabulary_sha256 != corpus.vocabulary_sha256
    # The sample by hand; the pair with an empty side is left out.
    lines = [(s, t) for s, t in zip(*read_parallel_all(tmp_path))]
    positions = np.random.default_rng(3).choice(
        300, size=150, replace=False, shuffle=False
    )
    chosen = set(positions.tolist())
    sample = [s for i, (s, t) in enumerate(lines) if i in chosen and s and t]
    sample += [t for i, (s, t) in enumerate(lines) if 150 + i in chosen and s and t]
    assert f"Vocabulary learned from {len(sample)} sentences" in log
    trained = SubwordTokenizer.train(sample, 100, input_sentence_size=150)
    with open(corpus.vocabulary_path, "rb") as f:
        assert f.read() == trained.proto
    assert 140 < len(sample) <= 150


def read_parallel_all(tmp_path):
    """Every line of the corpus, empty sides included."""
    src, tgt = [], []
    for index in (0, 1):
        suffix = "" if index == 0 else ".gz"
        src += read_lines(tmp_path / "text" / f"part{index}.en{suffix}")
        tgt += read_lines(tmp_path / "text" / f"part{index}.de{suffix}")
    return src, tgt


@pytest.mark.backend_independent
def test_a_given_vocabulary_is_copied_and_used(tmp_path):
    _write_corpus(tmp_path / "text")
    first = _prepare(tmp_path, "first")
    second = _prepare(
        tmp_path, "second", vocabulary=first.path, vocabulary_size=None, shard_size=100
    )
    assert (
        second.vocabulary_sha256 == first.vocabulary_sha256 and second.num_shards == 1
    )
    assert _read_all(second) == _read_all(first)
    with open(first.vocabulary_path, "rb") as f:
        second.check_vocabulary(f.read(), first.vocabulary_path)
    other = _prepare(tmp_path, "other", vocabulary_size=80)
    with open(other.vocabulary_path, "rb") as f:
        other_proto = f.read()
    with pytest.raises(ValueError, match="second.*not with '.*other/vocab.spm'"):
        second.check_vocabulary(other_proto, other.vocabulary_path)


@pytest.mark.backend_independent
def test_an_interrupted_preparation_resumes_to_the_same_corpus(tmp_path, monkeypatch):
    _write_corpus(tmp_path / "text")
    whole = _prepare(tmp_path, "whole")
    write_shard = corpus_encoding.write_shard
    calls = []

    def crash_after_two_shards(*args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(args[1])
        return write_shard(*args, **kwargs)

    monkeypatch.setattr(corpus_encoding, "write_shard", crash_after_two_shards)
    with pytest.raises(KeyboardInterrupt):
        _prepare(tmp_path, "resumed")
    monkeypatch.setattr(corpus_encoding, "write_shard", write_shard)
    with pytest.raises(
        ValueError, match="incomplete: its preparation was interrupted after 2 shards"
    ):
        PreparedCorpus.open(tmp_path / "resumed")
    before = _snapshot(tmp_path / "resumed")
    assert "shard-00002.idx.npy" not in before

    resumed = _prepare(tmp_path, "resumed", verbose=1)
    after = _snapshot(resumed.path)
    for name in before:  # the shards already written are kept as they are
        if name.startswith("shard-"):
            assert after[name] == before[name], name
    assert [name for name in after if name.startswith("shard-")] == [
        name for name in _snapshot(whole.path) if name.startswith("shard-")
    ]
    for name, (_, _, data) in _snapshot(whole.path).items():
        if name != "manifest.json":
            assert after[name][2] == data, name
    assert resumed.manifest == dict(whole.manifest)


@pytest.mark.backend_independent
def test_a_finished_preparation_is_reused_and_another_refused(tmp_path, capsys):
    _write_corpus(tmp_path / "text")
    corpus = _prepare(tmp_path)
    before = _snapshot(corpus.path)
    again = _prepare(tmp_path, verbose=1)
    assert "Reusing the prepared corpus" in capsys.readouterr().out
    assert _snapshot(again.path) == before and again.manifest == corpus.manifest

    for kwargs, difference in (
        ({"vocabulary_size": 80}, "vocabulary_size=72 instead of 80"),
        ({"shard_size": 5}, "shard_size 7 instead of 5"),
        ({"seed": 1}, "seed=0 instead of 1"),
    ):
        with pytest.raises(
            ValueError,
            match=f"'.*out' holds a corpus prepared with other settings: {difference}",
        ):
            _prepare(tmp_path, **kwargs)
    write_lines(tmp_path / "text" / "part1.en.gz", ["changed"] * 6)
    with pytest.raises(
        ValueError, match=r"input files changed since \(their size\): .*part1.en.gz"
    ):
        _prepare(tmp_path)
    assert _snapshot(corpus.path) == before
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text("{}")
    with pytest.raises(
        ValueError, match="'.*run' is neither empty nor a prepared corpus"
    ):
        _prepare(tmp_path, "run")


@pytest.mark.backend_independent
def test_input_errors_name_the_files_and_leave_a_prepared_corpus_untouched(tmp_path):
    _write_corpus(tmp_path / "text")
    corpus = _prepare(tmp_path)
    before = _snapshot(corpus.path)
    text = tmp_path / "text"
    with pytest.raises(
        FileNotFoundError, match=r"No file matches the pattern '.*\*\.fr'"
    ):
        prepare_corpus(
            str(text / "*.fr"), str(text / "*.de*"), corpus.path, vocabulary_size=72
        )
    write_lines(text / "part2.de.gz", ["eins", "zwei"])
    with pytest.raises(
        ValueError, match=r"'.*part2.en.gz' has 8 lines, '.*part2.de.gz' has 2 lines"
    ):
        _prepare(tmp_path)
    write_lines(text / "part2.de.gz", [])
    with pytest.raises(ValueError, match=r"'.*part2.de.gz' is empty"):
        _prepare(tmp_path)
    write_lines(text / "part2.de.gz", [""] * 8)
    with pytest.raises(
        ValueError,
        match=r"'.*part2.en.gz' and '.*part2.de.gz' have no line with text on both",
    ):
        _prepare(tmp_path)
    with open(text / "part0.en", "ab") as f:
        f.write(b"caf\xe9\n")
    with pytest.raises(ValueError, match=r"'.*part0.en' is not UTF-8 text \(line 10,"):
        _prepare(tmp_path)
    assert _snapshot(corpus.path) == before


@pytest.mark.backend_independent
def test_argument_and_vocabulary_errors(tmp_path):
    _write_corpus(tmp_path / "text")
    with pytest.raises(ValueError, match="exactly one of vocabulary"):
        _prepare(tmp_path, vocabulary=str(tmp_path), vocabulary_size=72)
    with pytest.raises(ValueError, match="exactly one of vocabulary"):
        _prepare(tmp_path, vocabulary_size=None)
    with pytest.raises(ValueError, match="shard_size must be a positive int"):
        _prepare(tmp_path, shard_size=0)
    with pytest.raises(
        FileNotFoundError, match="No SentencePiece model at '.*nothing'"
    ):
        _prepare(tmp_path, vocabulary=str(tmp_path / "nothing"), vocabulary_size=None)
    src, tgt, _ = read_parallel(
        str(tmp_path / "text" / "part*.en*"), str(tmp_path / "text" / "part*.de*")
    )
    with pytest.raises(ValueError) as expected:
        SubwordTokenizer.train(itertools.chain(src, tgt), 5000)
    with pytest.raises(ValueError) as got:
        _prepare(tmp_path, vocabulary_size=5000)
    assert str(got.value) == str(expected.value) and "too large" in str(got.value)
    assert not os.path.exists(tmp_path / "out" / "manifest.json")


@pytest.mark.backend_independent
def test_vocabulary_trainer_process_imports_only_sentencepiece():
    # The child that learns a vocabulary is run by its path: it must start
    # without importing the package (Keras, keras-hub, TensorFlow).
    with open(vocabulary_trainer_process.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or ".").split(".")[0])
    assert imported == {"json", "sys", "sentencepiece"}, imported
