"""Batches streamed from a prepared corpus (`keras_transformer.data.stream`):
the in-memory pipeline's batches, every pair once a pass, reproducible
orders, packed rows that keep pairs apart, multi-process shards, resumption,
and the errors of bad settings."""

import collections
import hashlib
import itertools
import json
import os
import socket
import subprocess
import sys

import keras
import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf
from conftest import REPO_ROOT, compiled, to_numpy
from sentencepiece import sentencepiece_model_pb2

import keras_transformer as kt
from keras_transformer.data.corpus import prepare_corpus
from keras_transformer.data.corpus_batches import make_batches_from_corpus
from keras_transformer.data.memory_corpus import corpus_from_pairs
from keras_transformer.data.options import DatasetOptions
from keras_transformer.data.pipeline import make_dataset
from keras_transformer.data.shards import Shard, write_prepared_corpus
from keras_transformer.data.stream import CorpusStream, make_dataset_from_corpus
from keras_transformer.data.text_files import write_lines
from keras_transformer.special_tokens import BOS_ID, EOS_ID, PAD_ID

V = 50  # vocabulary size of the tiny corpora
MAX_LENGTH = 24


def _vocabulary_proto(size=V):
    """A SentencePiece model of ``size`` pieces, built without training: the
    ids are what matter here, not the pieces."""
    model = sentencepiece_model_pb2.ModelProto()
    for piece, kind in (("<pad>", 3), ("<unk>", 2), ("<s>", 3), ("</s>", 3)):
        entry = model.pieces.add()
        entry.piece, entry.type = piece, kind
    for i in range(4, size):
        entry = model.pieces.add()
        entry.piece, entry.score = f"p{i}", -float(i)
    return model.SerializeToString()


def _random_pairs(seed, num_pairs):
    """Pairs of 1 to 30 ids a side, uncorrelated: some longer than
    ``MAX_LENGTH - 1`` (filtered or truncated), many shapes."""
    rng = np.random.default_rng(seed)
    return [
        [rng.integers(4, V, rng.integers(1, 31)).tolist() for _ in range(num_pairs)]
        for _ in range(2)
    ]


@pytest.fixture(scope="module")
def pairs():
    return _random_pairs(seed=0, num_pairs=500)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, pairs):
    """500 pairs in 6 shards (the last one short)."""
    source, target = pairs
    directory = tmp_path_factory.mktemp("stream") / "corpus"
    return write_prepared_corpus(directory, source, target, _vocabulary_proto(), 90)


class NumberTokenizer:
    """Sentences of space-separated ids, tokenized to those ids: the
    in-memory pipeline then sees the corpus' ids."""

    vocabulary_size = V

    def tokenize(self, sentences):
        return tf.strings.to_number(tf.strings.split(sentences), tf.int32)


def _text(ids):
    return [" ".join(map(str, sequence)) for sequence in ids]


def _options(**changes):
    settings = {"tokens_per_batch": 96, "max_length": MAX_LENGTH, "seed": 3}
    settings.update(changes)
    return DatasetOptions(**settings)


def _numpy(dataset):
    return [
        ({name: to_numpy(x) for name, x in inputs.items()}, to_numpy(labels))
        for inputs, labels in dataset
    ]


def _assert_same_batches(actual, expected):
    assert len(actual) == len(expected)
    for index, ((inputs, labels), (inputs_expected, labels_expected)) in enumerate(
        zip(actual, expected)
    ):
        assert sorted(inputs) == sorted(inputs_expected), index
        for name in inputs:
            np.testing.assert_array_equal(
                inputs[name], inputs_expected[name], err_msg=f"batch {index} {name}"
            )
        np.testing.assert_array_equal(labels, labels_expected, err_msg=f"batch {index}")


def _pairs_seen(batches):
    """The (source ids, target ids) of every pair of the batches, checking
    each pair's EOS and BOS; fully-masked rows are skipped."""
    seen = []
    for inputs, labels in batches:
        encoder, decoder = inputs["encoder_token_ids"], inputs["decoder_token_ids"]
        segments = inputs.get("encoder_segment_ids")
        for row in range(len(encoder)):
            if segments is None:
                source_segments = (encoder[row] != PAD_ID).astype(int)
                target_segments = (decoder[row] != PAD_ID).astype(int)
            else:
                source_segments = segments[row]
                target_segments = inputs["decoder_segment_ids"][row]
            for k in range(1, source_segments.max() + 1):
                source = encoder[row][source_segments == k]
                target = decoder[row][target_segments == k]
                label = labels[row][target_segments == k]
                assert source[-1] == EOS_ID and label[-1] == EOS_ID
                assert target[0] == BOS_ID
                np.testing.assert_array_equal(target[1:], label[:-1])
                seen.append((tuple(source[:-1]), tuple(label[:-1])))
    return seen


def _kept_pairs(pairs, length_handling="filter"):
    limit = MAX_LENGTH - 1
    kept = collections.Counter()
    for source, target in zip(*pairs):
        if length_handling == "truncate":
            kept[tuple(source[:limit]), tuple(target[:limit])] += 1
        elif len(source) <= limit and len(target) <= limit:
            kept[tuple(source), tuple(target)] += 1
    return kept


# ----------------------------------------------------------------------------
# The in-memory pipeline's batches.


@pytest.mark.parametrize("bucketing", ["separate", "joint", "packed"])
@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"length_handling": "truncate", "batch_multiple": 2},
        {"drop_remainder": True},
    ],
    ids=["filter", "truncate_multiple", "drop_remainder"],
)
def test_unshuffled_stream_yields_the_in_memory_batches(
    corpus, pairs, bucketing, changes
):
    options = _options(shuffle=False, bucketing=bucketing, **changes)
    source, target = pairs
    dataset, report = make_dataset(
        _text(source), _text(target), NumberTokenizer(), options
    )
    expected = _numpy(dataset)
    # A window larger than the corpus, and small windows over groups of two
    # shards: without shuffling, the windows' boundaries change nothing.
    for window_size, cycle_length in ((10_000, 8), (37, 2)):
        stream = CorpusStream(corpus, options, window_size, cycle_length)
        _assert_same_batches(list(stream.batches()), expected)
    streamed_report = stream.report()
    if bucketing == "packed":
        exact = ("num_pairs", "num_examples", "num_filtered", "num_truncated",
                 "num_source_tokens", "num_target_tokens", "batch_shapes")  # fmt: skip
        for name in exact:
            assert getattr(streamed_report, name) == getattr(report, name), name
        assert streamed_report.num_batches == pytest.approx(
            report.num_batches, rel=0.15
        )
    else:
        # Shapes, batches and padding from the histogram: exactly the
        # in-memory report.
        assert streamed_report == report
    dataset, dataset_report = make_dataset_from_corpus(
        corpus.path, options, window_size=37, cycle_length=2
    )
    assert dataset_report == streamed_report
    _assert_same_batches(_numpy(dataset), expected)


# ----------------------------------------------------------------------------
# Shuffled passes.

# sha256 of the first 12 batches (of each bucketing) of the corpus
# `_random_pairs(seed=0, num_pairs=500)`, shard_size 90, with
# `_options(bucketing=..., batch_multiple=2)` (seed 3), window_size=40,
# cycle_length=2: every backend, and every version of the stream, must give
# these batches (they depend only on NumPy's PCG64 generator).
EXPECTED_DIGESTS = {
    "separate": "d43498e8b270c37545a067c90c78dde21239eac687511afbfa2f09c94895ff09",
    "joint": "e655dee6ccca1261d06205f2d1a16f5e220aa771defc57e0020fb3569d76f491",
    "packed": "d91b4283bc0f861585eee908f63fe74e196c961c3a429f91b5c74ff887fa3944",
}


def _digest(batches):
    digest = hashlib.sha256()
    for inputs, labels in batches:
        for name in sorted(inputs):
            digest.update(name.encode())
            digest.update(str(inputs[name].shape).encode())
            digest.update(inputs[name].astype("<i4").tobytes())
        digest.update(labels.astype("<i4").tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize("bucketing", ["separate", "joint", "packed"])
def test_every_shuffled_pass_holds_every_pair_once(corpus, pairs, bucketing):
    options = _options(bucketing=bucketing, batch_multiple=2)
    stream = CorpusStream(corpus, options, window_size=40, cycle_length=2)
    first, second = list(stream.batches()), list(stream.batches(epoch=1))
    kept = _kept_pairs(pairs)
    assert collections.Counter(_pairs_seen(first)) == kept
    assert collections.Counter(_pairs_seen(second)) == kept
    assert _digest(first) != _digest(second)  # each pass its own order
    # The same seed gives the same batches; the digest is shared by the
    # backends.
    again = CorpusStream(corpus, options, window_size=40, cycle_length=2)
    _assert_same_batches(list(again.batches()), first)
    assert _digest(first[:12]) == EXPECTED_DIGESTS[bucketing]
    other_seed = CorpusStream(corpus, options.replace(seed=4), 40, 2)
    assert _digest(list(other_seed.batches())) != _digest(first)
    report = stream.report()
    assert report.num_examples == sum(kept.values())
    if bucketing != "packed":
        # Exact whatever the order: batches and padding of the pass.
        assert report.num_batches == len(first)
        real = sum(
            int((i["encoder_token_ids"] != PAD_ID).sum() + (labels != PAD_ID).sum())
            for i, labels in first
        )
        padded = sum(i["encoder_token_ids"].size + labels.size for i, labels in first)
        assert report.padding_fraction == pytest.approx(1 - real / padded)
        assert report.num_batch_shapes == len(
            {(i["encoder_token_ids"].shape, labels.shape) for i, labels in first}
        )
    else:
        assert report.num_batches == pytest.approx(len(first), rel=0.15)
        assert {i["encoder_token_ids"].shape for i, _ in first} == {(4, MAX_LENGTH)}


def test_shapes_do_not_depend_on_the_window(corpus):
    """The batch shapes come from the corpus' histogram: a window of a few
    pairs uses the shapes of the whole corpus, no other."""
    options = _options(min_shape_saving=0.0)
    report = CorpusStream(corpus, options).report()
    allowed = {shape[1:] for shape in report.batch_shapes}
    stream = CorpusStream(corpus, options, window_size=7, cycle_length=1)
    shapes = {
        (i["encoder_token_ids"].shape[1], labels.shape[1])
        for i, labels in stream.batches()
    }
    assert shapes == allowed and len(allowed) > 3


# ----------------------------------------------------------------------------
# Packed rows keep their pairs apart.


def test_streamed_packed_rows_give_the_logits_of_pairs_alone(corpus):
    """As tests/data/test_packing.py checks for hand-packed rows: the
    logits of a streamed packed batch (windows of 9 pairs, so pairs wait
    across windows) are those of each pair in a row of its own."""
    options = _options(bucketing="packed", tokens_per_batch=4 * MAX_LENGTH)
    stream = CorpusStream(corpus, options, window_size=9, cycle_length=1)
    batches = list(itertools.islice(stream.batches(), 3))
    model = kt.Transformer(vocabulary_size=V, num_layers=2, d_model=32, num_heads=4,
                           d_ff=64, dropout_rate=0.0, max_length=MAX_LENGTH)  # fmt: skip
    call = compiled(model, lambda inputs: model(inputs, training=False))
    most_pairs = 0
    for inputs, _ in batches:
        logits = to_numpy(call(inputs))  # (rows, T, V)
        encoder, decoder = inputs["encoder_token_ids"], inputs["decoder_token_ids"]
        alone, places = {"encoder_token_ids": [], "decoder_token_ids": []}, []
        for row in range(len(encoder)):
            source_segments = inputs["encoder_segment_ids"][row]
            target_segments = inputs["decoder_segment_ids"][row]
            most_pairs = max(most_pairs, int(source_segments.max()))
            for k in range(1, source_segments.max() + 1):
                source = encoder[row][source_segments == k]
                at = np.flatnonzero(target_segments == k)
                alone["encoder_token_ids"].append(source)
                alone["decoder_token_ids"].append(decoder[row][at])
                places.append((row, at))
        padded = {
            name: np.array([np.pad(x, (0, MAX_LENGTH - len(x))) for x in rows], "int32")
            for name, rows in alone.items()
        }
        alone_logits = to_numpy(call(padded))
        for k, (row, at) in enumerate(places):
            np.testing.assert_allclose(
                logits[row, at], alone_logits[k, : len(at)], atol=2e-5,
                err_msg=f"row {row}, pair at {at[0]}",
            )  # fmt: skip
    assert most_pairs >= 2


# ----------------------------------------------------------------------------
# Several processes, each with its rows of every batch.

PROCESS_SCRIPT = """
import json, sys
import numpy as np
from keras_transformer.data.corpus_batches import make_batches_from_corpus
from keras_transformer.data.options import DatasetOptions
from keras_transformer.data.shards import Shard
from keras_transformer.data.stream import CorpusStream

path, output, settings = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if settings.pop("from_distribution", False):
    # A JAX process of a multi-process run (KERAS_DISTRIBUTION_* variables):
    # the shards and batch multiple come from the distribution.
    from keras_transformer.training.distribution import pipeline_options_for

    settings.update(pipeline_options_for("data"))
reads = []
gather = Shard.gather

def recording_gather(self, pairs, side):
    reads.extend((bucketing, self.name, side, int(pair)) for pair in pairs)
    return gather(self, pairs, side)

Shard.gather = recording_gather
arrays = {}
for bucketing in ("separate", "packed"):
    options = DatasetOptions(bucketing=bucketing, **settings)
    stream = CorpusStream(path, options, window_size=40, cycle_length=2)
    for b, (inputs, labels) in enumerate(stream.batches()):
        for name, array in dict(inputs, labels=labels).items():
            arrays[f"{bucketing}/{b}/{name}"] = array
np.savez(output, **arrays)
with open(output + ".json", "w") as f:
    json.dump(reads, f)
"""


def _free_port():
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def _process_settings(i, distributed, addresses):
    """(settings, environment) of process ``i`` of two."""
    if not distributed:
        return {"num_shards": 2, "shard_index": i}, dict(os.environ)
    return {"from_distribution": True}, dict(
        os.environ,
        KERAS_BACKEND="jax",
        KERAS_DISTRIBUTION_JOB_ADDRESSES=addresses,
        KERAS_DISTRIBUTION_NUM_PROCESSES="2",
        KERAS_DISTRIBUTION_PROCESS_ID=str(i),
    )



@pytest.mark.parametrize(
    "distributed",
    [
        # Given their shards directly, the processes read NumPy arrays only
        # (the stream and the shards), whatever the backend: once per suite.
        pytest.param(False, marks=pytest.mark.backend_independent),
        pytest.param(
            True,
            marks=pytest.mark.skipif(
                keras.config.backend() != "jax",
                reason="two JAX processes: run once, with the JAX backend's tests",
            ),
        ),
    ],
    ids=["num_shards", "jax_processes"],
)
def test_processes_read_disjoint_rows_of_the_global_batches(corpus, tmp_path, distributed):
    """Two processes, given their shard of rows directly or by a real
    two-process JAX run (`keras.distribution.initialize` through
    `pipeline_options_for("data")`: one CPU device each, batch_multiple 2)."""
    addresses = f"localhost:{_free_port()},localhost:{_free_port()}"
    settings = {"tokens_per_batch": 96, "max_length": MAX_LENGTH, "seed": 3,
                "batch_multiple": 2}  # fmt: skip
    processes = []
    for i in range(2):
        own, env = _process_settings(i, distributed, addresses)
        command = [sys.executable, "-c", PROCESS_SCRIPT, corpus.path,
                   str(tmp_path / f"process{i}.npz"),
                   json.dumps(dict(settings, **own))]  # fmt: skip
        processes.append(
            subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for process in processes:
        _, errors = process.communicate(timeout=300)
        assert process.returncode == 0, errors[-3000:]
    parts = [np.load(tmp_path / f"process{i}.npz") for i in range(2)]
    reads = [set(map(tuple, json.loads((tmp_path / f"process{i}.npz.json").read_text())))
             for i in range(2)]  # fmt: skip
    # Each process reads only the ids of its rows: disjoint reads, which
    # together are every kept pair, once.
    assert reads[0] and reads[1] and not reads[0] & reads[1]
    kept = sum(_kept_pairs(_corpus_pairs(corpus)).values())
    for bucketing in ("separate", "packed"):
        for side in ("source", "target"):
            read = [
                r for r in reads[0] | reads[1] if r[0] == bucketing and r[2] == side
            ]
            assert len(read) == kept
        one_process = DatasetOptions(bucketing=bucketing, **settings)
        stream = CorpusStream(corpus, one_process, window_size=40, cycle_length=2)
        whole = list(stream.batches())
        labels_keys = [key for key in parts[0] if key.startswith(f"{bucketing}/")
                       and key.endswith("/labels")]  # fmt: skip
        assert len(labels_keys) == len(whole)
        for b, (inputs, labels) in enumerate(whole):
            for name, array in dict(inputs, labels=labels).items():
                first, second = (part[f"{bucketing}/{b}/{name}"] for part in parts)
                assert len(first) == len(second) == len(array) // 2
                np.testing.assert_array_equal(np.concatenate([first, second]), array)


def _corpus_pairs(corpus):
    """The corpus' pairs, read back."""
    source, target = [], []
    for index in range(corpus.num_shards):
        shard = corpus.shard(index)
        everything = np.arange(shard.num_pairs)
        for side, out in (("source", source), ("target", target)):
            ids, splits = shard.gather(everything, side)
            out += [ids[a:b].tolist() for a, b in itertools.pairwise(splits)]
    return source, target


# ----------------------------------------------------------------------------
# Resumption.


@pytest.mark.parametrize("bucketing", ["separate", "packed"])
def test_start_batch_continues_the_uninterrupted_stream(corpus, bucketing, monkeypatch):
    options = _options(bucketing=bucketing, repeat=True)
    stream = CorpusStream(corpus, options, window_size=40, cycle_length=2)
    per_pass = stream.report().num_batches
    uninterrupted = list(itertools.islice(stream.batches(), 3 * per_pass))
    # Inside the first pass, at its end, and inside later passes.
    for start in (1, per_pass - 1, per_pass, per_pass + 2, 2 * per_pass + 1):
        resumed = list(itertools.islice(stream.batches(start_batch=start), 6))
        _assert_same_batches(resumed, uninterrupted[start : start + 6])
    dataset, _ = make_dataset_from_corpus(
        corpus, options, window_size=40, cycle_length=2, start_batch=per_pass + 2
    )
    _assert_same_batches(_numpy(dataset.take(4)), uninterrupted[per_pass + 2 :][:4])
    # Without repeat: the rest of the pass; the skipped batches' ids are
    # never read.
    options = options.replace(repeat=False)
    single = CorpusStream(corpus, options, window_size=40, cycle_length=2)
    whole = list(single.batches())
    _assert_same_batches(list(single.batches(start_batch=5)), whole[5:])
    reads = []
    gather = Shard.gather
    monkeypatch.setattr(
        Shard, "gather", lambda self, *args: reads.append(args) or gather(self, *args)
    )
    assert list(single.batches(start_batch=len(whole))) == []
    assert not reads


# ----------------------------------------------------------------------------
# The NumPy path (JAX and PyTorch) yields the tf.data path's batches.


@pytest.mark.parametrize("bucketing", ["separate", "joint", "packed"])
def test_numpy_batches_are_the_tf_data_batches(corpus, bucketing):
    settings = [
        dict(repeat=False),
        dict(repeat=True, start_batch=3),
        # A resumed second process of two: its rows of the global batches.
        dict(repeat=True, start_batch=2, num_shards=2, shard_index=1, batch_multiple=2),
    ]
    for changes in settings:
        start_batch = changes.pop("start_batch", 0)
        options = _options(bucketing=bucketing, **changes)
        kwargs = dict(window_size=40, cycle_length=2, start_batch=start_batch)
        dataset, report = make_dataset_from_corpus(corpus, options, **kwargs)
        batches, numpy_report = make_batches_from_corpus(corpus, options, **kwargs)
        assert numpy_report == report
        if options.repeat:
            count = 2 * report.num_batches + 1  # into the third pass
            expected = _numpy(dataset.take(count))
            actual = list(itertools.islice(batches.generator(), count))
            assert len(actual) == count
            _assert_same_batches(actual, expected)
        else:
            # Each iteration is the next pass, shuffled anew, on both paths.
            passes = [_numpy(dataset), _numpy(dataset)]
            _assert_same_batches(list(batches.generator()), passes[0])
            _assert_same_batches(list(batches), passes[1])
            with pytest.raises(AssertionError):
                _assert_same_batches(passes[1], passes[0])


def test_the_in_memory_corpus_is_the_prepared_one(tmp_path, pairs):
    """Sentence pairs encoded in memory give the batches of the same pairs
    prepared into shards."""
    rng = np.random.default_rng(0)
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    sources = [" ".join(rng.choice(words, rng.integers(1, 9))) for _ in range(300)]
    targets = [" ".join(rng.choice(words, rng.integers(1, 9))) for _ in range(300)]
    write_lines(tmp_path / "train.src", sources)
    write_lines(tmp_path / "train.tgt", targets)
    prepared = prepare_corpus(
        str(tmp_path / "train.src"), str(tmp_path / "train.tgt"), str(tmp_path / "c"),
        vocabulary_size=40, shard_size=1000, seed=0, verbose=0,
    )  # fmt: skip
    proto = (tmp_path / "c" / "vocab.spm").read_bytes()
    in_memory = corpus_from_pairs(sources, targets, proto)
    processor = spm.SentencePieceProcessor(model_proto=proto)
    ids, _ = in_memory.shard(0).gather([4], "target")
    assert ids.tolist() == processor.encode(targets[4])
    np.testing.assert_array_equal(in_memory.length_histogram, prepared.length_histogram)
    for bucketing in ("separate", "packed"):
        options = _options(bucketing=bucketing, vocabulary_size=40)
        expected = list(CorpusStream(prepared, options, window_size=50).batches())
        actual = list(CorpusStream(in_memory, options, window_size=50).batches())
        _assert_same_batches(actual, expected)
    tagged = corpus_from_pairs(sources[:2], targets[:2], proto, language_tag_id=7)
    ids, _ = tagged.shard(0).gather([1], "source")
    assert ids.tolist() == [7] + processor.encode(sources[1])
    with pytest.raises(ValueError, match="as many sentences"):
        corpus_from_pairs(sources, targets[:3], proto)


# ----------------------------------------------------------------------------
# A repeated dataset lets the process exit.

EXIT_SCRIPT = """
import sys
import tensorflow as tf
from keras_transformer.data.pipeline import make_dataset
from keras_transformer.data.corpus_batches import make_batches_from_corpus
from keras_transformer.data.stream import make_dataset_from_corpus

options = dict(bucketing="packed", repeat=True, seed=0, tokens_per_batch=96,
               max_length=24)
streamed, _ = make_dataset_from_corpus(sys.argv[1], window_size=20, **options)


class NumberTokenizer:
    vocabulary_size = 50

    def tokenize(self, sentences):
        return tf.strings.to_number(tf.strings.split(sentences), tf.int32)


in_memory, _ = make_dataset(["4 5 6"] * 50, ["7 8"] * 50, NumberTokenizer(), **options)
# The NumPy path's thread, left mid-stream with batches waiting in its queue.
prefetched, _ = make_batches_from_corpus(sys.argv[1], window_size=20, prefetch=2, **options)
for dataset in (streamed, in_memory, prefetched.generator(), iter(prefetched)):
    for step, _ in enumerate(dataset):
        if step == 3:
            break
print("iterated")
"""


def test_process_exits_after_iterating_a_repeated_packed_dataset(corpus):
    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, corpus.path],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("iterated")


# ----------------------------------------------------------------------------
# Errors.


def test_bad_settings_are_errors_naming_them(corpus):
    with pytest.raises(ValueError, match=r"vocabulary_size=40 is smaller than .*"
                                         r"vocabulary_size=50"):  # fmt: skip
        CorpusStream(corpus, _options(vocabulary_size=40))
    with pytest.raises(ValueError, match=r"vocabulary_size=40"):
        make_dataset_from_corpus(corpus.path, vocabulary_size=40)
    CorpusStream(corpus, _options(vocabulary_size=64))  # a larger model is fine
    for name, value in (("window_size", 0), ("cycle_length", -1), ("window_size", 2.5)):
        with pytest.raises(ValueError, match=rf"{name} must be a positive int\. "
                                             rf"Received: {name}={value}"):  # fmt: skip
            make_dataset_from_corpus(corpus, **{name: value})
    with pytest.raises(ValueError, match=r"start_batch must be a non-negative int"):
        make_dataset_from_corpus(corpus, start_batch=-1)
    with pytest.raises(
        ValueError, match=r"No sentence pairs left: 500 .* max_length=2"
    ):
        CorpusStream(corpus, _options(max_length=2))
    with pytest.raises(
        TypeError, match=r"Unknown dataset option\(s\) \['token_per_batch'\]"
    ):
        make_dataset_from_corpus(corpus, token_per_batch=64)
    with pytest.raises(ValueError, match="is not a prepared corpus"):
        make_dataset_from_corpus(os.path.join(corpus.path, "missing"))
