"""Tests for parallel text reading and the tf.data pipeline (keras_transformer.data)."""

import collections
import dataclasses
import gzip
import itertools
import os

import numpy as np
import pytest
import tensorflow as tf

from keras_transformer.data.default_task import default_task_splits
from keras_transformer.data.pipeline import default_bucket_lengths
from keras_transformer.data.pipeline import make_dataset
from keras_transformer.data.pipeline import make_dataset_from_files
from keras_transformer.data.text_files import read_lines
from keras_transformer.data.text_files import read_parallel
from keras_transformer.data.text_files import write_lines
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.special_tokens import BOS_ID
from keras_transformer.special_tokens import EOS_ID
from keras_transformer.special_tokens import PAD_ID

NUM_PAIRS = 1000


@pytest.fixture(scope="session")
def pairs():
    # Lists of 1 to 4 numbers, so that lengths span several buckets.
    english, german = default_task_splits(seed=0)["train"]
    src, tgt, start = [], [], 0
    for i in range(NUM_PAIRS):
        count = 1 + i % 4
        src.append(" and ".join(english[start : start + count]))
        tgt.append(" und ".join(german[start : start + count]))
        start += count
    return src, tgt


@pytest.fixture(scope="session")
def tokenizer(pairs):
    src, tgt = pairs
    return SubwordTokenizer.train(itertools.chain(src, tgt), vocabulary_size=200)


def _batches(dataset):
    return [
        (
            inputs["encoder_token_ids"].numpy(),
            inputs["decoder_token_ids"].numpy(),
            labels.numpy(),
        )
        for inputs, labels in dataset
    ]


def _real(row):
    return row[row != PAD_ID]


# ----------------------------------------------------------------------------
# Reading parallel files.


def _write(path, text, compress=False):
    data = text.encode("utf-8")
    if compress:
        data = gzip.compress(data)
    path.write_bytes(data)
    return str(path)


def test_read_parallel_plain_and_gzip(tmp_path):
    src = _write(tmp_path / "a.en", "Hello  world \nA dog.\r\n\n  x\nlast\n")
    tgt = _write(tmp_path / "a.de.gz", "Hallo Welt\nEin Hund.\nleer?\n\nletzte\n", True)
    src_lines, tgt_lines, stats = read_parallel(src, tgt)
    assert src_lines == ["Hello  world", "A dog.", "last"]
    assert tgt_lines == ["Hallo Welt", "Ein Hund.", "letzte"]
    assert stats.num_lines == 5
    assert stats.num_pairs == 3
    assert stats.num_skipped_empty == 2  # one empty source, one empty target


def test_gzip_detected_by_magic_bytes(tmp_path):
    path = _write(tmp_path / "no_suffix", "eins\nzwei\n", compress=True)
    assert read_lines(path) == ["eins", "zwei"]


def test_only_newline_ends_a_line(tmp_path):
    # A stray carriage return or U+2028 must not split a sentence.
    src = _write(tmp_path / "s", "a\rb\nc\u2028d\n")
    tgt = _write(tmp_path / "t", "1\n2\n")
    src_lines, tgt_lines, _ = read_parallel(src, tgt)
    assert src_lines == ["a\rb", "c\u2028d"]
    assert tgt_lines == ["1", "2"]


def test_mismatched_line_counts_name_files_and_counts(tmp_path):
    src = _write(tmp_path / "x.en", "a\nb\nc\n")
    tgt = _write(tmp_path / "x.de", "a\nb\n")
    with pytest.raises(ValueError) as error:
        read_parallel(src, tgt)
    message = str(error.value)
    assert "x.en" in message and "x.de" in message
    assert "3 lines" in message and "2 lines" in message


def test_missing_and_unreadable_files_name_the_path(tmp_path):
    ok = _write(tmp_path / "ok", "a\n")
    with pytest.raises(FileNotFoundError, match="missing.en"):
        read_parallel(str(tmp_path / "missing.en"), ok)
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(b"abc\n" * 100)[:30])  # truncated gzip
    with pytest.raises(ValueError, match="broken.gz"):
        read_parallel(ok, str(broken))
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Stra\xdfe\n".encode("latin-1"))
    with pytest.raises(ValueError, match="latin1.txt.*UTF-8"):
        read_lines(str(latin1))
    with pytest.raises(ValueError, match=str(tmp_path)):
        read_lines(str(tmp_path))  # a directory


def test_write_lines_round_trip(tmp_path):
    lines = ["über", "zwei Wörter", "3.5"]
    for name in ("plain.txt", "packed.txt.gz"):
        path = write_lines(str(tmp_path / "sub" / name), lines)
        assert read_lines(path) == lines
    with open(path, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    with pytest.raises(ValueError, match="newline"):
        write_lines(str(tmp_path / "bad"), ["a\nb"])


# ----------------------------------------------------------------------------
# The dataset.


def test_default_bucket_lengths():
    assert default_bucket_lengths(128) == (8, 16, 24, 32, 40, 56, 72, 96, 128)
    for max_length in (2, 10, 32, 64, 100, 256, 512):
        lengths = default_bucket_lengths(max_length)
        assert lengths[-1] == max_length
        assert list(lengths) == sorted(set(lengths))
        assert len(lengths) <= 16
    assert default_bucket_lengths(64, step=4) == (4, 8, 12, 16, 20, 28, 36, 48, 64)


def test_training_config_bucket_step_reaches_the_pipeline(pairs, tokenizer):
    from keras_transformer.training.config import TrainConfig
    from keras_transformer.training.run_data import TrainingData

    src, tgt = pairs
    datasets = {}
    for step in (4, 8):
        config = TrainConfig(
            train_src="a", train_tgt="b", max_length=40, tokens_per_batch=512,
            bucket_step=step,
        ).resolved()  # fmt: skip
        data = TrainingData(config, (src, tgt), None, tokenizer)
        datasets[step], report = data.train_dataset(), data.report
        assert report.bucket_lengths == default_bucket_lengths(40, step=step)
    # The batches come in those shapes, including lengths step 8 lacks.
    lengths = {
        int(inputs["encoder_token_ids"].shape[1])
        for inputs, _ in itertools.islice(datasets[4], 60)
    }
    assert lengths <= set(default_bucket_lengths(40, step=4))
    assert lengths - set(default_bucket_lengths(40, step=8))
    with pytest.raises(ValueError, match="bucket_step must be positive"):
        TrainConfig(bucket_step=0)


def test_examples_are_shifted_pairs(pairs, tokenizer):
    src, tgt = pairs
    dataset, report = make_dataset(
        src, tgt, tokenizer, tokens_per_batch=512, max_length=40, seed=0
    )
    spec_inputs, spec_labels = dataset.element_spec
    assert set(spec_inputs) == {"encoder_token_ids", "decoder_token_ids"}
    assert spec_labels.dtype == tf.int32
    assert all(s.dtype == tf.int32 for s in spec_inputs.values())

    seen = []
    for encoder, decoder, labels in _batches(dataset):
        assert encoder.dtype == decoder.dtype == labels.dtype == np.int32
        assert decoder.shape == labels.shape
        for enc_row, dec_row, lab_row in zip(encoder, decoder, labels):
            enc, dec, lab = _real(enc_row), _real(dec_row), _real(lab_row)
            # Padding only at the end.
            assert (enc_row[len(enc) :] == PAD_ID).all()
            assert (dec_row[len(dec) :] == PAD_ID).all()
            assert enc[-1] == EOS_ID and list(enc).count(EOS_ID) == 1
            assert BOS_ID not in enc
            assert dec[0] == BOS_ID and EOS_ID not in dec
            assert lab[-1] == EOS_ID and BOS_ID not in lab
            assert len(dec) == len(lab)
            np.testing.assert_array_equal(dec[1:], lab[:-1])
            seen.append((tokenizer.decode([enc])[0], tokenizer.decode([lab])[0]))
    # Every pair exactly once per epoch, sides still aligned.
    assert collections.Counter(seen) == collections.Counter(zip(src, tgt))
    assert report.num_examples == len(src) == report.num_pairs


@pytest.mark.parametrize("bucketing", ["joint", "separate"])
def test_token_budget_and_bucket_shapes(pairs, tokenizer, bucketing):
    src, tgt = pairs
    tokens_per_batch, max_length = 256, 24
    dataset, report = make_dataset(
        src, tgt, tokenizer, tokens_per_batch=tokens_per_batch,
        max_length=max_length, bucketing=bucketing,
    )  # fmt: skip
    assert report.bucketing == bucketing
    batches = _batches(dataset)
    sizes = dict(zip(report.bucket_lengths, report.bucket_batch_sizes))
    real_source = real_target = padded_source = padded_target = 0
    shapes = set()
    for encoder, decoder, labels in batches:
        batch, source_length = encoder.shape
        target_length = decoder.shape[1]
        assert decoder.shape == labels.shape
        # Each side padded to a bucket boundary; the batch from the longer.
        assert {source_length, target_length} <= set(sizes)
        longer = max(source_length, target_length)
        assert batch <= sizes[longer] == tokens_per_batch // longer
        assert batch * longer <= tokens_per_batch
        source_real = (encoder != PAD_ID).sum(axis=1).max()
        target_real = (decoder != PAD_ID).sum(axis=1).max()
        assert source_real <= source_length and target_real <= target_length
        if bucketing == "joint":
            # Bucketed: the longest row is longer than the previous bucket.
            assert source_length == target_length
            previous = max([b for b in sizes if b < longer], default=0)
            assert previous < max(source_real, target_real)
        real_source += int((encoder != PAD_ID).sum())
        real_target += int((labels != PAD_ID).sum())
        padded_source += encoder.size
        padded_target += decoder.size
        shapes.add((batch, source_length, target_length))
    assert len(batches) == report.num_batches
    assert len(shapes) == report.num_batch_shapes
    assert real_source == report.num_source_tokens
    assert real_target == report.num_target_tokens
    real, padded = real_source + real_target, padded_source + padded_target
    assert report.padding_fraction == pytest.approx(1 - real / padded)
    assert report.source_padding_fraction == pytest.approx(1 - real_source / padded_source)
    assert report.target_padding_fraction == pytest.approx(1 - real_target / padded_target)
    assert f"{report.padding_fraction:.1%}" in report.summary()
    # Mostly full batches: on average close to the token budget.
    assert max(padded_source, padded_target) / len(batches) > 0.5 * tokens_per_batch


def test_custom_buckets_and_drop_remainder(pairs, tokenizer):
    src, tgt = pairs
    for bucketing in ("joint", "separate"):
        dataset, report = make_dataset(
            src, tgt, tokenizer, tokens_per_batch=300, max_length=30,
            bucket_boundaries=[10, 20], drop_remainder=True, bucketing=bucketing,
        )  # fmt: skip
        assert report.bucket_lengths == (10, 20, 30)
        assert report.bucket_batch_sizes == (30, 15, 10)
        batches = _batches(dataset)
        sizes = {10: 30, 20: 15, 30: 10}
        for encoder, decoder, _ in batches:
            assert encoder.shape[0] == sizes[max(encoder.shape[1], decoder.shape[1])]
            if bucketing == "joint":
                assert encoder.shape[1] == decoder.shape[1]
        assert len(batches) == report.num_batches
        # The left-out pairs are reported.
        kept = sum(len(encoder) for encoder, _, _ in batches)
        assert 0 < report.num_dropped == report.num_examples - kept
        assert f"{report.num_dropped} pairs dropped" in report.summary()


def test_filter_long_pairs_is_reported(pairs, tokenizer):
    src, tgt = pairs
    max_length = 16
    lengths = [
        max(len(s) + 1, len(t) + 1)
        for s, t in zip(tokenizer.encode(src), tokenizer.encode(tgt))
    ]
    expected_filtered = sum(length > max_length for length in lengths)
    assert 0 < expected_filtered < len(src)
    dataset, report = make_dataset(
        src, tgt, tokenizer, tokens_per_batch=64, max_length=max_length
    )
    assert report.num_filtered == expected_filtered
    assert report.num_truncated == 0
    assert report.num_examples == len(src) - expected_filtered
    batches = _batches(dataset)
    assert sum(len(encoder) for encoder, _, _ in batches) == report.num_examples
    assert max(encoder.shape[1] for encoder, _, _ in batches) <= max_length
    assert str(expected_filtered) in report.summary()


def test_truncate_long_pairs_keeps_eos(pairs, tokenizer):
    src, tgt = pairs
    max_length = 16
    dataset, report = make_dataset(
        src, tgt, tokenizer, tokens_per_batch=64, max_length=max_length,
        length_handling="truncate",
    )
    assert report.num_truncated > 0 and report.num_filtered == 0
    assert report.num_examples == len(src)
    full_rows = 0
    for encoder, decoder, labels in _batches(dataset):
        assert encoder.shape[1] <= max_length
        for enc_row, lab_row in zip(encoder, labels):
            assert _real(enc_row)[-1] == EOS_ID
            assert _real(lab_row)[-1] == EOS_ID
            full_rows += len(_real(enc_row)) == max_length
    assert full_rows > 0


def test_shuffle_is_seeded(pairs, tokenizer):
    src, tgt = pairs

    def first_batches(seed):
        dataset, _ = make_dataset(
            src, tgt, tokenizer, tokens_per_batch=256, max_length=24, seed=seed
        )
        return [b[0] for b in _batches(dataset.take(3))]

    a, b, c = first_batches(1), first_batches(1), first_batches(2)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert any(x.shape != z.shape or (x != z).any() for x, z in zip(a, c))


def test_no_shuffle_and_repeat(pairs, tokenizer):
    src, tgt = pairs
    dataset, report = make_dataset(
        src[:200], tgt[:200], tokenizer, tokens_per_batch=256, max_length=24,
        shuffle=False, repeat=True,
    )
    batches = _batches(dataset.take(3 * report.num_batches))
    assert len(batches) == 3 * report.num_batches
    assert {e.shape[1] for e, _, _ in batches} <= set(report.bucket_lengths)


def test_argument_errors(pairs, tokenizer):
    src, tgt = pairs
    with pytest.raises(ValueError, match=r"tokens_per_batch=64, max_length=128"):
        make_dataset(src, tgt, tokenizer, tokens_per_batch=64, max_length=128)
    with pytest.raises(ValueError, match="tokens_per_batch must be a positive int"):
        make_dataset(src, tgt, tokenizer, tokens_per_batch=0)
    with pytest.raises(ValueError, match="max_length must be a positive int"):
        make_dataset(src, tgt, tokenizer, max_length=12.5)
    with pytest.raises(ValueError, match="length_handling"):
        make_dataset(src, tgt, tokenizer, length_handling="clip")
    with pytest.raises(ValueError, match="increasing"):
        make_dataset(src, tgt, tokenizer, bucket_boundaries=[16, 8])
    with pytest.raises(ValueError, match="must not exceed max_length"):
        make_dataset(src, tgt, tokenizer, max_length=32, bucket_boundaries=[16, 64])
    with pytest.raises(ValueError, match=f"{len(src)} source, {len(src) - 1} target"):
        make_dataset(src, tgt[:-1], tokenizer)
    with pytest.raises(ValueError, match="No sentence pairs left"):
        make_dataset(["a" * 50], ["b" * 50], tokenizer, max_length=2, tokens_per_batch=2)
    with pytest.raises(ValueError, match="bucketing must be one of"):
        make_dataset(src, tgt, tokenizer, bucketing="pack")
    with pytest.raises(ValueError, match="max_length \\* batch_multiple"):
        make_dataset(src, tgt, tokenizer, max_length=32, tokens_per_batch=64, batch_multiple=3)
    with pytest.raises(ValueError, match="batch_multiple must be a positive int"):
        make_dataset(src, tgt, tokenizer, batch_multiple=0)
    with pytest.raises(ValueError, match="num_shards must divide batch_multiple"):
        make_dataset(src, tgt, tokenizer, batch_multiple=4, num_shards=3, seed=0)
    with pytest.raises(ValueError, match="shard_index must be in"):
        make_dataset(src, tgt, tokenizer, batch_multiple=2, num_shards=2, shard_index=2)
    with pytest.raises(ValueError, match="needs a seed"):
        make_dataset(src, tgt, tokenizer, batch_multiple=2, num_shards=2)


class NumberTokenizer:
    """Sentences of space-separated ids, tokenized to those ids."""

    vocabulary_size = 100

    def tokenize(self, sentences):
        return tf.strings.to_number(tf.strings.split(sentences), tf.int32)


def _skewed_pairs(num_pairs=600, seed=0):
    """Uncorrelated source and target lengths (1 to 30 tokens): often short
    on one side and long on the other, where joint bucketing pads most."""
    rng = np.random.default_rng(seed)
    src, tgt = [], []
    for _ in range(num_pairs):
        for side in (src, tgt):
            ids = rng.integers(4, 100, size=rng.integers(1, 31))
            side.append(" ".join(map(str, ids)))
    return src, tgt


def _pairs_seen(batches):
    """The (source ids, target ids) of every real row; asserts padding rows
    are fully masked."""
    seen = []
    for encoder, decoder, labels in batches:
        for enc_row, dec_row, lab_row in zip(encoder, decoder, labels):
            if not enc_row.any():
                assert not dec_row.any() and not lab_row.any()  # padding row
                continue
            enc, lab = _real(enc_row), _real(lab_row)
            seen.append((" ".join(map(str, enc[:-1])), " ".join(map(str, lab[:-1]))))
    return seen


def test_separate_bucketing_pads_less_and_keeps_every_pair():
    src, tgt = _skewed_pairs()
    results = {}
    for bucketing in ("joint", "separate"):
        dataset, report = make_dataset(
            src, tgt, NumberTokenizer(), tokens_per_batch=256, max_length=32,
            bucket_boundaries=[8, 16, 24], seed=0, bucketing=bucketing,
        )  # fmt: skip
        batches = _batches(dataset)
        # Every pair exactly once, ids unchanged.
        assert collections.Counter(_pairs_seen(batches)) == collections.Counter(zip(src, tgt))
        assert report.num_padding_rows == report.num_dropped == 0
        shapes = {(e.shape[0], e.shape[1], d.shape[1]) for e, d, _ in batches}
        assert len(shapes) == report.num_batch_shapes
        results[bucketing] = report
    joint, separate = results["joint"], results["separate"]
    assert separate.padding_fraction < joint.padding_fraction - 0.05
    assert separate.source_padding_fraction < joint.source_padding_fraction
    assert separate.target_padding_fraction < joint.target_padding_fraction
    # Same rows per batch (the longer side sets the batch size), so about as
    # many batches; at most one shape per (S, T) combination.
    assert separate.num_batches <= joint.num_batches + len(separate.batch_shapes)
    assert len(separate.batch_shapes) <= len(separate.bucket_lengths) ** 2


def test_rare_length_combinations_get_no_shape_of_their_own():
    # 300 pairs (5, 5) fill batches; 3 pairs (5, 20) do not, and go to the
    # joint shape (24, 24), never to a more padded one.
    src = ["5 5 5 5 5"] * 300 + ["6 6 6 6 6"] * 3
    tgt = ["7 7 7 7 7"] * 300 + [" ".join(["8"] * 20)] * 3
    dataset, report = make_dataset(
        src, tgt, NumberTokenizer(), tokens_per_batch=96, max_length=24,
        bucket_boundaries=[8, 16], shuffle=False,
    )  # fmt: skip
    assert [shape[1:] for shape in report.batch_shapes] == [(8, 8), (24, 24)]
    shapes = {(e.shape[1], d.shape[1]) for e, d, _ in _batches(dataset)}
    assert shapes == {(8, 8), (24, 24)}


def test_min_shape_saving_trades_shapes_for_padding():
    src, tgt = _skewed_pairs()
    reports = {}
    for saving in (0.0, 0.02, 1.0):
        _, reports[saving] = make_dataset(
            src, tgt, NumberTokenizer(), tokens_per_batch=256, max_length=32,
            bucket_boundaries=[8, 16, 24], min_shape_saving=saving,
        )  # fmt: skip
    _, joint = make_dataset(
        src, tgt, NumberTokenizer(), tokens_per_batch=256, max_length=32,
        bucket_boundaries=[8, 16, 24], bucketing="joint",
    )  # fmt: skip
    # 1.0: no combination saves a whole pass's padding: the joint shapes.
    assert reports[1.0].batch_shapes == joint.batch_shapes
    assert reports[1.0].padding_fraction == pytest.approx(joint.padding_fraction)
    counts = [len(reports[s].batch_shapes) for s in (0.0, 0.02, 1.0)]
    padding = [reports[s].padding_fraction for s in (0.0, 0.02, 1.0)]
    assert counts[0] > counts[1] > counts[2] and padding[0] < padding[1] < padding[2]
    with pytest.raises(ValueError, match="min_shape_saving must be a fraction"):
        make_dataset(src, tgt, NumberTokenizer(), min_shape_saving=1.5)


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_batch_sizes_are_multiples_of_batch_multiple(drop_remainder):
    src, tgt = _skewed_pairs(num_pairs=301)
    dataset, report = make_dataset(
        src, tgt, NumberTokenizer(), tokens_per_batch=256, max_length=32,
        bucket_boundaries=[8, 16, 24], seed=0, batch_multiple=4,
        drop_remainder=drop_remainder,
    )  # fmt: skip
    # 256 // (8, 16, 24, 32) = (32, 16, 10, 8), rounded down to multiples of 4.
    assert report.bucket_batch_sizes == (32, 16, 8, 8)
    assert report.batch_multiple == 4
    batches = _batches(dataset)
    assert all(len(encoder) % 4 == 0 for encoder, _, _ in batches)
    assert len(batches) == report.num_batches
    seen = _pairs_seen(batches)
    padding_rows = sum(len(e) for e, _, _ in batches) - len(seen)
    assert padding_rows == report.num_padding_rows
    assert len(seen) + report.num_dropped == report.num_examples == 301
    if drop_remainder:
        assert report.num_dropped > 0 and padding_rows == 0
    else:
        # Nothing lost: the last partial batches get fully-masked rows.
        assert collections.Counter(seen) == collections.Counter(zip(src, tgt))
        assert padding_rows > 0 and report.num_dropped == 0
        assert f"{padding_rows} fully-masked padding rows" in report.summary()


def test_fully_masked_rows_change_neither_loss_nor_accuracy():
    from keras_transformer.objectives.losses import LabelSmoothedCrossEntropy
    from keras_transformer.objectives.metrics import MaskedTokenAccuracy

    rng = np.random.default_rng(0)
    labels = np.array([[5, 6, 7, 0], [8, 9, 0, 0]], "int32")
    logits = rng.normal(size=(2, 4, 12)).astype("float32")
    padded_labels = np.concatenate([labels, np.zeros((2, 4), "int32")])
    padded_logits = np.concatenate([logits, rng.normal(size=(2, 4, 12)).astype("float32")])
    loss = LabelSmoothedCrossEntropy()
    np.testing.assert_allclose(
        float(loss(padded_labels, padded_logits)), float(loss(labels, logits)), rtol=1e-6
    )
    accuracy, padded_accuracy = MaskedTokenAccuracy(), MaskedTokenAccuracy()
    accuracy.update_state(labels, logits)
    padded_accuracy.update_state(padded_labels, padded_logits)
    assert float(padded_accuracy.result()) == pytest.approx(float(accuracy.result()))


def test_shards_split_every_global_batch():
    src, tgt = _skewed_pairs(num_pairs=200)
    options = dict(
        tokens_per_batch=256, max_length=32, bucket_boundaries=[8, 16, 24],
        seed=3, batch_multiple=4,
    )  # fmt: skip
    whole, report = make_dataset(src, tgt, NumberTokenizer(), **options)
    shards = [
        make_dataset(src, tgt, NumberTokenizer(), num_shards=2, shard_index=i, **options)
        for i in range(2)
    ]
    assert all(shard_report.num_batches == report.num_batches for _, shard_report in shards)
    assert shards[0][1].num_shards == 2
    whole_batches = _batches(whole)
    shard_batches = [_batches(dataset) for dataset, _ in shards]
    assert len(shard_batches[0]) == len(shard_batches[1]) == len(whole_batches)
    for batch, first, second in zip(whole_batches, *shard_batches):
        for side, part_a, part_b in zip(batch, first, second):
            np.testing.assert_array_equal(side, np.concatenate([part_a, part_b]))


def test_make_dataset_from_files(tmp_path, pairs, tokenizer):
    src, tgt = pairs
    src_lines = src[:100] + [""]
    tgt_lines = tgt[:100] + ["null"]
    src_path = write_lines(str(tmp_path / "train.en.gz"), src_lines)
    tgt_path = write_lines(str(tmp_path / "train.de"), tgt_lines)
    dataset, report = make_dataset_from_files(
        src_path, tgt_path, tokenizer, tokens_per_batch=256, max_length=40
    )
    assert report.num_skipped_empty == 1
    assert report.num_pairs == report.num_examples == 100
    assert sum(len(e) for e, _, _ in _batches(dataset)) == 100


def test_dataset_feeds_keras_fit(pairs, tokenizer):
    import keras

    src, tgt = pairs
    # One bucket, so one shape and one compilation under every backend.
    dataset, report = make_dataset(
        src, tgt, tokenizer, tokens_per_batch=240, max_length=24,
        bucket_boundaries=[24], repeat=True, seed=0,
    )
    assert report.bucket_batch_sizes == (10,)
    vocabulary_size = tokenizer.vocabulary_size

    class Tiny(keras.Model):
        def __init__(self):
            super().__init__()
            self.embedding = keras.layers.Embedding(vocabulary_size, 8)
            self.logits = keras.layers.Dense(vocabulary_size)

        def call(self, inputs):
            source = self.embedding(inputs["encoder_token_ids"])
            target = self.embedding(inputs["decoder_token_ids"])
            context = keras.ops.mean(source, axis=1, keepdims=True)
            return self.logits(target + context)  # (batch, T, vocabulary)

    model = Tiny()
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=PAD_ID
        ),
    )
    history = model.fit(dataset, epochs=2, steps_per_epoch=3, shuffle=False, verbose=0)
    assert len(history.history["loss"]) == 2
    assert np.isfinite(history.history["loss"]).all()


MULTI30K_DIR = os.environ.get(
    "MULTI30K_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "multi30k"),
)


@pytest.mark.multi30k
def test_multi30k_validation_split():
    src_path = os.path.join(MULTI30K_DIR, "val.en.gz")
    tgt_path = os.path.join(MULTI30K_DIR, "val.de.gz")
    if not (os.path.exists(src_path) and os.path.exists(tgt_path)):
        pytest.skip(f"Multi30k not found in {MULTI30K_DIR} (set MULTI30K_DIR)")
    src, tgt, stats = read_parallel(src_path, tgt_path)
    assert stats.num_lines == 1014
    assert stats.num_pairs + stats.num_skipped_empty == 1014
    assert any("ä" in t or "ü" in t or "ß" in t for t in tgt)
    tokenizer = SubwordTokenizer.train(itertools.chain(src, tgt), vocabulary_size=1000)
    sample = src[:20] + tgt[:20]
    assert tokenizer.decode(tokenizer.encode(sample)) == sample
    dataset, report = make_dataset_from_files(
        src_path, tgt_path, tokenizer, tokens_per_batch=2048
    )
    assert report.num_examples + report.num_filtered == stats.num_pairs
    assert sum(len(e) for e, _, _ in _batches(dataset)) == report.num_examples


# --- bucketing="packed": several pairs per row -----------------------------


def _packed_batches(dataset):
    return [
        tuple(inputs[key].numpy() for key in (
            "encoder_token_ids", "decoder_token_ids", "encoder_segment_ids",
            "decoder_segment_ids")) + (labels.numpy(),)
        for inputs, labels in dataset
    ]  # fmt: skip


def _unpack(batches):
    """The (source ids, target ids) of every packed pair, checking each
    row's layout: segments 1, 2, ... contiguous on both sides, then padding;
    each source ends with EOS, each decoder input is BOS + its labels' head."""
    seen = []
    for encoder, decoder, encoder_segments, decoder_segments, labels in batches:
        for row in range(len(encoder)):
            count = encoder_segments[row].max()
            assert decoder_segments[row].max() == count
            for segments, ids in ((encoder_segments[row], encoder[row]),
                                  (decoder_segments[row], decoder[row])):
                real = segments > 0
                assert (ids[real] != PAD_ID).all() and (ids[~real] == PAD_ID).all()
                # 1, 1, 2, 2, 2, 3, 0, 0: non-decreasing, no gaps, padding last.
                assert np.array_equal(np.sort(segments[real]), segments[real])
                assert not real[np.argmin(real):].any() or real.all()
                assert set(segments[real]) == set(range(1, count + 1))
            assert (labels[row][decoder_segments[row] == 0] == PAD_ID).all()
            for k in range(1, count + 1):
                enc = encoder[row][encoder_segments[row] == k]
                dec = decoder[row][decoder_segments[row] == k]
                lab = labels[row][decoder_segments[row] == k]
                assert enc[-1] == EOS_ID and list(enc).count(EOS_ID) == 1
                assert dec[0] == BOS_ID and lab[-1] == EOS_ID
                np.testing.assert_array_equal(dec[1:], lab[:-1])
                seen.append((" ".join(map(str, enc[:-1])), " ".join(map(str, lab[:-1]))))
    return seen


def test_packed_rows_hold_every_pair_once_and_pad_little():
    src, tgt = _skewed_pairs(num_pairs=300)
    options = dict(tokens_per_batch=512, max_length=64, seed=5)
    dataset, report = make_dataset(src, tgt, NumberTokenizer(), bucketing="packed", **options)
    _, separate = make_dataset(src, tgt, NumberTokenizer(), **options)
    spec_inputs, _ = dataset.element_spec
    assert set(spec_inputs) == {"encoder_token_ids", "decoder_token_ids",
                                "encoder_segment_ids", "decoder_segment_ids"}
    first = _packed_batches(dataset)
    assert len(first) == report.num_batches
    assert {tuple(x.shape) for batch in first for x in batch} == {(8, 64)}
    assert report.batch_shapes == ((8, 64, 64),) and report.num_batch_shapes == 1
    expected = collections.Counter(zip(src, tgt))
    assert collections.Counter(_unpack(first)) == expected
    # The report's padding is the batches' padding, and far below bucketing's.
    real = sum(int((b[2] > 0).sum() + (b[3] > 0).sum()) for b in first)
    padded = sum(b[0].size + b[1].size for b in first)
    assert report.padding_fraction == pytest.approx(1 - real / padded)
    # (Uncorrelated source and target lengths: one side of a row often fills
    # first. Multi30k packs to about 1% padding, benchmarks/padding.py.)
    assert report.padding_fraction < 0.6 * separate.padding_fraction
    assert report.num_pairs_per_row > 1.5
    assert "packed rows of 64 tokens, 8 rows per batch" in report.summary()
    # The next epoch is another shuffle of the same pairs; the same seed
    # packs the same batches.
    second = _packed_batches(dataset)
    assert collections.Counter(_unpack(second)) == expected
    assert not np.array_equal(first[0][0], second[0][0])
    again, _ = make_dataset(src, tgt, NumberTokenizer(), bucketing="packed", **options)
    np.testing.assert_array_equal(_packed_batches(again)[0][0], first[0][0])


def test_packed_batches_repeat_shard_and_drop():
    src, tgt = _skewed_pairs(num_pairs=200)
    options = dict(tokens_per_batch=256, max_length=32, seed=3, batch_multiple=4,
                   bucketing="packed")
    whole, report = make_dataset(src, tgt, NumberTokenizer(), **options)
    assert report.bucket_batch_sizes == (8,)
    shards = [make_dataset(src, tgt, NumberTokenizer(), num_shards=2, shard_index=i,
                           **options)[0] for i in range(2)]
    whole_batches = _packed_batches(whole)
    shard_batches = [_packed_batches(shard) for shard in shards]
    assert len(shard_batches[0]) == len(whole_batches)
    for batch, first, second in zip(whole_batches, *shard_batches):
        for side, part_a, part_b in zip(batch, first, second):
            assert part_a.shape == (4, 32)
            np.testing.assert_array_equal(side, np.concatenate([part_a, part_b]))
    # repeat: passes join without partial batches; every pair comes back.
    repeated, repeated_report = make_dataset(src, tgt, NumberTokenizer(), repeat=True, **options)
    batches = _packed_batches(repeated.take(3 * repeated_report.num_batches))
    counts = collections.Counter(_unpack(batches))
    assert set(counts) == set(zip(src, tgt)) and min(counts.values()) >= 2
    # drop_remainder leaves out the pairs of the last, partly filled batches.
    dropped, dropped_report = make_dataset(
        src, tgt, NumberTokenizer(), drop_remainder=True, **options)
    kept = _unpack(_packed_batches(dropped))
    assert dropped_report.num_dropped == len(src) - len(kept) > 0
    assert all(
        (batch[0] != PAD_ID).any(axis=1).all() for batch in _packed_batches(dropped)
    )


def test_packed_dataset_trains_the_transformer(pairs, tokenizer):
    import keras

    import keras_transformer as kt

    src, tgt = pairs
    dataset, report = make_dataset(
        src[:200], tgt[:200], tokenizer, tokens_per_batch=192, max_length=48,
        bucketing="packed", repeat=True, seed=0,
    )
    model = kt.Transformer(vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
                           d_model=16, num_heads=2, d_ff=32)
    model.compile(optimizer="adam", loss=kt.LabelSmoothedCrossEntropy())
    history = model.fit(dataset, epochs=2, steps_per_epoch=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert history.history["loss"][1] < history.history["loss"][0]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"tokens_per_batch": 0}, r"tokens_per_batch must be a positive int\. Received: tokens_per_batch=0"),
        ({"tokens_per_batch": 100.0}, r"tokens_per_batch must be a positive int"),
        ({"max_length": True}, r"max_length must be a positive int\. Received: max_length=True"),
        ({"max_length": 1, "tokens_per_batch": 8}, r"max_length must be at least 2"),
        ({"tokens_per_batch": 127}, r"tokens_per_batch must be >= max_length \* batch_multiple"),
        ({"batch_multiple": -2}, r"batch_multiple must be a positive int\. Received: batch_multiple=-2"),
        ({"num_shards": 0}, r"num_shards must be a positive int\. Received: num_shards=0"),
        ({"shard_index": -1}, r"shard_index must be a non-negative int\. Received: shard_index=-1"),
        ({"batch_multiple": 2, "num_shards": 2, "shard_index": 2, "seed": 0},
         r"shard_index must be in \[0, num_shards=2\)\. Received: shard_index=2"),
        ({"batch_multiple": 3, "num_shards": 2, "seed": 0}, r"num_shards must divide batch_multiple"),
        ({"batch_multiple": 2, "num_shards": 2}, r"num_shards > 1 needs a seed"),
        ({"shuffle_buffer_size": 0}, r"shuffle_buffer_size must be a positive int or None\. "
                                     r"Received: shuffle_buffer_size=0"),
        ({"vocabulary_size": -5}, r"vocabulary_size must be a positive int or None\. "
                                  r"Received: vocabulary_size=-5"),
        ({"seed": -1}, r"seed must be a non-negative int or None\. Received: seed=-1"),
        ({"seed": 1.5}, r"seed must be a non-negative int or None"),
        ({"shuffle": "yes"}, r"shuffle must be one of \(True, False\)\. Received: shuffle='yes'"),
        ({"repeat": None}, r"repeat must be one of \(True, False\)"),
        ({"drop_remainder": "no"}, r"drop_remainder must be one of \(True, False\)"),
        ({"length_handling": "clip"}, r"length_handling must be one of \('filter', 'truncate'\)\. "
                                      r"Received: length_handling='clip'"),
        ({"bucketing": "pack"}, r"bucketing must be one of \('separate', 'joint', 'packed'\)\. "
                                r"Received: bucketing='pack'"),
        ({"min_shape_saving": -0.1}, r"min_shape_saving must be a fraction in \[0, 1\]\. "
                                     r"Received: min_shape_saving=-0.1"),
        ({"min_shape_saving": float("nan")}, r"min_shape_saving must be a fraction"),
        ({"min_shape_saving": True}, r"min_shape_saving must be a fraction"),
        ({"bucket_boundaries": [8, 0]}, r"bucket_boundaries\[1\] must be a positive int\. "
                                        r"Received: bucket_boundaries\[1\]=0"),
        ({"bucket_boundaries": [8, 8.5]}, r"bucket_boundaries\[1\] must be a positive int"),
        ({"bucket_boundaries": [16, 8]}, r"bucket_boundaries must be increasing"),
        ({"max_length": 32, "bucket_boundaries": [16, 64]},
         r"bucket_boundaries must not exceed max_length"),
    ],
)
def test_dataset_options_validation_names_the_argument(changes, message):
    from keras_transformer.data import DatasetOptions

    with pytest.raises(ValueError, match=message):
        DatasetOptions(**changes)
    # replace() validates too, and make_dataset's keyword form reports the same.
    with pytest.raises(ValueError, match=message):
        DatasetOptions().replace(**changes)
    with pytest.raises(ValueError, match=message):
        make_dataset(["4 5"], ["6 7"], NumberTokenizer(), **changes)


def test_dataset_options_and_keyword_arguments():
    from keras_transformer.data import DatasetOptions

    options = DatasetOptions(tokens_per_batch=64, max_length=16, seed=3,
                             bucket_boundaries=(length for length in (4, 8)))  # fmt: skip
    # Stored as a tuple: a generator is not used up by the checks.
    assert options.bucket_boundaries == (4, 8)
    assert options.bucket_lengths == (4, 8, 16)
    assert options.bucket_batch_sizes((4, 8, 16)) == (16, 8, 4)
    assert DatasetOptions(max_length=128).bucket_lengths == default_bucket_lengths(128)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 4
    src, tgt = _skewed_pairs(num_pairs=60)
    src, tgt = [" ".join(s.split()[:10]) for s in src], [" ".join(t.split()[:10]) for t in tgt]
    by_options, report = make_dataset(src, tgt, NumberTokenizer(), options)
    by_keywords, same_report = make_dataset(
        src, tgt, NumberTokenizer(), tokens_per_batch=64, max_length=16, seed=3,
        bucket_boundaries=[4, 8],
    )  # fmt: skip
    assert report == same_report
    for a, b in zip(_batches(by_options), _batches(by_keywords), strict=True):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    # Keyword arguments override the options' fields.
    _, joint = make_dataset(src, tgt, NumberTokenizer(), options, bucketing="joint")
    assert joint.bucketing == "joint" and report.bucketing == "separate"
    assert options.replace(bucketing="joint").bucketing == "joint"
    with pytest.raises(TypeError, match=r"Unknown dataset option\(s\) \['token_per_batch'\]"):
        make_dataset(src, tgt, NumberTokenizer(), token_per_batch=64)
    with pytest.raises(TypeError, match="Unknown dataset option"):
        options.replace(tokens=1)
    with pytest.raises(TypeError, match="options must be a DatasetOptions"):
        make_dataset(src, tgt, NumberTokenizer(), 4096)
