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

The steps live apart: the vocabulary in `keras_transformer.data.corpus_vocabulary`,
the check of what the output directory holds in
`keras_transformer.data.corpus_resume`, the encoding into shards in
`keras_transformer.data.corpus_encoding`.
"""

import hashlib
import os

from keras_transformer.data.corpus_encoding import _encode_shards
from keras_transformer.data.corpus_options import CorpusOptions
from keras_transformer.data.corpus_resume import _existing_manifest
from keras_transformer.data.corpus_vocabulary import _read_vocabulary, _train_vocabulary
from keras_transformer.data.shard_writer import (
    new_manifest,
    vocabulary_size_of,
    write_manifest,
)
from keras_transformer.data.shards import PreparedCorpus
from keras_transformer.data.text_files import ParallelFiles
from keras_transformer.models.transformer.sentencepiece_vocabulary import (
    sentencepiece_trainer_arguments,
)
from keras_transformer.special_tokens import language_tag_ids
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import atomic_write_bytes
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)


def prepare_corpus(
    source, target, output_dir, *, vocabulary=None, options=None, verbose=1, **option_values
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
            ``vocabulary_size`` (to learn a shared BPE vocabulary of that
            many pieces, the 4 reserved included, from the corpus).
        options: a `CorpusOptions` (default: its defaults):
            ``vocabulary_size``, ``source_vocabulary``, ``shard_size``,
            ``seed``, ``num_threads``, ``input_sentence_size``,
            ``languages``, ``language_tag``; ``option_values`` (keyword
            arguments named like its fields) replace its values.
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
    options = (options or CorpusOptions()).replace(**option_values)
    vocabulary_size, source_vocabulary = options.vocabulary_size, options.source_vocabulary
    shard_size, seed, languages = options.shard_size, options.seed, options.languages
    input_sentence_size, num_threads = options.input_sentence_size, options.threads
    language_tag = options.language_tag
    if (vocabulary is None) == (vocabulary_size is None):
        raise ValueError(
            "Give exactly one of vocabulary (a vocab.spm to encode with) and "
            "vocabulary_size (to learn one). Received: "
            f"vocabulary={vocabulary!r}, vocabulary_size={vocabulary_size!r}"
        )
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
        languages = list(languages)
        if len(languages) != len(files.source_paths):
            raise ValueError(
                f"languages needs one target language per pair of files: "
                f"{len(languages)} for {len(files.source_paths)} pair(s) "
                f"({', '.join(files.target_paths)})."
            )
        settings.update(languages=languages, language_tag=language_tag)
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
