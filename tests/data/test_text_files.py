"""Parallel text from several files: lists and glob patterns, plain or gzip."""

import gzip

import pytest

from keras_transformer import TrainConfig
from keras_transformer.cli.commands import _train_config
from keras_transformer.cli.parser import build_parser
from keras_transformer.data import expand_paths, read_parallel, write_lines


def _corpus(tmp_path):
    """Three sources of a corpus: a plain pair, a gzip pair, a pair with an
    empty line; each line says which file it comes from."""
    parts = {}
    for name, count in (("europarl", 3), ("commoncrawl", 2), ("news", 2)):
        src = [f"{name} {i}" for i in range(count)]
        tgt = [f"{name} {i} de" for i in range(count)]
        if name == "news":
            src[1] = ""
        suffix = ".gz" if name == "commoncrawl" else ""
        write_lines(tmp_path / f"{name}.en{suffix}", src)
        write_lines(tmp_path / f"{name}.de{suffix}", tgt)
        parts[name] = (src, tgt)
    return parts


def test_a_list_of_files_reads_them_in_order_and_pairs_them(tmp_path):
    _corpus(tmp_path)
    src, tgt, stats = read_parallel(
        [str(tmp_path / "news.en"), str(tmp_path / "europarl.en")],
        [str(tmp_path / "news.de"), str(tmp_path / "europarl.de")],
    )
    assert src == ["news 0", "europarl 0", "europarl 1", "europarl 2"]
    assert tgt == [s + " de" for s in src]
    assert (stats.num_files, stats.num_lines, stats.num_pairs, stats.num_skipped_empty) == (2, 5, 4, 1)


def test_a_glob_pattern_reads_its_matches_sorted_plain_and_gzip(tmp_path):
    _corpus(tmp_path)
    src, tgt, stats = read_parallel(str(tmp_path / "*.en*"), str(tmp_path / "*.de*"))
    # commoncrawl (gzip) < europarl < news
    assert src == ["commoncrawl 0", "commoncrawl 1", "europarl 0", "europarl 1",
                   "europarl 2", "news 0"]  # fmt: skip
    assert tgt == [s + " de" for s in src]
    assert stats.num_files == 3 and stats.src_path.endswith("*.en*")
    with gzip.open(tmp_path / "commoncrawl.en.gz", "rt") as f:  # really gzip
        assert f.readline().strip() == "commoncrawl 0"


def test_errors_name_the_files(tmp_path):
    _corpus(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"No file matches the pattern '.*\*\.fr'"):
        read_parallel(str(tmp_path / "*.fr"), str(tmp_path / "*.de*"))
    with pytest.raises(FileNotFoundError, match="missing.en"):
        read_parallel([str(tmp_path / "missing.en")], [str(tmp_path / "news.de")])
    with pytest.raises(ValueError, match="source side has 3 files .* target side 2"):
        read_parallel(str(tmp_path / "*.en*"), [str(tmp_path / "news.de"),
                                                 str(tmp_path / "europarl.de")])
    with pytest.raises(ValueError, match=r"'.*europarl.en' has 3 lines, '.*news.de' has 2"):
        read_parallel([str(tmp_path / "europarl.en")], [str(tmp_path / "news.de")])
    for bad in ([], "", [3]):
        with pytest.raises((ValueError, FileNotFoundError), match="source files|not found"):
            expand_paths(bad, "the source files")


def test_config_and_flags_take_lists_and_patterns(tmp_path):
    _corpus(tmp_path)
    files = [str(tmp_path / "europarl.en"), str(tmp_path / "news.en")]
    config = TrainConfig(train_src=files, train_tgt=[f[:-3] + ".de" for f in files])
    assert config.train_src == files
    with pytest.raises(TypeError, match="train_src"):
        TrainConfig(train_src=3, train_tgt="x")
    # A flag takes its text as is: a glob pattern is not YAML (a leading *
    # would be a YAML alias); lists come from --set or a config file.
    args = build_parser().parse_args(
        ["train", "--train-src", "*.en.gz", "--train-tgt", "*.de.gz",
         "--set", "valid_src=[a.en, b.en]", "--set", "valid_tgt=[a.de, b.de]"]
    )  # fmt: skip
    config = _train_config(args)
    assert (config.train_src, config.train_tgt) == ("*.en.gz", "*.de.gz")
    assert config.valid_src == ["a.en", "b.en"] and config.valid_tgt == ["a.de", "b.de"]
