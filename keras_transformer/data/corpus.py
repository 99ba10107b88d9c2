"""`prepare_corpus`: tokenize a parallel corpus once, into a prepared corpus.

Training at the paper's scale (WMT 2014 English-German, 4.5 million pairs)
should neither tokenize the text at every run nor hold it in memory. A
prepared corpus (`keras_transformer.data.shards`) holds the token ids in
memory-mapped shards that any run reads without TensorFlow.

The preparation streams the text: nothing is kept per pair beyond the shard
being written, so its memory does not grow with the corpus. Its steps:

1. Count the lines of every input file (a glob matching nothing, an empty
   file, paired files of different lengths are errors before any work).
2. The vocabulary: copied from ``vocabulary``, or learned with SentencePiece
   from the text (every source sentence, then every target sentence, or a
   seeded sample of them) in a child process, so that the sentence sample
   SentencePiece holds (gigabytes at WMT's scale) is freed with the child
   and never adds to the memory of the process that trains a model next.
3. Encode the pairs in chunks with SentencePiece on every core, write a
   shard of ``shard_size`` input lines at a time, and record it in the
   manifest (rewritten atomically after each shard).

A preparation that was interrupted resumes after its last complete shard
when run again with the same arguments; a finished one is reused as it is.
"""

import hashlib
import itertools
import json
import os
import subprocess
import sys
import time

import numpy as np
import sentencepiece as spm

from keras_transformer.data.shards import (
    PreparedCorpus,
    add_shard,
    check_files,
    ids_dtype,
    length_histogram,
    merge_histograms,
    new_manifest,
    read_manifest,
    shard_name,
    vocabulary_size_of,
    write_manifest,
    write_shard,
)
from keras_transformer.data import vocabulary_trainer_process
from keras_transformer.data.text_files import ParallelFiles
from keras_transformer.models.transformer.sentencepiece_vocabulary import (
    sentencepiece_trainer_arguments,
    training_error,
)
from keras_transformer.special_tokens import (
    RESERVED_PIECES,
    check_language,
    check_language_tag_position,
    check_reserved_pieces,
    language_tag_ids,
)
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import atomic_write_bytes
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)
from keras_transformer.utils.validation import check_int

# Pairs encoded at a time. SentencePiece returns Python lists (about 36 bytes
# per id), converted to NumPy at once: small chunks keep that transient.
CHUNK_LINES = 16_384
# Sentences written to the vocabulary trainer at a time.
_PIPE_LINES = 8_192
# The exit code of the trainer when SentencePiece refuses the text.
_TRAINING_REFUSED = 3


def prepare_corpus(
    source,
    target,
    output_dir,
    *,
    vocabulary=None,
    vocabulary_size=None,
    source_vocabulary=None,
    shard_size=250_000,
    seed=0,
    num_threads=None,
    input_sentence_size=2_000_000,
    languages=None,
    language_tag="source",
    verbose=1,
):
    """Tokenizes a parallel corpus into a prepared corpus (`PreparedCorpus`).

    Line ``i`` of each source file translates line ``i`` of its target file;
    pairs with an empty side are skipped (and counted), as `read_parallel`
    does. The ids are those of `TransformerTokenizer.tokenize`, without BOS/EOS.
    A vocabulary learned here from at most ``input_sentence_size`` sentences
    is the one `TransformerTokenizer.train` learns from
    ``itertools.chain(sources, targets)`` with the same ``vocabulary_size``.

    Run again with the same arguments, a finished preparation is reused and
    an interrupted one resumes after its last complete shard (the shards
    already written are kept as they are).

    Args:
        source: the source side: a file (plain or gzip), a glob pattern, or
            a list of either (`expand_paths`).
        target: the target side, with as many files, in the same order.
        output_dir: str. The directory of the prepared corpus.
        vocabulary: str or None. A SentencePiece model (``vocab.spm``, or a
            directory holding one, such as a run directory) to encode with;
            it is copied into ``output_dir``. Give either this or
            ``vocabulary_size``.
        vocabulary_size: int or None. Learn a shared BPE vocabulary of this
            many pieces (the 4 reserved included) from the corpus.
        source_vocabulary: str or None. A SentencePiece model of the
            source side over the ids of ``vocabulary`` (a
            ``source_vocab.spm``, or a directory holding one), for a model
            whose sides segment with models of their own (an imported
            Marian model): the sources are encoded with it, the targets
            with ``vocabulary``; it is copied into ``output_dir``. When
            ``vocabulary`` is a directory holding a ``source_vocab.spm``
            (a run directory), that one is used unless given here.
            Defaults to None (one model for both sides).
        shard_size: int. Input lines per shard. Defaults to ``250_000``.
        seed: int. Seed of the sample of sentences the vocabulary is
            learned from. Defaults to ``0``.
        num_threads: int or None. Threads of SentencePiece (training and
            encoding). Defaults to the CPU count.
        input_sentence_size: int. The vocabulary is learned from at most
            this many sentences: all of them when the corpus has no more,
            else a sample of both sides drawn with ``seed`` (the same for the
            same files and seed). ``0``: every sentence. Defaults to
            ``2_000_000``.
        languages: list of str or None. For one model of several target
            languages: the target language of each pair of files (after
            glob expansion, in order). The vocabulary then reserves a tag
            piece per language (`keras_transformer.special_tokens`), every
            pair carries its language's tag id (first source token, or
            first target token: ``language_tag``), and each shard holds
            one language (shards end with each pair of files), so that the
            stream can sample the languages (``sampling_temperature``).
            Defaults to None (one target language, no tags).
        language_tag: ``"source"`` or ``"target"``: where the tag goes
            (see `keras_transformer.special_tokens`). Defaults to
            ``"source"``.
        verbose: int. ``0``: silent; ``1``: progress after each shard;
            ``2``: also SentencePiece's training log. Defaults to ``1``.

    Returns:
        The `PreparedCorpus`, opened.

    Raises:
        FileNotFoundError: an input file does not exist, a pattern matches
            no file, or ``vocabulary`` does not exist.
        ValueError: an argument is invalid; an input file is unreadable,
            not UTF-8 or empty, or paired files have different line counts
            (naming the files; all checked before any other work, leaving
            ``output_dir`` as it was); ``output_dir`` holds another
            preparation (naming what differs) or other files; the
            vocabulary cannot be learned from the text.

    Example:

    ```python
    corpus = prepare_corpus(
        "wmt14/train.*.en.gz", "wmt14/train.*.de.gz", "data/wmt14_prepared",
        vocabulary_size=37_000,
    )
    print(corpus.num_pairs, corpus.num_shards)
    ```
    """
    if (vocabulary is None) == (vocabulary_size is None):
        raise ValueError(
            "Give exactly one of vocabulary (a vocab.spm to encode with) and "
            "vocabulary_size (to learn one). Received: "
            f"vocabulary={vocabulary!r}, vocabulary_size={vocabulary_size!r}"
        )
    shard_size = check_int("shard_size", shard_size)
    seed = check_int("seed", seed, minimum=0)
    input_sentence_size = check_int(
        "input_sentence_size", input_sentence_size, minimum=0
    )
    if 0 < input_sentence_size <= 100:  # SentencePiece's own limit.
        raise ValueError(
            "input_sentence_size must be 0 (every sentence) or more than 100. "
            f"Received: input_sentence_size={input_sentence_size}"
        )
    num_threads = check_int("num_threads", num_threads, allow_none=True)
    num_threads = num_threads or os.cpu_count() or 1
    output_dir = os.fspath(output_dir)
    proto = source_proto = None
    if vocabulary is not None:
        if source_vocabulary is None and os.path.isfile(
            os.path.join(os.fspath(vocabulary), SOURCE_VOCABULARY_FILENAME)
        ):
            source_vocabulary = os.path.join(os.fspath(vocabulary), SOURCE_VOCABULARY_FILENAME)
        vocabulary, proto = _read_vocabulary(vocabulary)
        settings = {"vocabulary": vocabulary, "vocabulary_size": None}
        if source_vocabulary is not None:
            source_vocabulary, source_proto = _read_vocabulary(
                source_vocabulary, SOURCE_VOCABULARY_FILENAME
            )
            if vocabulary_size_of(source_proto) > vocabulary_size_of(proto):
                raise ValueError(
                    f"The source vocabulary {source_vocabulary!r} has more pieces "
                    f"than the vocabulary {vocabulary!r}: they must share one id space."
                )
            settings["source_vocabulary"] = source_vocabulary
    elif source_vocabulary is not None:
        raise ValueError(
            "source_vocabulary needs vocabulary (the target side's SentencePiece "
            f"model over the same ids). Received: source_vocabulary={source_vocabulary!r}"
        )
    else:
        trainer_arguments = sentencepiece_trainer_arguments(
            vocabulary_size,
            input_sentence_size=input_sentence_size,
            num_threads=num_threads,
            verbose=verbose >= 2,
        )
        settings = {"vocabulary": None, "vocabulary_size": vocabulary_size}
    settings.update(seed=seed, input_sentence_size=input_sentence_size)
    files = ParallelFiles(source, target)
    if languages is not None:
        languages = [check_language(lang, "languages") for lang in languages]
        if len(languages) != len(files.source_paths):
            raise ValueError(
                f"languages needs one target language per pair of files: "
                f"{len(languages)} for {len(files.source_paths)} pair(s) "
                f"({', '.join(files.target_paths)})."
            )
        settings.update(
            languages=languages,
            language_tag=check_language_tag_position(language_tag),
        )
        if proto is None:
            trainer_arguments = sentencepiece_trainer_arguments(
                vocabulary_size,
                input_sentence_size=input_sentence_size,
                num_threads=num_threads,
                verbose=verbose >= 2,
                languages=list(dict.fromkeys(languages)),
            )
        else:
            missing = sorted(set(languages) - set(language_tag_ids(proto)))
            if missing:
                raise ValueError(
                    f"The vocabulary {vocabulary!r} has no language tag for "
                    f"{', '.join(missing)}: it was not made for these target "
                    "languages."
                )
    inputs = files.inputs()
    log(
        f"Corpus: {files.num_lines} lines in {len(inputs['source'])} pair(s) of files.",
        verbose,
    )

    manifest = _existing_manifest(output_dir, inputs, shard_size, settings, proto, source_proto)
    if manifest is not None and manifest["complete"]:
        log(
            f"Reusing the prepared corpus {output_dir!r} (same files and settings).",
            verbose,
        )
        return PreparedCorpus.open(output_dir)
    vocabulary_path = os.path.join(output_dir, VOCABULARY_FILENAME)
    if manifest is not None:
        with open(vocabulary_path, "rb") as f:
            proto = f.read()
        if manifest.get("source_vocabulary"):
            path = os.path.join(output_dir, manifest["source_vocabulary"]["file"])
            with open(path, "rb") as f:
                source_proto = f.read()
        log(
            f"Resuming the preparation of {output_dir!r} after "
            f"{len(manifest['shards'])} shard(s).",
            verbose,
        )
    else:
        if proto is None:
            proto = _train_vocabulary(files, trainer_arguments, seed, verbose)
        os.makedirs(output_dir, exist_ok=True)
        atomic_write_bytes(vocabulary_path, proto)
        manifest = new_manifest(proto, shard_size, inputs, settings)
        if source_proto is not None:
            atomic_write_bytes(os.path.join(output_dir, SOURCE_VOCABULARY_FILENAME), source_proto)
            manifest["source_vocabulary"] = {
                "file": SOURCE_VOCABULARY_FILENAME,
                "sha256": hashlib.sha256(source_proto).hexdigest(),
            }
        if languages is not None:
            tags = language_tag_ids(proto)
            manifest["languages"] = {lang: tags[lang] for lang in dict.fromkeys(languages)}
            manifest["language_tag"] = language_tag
        write_manifest(output_dir, manifest)
    _encode_shards(
        files, (source_proto or proto, proto), output_dir, manifest, num_threads, verbose,
        languages,
    )  # fmt: skip
    manifest["complete"] = True
    write_manifest(output_dir, manifest)
    return PreparedCorpus.open(output_dir, verify=False)


def _read_vocabulary(vocabulary, filename=VOCABULARY_FILENAME):
    """``(absolute path, proto bytes)`` of a ``vocab.spm`` (``filename``)
    or a directory holding one, checked to be a SentencePiece model with
    the reserved ids."""
    path = os.fspath(vocabulary)
    if os.path.isdir(path):
        path = os.path.join(path, filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"No SentencePiece model at {path!r} (a {filename} file or a "
            "directory holding one)."
        )
    with open(path, "rb") as f:
        proto = f.read()
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except (RuntimeError, OSError) as error:
        raise ValueError(f"{path!r} is not a SentencePiece model: {error}") from error
    pieces = [processor.id_to_piece(i) for i in range(len(RESERVED_PIECES))]
    check_reserved_pieces(pieces, source=f"The SentencePiece model {path!r}")
    return os.path.abspath(path), proto


def _existing_manifest(output_dir, inputs, shard_size, settings, proto, source_proto=None):
    """The manifest of a preparation of the same corpus with the same
    settings in ``output_dir`` (checked), or None when there is none.

    Raises a ValueError naming ``output_dir`` and what differs when it holds
    another preparation, or files that are not a prepared corpus.
    """
    if not os.path.exists(output_dir):
        return None
    if not os.path.isdir(output_dir):
        raise ValueError(f"output_dir {output_dir!r} exists and is not a directory.")
    manifest = read_manifest(output_dir)
    if manifest is None:
        others = [
            name
            for name in os.listdir(output_dir)
            if not (
                name in (VOCABULARY_FILENAME, SOURCE_VOCABULARY_FILENAME)
                or name.startswith((".tmp-", "shard-"))
            )
        ]
        if others:
            raise ValueError(
                f"output_dir {output_dir!r} is neither empty nor a prepared corpus "
                f"(it holds {', '.join(sorted(others)[:3])}): choose another "
                "directory."
            )
        return None
    differences = []
    if manifest.get("inputs") != inputs:
        differences.append(_input_difference(manifest.get("inputs"), inputs))
    if manifest.get("shard_size") != shard_size:
        differences.append(
            f"shard_size {manifest.get('shard_size')} instead of {shard_size}"
        )
    previous = manifest.get("settings") or {}
    for key in ("languages", "language_tag"):
        if previous.get(key) != settings.get(key):
            differences.append(f"{key}={previous.get(key)!r} instead of {settings.get(key)!r}")
    if proto is not None:
        digest = hashlib.sha256(proto).hexdigest()
        if digest != manifest["vocabulary"]["sha256"]:
            differences.append(f"another vocabulary (not {settings['vocabulary']!r})")
        previous_source = (manifest.get("source_vocabulary") or {}).get("sha256")
        source = hashlib.sha256(source_proto).hexdigest() if source_proto else None
        if previous_source != source:
            differences.append(
                f"another source vocabulary (not {settings.get('source_vocabulary')!r})"
            )
    else:
        for key in ("vocabulary_size", "seed", "input_sentence_size"):
            if previous.get(key) != settings[key]:
                differences.append(
                    f"{key}={previous.get(key)!r} instead of {settings[key]!r}"
                )
    if differences:
        state = "prepared" if manifest.get("complete") else "partly prepared"
        raise ValueError(
            f"output_dir {output_dir!r} holds a corpus {state} with other "
            f"settings: {'; '.join(differences)}. Nothing was changed: choose "
            "another directory, or delete this one to prepare it again."
        )
    check_files(output_dir, manifest, verify=not manifest["complete"])
    return manifest


def _input_difference(previous, inputs):
    """What differs between the input files of two preparations, in words."""
    if not previous:
        return "no recorded input files"
    for side in ("source", "target"):
        if previous.get(side) != inputs[side]:
            return f"the {side} files {previous.get(side)} instead of {inputs[side]}"
    changed = [
        path
        for path, old, new in zip(
            inputs["source"] + inputs["target"],
            [size[0] for size in previous["bytes"]]
            + [size[1] for size in previous["bytes"]],
            [size[0] for size in inputs["bytes"]]
            + [size[1] for size in inputs["bytes"]],
        )
        if old != new
    ]
    return f"input files changed since (their size): {', '.join(changed)}"


def _train_vocabulary(files, arguments, seed, verbose):
    """The proto of a vocabulary learned from ``files`` in a child process."""
    start = time.perf_counter()
    log(
        f"Learning a vocabulary of {arguments['vocab_size']} pieces from at most "
        f"{arguments['input_sentence_size']} sentences (both sides)...",
        verbose,
    )
    settings = json.dumps(
        {"arguments": arguments, "seed": seed, "refused_exit_code": _TRAINING_REFUSED}
    )
    child = subprocess.Popen(
        [sys.executable, "-P", vocabulary_trainer_process.__file__, settings],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None if arguments["minloglevel"] == 0 else subprocess.DEVNULL,
    )
    num_sentences = 0
    try:
        try:
            for text in _vocabulary_text(files, arguments["input_sentence_size"], seed):
                child.stdin.write(("\n".join(text) + "\n").encode("utf-8"))
                num_sentences += len(text)
            child.stdin.close()
        except BrokenPipeError:
            pass  # The trainer stopped early; its exit code says why.
        output = child.stdout.read()
        code = child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if code == _TRAINING_REFUSED:
        failure = json.loads(output.decode("utf-8"))
        raise training_error(
            RuntimeError(failure["error"]),
            arguments["vocab_size"],
            failure["num_sentences"],
        )
    if code != 0:
        why = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        raise RuntimeError(
            f"The SentencePiece vocabulary trainer (a child process) failed ({why}"
            f"{'; out of memory? lower input_sentence_size' if code == -9 else ''})."
        )
    log(
        f"Vocabulary learned from {num_sentences} sentences in "
        f"{time.perf_counter() - start:.1f} s.",
        verbose,
    )
    return output


def _vocabulary_text(files, limit, seed):
    """Blocks (lists of str) of the sentences to learn the vocabulary from:
    every source sentence, then every target sentence, of the pairs with
    text on both sides; or a sample of them when there are more than
    ``limit``.

    The sample is drawn here, not by SentencePiece, whose own sampler
    (``input_sentence_size``) ignores its seed: a sample of ``limit`` of the
    ``2 * num_lines`` sentence positions (source line ``i`` is position
    ``i``, target line ``i`` is ``num_lines + i``), chosen by NumPy from
    ``seed``, the same for the same files and seed. At most ``limit``
    sentences reach SentencePiece, which then keeps them all.
    """
    total = 2 * files.num_lines
    chosen = None
    if 0 < limit < total:
        generator = np.random.default_rng(seed)
        chosen = np.sort(
            generator.choice(total, size=limit, replace=False, shuffle=False)
        )
    for side in (0, 1):
        lines = files.lines()
        position = side * files.num_lines
        while block := list(itertools.islice(lines, _PIPE_LINES)):
            keep = itertools.repeat(True)
            if chosen is not None:
                low, high = np.searchsorted(chosen, [position, position + len(block)])
                keep = np.zeros(len(block), dtype=bool)
                keep[chosen[low:high] - position] = True
            text = [
                pair[side]
                for pair, kept in zip(block, keep)
                if kept and pair[0] and pair[1]
            ]
            position += len(block)
            if text:
                yield text


def _shard_ends(files, shard_size, by_file):
    """The input line numbers (from 1) after which a shard ends: every
    ``shard_size`` lines and at the end; ``by_file``: every ``shard_size``
    lines of each pair of files and at its end."""
    if not by_file:
        return set(range(shard_size, files.num_lines, shard_size)) | {files.num_lines}
    ends, first = set(), 0
    for count in files.line_counts:
        ends.update(range(first + shard_size, first + count, shard_size))
        ends.add(first + count)
        first += count
    return ends


def _to_numpy(ids, dtype):
    """``(flat ids, lengths)`` of a list of id lists."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(
        itertools.chain.from_iterable(ids), dtype=dtype, count=int(lengths.sum())
    )
    return flat, lengths


def _encode_shards(files, protos, output_dir, manifest, num_threads, verbose, languages=None):
    """Encodes the lines after the shards of ``manifest`` into new shards,
    updating ``manifest`` (and its file) after each: the sources with the
    first of ``protos``, the targets with the second (the same model, or
    each side's own over one id space). With ``languages`` (one per pair
    of files), every pair gets its language's tag id and a shard ends with
    each pair of files."""
    source_processor, processor = (spm.SentencePieceProcessor(model_proto=p) for p in protos)
    dtype = ids_dtype(processor.get_piece_size())
    shard_size = manifest["shard_size"]
    ends = _shard_ends(files, shard_size, by_file=languages is not None)
    start_line = manifest["num_lines"]
    file_starts = np.cumsum([0] + files.line_counts)
    start, done_at_start = time.perf_counter(), manifest["num_pairs"]
    parts, histogram, num_lines = [], np.zeros((0, 3), np.int64), 0
    blocks = files.blocks(min(CHUNK_LINES, shard_size), start_line, ends=ends)
    for sources, targets, block_lines in blocks:
        if sources:
            source_ids = source_processor.encode(sources, num_threads=num_threads)
            target_ids = processor.encode(targets, num_threads=num_threads)
            if languages is not None:
                pair = int(np.searchsorted(file_starts, start_line + num_lines, "right")) - 1
                tag = manifest["languages"][languages[pair]]
                if manifest["language_tag"] == "source":
                    source_ids = [[tag] + ids for ids in source_ids]
                else:
                    target_ids = [[tag] + ids for ids in target_ids]
            source = _to_numpy(source_ids, dtype)
            target = _to_numpy(target_ids, dtype)
            parts.append((source, target))
            histogram = merge_histograms(
                histogram, length_histogram(source[1], target[1])
            )
        num_lines += block_lines
        line = start_line + num_lines
        if line not in ends:
            continue
        index = len(manifest["shards"])
        arrays = [
            np.concatenate([part[side][kind] for part in parts] + [np.zeros(0, empty)])
            for side in (0, 1)
            for kind, empty in ((0, dtype), (1, np.int64))
        ]
        entry = write_shard(output_dir, shard_name(index), *arrays, dtype)
        if languages is not None:
            pair = int(np.searchsorted(file_starts, start_line, "right")) - 1
            entry["language"] = languages[pair]
        add_shard(manifest, entry, num_lines, histogram)
        write_manifest(output_dir, manifest)
        start_line, num_lines = line, 0
        parts, histogram = [], np.zeros((0, 3), np.int64)
        elapsed = time.perf_counter() - start
        done = manifest["num_pairs"] - done_at_start
        log(
            f"Shard {index + 1}/{len(ends)}: "
            f"{manifest['num_pairs']} pairs ({line}/{files.num_lines} lines), "
            f"{done / max(elapsed, 1e-9):.0f} pairs/s, {elapsed:.0f} s.",
            verbose,
        )
    return manifest
