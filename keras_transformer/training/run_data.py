"""A run's data: the splits read into memory, the shared vocabulary, the
prepared training corpus, the SentencePiece models of ``init_from``, and the
training and validation streams fed to ``fit`` (`TrainingData`).

`keras_transformer.training.trainer` calls these in `train`'s data step.
"""

import itertools
import os
import time

import keras

from keras_transformer.data import (
    BatchList,
    CorpusStream,
    DatasetOptions,
    PreparedCorpus,
    TransformerTokenizer,
    corpus_from_pairs,
    default_bucket_lengths,
    default_task_splits,
    make_batches_from_corpus,
    prepare_corpus,
    read_parallel,
)
from keras_transformer.data.text_files import expand_paths
from keras_transformer.models.transformer.transformer_loader import locate_trained_model
from keras_transformer.training.distribution import pipeline_options_for
from keras_transformer.training.run_directory import RunDirectory
from keras_transformer.utils.console import log
from keras_transformer.utils.file_io import atomic_write_bytes
from keras_transformer.utils.run_files import (
    CORPUS_DIRNAME,
    MODEL_FILENAME,
    MODEL_WEIGHTS_FILE,
    PRESET_CONFIG_FILENAME,
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)

if keras.config.backend() == "tensorflow":
    # The TensorFlow backend reads the training stream through tf.data; JAX
    # and PyTorch through a NumPy generator, without TensorFlow.
    from keras_transformer.data.stream import make_dataset_from_corpus

# The default task's split is fixed, so that scores of different runs (and
# seeds) are measured on the same held-out numbers.
DEFAULT_TASK_SPLIT_SEED = 0


def load_data(config):
    """``{"train": (src, tgt), "valid": ..., "test": ...}`` lists of str.

    The default task gives all three splits. For files, only the validation
    and test splits are read into memory (missing ones are absent from the
    dict): the training data is prepared into shards and streamed
    (`prepare_training_corpus`).
    """
    if config.uses_default_task:
        return default_task_splits(seed=DEFAULT_TASK_SPLIT_SEED)
    splits = {}
    for name in ("valid", "test"):
        src_path = getattr(config, f"{name}_src")
        if src_path is not None:
            tgt_path = getattr(config, f"{name}_tgt")
            src, tgt, stats = read_parallel(src_path, tgt_path)
            if not src:
                raise ValueError(
                    f"No {name} sentence pairs in {src_path!r} and {tgt_path!r} "
                    f"({stats.num_lines} lines, {stats.num_skipped_empty} with an "
                    "empty side): the files are empty or blank."
                )
            splits[name] = (src, tgt)
    return splits


def build_tokenizer(config, train_pairs, verbose=1):
    """Loads ``<output_dir>/vocab.spm``, or trains it on the training text."""
    path = RunDirectory(config.output_dir).vocabulary_path
    if os.path.isfile(path):
        tokenizer = TransformerTokenizer.load(path)
        if config.vocabulary_size not in (None, tokenizer.vocabulary_size):
            raise ValueError(
                f"{path!r} has {tokenizer.vocabulary_size} pieces but the config "
                f"asks for vocabulary_size={config.vocabulary_size}. Use a new "
                "output_dir, or delete the old vocabulary and its model."
            )
        log(f"Vocabulary: reusing {path} ({tokenizer.vocabulary_size} pieces).", verbose)
        return tokenizer
    start = time.monotonic()
    src, tgt = train_pairs
    tokenizer = TransformerTokenizer.train(
        itertools.chain(src, tgt), config.vocabulary_size, seed=config.seed
    )
    atomic_write_bytes(path, tokenizer.proto)
    log(
        f"Vocabulary: trained {tokenizer.vocabulary_size} BPE pieces on "
        f"{2 * len(src)} sentences in {time.monotonic() - start:.1f} s -> {path}",
        verbose,
    )
    return tokenizer


def prepare_training_corpus(config, verbose=1):
    """The run's training data as a `PreparedCorpus`, and its vocabulary in
    ``<output_dir>/vocab.spm``.

    ``train_corpus`` is opened as it is; ``train_src``/``train_tgt`` are
    prepared into ``corpus_dir`` (``<output_dir>/corpus`` by default) with
    the run's vocabulary when it has one (a resumed run), else with a new
    one of ``vocabulary_size`` pieces learned from a streamed sample. A
    corpus prepared before with the same files and vocabulary is reused; an
    interrupted preparation resumes.

    Raises:
        ValueError: the corpus's vocabulary is not the run's, or its size is
            not ``vocabulary_size`` (naming both).
    """
    run = RunDirectory(config.output_dir)
    vocabulary = run.vocabulary_path if os.path.isfile(run.vocabulary_path) else None
    if config.train_corpus is not None:
        corpus = PreparedCorpus.open(config.train_corpus)
        log(f"Training corpus: {corpus.path} ({corpus.num_pairs:,} pairs).", verbose)
    else:
        corpus_dir = config.corpus_dir or run.join(CORPUS_DIRNAME)
        log(f"Training corpus: preparing {corpus_dir}", verbose)
        corpus = prepare_corpus(
            config.train_src,
            config.train_tgt,
            corpus_dir,
            languages=_file_languages(config),
            language_tag=config.language_tag,
            vocabulary=vocabulary,
            vocabulary_size=None if vocabulary else config.vocabulary_size,
            # The run's own source model (from init_from), when it has one.
            source_vocabulary=_source_vocabulary(run),
            seed=config.seed,
            # Keras' verbose=2 (a line per epoch) is not a request for
            # SentencePiece's own log.
            verbose=min(verbose, 1),
        )
    if corpus.languages and corpus.language_tag != config.language_tag:
        raise ValueError(
            f"The corpus {corpus.path!r} puts its language tags on the "
            f"{corpus.language_tag} side; set language_tag: {corpus.language_tag} "
            f"(received language_tag={config.language_tag!r})."
        )
    if config.vocabulary_size not in (None, corpus.vocabulary_size):
        raise ValueError(
            f"The corpus {corpus.path!r} has a vocabulary of {corpus.vocabulary_size} "
            f"pieces but the config asks for vocabulary_size={config.vocabulary_size}."
        )
    with open(corpus.vocabulary_path, "rb") as f:
        proto = f.read()
    if vocabulary is None:
        atomic_write_bytes(run.vocabulary_path, proto)
    else:
        with open(vocabulary, "rb") as f:
            corpus.check_vocabulary(f.read(), vocabulary)
    source_path = run.join(SOURCE_VOCABULARY_FILENAME)
    source_proto = None
    if os.path.isfile(source_path):
        with open(source_path, "rb") as f:
            source_proto = f.read()
    corpus.check_source_vocabulary(source_proto, source_path)
    return corpus


def _source_vocabulary(run):
    """``<run>/source_vocab.spm`` where the run has one, else None."""
    path = run.join(SOURCE_VOCABULARY_FILENAME)
    return path if os.path.isfile(path) else None


def check_init_from(path):
    """Raises an error naming ``path`` (``init_from``) when it is not a run
    directory with a model (its keras-hub preset files, or the
    ``model.keras`` of a run of earlier versions) and its vocabulary."""
    if not os.path.isdir(path):
        what = "is not a directory" if os.path.exists(path) else "does not exist"
        raise FileNotFoundError(
            f"init_from {path!r} {what} (expected a run directory with "
            f"{MODEL_WEIGHTS_FILE} and {VOCABULARY_FILENAME}: a finished run of train, "
            "or the output of convert)."
        )
    if locate_trained_model(path) is None:
        raise ValueError(
            f"init_from {path!r} is not a finished run directory: it holds no model "
            f"({os.path.join(path, PRESET_CONFIG_FILENAME)!r} and "
            f"{os.path.join(path, MODEL_WEIGHTS_FILE)!r} are missing, nor is there "
            f"the {MODEL_FILENAME} of an earlier version)."
        )
    vocabulary = os.path.join(path, VOCABULARY_FILENAME)
    if not os.path.isfile(vocabulary):
        raise ValueError(
            f"init_from {path!r} is not a finished run directory: {vocabulary!r} is missing."
        )


def copy_init_vocabularies(config, run):
    """Copies the SentencePiece model(s) of ``init_from`` into the run (once;
    a resumed run keeps its copies, which must be the same)."""
    for name in (VOCABULARY_FILENAME, SOURCE_VOCABULARY_FILENAME):
        source = os.path.join(config.init_from, name)
        if not os.path.isfile(source):
            continue
        with open(source, "rb") as f:
            proto = f.read()
        target = run.join(name)
        if not os.path.isfile(target):
            atomic_write_bytes(target, proto)
            continue
        with open(target, "rb") as f:
            if f.read() != proto:
                raise ValueError(
                    f"{target!r} is not the vocabulary of init_from ({source!r}): use a "
                    "new output_dir."
                )


def _file_languages(config):
    """The target language of each pair of training files (each
    ``train_src`` entry expanded, as `prepare_corpus` expands it), or None
    for one target language."""
    if config.target_languages is None:
        return None
    entries = config.train_src if isinstance(config.train_src, list) else [config.train_src]
    return [
        language
        for entry, language in zip(entries, config.target_languages)
        for _ in expand_paths(entry, "the source files")
    ]


class TrainingData:
    """The training stream and the validation batches of a run.

    The training data repeats forever (``steps_per_epoch`` sets the epoch)
    and can start at any batch (`train_dataset`), so that a resumed run
    continues where its backup was taken. It is a `CorpusStream` of a
    prepared corpus (memory-mapped shards, bounded memory), or of the
    default task's pairs encoded in memory (`corpus_from_pairs`): the same
    batches for the same seed under every backend. The TensorFlow backend
    reads it through ``tf.data`` (`make_dataset_from_corpus`); JAX and
    PyTorch through a Python generator whose batches a background thread
    builds ahead (`make_batches_from_corpus`), without TensorFlow. The
    validation pairs are batched once, in NumPy, the same way (unshuffled),
    and fed as a `keras.utils.PyDataset` (`BatchList`) each epoch.

    Args:
        config: the resolved `TrainConfig`.
        train_data: a `PreparedCorpus`, or ``(sources, targets)`` lists.
        valid_pairs: ``(sources, targets)`` or None.
        tokenizer: the run's `TransformerTokenizer`.
    """

    def __init__(self, config, train_data, valid_pairs, tokenizer):
        # Training and validation batches share one batching (same shapes).
        # Under JAX data parallelism every batch size is a multiple of the
        # device count (and each host reads its share of every global batch).
        self.config = config
        self._feeds = []  # The `CorpusBatches` fed to fit (JAX, PyTorch).
        # The sources of a run with a source model of their own (init_from).
        source_proto = None
        source_path = _source_vocabulary(RunDirectory(config.output_dir))
        if source_path is not None:
            with open(source_path, "rb") as f:
                source_proto = f.read()
        if not isinstance(train_data, PreparedCorpus):
            train_data = corpus_from_pairs(
                *train_data, tokenizer.proto, name="the training pairs",
                source_vocabulary_proto=source_proto,
            )  # fmt: skip
        self.train_data = train_data
        self.tokenizer = tokenizer
        self.batching = dict(
            tokens_per_batch=config.tokens_per_batch,
            max_length=config.max_length,
            bucket_boundaries=default_bucket_lengths(config.max_length, step=config.bucket_step),
            bucketing=config.bucketing,
            vocabulary_size=tokenizer.vocabulary_size,
            **pipeline_options_for(config.distribution),
        )
        self._first, self.report = self._train_dataset(0)
        self.valid_dataset = None
        if valid_pairs is not None:
            translator = config.translator_options(tokenizer)
            language = translator["target_language"]
            corpus = corpus_from_pairs(
                *valid_pairs,
                tokenizer.proto,
                language_tag_id=None if language is None else tokenizer.languages[language],
                language_tag=translator["language_tag"],
                name="the validation pairs",
                source_vocabulary_proto=source_proto,
            )
            batching = self.batching
            if keras.config.backend() == "torch":
                # Process 0 alone validates, on whole batches.
                batching = dict(batching, num_shards=1, shard_index=0)
            stream = CorpusStream(corpus, DatasetOptions(shuffle=False, seed=0, **batching))
            # A known size: Keras shows a full progress bar and reads the
            # same batches every epoch.
            self.valid_dataset = BatchList(list(stream.batches()))

    def train_dataset(self, start_batch=0):
        """The training batches from global batch ``start_batch`` on: a
        ``tf.data.Dataset`` under the TensorFlow backend, a generator of
        NumPy batches otherwise."""
        if start_batch == 0 and self._first is not None:
            dataset, self._first = self._first, None
            return dataset
        return self._train_dataset(start_batch)[0]

    def _train_dataset(self, start_batch):
        options = dict(
            self.batching,
            shuffle=True,
            seed=self.config.seed,
            repeat=True,
            window_size=self.config.window_size,
            start_batch=start_batch,
            sampling_temperature=self.config.sampling_temperature,
        )
        if keras.config.backend() == "tensorflow":
            return make_dataset_from_corpus(self.train_data, **options)
        batches, report = make_batches_from_corpus(self.train_data, **options)
        self._feeds.append(batches)
        return batches.generator(), report

    def input_summary(self, seconds):
        """A line on the NumPy input path (JAX and PyTorch): batches fed and
        the time ``fit`` waited for them, out of ``seconds``; None under the
        TensorFlow backend (tf.data)."""
        if not self._feeds:
            return None
        batches = sum(feed.num_batches for feed in self._feeds)
        waited = sum(feed.wait_seconds for feed in self._feeds)
        return (
            f"Input pipeline: {batches} batches built in a background thread; "
            f"the training loop waited {waited:.2f} s for them "
            f"({waited / max(seconds, 1e-9):.1%} of {seconds:.0f} s in fit)."
        )
