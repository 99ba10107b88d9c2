"""``keras-transformer preprocess``: text files in, a prepared corpus out;
errors in one line naming the file or flag."""

import os

import numpy as np
import pytest

from keras_transformer import PreparedCorpus
from keras_transformer.cli.main import main
from keras_transformer.data import SubwordTokenizer, read_parallel, write_lines

WORDS = [
    "a",
    "small",
    "dog",
    "runs",
    "over",
    "the",
    "green",
    "hill",
    "near",
    "two",
    "old",
    "trees",
]


def _corpus(directory):
    rng = np.random.default_rng(0)
    for name, count, suffix in (("europarl", 12, ".gz"), ("news", 7, "")):
        src = [" ".join(rng.choice(WORDS, rng.integers(2, 8))) for _ in range(count)]
        tgt = [s.upper() for s in src]
        src[3] = ""
        write_lines(directory / f"{name}.en{suffix}", src)
        write_lines(directory / f"{name}.de{suffix}", tgt)


def _fails(argv, capsys, code):
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) >= 1
    return err.strip().splitlines()[-1]


def test_preprocess_writes_a_corpus_and_reuses_it(tmp_path, capsys):
    _corpus(tmp_path)
    output = tmp_path / "prepared"
    argv = [
        "preprocess", "--train-src", str(tmp_path / "europarl.en.gz"), str(tmp_path / "news.en"),
        "--train-tgt", str(tmp_path / "*.de*"), "--output", str(output),
        "--vocabulary-size", "40", "--shard-size", "5", "--seed", "2",
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"Prepared corpus: {output}" in out
    assert "17 pairs (2 of 19 lines skipped: an empty side), 4 shard(s)" in out
    assert f"keras-transformer train --train-corpus {output}" in out
    corpus = PreparedCorpus.open(output)
    src, tgt, _ = read_parallel(
        [str(tmp_path / "europarl.en.gz"), str(tmp_path / "news.en")],
        str(tmp_path / "*.de*"),
    )
    tokenizer = SubwordTokenizer.load(str(output))
    ids = [
        corpus.shard(i).gather(np.arange(corpus.shard(i).num_pairs), "target")
        for i in range(4)
    ]
    flat = [row for a, s in ids for row in np.split(a, s[1:-1])]
    assert [row.tolist() for row in flat] == tokenizer.encode(tgt) and len(src) == 17
    assert corpus.manifest["settings"]["seed"] == 2

    assert main(argv) == 0
    assert "Reusing the prepared corpus" in capsys.readouterr().out

    # A given vocabulary: a run directory (or its vocab.spm) is copied in.
    again = tmp_path / "again"
    assert main(argv[:6] + ["--output", str(again), "--vocabulary", str(output)]) == 0
    with open(output / "vocab.spm", "rb") as f, open(again / "vocab.spm", "rb") as g:
        assert f.read() == g.read()


def test_preprocess_errors_are_one_line(tmp_path, capsys):
    _corpus(tmp_path)
    base = ["preprocess", "--output", str(tmp_path / "out")]
    line = _fails(base + ["--train-src", str(tmp_path / "*.fr"), "--train-tgt",
                          str(tmp_path / "news.de"), "--vocabulary-size", "40"], capsys, 1)  # fmt: skip
    assert line.startswith(
        "keras-transformer preprocess: error: No file matches the pattern"
    )
    assert "*.fr" in line
    line = _fails(base + ["--train-src", str(tmp_path / "news.en"), "--train-tgt",
                          str(tmp_path / "europarl.de.gz"), "--vocabulary-size", "40"], capsys, 1)  # fmt: skip
    assert "news.en' has 7 lines" in line and "europarl.de.gz' has 12 lines" in line
    files = [
        "--train-src",
        str(tmp_path / "news.en"),
        "--train-tgt",
        str(tmp_path / "news.de"),
    ]
    line = _fails(base + files, capsys, 2)
    assert "one of the arguments --vocabulary --vocabulary-size is required" in line
    line = _fails(
        base + files + ["--vocabulary", "x", "--vocabulary-size", "40"], capsys, 2
    )
    assert "not allowed with argument" in line
    line = _fails(base + files + ["--vocabulary-size", "0"], capsys, 2)
    assert "--vocabulary-size" in line
    line = _fails(
        base + files + ["--vocabulary", str(tmp_path / "none.spm")], capsys, 1
    )
    assert "No SentencePiece model at" in line and "none.spm" in line
    assert not os.path.exists(tmp_path / "out" / "manifest.json")


def test_preprocess_of_several_target_languages(tmp_path, capsys):
    _corpus(tmp_path)
    output = tmp_path / "multilingual"
    argv = [
        "preprocess", "--train-src", str(tmp_path / "europarl.en.gz"), str(tmp_path / "news.en"),
        "--train-tgt", str(tmp_path / "europarl.de.gz"), str(tmp_path / "news.de"),
        "--output", str(output), "--vocabulary-size", "40",
        "--target-languages", "de", "xy", "--language-tag", "target",
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "target languages: de (11 pairs), xy (6 pairs); tags on the target side" in out
    assert "--language-tag target" in out
    corpus = PreparedCorpus.open(output)
    assert corpus.languages == {"de": 4, "xy": 5} and corpus.shard_languages == ["de", "xy"]
    line = _fails(argv[:-5] + ["--target-languages", "de"], capsys, 1)
    assert "one target language per pair of files: 1 for 2" in line
