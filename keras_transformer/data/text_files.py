"""Reading and writing parallel text: one sentence per line, plain or gzip.

Line ``i`` of the source file translates line ``i`` of the target file (the
layout of Multi30k and WMT). Files are gzip-compressed when they start with
the gzip magic bytes, whatever their name.
"""

import dataclasses
import gzip
import os
import zlib

_GZIP_MAGIC = b"\x1f\x8b"


@dataclasses.dataclass(frozen=True)
class ReadStats:
    """What `read_parallel` read.

    Args:
        src_path: str. The source file.
        tgt_path: str. The target file.
        num_lines: int. Lines in each file.
        num_pairs: int. Pairs returned.
        num_skipped_empty: int. Pairs skipped because a side was empty.
    """

    src_path: str
    tgt_path: str
    num_lines: int
    num_pairs: int
    num_skipped_empty: int


def read_lines(path):
    """Lines of a plain or gzip text file (UTF-8), stripped of whitespace.

    Args:
        path: str. The file; gzip is detected from its first bytes.

    Returns:
        A list of str, one per line (empty lines kept as ``""``).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file cannot be read or decoded; names the path.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"Text file not found: {path!r}")
    compressed = False
    try:
        with open(path, "rb") as raw:
            compressed = raw.read(2) == _GZIP_MAGIC
        opener = gzip.open if compressed else open
        # newline="\n": only "\n" ends a line. Universal newlines (or
        # str.splitlines) would also split on a stray "\r" or U+2028 inside a
        # sentence and misalign the two sides of a parallel corpus.
        with opener(path, "rt", encoding="utf-8", newline="\n") as f:
            return [line.strip() for line in f]
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {error.start}): {error.reason}"
        ) from error
    except (OSError, EOFError, zlib.error) as error:
        kind = "gzip " if compressed else ""
        raise ValueError(f"Cannot read {kind}file {path!r}: {error}") from error


def read_parallel(src_path, tgt_path):
    """Read a sentence-aligned pair of files.

    Surrounding whitespace is stripped; pairs where either side is empty are
    skipped and counted.

    Args:
        src_path: str. Source-language file, plain or gzip.
        tgt_path: str. Target-language file, plain or gzip.

    Returns:
        ``(src_sentences, tgt_sentences, stats)``: two lists of str of equal
        length and a `ReadStats`.

    Raises:
        FileNotFoundError: a file does not exist.
        ValueError: a file is unreadable, or the line counts differ.

    Example:

    ```python
    src, tgt, stats = read_parallel("train.en.gz", "train.de.gz")
    print(stats.num_pairs, stats.num_skipped_empty)
    ```
    """
    src_lines = read_lines(src_path)
    tgt_lines = read_lines(tgt_path)
    if len(src_lines) != len(tgt_lines):
        raise ValueError(
            "Parallel files have different line counts: "
            f"{src_path!r} has {len(src_lines)} lines, "
            f"{tgt_path!r} has {len(tgt_lines)} lines."
        )
    src_sentences, tgt_sentences = [], []
    for src, tgt in zip(src_lines, tgt_lines):
        if src and tgt:
            src_sentences.append(src)
            tgt_sentences.append(tgt)
    stats = ReadStats(
        src_path=os.fspath(src_path),
        tgt_path=os.fspath(tgt_path),
        num_lines=len(src_lines),
        num_pairs=len(src_sentences),
        num_skipped_empty=len(src_lines) - len(src_sentences),
    )
    return src_sentences, tgt_sentences, stats


def write_lines(path, lines):
    """Write one str per line (UTF-8); gzip when ``path`` ends in ``.gz``.

    Args:
        path: str. The file to write; parent directories are created.
        lines: iterable of str without newlines.

    Returns:
        The path.
    """
    path = os.fspath(path)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8", newline="\n") as f:
        for line in lines:
            if "\n" in line:
                raise ValueError(
                    f"Cannot write a line containing a newline to {path!r}: "
                    f"{line!r}"
                )
            f.write(line + "\n")
    return path
