"""Multilingual data: language tags in the vocabulary, in prepared corpora,
in the stream (temperature sampling) and in `make_dataset`."""

import numpy as np
import pytest

from keras_transformer.data import DatasetOptions, make_dataset
from keras_transformer.data.corpus import prepare_corpus
from keras_transformer.data.default_task import number_to_english, number_to_german
from keras_transformer.data.shards import PreparedCorpus
from keras_transformer.data.stream import CorpusStream, language_sampling_factors
from keras_transformer.data.text_files import write_lines
from keras_transformer.models.transformer.subword_tokenizer import SubwordTokenizer
from keras_transformer.special_tokens import (
    BOS_ID,
    EOS_ID,
    check_language,
    language_tag_ids,
    target_language_ids,
)


def _digits(n):
    return " ".join(str(n))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A German pair of files (600 lines) and a digits pair (200 lines)."""
    directory = tmp_path_factory.mktemp("multilingual")
    rng = np.random.default_rng(0)
    german, digits = rng.choice(10_000, 600, replace=False), rng.choice(10_000, 200)
    paths = {}
    for name, numbers, target in (("de", german, number_to_german), ("dg", digits, _digits)):
        paths[name] = (str(directory / f"{name}.en"), str(directory / f"{name}.{name}"))
        write_lines(paths[name][0], [number_to_english(int(n)) for n in numbers])
        write_lines(paths[name][1], [target(int(n)) for n in numbers])
    return paths


def _prepare(files, directory, language_tag="source", **kwargs):
    return prepare_corpus(
        [files["de"][0], files["dg"][0]],
        [files["de"][1], files["dg"][1]],
        directory,
        vocabulary_size=200,
        languages=["de", "dg"],
        language_tag=language_tag,
        shard_size=250,
        verbose=0,
        **kwargs,
    )


def test_tokenizer_reserves_a_control_piece_per_language():
    tokenizer = SubwordTokenizer.train(
        ["one two three", "eins zwei drei", "1 2 3"] * 40, 40, languages=["de", "dg"]
    )
    assert tokenizer.languages == {"de": 4, "dg": 5}
    assert tokenizer.id_to_piece([4, 5]) == ["<2de>", "<2dg>"]
    # Text never produces a tag, and a tag prints as nothing.
    assert 4 not in tokenizer.encode(["<2de> one"])[0]
    assert tokenizer.decode([[4, *tokenizer.encode(["one"])[0]]]) == ["one"]
    plain = SubwordTokenizer.train(["one two three"] * 40, 20)
    assert plain.languages == {} and language_tag_ids(plain.proto) == {}


def test_language_codes_and_lookup_errors_name_the_argument():
    assert check_language("pt_BR") == "pt_BR"
    for bad in ("German", "d", "de fr", "", 7):
        with pytest.raises(ValueError, match="my_arg"):
            check_language(bad, "my_arg")
    tags = {"de": 4, "fr": 5}
    assert target_language_ids("fr", tags, 2) == [5, 5]
    assert target_language_ids(["de", "fr"], tags, 2) == [4, 5]
    with pytest.raises(ValueError, match="does not translate into 'es'; it knows 'de', 'fr'"):
        target_language_ids("es", tags, 1)
    with pytest.raises(ValueError, match="one language per sentence"):
        target_language_ids(["de"], tags, 2)
    with pytest.raises(ValueError, match="no language tags"):
        target_language_ids("de", {}, 1)


@pytest.mark.parametrize("language_tag", ["source", "target"])
def test_prepared_pairs_carry_their_language_tag(files, tmp_path, language_tag):
    corpus = _prepare(files, tmp_path / "corpus", language_tag)
    assert corpus.languages == {"de": 4, "dg": 5}
    assert corpus.language_tag == language_tag
    # A shard never mixes the languages: 600 German lines in shards of
    # 250 lines, then the 200 digit lines.
    assert corpus.shard_languages == ["de", "de", "de", "dg"]
    assert corpus.language_pairs == {"de": 600, "dg": 200}
    processor = SubwordTokenizer.load(corpus.vocabulary_path)
    for index, language in enumerate(corpus.shard_languages):
        shard = corpus.shard(index)
        tagged, splits = shard.gather(np.arange(shard.num_pairs), language_tag)
        firsts = tagged[splits[:-1]]
        assert (firsts == corpus.languages[language]).all()
        other = "target" if language_tag == "source" else "source"
        untagged, splits = shard.gather(np.arange(shard.num_pairs), other)
        assert not np.isin(untagged, [4, 5]).any()
    # After its tag, a side holds the text's own ids.
    with open(files["de"][0 if language_tag == "source" else 1], encoding="utf-8") as f:
        first_line = f.readline().rstrip("\n")
    ids, splits = corpus.shard(0).gather(np.array([0]), language_tag)
    assert ids[splits[0] : splits[1]].tolist() == [4] + processor.encode([first_line])[0]


def test_another_placement_or_language_list_is_another_preparation(files, tmp_path):
    _prepare(files, tmp_path / "corpus")
    with pytest.raises(ValueError, match="language_tag='source' instead of 'target'"):
        _prepare(files, tmp_path / "corpus", "target")
    with pytest.raises(ValueError, match="one target language per pair of files: 1 for 2"):
        prepare_corpus(
            [files["de"][0], files["dg"][0]], [files["de"][1], files["dg"][1]],
            tmp_path / "other", vocabulary_size=200, languages=["de"], verbose=0,
        )  # fmt: skip
    # A vocabulary without the tags cannot encode a multilingual corpus.
    plain = prepare_corpus(
        files["de"][0], files["de"][1], tmp_path / "plain", vocabulary_size=200, verbose=0
    )
    with pytest.raises(ValueError, match="has no language tag for de, dg"):
        prepare_corpus(
            [files["de"][0], files["dg"][0]], [files["de"][1], files["dg"][1]],
            tmp_path / "third", vocabulary=plain.vocabulary_path, languages=["de", "dg"],
            verbose=0,
        )  # fmt: skip


def _language_counts(stream, passes=1):
    counts = {4: 0, 5: 0}
    for epoch in range(passes):
        for inputs, _ in stream.batches(epoch=epoch):
            first = inputs["encoder_token_ids"][:, 0]
            for tag in counts:
                counts[tag] += int((first == tag).sum())
    return counts


def test_temperature_sampling_moves_the_mix_towards_equal_shares(files, tmp_path):
    corpus = _prepare(files, tmp_path / "corpus")
    options = DatasetOptions(tokens_per_batch=1024, max_length=32, seed=3)
    # None and T = 1: the corpus's own proportions (every pair once a pass).
    assert _language_counts(CorpusStream(corpus, options)) == {4: 600, 5: 200}
    assert language_sampling_factors(corpus, 1) == pytest.approx({"de": 1.0, "dg": 1.0})
    assert _language_counts(CorpusStream(corpus, options, sampling_temperature=1)) == {
        4: 600,
        5: 200,
    }
    # T = 5: q = (3/4)^0.2 : (1/4)^0.2, normalized; r = q N / n.
    weights = np.array([0.75, 0.25]) ** 0.2
    q = weights / weights.sum()
    factors = language_sampling_factors(corpus, 5)
    assert factors["de"] == pytest.approx(q[0] * 800 / 600)
    assert factors["dg"] == pytest.approx(q[1] * 800 / 200)
    counts = _language_counts(CorpusStream(corpus, options, sampling_temperature=5))
    assert counts[4] == round(600 * factors["de"])
    assert counts[5] == int(factors["dg"]) * 200 + round((factors["dg"] % 1) * 200)
    assert sum(counts.values()) == pytest.approx(800, abs=2)
    # Each pass draws its own subsample of the large language.
    stream = CorpusStream(
        corpus, DatasetOptions(tokens_per_batch=1024, max_length=32, seed=3, shuffle=False),
        sampling_temperature=100,
    )  # fmt: skip
    first, second = (
        np.concatenate([x["encoder_token_ids"][:, :4] for x, _ in stream.batches(epoch=e)])
        for e in (0, 1)
    )
    assert first.shape == second.shape and not np.array_equal(first, second)


def test_temperature_sampling_errors(files, tmp_path):
    corpus = _prepare(files, tmp_path / "corpus")
    options = DatasetOptions(tokens_per_batch=1024, max_length=32)
    for bad in (0, -1.0, float("nan"), "2", True):
        with pytest.raises(ValueError, match="sampling_temperature must be a number > 0"):
            CorpusStream(corpus, options, sampling_temperature=bad)
    plain = prepare_corpus(
        files["de"][0], files["de"][1], tmp_path / "plain", vocabulary_size=200, verbose=0
    )
    with pytest.raises(ValueError, match="applies to a corpus of several target languages"):
        CorpusStream(PreparedCorpus.open(plain.path), options, sampling_temperature=2)


@pytest.mark.parametrize("language_tag", ["source", "target"])
def test_make_dataset_puts_the_tag_where_the_corpus_does(language_tag):
    tokenizer = SubwordTokenizer.train(
        ["one two three", "eins zwei drei", "1 2 3"] * 40, 40, languages=["de", "dg"]
    )
    dataset, _ = make_dataset(
        ["one two", "three"], ["1 2", "3"], tokenizer, language_tag_id=5,
        language_tag=language_tag, shuffle=False, tokens_per_batch=64, max_length=16,
    )  # fmt: skip
    (inputs, labels) = next(iter(dataset))
    encoder = np.asarray(inputs["encoder_token_ids"])
    decoder = np.asarray(inputs["decoder_token_ids"])
    labels = np.asarray(labels)
    if language_tag == "source":
        assert (encoder[:, 0] == 5).all()
        assert (decoder[:, 0] == BOS_ID).all() and not (decoder == 5).any()
    else:
        assert not (encoder == 5).any()
        assert (decoder[:, :2] == [BOS_ID, 5]).all() and (labels[:, 0] == 5).all()
    assert (encoder == EOS_ID).sum() == 2
