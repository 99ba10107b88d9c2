"""Tests for the shared SentencePiece vocabulary (keras_transformer.data.tokenizer)."""

import itertools
import os

import keras
import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf

from keras_transformer.utils.run_files import VOCABULARY_FILENAME as MODEL_FILENAME
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.special_tokens import BOS_ID
from keras_transformer.special_tokens import EOS_ID
from keras_transformer.special_tokens import PAD_ID
from keras_transformer.special_tokens import UNK_ID

VOCABULARY_SIZE = 200

_EN = [
    "Two young men are outside near {n} bushes.",
    "A little girl, aged {n}, climbs into a wooden playhouse!",
    "Is the dog running? It costs {n} dollars; really.",
    "The man's hat is red (and blue): {n}% of it.",
]
_DE = [
    "Zwei junge Männer sind im Freien nahe {n} Büschen.",
    "Ein kleines Mädchen, {n} Jahre alt, klettert in ein Spielhaus!",
    "Läuft der Hund über die Straße? Er kostet {n} Euro; wirklich.",
    "Der Hut des Mannes ist rot (und blau): {n}% davon. Größe ÄÖÜ äöüß",
]


def _corpus():
    numbers = [str(n) for n in range(0, 400, 7)] + ["3.5", "1,000", "2024"]
    english = [t.format(n=n) for t, n in itertools.product(_EN, numbers)]
    german = [t.format(n=n) for t, n in itertools.product(_DE, numbers)]
    return english, german


@pytest.fixture(scope="session")
def tokenizer():
    english, german = _corpus()
    return SubwordTokenizer.train(
        itertools.chain(english, german), vocabulary_size=VOCABULARY_SIZE
    )


ROUND_TRIP = [
    "Zwei junge Männer sind im Freien nahe 21 Büschen.",
    "Läuft der Hund über die Straße? Er kostet 3.5 Euro; wirklich.",
    "A little girl, aged 1,000, climbs into a wooden playhouse!",
    "The man's hat is red (and blue): 42% of it.",
    "ÄÖÜ äöüß Größe",
]


def test_reserved_ids_and_size(tokenizer):
    assert tokenizer.vocabulary_size == VOCABULARY_SIZE
    assert tokenizer.id_to_piece([PAD_ID, UNK_ID, BOS_ID, EOS_ID]) == [
        "<pad>",
        "<unk>",
        "<s>",
        "</s>",
    ]
    processor = spm.SentencePieceProcessor(model_proto=tokenizer.proto)
    assert processor.pad_id() == PAD_ID
    assert processor.unk_id() == UNK_ID
    assert processor.bos_id() == BOS_ID
    assert processor.eos_id() == EOS_ID


def test_model_is_bpe(tokenizer):
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto.FromString(tokenizer.proto)
    assert model.trainer_spec.model_type == model.trainer_spec.BPE
    assert model.trainer_spec.character_coverage == 1.0


def test_python_round_trip(tokenizer):
    ids = tokenizer.encode(ROUND_TRIP)
    assert all(isinstance(i, int) for row in ids for i in row)
    # No BOS/EOS added, no unknown pieces on covered text.
    assert not {BOS_ID, EOS_ID, PAD_ID, UNK_ID} & set(itertools.chain(*ids))
    assert tokenizer.decode(ids) == ROUND_TRIP


def test_graph_tokenize_matches_python_encode(tokenizer):
    ids = tokenizer.tokenize(tf.constant(ROUND_TRIP))
    assert isinstance(ids, tf.RaggedTensor)
    assert ids.dtype == tf.int32
    assert ids.to_list() == tokenizer.encode(ROUND_TRIP)
    text = tokenizer.detokenize(ids).numpy()
    assert [t.decode("utf-8") for t in text] == ROUND_TRIP


def test_scalar_tokenize_and_rank1_detokenize(tokenizer):
    ids = tokenizer.tokenize(tf.constant(ROUND_TRIP[0]))
    assert ids.shape.rank == 1
    assert tokenizer.detokenize(ids).numpy().decode("utf-8") == ROUND_TRIP[0]


def test_detokenize_cuts_at_eos_and_drops_pad_bos(tokenizer):
    a, b = tokenizer.encode(ROUND_TRIP[:2])
    width = max(len(a), len(b)) + 4
    rows = [
        [BOS_ID] + a + [EOS_ID] + b[:2],  # junk after EOS is dropped
        [BOS_ID] + b + [EOS_ID],
    ]
    dense = np.full((2, width), PAD_ID, np.int32)
    for i, row in enumerate(rows):
        dense[i, : len(row)] = row
    expected = ROUND_TRIP[:2]
    assert tokenizer.detokenize(dense) == expected  # Python in, Python out
    assert tokenizer.detokenize(rows) == expected
    assert tokenizer.detokenize(dense[0]) == expected[0]
    graph = tokenizer.detokenize(tf.constant(dense)).numpy()
    assert [t.decode() for t in graph] == expected
    ragged = tf.ragged.constant(rows, dtype=tf.int64)
    assert [t.decode() for t in tokenizer.detokenize(ragged).numpy()] == expected
    assert tokenizer.decode(dense) == expected
    assert tokenizer.decode(rows) == expected


def test_unknown_character_renders_as_sentencepiece_does(tokenizer):
    ids = tokenizer.encode(["Zwei € Männer"])[0]
    assert UNK_ID in ids
    assert "\u2047" in tokenizer.decode([ids])[0]  # " ⁇ "
    graph = tokenizer.detokenize(tf.constant([ids])).numpy()[0].decode()
    assert graph == tokenizer.decode([ids])[0]


def test_detokenize_rejects_rank_3(tokenizer):
    with pytest.raises(ValueError, match="rank 1 or 2"):
        tokenizer.detokenize(tf.zeros((1, 2, 3), tf.int32))
    with pytest.raises(ValueError, match="rank 1 or 2"):
        tokenizer.detokenize(np.zeros((1, 2, 3), np.int32))


# Text the vocabulary covers, text it does not (unknown pieces), blank and
# whitespace-only lines, and the Unicode that normalization rewrites.
_UNICODE = [
    "", " ", "   ", "\t", "\n", "e\u0301 Å Å ǅ Ⅻ ㎏", "ＡＢＣ ｶﾀｶﾅ ﬂ", "„Zitat“ – 3½ Uhr…",
    "ß ẞ ĳ ℌ", "Straße «Grüße» 42 €", "1,234.56 km/h? (yes) \u00a0 tab\there",
    "日本語のテキスト", "emoji 🐕🐕 dogs", "العربية", "  leading and trailing  ",
    "Zwei € Männer", "<2de> <s> </s> <pad> <unk>", "a" * 300,
]


def _python_and_graph_sentences():
    english, german = _corpus()
    return english[::2] + german[::2] + _UNICODE  # about 250 sentences


def test_python_and_tensorflow_text_give_the_same_ids_and_text(tokenizer):
    """The sentencepiece path (no TensorFlow) and the TF Text path (graphs)
    tokenize and detokenize a few hundred sentences identically."""
    sentences = _python_and_graph_sentences()
    assert len(sentences) > 200
    python_ids = tokenizer.tokenize(sentences)
    assert isinstance(python_ids, list) and all(isinstance(row, list) for row in python_ids)
    assert python_ids == tokenizer.tokenize(tf.constant(sentences)).to_list()
    assert python_ids == tokenizer.tokenize(np.asarray(sentences, object))
    assert python_ids == tokenizer.tokenize([s.encode("utf-8") for s in sentences])
    for sentence, ids in zip(sentences[::25] + _UNICODE, python_ids[::25] + python_ids[-18:]):
        assert tokenizer.tokenize(sentence) == ids
        assert tokenizer.tokenize(tf.constant(sentence)).numpy().tolist() == ids
    assert [] in python_ids and UNK_ID in itertools.chain(*python_ids)
    # Decoder-like rows: BOS first, EOS then junk, PAD after.
    width = max(map(len, python_ids)) + 4
    rows = np.full((len(python_ids), width), PAD_ID, np.int32)
    for i, ids in enumerate(python_ids):
        row = [BOS_ID] + ids + [EOS_ID] + ids[:2]
        rows[i, : len(row)] = row
    python_text = tokenizer.detokenize(rows)
    graph_text = [t.decode("utf-8") for t in tokenizer.detokenize(tf.constant(rows)).numpy()]
    assert python_text == graph_text
    assert python_text == tokenizer.decode(python_ids)
    assert [tokenizer.detokenize(row) for row in python_ids[:20]] == python_text[:20]
    assert tokenizer.id_to_piece(range(tokenizer.vocabulary_size)) == [
        tokenizer._processor.id_to_piece(i) for i in range(tokenizer.vocabulary_size)
    ]


def test_python_path_creates_no_tensorflow_resource(tokenizer):
    fresh = SubwordTokenizer(tokenizer.proto)
    fresh.detokenize(fresh.tokenize(ROUND_TRIP))
    assert fresh._tf_tokenizer is None
    fresh.tokenize(tf.constant(ROUND_TRIP))
    assert fresh._tf_tokenizer is not None


def test_ops_inside_tf_function(tokenizer):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(strings):
        ids = tokenizer.tokenize(strings)
        padded = ids.to_tensor(default_value=PAD_ID)  # (batch, length)
        return tokenizer.detokenize(padded)

    out = round_trip(tf.constant(ROUND_TRIP))
    assert [t.decode() for t in out.numpy()] == ROUND_TRIP

    @tf.function
    def built_in_graph(strings):
        return SubwordTokenizer(tokenizer.proto).tokenize(strings).to_tensor()

    expected = tokenizer.tokenize(tf.constant(ROUND_TRIP[:1])).to_tensor()
    np.testing.assert_array_equal(
        built_in_graph(tf.constant(ROUND_TRIP[:1])).numpy(), expected.numpy()
    )


def test_saved_model_keeps_the_tokenizer(tokenizer, tmp_path):
    class Serving(tf.Module):
        def __init__(self, tokenizer):
            super().__init__()
            self.tokenizer = tokenizer
            if keras.config.backend() != "tensorflow":
                # A Keras layer is a TensorFlow trackable only under the
                # TensorFlow backend; elsewhere its TF Text resource is
                # saved through `graph_tokenizer`.
                self.graph_tokenizer = tokenizer.graph_tokenizer

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def tokenize(self, strings):
            return self.tokenizer.tokenize(strings).to_tensor()

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
        def detokenize(self, ids):
            return self.tokenizer.detokenize(ids)

    path = str(tmp_path / "serving")
    tf.saved_model.save(Serving(SubwordTokenizer(tokenizer.proto)), path)
    loaded = tf.saved_model.load(path)
    ids = loaded.tokenize(tf.constant(ROUND_TRIP))
    expected = tokenizer.tokenize(tf.constant(ROUND_TRIP)).to_tensor()
    np.testing.assert_array_equal(ids.numpy(), expected.numpy())
    text = loaded.detokenize(ids).numpy()
    assert [t.decode() for t in text] == ROUND_TRIP


def test_save_and_load(tokenizer, tmp_path):
    path = tokenizer.save(str(tmp_path / "vocab"))
    assert path == os.path.join(str(tmp_path / "vocab"), MODEL_FILENAME)
    with open(path, "rb") as f:
        assert f.read() == tokenizer.proto
    for location in (str(tmp_path / "vocab"), path):
        loaded = SubwordTokenizer.load(location)
        assert loaded.proto == tokenizer.proto
        assert loaded.encode(ROUND_TRIP) == tokenizer.encode(ROUND_TRIP)
    assert SubwordTokenizer.from_proto(tokenizer.proto).vocabulary_size == (
        VOCABULARY_SIZE
    )


def test_load_missing_names_the_path(tmp_path):
    missing = str(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="nowhere"):
        SubwordTokenizer.load(missing)


def test_load_corrupt_names_the_path(tmp_path):
    path = tmp_path / MODEL_FILENAME
    path.write_bytes(b"this is not a model")
    with pytest.raises(ValueError, match=str(path)):
        SubwordTokenizer.load(str(tmp_path))


def test_from_proto_rejects_bad_input():
    with pytest.raises(ValueError, match="not a valid SentencePiece"):
        SubwordTokenizer.from_proto(b"garbage")
    with pytest.raises(TypeError, match="bytes"):
        SubwordTokenizer.from_proto("a string")


def test_model_without_reserved_ids_is_rejected():
    import io

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(  # sentencepiece defaults: unk=0, bos=1...
        sentence_iterator=iter(_corpus()[0]),
        model_writer=model,
        vocab_size=60,
        model_type="bpe",
        minloglevel=2,
    )
    with pytest.raises(ValueError, match="reserve"):
        SubwordTokenizer.from_proto(model.getvalue())


def test_training_is_deterministic(tokenizer):
    english, german = _corpus()
    again = SubwordTokenizer.train(itertools.chain(english, german), VOCABULARY_SIZE)
    assert again.proto == tokenizer.proto


def test_vocabulary_too_small_names_the_numbers():
    english, german = _corpus()
    with pytest.raises(ValueError, match=r"vocabulary_size=20 is too small.* \d+"):
        SubwordTokenizer.train(english + german, vocabulary_size=20)


def test_vocabulary_too_large_names_the_numbers():
    message = r"vocabulary_size=5000 is too large.*at most \d+"
    with pytest.raises(ValueError, match=message):
        SubwordTokenizer.train(["a tiny corpus", "with few words"], 5000)


def test_training_argument_errors():
    with pytest.raises(ValueError, match="no non-empty sentences"):
        SubwordTokenizer.train(["", ""], 50)
    with pytest.raises(ValueError, match="vocabulary_size"):
        SubwordTokenizer.train(["a b"], 4)
    with pytest.raises(ValueError, match="model_type"):
        SubwordTokenizer.train(["a b"], 50, model_type="word")
    with pytest.raises(TypeError, match="list of str"):
        SubwordTokenizer.train(["a b c"] * 10, 8).encode("a b")


def test_survives_seed_reset_and_clear_session(tokenizer):
    # tf_text's own resource dies with the eager kernel cache
    # (tensorflow/text#570); ours must not.
    import keras

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def traced(strings):
        return tokenizer.tokenize(strings).to_tensor()

    expected = traced(tf.constant(ROUND_TRIP)).numpy()
    fresh = SubwordTokenizer(tokenizer.proto)
    tf.random.set_seed(0)
    keras.utils.set_random_seed(1)
    keras.backend.clear_session()
    del fresh  # a second tokenizer of the same model going away
    np.testing.assert_array_equal(traced(tf.constant(ROUND_TRIP)).numpy(), expected)
    assert tokenizer.tokenize(tf.constant(ROUND_TRIP)).to_list() == (
        tokenizer.encode(ROUND_TRIP)
    )
    assert tokenizer.detokenize(tf.constant(expected)).numpy()[0].decode() == ROUND_TRIP[0]


def test_one_class_python_keras_hub_and_deprecated_names(tokenizer):
    """One tokenizer class: the old name is an alias of it, its vocabulary
    size reads as keras-hub's method and as the old property, and the
    keras-hub tokenizer interface reads the same vocabulary."""
    import keras_hub

    import keras_transformer as kt
    from keras_transformer import data
    from keras_transformer.models.transformer.transformer_tokenizer import (
        TransformerTokenizer,
    )

    assert SubwordTokenizer is TransformerTokenizer is kt.TransformerTokenizer
    assert kt.SubwordTokenizer is data.SubwordTokenizer is TransformerTokenizer
    assert isinstance(tokenizer, keras_hub.tokenizers.SentencePieceTokenizer)
    size = tokenizer.vocabulary_size
    assert size == size() == VOCABULARY_SIZE and isinstance(size(), int)
    assert tokenizer.get_vocabulary()[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert [tokenizer.id_to_token(i) for i in range(4)] == tokenizer.id_to_piece(range(4))
    assert tokenizer.token_to_id("</s>") == EOS_ID and tokenizer.end_token_id == EOS_ID
    # keras-hub's layer call is `tokenize`, on the Python path.
    assert tokenizer(ROUND_TRIP) == tokenizer.encode(ROUND_TRIP)
    restored = TransformerTokenizer.from_config(tokenizer.get_config())
    restored.set_proto(tokenizer.proto)
    assert restored.tokenize(ROUND_TRIP) == tokenizer.tokenize(ROUND_TRIP)

