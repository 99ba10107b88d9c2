"""Reading and writing parallel text: one sentence per line, plain or gzip.

A side of a corpus may be several files (WMT's training data is Europarl,
Common Crawl and News Commentary): a list of paths or glob patterns, whose
files are read in the order given (each pattern's matches sorted by name)
and paired with the other side's files one by one.

Line ``i`` of the source file translates line ``i`` of the target file (the
layout of Multi30k and WMT). Files are gzip-compressed when they start with
the gzip magic bytes, whatever their name.
"""

import codecs
import dataclasses
import glob
import gzip
import os
import zlib

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK_BYTES = 1 << 20


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
            raise ValueError(  # noqa: TRY004 - the package raises ValueError for bad arguments.
                f"{name} must hold paths (str). Received: {item!r}"
            )
        item = os.fspath(item)
        if glob.has_magic(item):
            matches = sorted(glob.glob(item))
            if not matches:
                raise FileNotFoundError(
                    f"No file matches the pattern {item!r} ({name})."
                )
            paths.extend(matches)
        elif not os.path.exists(item):
            raise FileNotFoundError(f"Text file not found: {item!r}")
        else:
            paths.append(item)
    return paths


def _spelled(spec):
    return (
        ", ".join(map(os.fspath, spec))
        if isinstance(spec, (list, tuple))
        else os.fspath(spec)
    )


def _is_gzip(path):
    with open(path, "rb") as raw:
        return raw.read(2) == _GZIP_MAGIC


def _check_exists(path):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"Text file not found: {path!r}")
    return path


def _unicode_error(path, compressed):
    """The ValueError of a file that is not UTF-8, naming its first bad line."""
    opener = gzip.open if compressed else open
    with opener(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                return ValueError(
                    f"{path!r} is not UTF-8 text (line {number}, byte {error.start} "
                    f"of the line): {error.reason}"
                )
    return ValueError(f"{path!r} is not UTF-8 text.")


def _read_error(path, compressed, error):
    kind = "gzip " if compressed else ""
    return ValueError(f"Cannot read {kind}file {path!r}: {error}")


def iter_lines(path):
    """Lines of a plain or gzip text file (UTF-8), stripped, one at a time.

    The rules of `read_lines`, without holding the file in memory.

    Args:
        path: str. The file; gzip is detected from its first bytes.

    Yields:
        str, one per line (empty lines as ``""``).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file cannot be read, or is not UTF-8 (naming the
            path and the line).
    """
    path = _check_exists(path)
    compressed = False
    try:
        compressed = _is_gzip(path)
        opener = gzip.open if compressed else open
        # newline="\n": only "\n" ends a line. Universal newlines (or
        # str.splitlines) would also split on a stray "\r" or U+2028 inside a
        # sentence and misalign the two sides of a parallel corpus.
        with opener(path, "rt", encoding="utf-8", newline="\n") as f:
            for line in f:
                yield line.strip()
    except UnicodeDecodeError:
        raise _unicode_error(path, compressed) from None
    except (OSError, EOFError, zlib.error) as error:
        raise _read_error(path, compressed, error) from error


def read_lines(path):
    """Lines of a plain or gzip text file (UTF-8), stripped of whitespace.

    Args:
        path: str. The file; gzip is detected from its first bytes.

    Returns:
        A list of str, one per line (empty lines kept as ``""``).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file cannot be read or decoded; names the path (and
            the first line that is not UTF-8).
    """
    return list(iter_lines(path))


def count_lines(path):
    """The number of lines of a plain or gzip text file, checking that it is
    UTF-8 on the way (as `iter_lines` counts them: a last line without
    ``"\n"`` counts).

    Args:
        path: str. The file.

    Returns:
        int.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file cannot be read, or is not UTF-8 (naming the
            path and the line).
    """
    path = _check_exists(path)
    compressed = False
    count, last = 0, b"\n"
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        compressed = _is_gzip(path)
        opener = gzip.open if compressed else open
        with opener(path, "rb") as f:
            while chunk := f.read(_CHUNK_BYTES):
                count += chunk.count(b"\n")
                decoder.decode(chunk)
                last = chunk[-1:]
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise _unicode_error(path, compressed) from None
    except (OSError, EOFError, zlib.error) as error:
        raise _read_error(path, compressed, error) from error
    return count + (last != b"\n")


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
                    f"Cannot write a line containing a newline to {path!r}: {line!r}"
                )
            f.write(line + "\n")
    return path


class ParallelFiles:
    """The files of a parallel corpus, checked up front, read as a stream.

    The files are counted (and checked to be UTF-8) when the object is made,
    before any expensive work: the sides must have as many files, paired
    files as many lines, and each pair of files at least one pair of lines
    with text on both sides. Then `blocks` and `pairs` read the files
    one after the other, pairing line ``i`` of each source file with line
    ``i`` of its target file and skipping pairs with an empty side, as
    `read_parallel` does, without holding the corpus in memory (`lines`
    gives every line, empty sides included).

    Args:
        src_path: the source side: a file (plain or gzip), a glob pattern,
            or a list of either (`expand_paths`).
        tgt_path: the target side, with as many files, in the same order.

    Attributes:
        source_paths: list of str. The source files, in order.
        target_paths: list of str. The target files.
        line_counts: list of int. The lines of each pair of files.
        num_lines: int. Lines on each side, all files together.

    Raises:
        FileNotFoundError: a file does not exist, or a pattern matches none.
        ValueError: a file is unreadable, not UTF-8 or empty, the sides
            have different numbers of files, two paired files have
            different line counts, or no line of a pair of files has text on
            both sides (naming the files).

    Example:

    ```python
    files = ParallelFiles(["europarl.en.gz", "news/*.en"],
                          ["europarl.de.gz", "news/*.de"])
    for sources, targets, num_lines in files.blocks(10_000):
        ...  # num_lines - len(sources) pairs of the block were skipped
    ```
    """

    def __init__(self, src_path, tgt_path):
        self.source_paths = expand_paths(src_path, "the source files")
        self.target_paths = expand_paths(tgt_path, "the target files")
        if len(self.source_paths) != len(self.target_paths):
            raise ValueError(
                f"The source side has {len(self.source_paths)} files "
                f"({_spelled(src_path)}) but the target side "
                f"{len(self.target_paths)} ({_spelled(tgt_path)}): each source "
                "file needs its target file."
            )
        self.line_counts = []
        for src_file, tgt_file in zip(self.source_paths, self.target_paths):
            src_count, tgt_count = count_lines(src_file), count_lines(tgt_file)
            for file, count in ((src_file, src_count), (tgt_file, tgt_count)):
                if count == 0:
                    raise ValueError(f"The text file {file!r} is empty.")
            if src_count != tgt_count:
                raise ValueError(
                    "Parallel files have different line counts: "
                    f"{src_file!r} has {src_count} lines, "
                    f"{tgt_file!r} has {tgt_count} lines."
                )
            if not any(src and tgt for src, tgt in _zip_lines(src_file, tgt_file)):
                raise ValueError(
                    f"The parallel files {src_file!r} and {tgt_file!r} have no "
                    "line with text on both sides."
                )
            self.line_counts.append(src_count)
        self.num_lines = sum(self.line_counts)

    def inputs(self):
        """The files as a prepared corpus' manifest records them: absolute
        paths and byte sizes (``{"source", "target", "bytes"}``)."""
        return {
            "source": [os.path.abspath(path) for path in self.source_paths],
            "target": [os.path.abspath(path) for path in self.target_paths],
            "bytes": [
                [os.path.getsize(src), os.path.getsize(tgt)]
                for src, tgt in zip(self.source_paths, self.target_paths)
            ],
        }

    def lines(self, start_line=0):
        """``(src, tgt)`` of every input line from ``start_line`` on (of all
        files taken one after the other), pairs with an empty side too."""
        skip = start_line
        for (src_file, tgt_file), count in zip(
            zip(self.source_paths, self.target_paths), self.line_counts
        ):
            if skip >= count:
                skip -= count
                continue
            lines = _zip_lines(src_file, tgt_file)
            for _ in range(skip):
                next(lines)
            skip = 0
            yield from lines

    def blocks(self, block_lines, start_line=0, boundary=None, ends=None):
        """The pairs of each block of ``block_lines`` input lines.

        Args:
            block_lines: int. Input lines per block (fewer where a block
                ends at a ``boundary`` or at the end of the input).
            start_line: int. The first input line to read (of all files
                taken one after the other). Defaults to ``0``.
            boundary: int or None. When given, a block also ends after each
                line whose number (from 1) is a multiple of it, so that no
                block straddles two shards of ``boundary`` lines. Defaults
                to None.
            ends: set of int or None. Line numbers (from 1) after which a
                block also ends (shards that end at the end of each pair of
                files). Defaults to None.

        Yields:
            ``(sources, targets, num_lines)``: the pairs of the block with
            text on both sides (two lists of str), and the number of input
            lines the block covers.
        """
        sources, targets, num_lines = [], [], 0
        line = start_line
        ends = ends or ()
        for src, tgt in self.lines(start_line):
            num_lines += 1
            line += 1
            if src and tgt:
                sources.append(src)
                targets.append(tgt)
            if (
                num_lines == block_lines
                or (boundary and line % boundary == 0)
                or line in ends
            ):
                yield sources, targets, num_lines
                sources, targets, num_lines = [], [], 0
        if num_lines:
            yield sources, targets, num_lines

    def pairs(self, start_line=0):
        """The pairs ``(src, tgt)`` with text on both sides, in order, from
        input line ``start_line`` on."""
        for src, tgt in self.lines(start_line):
            if src and tgt:
                yield src, tgt


def _zip_lines(src_file, tgt_file):
    """The lines of two paired files (already checked to have as many)."""
    return zip(iter_lines(src_file), iter_lines(tgt_file), strict=True)
