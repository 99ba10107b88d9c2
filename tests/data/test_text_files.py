"""Parallel text from several files: lists and glob patterns, plain or gzip."""

import gzip

import pytest

from keras_transformer import TrainConfig
from keras_transformer.cli.train_command import _train_config
from keras_transformer.cli.parser import build_parser
from keras_transformer.data import (
    ParallelFiles,
    count_lines,
    expand_paths,
    iter_lines,
    read_lines,
    read_parallel,
    write_lines,
)

pytestmark = pytest.mark.backend_independent


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
    assert (
        stats.num_files,
        stats.num_lines,
        stats.num_pairs,
        stats.num_skipped_empty,
    ) == (2, 5, 4, 1)


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
    with pytest.raises(
        FileNotFoundError, match=r"No file matches the pattern '.*\*\.fr'"
    ):
        read_parallel(str(tmp_path / "*.fr"), str(tmp_path / "*.de*"))
    with pytest.raises(FileNotFoundError, match="missing.en"):
        read_parallel([str(tmp_path / "missing.en")], [str(tmp_path / "news.de")])
    with pytest.raises(ValueError, match="source side has 3 files .* target side 2"):
        read_parallel(
            str(tmp_path / "*.en*"),
            [str(tmp_path / "news.de"), str(tmp_path / "europarl.de")],
        )
    with pytest.raises(
        ValueError, match=r"'.*europarl.en' has 3 lines, '.*news.de' has 2"
    ):
        read_parallel([str(tmp_path / "europarl.en")], [str(tmp_path / "news.de")])
    for bad in ([], "", [3]):
        with pytest.raises(
            (ValueError, FileNotFoundError), match="source files|not found"
        ):
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


def test_iter_lines_and_count_lines_follow_read_lines(tmp_path):
    # Only "\n" ends a line: a stray "\r" or U+2028 stays inside it.
    text = "one \r two\n\n  spaced  \nline\u2028sep\nlast without newline"
    for name in ("plain.txt", "packed.gz"):
        path = tmp_path / name
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wt", encoding="utf-8", newline="") as f:
            f.write(text)
        expected = ["one \r two", "", "spaced", "line\u2028sep", "last without newline"]
        assert read_lines(path) == list(iter_lines(path)) == expected
        assert count_lines(path) == 5
    write_lines(tmp_path / "empty.txt", [])
    assert (
        count_lines(tmp_path / "empty.txt") == 0
        and read_lines(tmp_path / "empty.txt") == []
    )
    write_lines(tmp_path / "ends.gz", ["a", "b"])
    assert count_lines(tmp_path / "ends.gz") == 2


def test_a_line_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine\nstill fine\ncaf\xe9\n".encode("latin-1"))
    for read in (read_lines, count_lines, lambda p: list(iter_lines(p))):
        with pytest.raises(
            ValueError, match=r"latin1.txt' is not UTF-8 text \(line 3, byte 3"
        ):
            read(path)
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        count_lines(tmp_path / "missing.txt")
    truncated = tmp_path / "truncated.gz"
    write_lines(truncated, [f"line {i}" for i in range(1000)])
    truncated.write_bytes(truncated.read_bytes()[:-20])
    with pytest.raises(ValueError, match="Cannot read gzip file .*truncated.gz"):
        count_lines(truncated)


def test_parallel_files_stream_the_pairs_of_read_parallel(tmp_path):
    _corpus(tmp_path)
    pattern_src, pattern_tgt = str(tmp_path / "*.en*"), str(tmp_path / "*.de*")
    files = ParallelFiles(pattern_src, pattern_tgt)
    src, tgt, stats = read_parallel(pattern_src, pattern_tgt)
    assert files.line_counts == [2, 3, 2] and files.num_lines == stats.num_lines == 7
    assert list(files.pairs()) == list(zip(src, tgt))
    assert len(list(files.lines())) == 7 and list(files.lines(6)) == [("", "news 1 de")]
    # Blocks of 3 lines that also end at every multiple of 2 lines.
    blocks = list(files.blocks(3, boundary=2))
    assert [block[2] for block in blocks] == [2, 2, 2, 1]
    assert [pair for b in blocks for pair in zip(b[0], b[1])] == list(zip(src, tgt))
    assert [b[2] for b in files.blocks(3, start_line=4)] == [3]
    assert list(files.pairs(5)) == [("news 0", "news 0 de")]
    inputs = files.inputs()
    assert inputs["source"][0] == str(tmp_path / "commoncrawl.en.gz")
    assert inputs["bytes"][1] == [
        (tmp_path / "europarl.en").stat().st_size, (tmp_path / "europarl.de").stat().st_size
    ]  # fmt: skip


def test_parallel_files_check_every_file_first(tmp_path):
    _corpus(tmp_path)
    write_lines(tmp_path / "extra.en", ["x"])
    with pytest.raises(ValueError, match="source side has 4 files"):
        ParallelFiles(str(tmp_path / "*.en*"), str(tmp_path / "*.de*"))
    write_lines(tmp_path / "extra.de", ["x", "y"])
    with pytest.raises(
        ValueError, match=r"'.*extra.en' has 1 lines, '.*extra.de' has 2 lines"
    ):
        ParallelFiles(str(tmp_path / "*.en*"), str(tmp_path / "*.de*"))
    write_lines(tmp_path / "extra.de", [])
    with pytest.raises(ValueError, match=r"text file '.*extra.de' is empty"):
        ParallelFiles(str(tmp_path / "*.en*"), str(tmp_path / "*.de*"))
    write_lines(tmp_path / "extra.de", [" "])
    with pytest.raises(
        ValueError, match=r"'.*extra.en' and '.*extra.de' have no line with text"
    ):
        ParallelFiles([str(tmp_path / "news.en"), str(tmp_path / "extra.en")],
                      [str(tmp_path / "news.de"), str(tmp_path / "extra.de")])  # fmt: skip
    with pytest.raises(
        FileNotFoundError, match=r"No file matches the pattern '.*\*\.fr'"
    ):
        ParallelFiles(str(tmp_path / "*.fr"), str(tmp_path / "*.de*"))
