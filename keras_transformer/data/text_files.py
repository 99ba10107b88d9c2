"""Reading and writing parallel text: one sentence per line, plain or gzip.

A side of a corpus may be several files (WMT's training data is Europarl,
Common Crawl and News Commentary): a list of paths or glob patterns, whose
files are read in the order given (each pattern's matches sorted by name)
and paired with the other side's files one by one.

Line ``i`` of the source file translates line ``i`` of the target file (the
layout of Multi30k and WMT). Files are gzip-compressed when they start with
the gzip magic bytes, whatever their name.
"""

import dataclasses
import glob
import gzip
import os
import zlib

_GZIP_MAGIC = b"\x1f\x8b"


@dataclasses.dataclass(frozen=True)
class ReadStats:
    """What `read_parallel` read.

    Args:
        src_path: str. The source files, as given (a path, a pattern or a
            list, joined with ", ").
        tgt_path: str. The target files, likewise.
        num_lines: int. Lines on each side.
        num_pairs: int. Pairs returned.
        num_skipped_empty: int. Pairs skipped because a side was empty.
    """

    src_path: str
    tgt_path: str
    num_lines: int
    num_pairs: int
    num_skipped_empty: int
    num_files: int = 1


def expand_paths(spec, name="files"):
    """The files of ``spec``: a path, a glob pattern (``*``, ``?``, ``[``),
    or a list of either, in the order given, each pattern's matches sorted.

    Raises:
        ValueError: ``spec`` is empty or not a str or list of str, naming
            ``name``.
        FileNotFoundError: a pattern matches no file, or a path does not
            exist, naming it.
    """
    specs = [spec] if isinstance(spec, (str, os.PathLike)) else spec
    if not isinstance(specs, (list, tuple)) or not specs:
        raise ValueError(
            f"{name} must be a path, a glob pattern or a non-empty list of them. "
            f"Received: {spec!r}"
        )
    paths = []
    for item in specs:
        if not isinstance(item, (str, os.PathLike)):
            raise ValueError(f"{name} must hold paths (str). Received: {item!r}")
        item = os.fspath(item)
        if glob.has_magic(item):
            matches = sorted(glob.glob(item))
            if not matches:
                raise FileNotFoundError(f"No file matches the pattern {item!r} ({name}).")
            paths.extend(matches)
        elif not os.path.exists(item):
            raise FileNotFoundError(f"Text file not found: {item!r}")
        else:
            paths.append(item)
    return paths


def _spelled(spec):
    return ", ".join(map(os.fspath, spec)) if isinstance(spec, (list, tuple)) else os.fspath(spec)


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
    """Read sentence-aligned text: line ``i`` of each source file translates
    line ``i`` of the target file paired with it.

    Surrounding whitespace is stripped; pairs where either side is empty are
    skipped and counted.

    Args:
        src_path: the source side: a file (plain or gzip), a glob pattern,
            or a list of either (`expand_paths`).
        tgt_path: the target side, with as many files, in the same order.

    Returns:
        ``(src_sentences, tgt_sentences, stats)``: two lists of str of equal
        length and a `ReadStats`.

    Raises:
        FileNotFoundError: a file does not exist, or a pattern matches none.
        ValueError: a file is unreadable, the sides have different numbers
            of files, or two paired files different line counts (naming
            both).

    Example:

    ```python
    src, tgt, stats = read_parallel("train.en.gz", "train.de.gz")
    src, tgt, stats = read_parallel(["europarl.en.gz", "news/*.en"],
                                    ["europarl.de.gz", "news/*.de"])
    print(stats.num_pairs, stats.num_skipped_empty)
    ```
    """
    src_paths = expand_paths(src_path, "the source files")
    tgt_paths = expand_paths(tgt_path, "the target files")
    if len(src_paths) != len(tgt_paths):
        raise ValueError(
            f"The source side has {len(src_paths)} files ({_spelled(src_path)}) "
            f"but the target side {len(tgt_paths)} ({_spelled(tgt_path)}): "
            "each source file needs its target file."
        )
    src_sentences, tgt_sentences, num_lines = [], [], 0
    for src_file, tgt_file in zip(src_paths, tgt_paths):
        src_lines = read_lines(src_file)
        tgt_lines = read_lines(tgt_file)
        if len(src_lines) != len(tgt_lines):
            raise ValueError(
                "Parallel files have different line counts: "
                f"{src_file!r} has {len(src_lines)} lines, "
                f"{tgt_file!r} has {len(tgt_lines)} lines."
            )
        num_lines += len(src_lines)
        for src, tgt in zip(src_lines, tgt_lines):
            if src and tgt:
                src_sentences.append(src)
                tgt_sentences.append(tgt)
    stats = ReadStats(
        src_path=_spelled(src_path),
        tgt_path=_spelled(tgt_path),
        num_lines=num_lines,
        num_pairs=len(src_sentences),
        num_skipped_empty=num_lines - len(src_sentences),
        num_files=len(src_paths),
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
