"""Packed rows: several sentence pairs per row, with segment ids (the model's
masks and positions, and `make_dataset(..., bucketing="packed")`)."""


import keras
import numpy as np
import pytest

import keras_transformer as kt
from conftest import compiled, to_numpy
from keras_transformer.layers.masks import segment_attention_mask
from keras_transformer.layers.masks import segment_positions

V = 53


def _pair(rng, source_length, target_length):
    source = list(rng.integers(4, V, size=source_length - 1)) + [kt.EOS_ID]
    target = [kt.BOS_ID] + list(rng.integers(4, V, size=target_length - 1))
    return source, target


def _pack(pairs, source_length, target_length):
    """One packed row per list of pairs: (ids, segment ids) on each side."""
    rows = {key: [] for key in ("src", "src_seg", "tgt", "tgt_seg")}
    for row_pairs in pairs:
        src, src_seg, tgt, tgt_seg = [], [], [], []
        for k, (source, target) in enumerate(row_pairs, start=1):
            src += source
            src_seg += [k] * len(source)
            tgt += target
            tgt_seg += [k] * len(target)
        for key, values, length in (
            ("src", src, source_length), ("src_seg", src_seg, source_length),
            ("tgt", tgt, target_length), ("tgt_seg", tgt_seg, target_length),
        ):
            rows[key].append(values + [0] * (length - len(values)))
    return {
        "encoder_token_ids": np.array(rows["src"], "int32"),
        "decoder_token_ids": np.array(rows["tgt"], "int32"),
        "encoder_segment_ids": np.array(rows["src_seg"], "int32"),
        "decoder_segment_ids": np.array(rows["tgt_seg"], "int32"),
    }


def test_segment_masks_and_positions():
    segments = np.array([[1, 1, 1, 2, 2, 3, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]], "int32")
    np.testing.assert_array_equal(
        to_numpy(segment_positions(segments)),
        [[0, 1, 2, 0, 1, 0, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7]],
    )
    mask = to_numpy(segment_attention_mask(segments, segments))
    assert mask.shape == (2, 8, 8)
    np.testing.assert_array_equal(mask[0, 3], [0, 0, 0, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(mask[0, 5], [0, 0, 0, 0, 0, 1, 0, 0])
    assert not mask[0, 6].any()  # padding attends to nothing
    assert mask[1].all()
    cross = to_numpy(segment_attention_mask(segments[:1, :6], segments[:1]))
    assert cross.shape == (1, 6, 8)
    np.testing.assert_array_equal(cross[0, 4], [0, 0, 0, 1, 1, 0, 0, 0])


@pytest.mark.parametrize(
    "options",
    [dict(), dict(positional_encoding="learned", max_length=24,
                  normalization_position="pre")],
    ids=["sinusoidal_post", "learned_pre"],
)
def test_packed_pairs_give_the_logits_of_pairs_in_rows_of_their_own(rng, options):
    model = kt.Transformer(vocabulary_size=V, num_layers=2, d_model=32, num_heads=4,
                           d_ff=64, dropout_rate=0.0, **options)
    lengths = [[(5, 4), (3, 6), (4, 2)], [(9, 7)], [(2, 2), (6, 9)]]
    pairs = [[_pair(rng, s, t) for s, t in row] for row in lengths]
    packed = _pack(pairs, source_length=14, target_length=13)
    call = compiled(model, lambda inputs: model(inputs, training=False))
    logits = to_numpy(call(packed))
    assert logits.shape == (3, 13, V)
    # Each pair in a row of its own (padding after it changes no real output:
    # test_transformer.py), all in one batch.
    alone = to_numpy(call(_unpacked(pairs)))
    k = 0
    for r, row_pairs in enumerate(pairs):
        offset = 0
        for _, target in row_pairs:
            np.testing.assert_allclose(
                logits[r, offset:offset + len(target)], alone[k, :len(target)],
                atol=2e-5, err_msg=f"row {r}, pair at {offset}")
            offset += len(target)
            k += 1


def _unpacked(pairs):
    """Every pair in a row of its own, padded to the longest."""
    flat = [pair for row in pairs for pair in row]
    width = max(len(source) for source, _ in flat), max(len(target) for _, target in flat)
    return {
        name: np.array([side + [0] * (width[i] - len(side)) for side in sides], "int32")
        for i, (name, sides) in enumerate(
            (("encoder_token_ids", [p[0] for p in flat]),
             ("decoder_token_ids", [p[1] for p in flat])))
    }


def _labels(decoder_ids):
    """Labels of decoder inputs: each pair's [BOS, y...] -> [y..., EOS]."""
    labels = np.zeros_like(decoder_ids)
    starts = decoder_ids == kt.BOS_ID
    for r, c in zip(*np.nonzero(decoder_ids)):
        last = c + 1 == decoder_ids.shape[1] or decoder_ids[r, c + 1] == 0 or starts[r, c + 1]
        labels[r, c] = kt.EOS_ID if last else decoder_ids[r, c + 1]
    return labels


def test_packed_training_step_has_the_loss_of_the_pairs(rng):
    """`fit` on a packed batch: the loss of the pairs (a jitted train step
    on JAX/TensorFlow, eager on torch), and the weights move."""
    model = kt.Transformer(vocabulary_size=V, num_layers=1, d_model=16, num_heads=2,
                           d_ff=32, dropout_rate=0.0)
    pairs = [[_pair(rng, 4, 3), _pair(rng, 3, 5)], [_pair(rng, 6, 6)]]
    packed = _pack(pairs, source_length=8, target_length=8)
    labels = _labels(packed["decoder_token_ids"])
    assert (labels[0, :3] != 0).all() and labels[0, 2] == kt.EOS_ID
    loss = kt.LabelSmoothedCrossEntropy(label_smoothing=0.1)
    # The loss of the pairs in rows of their own (token-averaged).
    unpacked = _unpacked(pairs)
    expected = float(to_numpy(loss(_labels(unpacked["decoder_token_ids"]),
                                   model(unpacked, training=False))))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    before = [to_numpy(w) for w in model.trainable_weights]
    history = model.fit(packed, labels, batch_size=2, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["loss"][0], expected, rtol=1e-4)
    after = [to_numpy(w) for w in model.trainable_weights]
    assert any(not np.allclose(a, b) for a, b in zip(before, after))


def test_packed_inputs_are_checked(rng):
    model = kt.Transformer(vocabulary_size=V, num_layers=1, d_model=16, num_heads=2,
                           d_ff=32)
    packed = _pack([[_pair(rng, 3, 3)]], source_length=4, target_length=4)
    missing = {k: v for k, v in packed.items() if k != "decoder_segment_ids"}
    with pytest.raises(ValueError, match="Missing: \\['decoder_segment_ids'\\]"):
        model(missing)
    with pytest.raises(ValueError, match="unknown: \\['segment_ids'\\]"):
        model(dict(packed, segment_ids=packed["encoder_segment_ids"]))
    bad = dict(packed, encoder_segment_ids=packed["encoder_segment_ids"][:, :3])
    with pytest.raises(ValueError, match="encoder_segment_ids must have the shape"):
        model(bad)
    out_of_range = dict(packed, decoder_token_ids=packed["decoder_token_ids"] + V)
    with pytest.raises(ValueError, match="decoder_token_ids"):
        model.predict(out_of_range, verbose=0)


def test_packed_arrays_are_checked_before_fit(rng):
    model = kt.Transformer(vocabulary_size=V, num_layers=1, d_model=16, num_heads=2,
                           d_ff=32)
    model.compile(optimizer="sgd", loss=kt.LabelSmoothedCrossEntropy())
    packed = _pack([[_pair(rng, 3, 3)]], source_length=4, target_length=4)
    labels = np.ones((1, 4), "int32")
    negative = dict(packed, decoder_segment_ids=packed["decoder_segment_ids"] - 1)
    with pytest.raises(ValueError, match="decoder_segment_ids must be >= 0"):
        model.fit(negative, labels, verbose=0)
    short = dict(packed, encoder_segment_ids=packed["encoder_segment_ids"][:, :2])
    with pytest.raises(ValueError, match="encoder_segment_ids must have the shape"):
        model.fit(short, labels, verbose=0)
