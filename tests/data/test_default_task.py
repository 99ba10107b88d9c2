"""Tests for the embedded English -> German number-words task."""

import os

import pytest

from keras_transformer.data.default_task import MAX_NUMBER
from keras_transformer.data.default_task import default_task_splits
from keras_transformer.data.default_task import number_to_english
from keras_transformer.data.default_task import number_to_german
from keras_transformer.data.default_task import write_default_task
from keras_transformer.data.text_files import read_parallel

pytestmark = pytest.mark.backend_independent

KNOWN = {
    0: ("zero", "null"),
    1: ("one", "eins"),
    7: ("seven", "sieben"),
    10: ("ten", "zehn"),
    11: ("eleven", "elf"),
    12: ("twelve", "zwölf"),
    13: ("thirteen", "dreizehn"),
    16: ("sixteen", "sechzehn"),
    17: ("seventeen", "siebzehn"),
    20: ("twenty", "zwanzig"),
    21: ("twenty-one", "einundzwanzig"),
    30: ("thirty", "dreißig"),
    31: ("thirty-one", "einunddreißig"),
    60: ("sixty", "sechzig"),
    66: ("sixty-six", "sechsundsechzig"),
    70: ("seventy", "siebzig"),
    77: ("seventy-seven", "siebenundsiebzig"),
    99: ("ninety-nine", "neunundneunzig"),
    100: ("one hundred", "einhundert"),
    101: ("one hundred one", "einhunderteins"),
    111: ("one hundred eleven", "einhundertelf"),
    121: ("one hundred twenty-one", "einhunderteinundzwanzig"),
    200: ("two hundred", "zweihundert"),
    345: ("three hundred forty-five", "dreihundertfünfundvierzig"),
    999: ("nine hundred ninety-nine", "neunhundertneunundneunzig"),
    1000: ("one thousand", "eintausend"),
    1001: ("one thousand one", "eintausendeins"),
    1010: ("one thousand ten", "eintausendzehn"),
    1100: ("one thousand one hundred", "eintausendeinhundert"),
    1234: (
        "one thousand two hundred thirty-four",
        "eintausendzweihundertvierunddreißig",
    ),
    2024: ("two thousand twenty-four", "zweitausendvierundzwanzig"),
    7017: ("seven thousand seventeen", "siebentausendsiebzehn"),
    9999: (
        "nine thousand nine hundred ninety-nine",
        "neuntausendneunhundertneunundneunzig",
    ),
}


@pytest.mark.parametrize("number", sorted(KNOWN))
def test_known_values(number):
    english, german = KNOWN[number]
    assert number_to_english(number) == english
    assert number_to_german(number) == german


def test_all_numbers_distinct_and_well_formed():
    english = [number_to_english(n) for n in range(MAX_NUMBER + 1)]
    german = [number_to_german(n) for n in range(MAX_NUMBER + 1)]
    assert len(set(english)) == len(set(german)) == MAX_NUMBER + 1
    for n, (en, de) in enumerate(zip(english, german)):
        assert de == de.lower() and " " not in de and "-" not in de
        # "eins" only as the last word part, never inside a compound.
        assert "eins" not in de[:-4]
        assert de.endswith("eins") == (n % 100 == 1)
        assert "and" not in en.split()
        assert en.count("-") == (1 if n % 100 > 20 and n % 10 else 0)


def test_rejects_out_of_range_and_non_ints():
    for bad in (-1, MAX_NUMBER + 1):
        with pytest.raises(ValueError, match=str(bad)):
            number_to_german(bad)
    with pytest.raises(TypeError):
        number_to_english(3.0)
    with pytest.raises(TypeError):
        number_to_english(True)


_LOOKUP = {number_to_english(n): n for n in range(MAX_NUMBER + 1)}


def _numbers(english):
    return {_LOOKUP[e] for e in english}


def test_splits_are_disjoint_sized_and_aligned():
    splits = default_task_splits(seed=0)
    assert set(splits) == {"train", "valid", "test"}
    sizes = {name: len(src) for name, (src, _) in splits.items()}
    assert sizes == {"train": 8000, "valid": 1000, "test": 1000}
    numbers = {name: _numbers(src) for name, (src, _) in splits.items()}
    assert len(numbers["train"]) == 8000  # no duplicates
    assert not numbers["train"] & numbers["valid"]
    assert not numbers["train"] & numbers["test"]
    assert not numbers["valid"] & numbers["test"]
    assert 0 in numbers["train"]
    for src, tgt in splits.values():
        assert [number_to_german(_LOOKUP[e]) for e in src] == tgt


def test_splits_are_deterministic_given_seed():
    a = default_task_splits(seed=3, num_train=100, num_valid=10, num_test=10)
    b = default_task_splits(seed=3, num_train=100, num_valid=10, num_test=10)
    c = default_task_splits(seed=4, num_train=100, num_valid=10, num_test=10)
    assert a == b
    assert a["test"] != c["test"]


def test_test_words_are_covered_by_training():
    splits = default_task_splits(seed=0)
    train_words = {w for s in splits["train"][0] for w in s.replace("-", " ").split()}
    for sentence in splits["test"][0]:
        assert set(sentence.replace("-", " ").split()) <= train_words


def test_split_size_errors():
    with pytest.raises(ValueError, match="exceeds"):
        default_task_splits(num_train=9000, num_valid=1000, num_test=1000)
    with pytest.raises(ValueError, match="num_valid"):
        default_task_splits(num_valid=-1)
    with pytest.raises(ValueError, match="num_train"):
        default_task_splits(num_train=0)


def test_write_default_task(tmp_path):
    sizes = dict(num_train=50, num_valid=5, num_test=5)
    paths = write_default_task(str(tmp_path / "numbers"), seed=1, **sizes)
    splits = default_task_splits(seed=1, **sizes)
    names = sorted(os.listdir(tmp_path / "numbers"))
    splits_and_sides = [(s, side) for s in splits for side in ("en", "de")]
    assert names == sorted(f"{s}.{side}" for s, side in splits_and_sides)
    for name, (en_path, de_path) in paths.items():
        assert en_path.endswith(f"{name}.en") and de_path.endswith(f"{name}.de")
        src, tgt, stats = read_parallel(en_path, de_path)
        assert (src, tgt) == splits[name]
        assert stats.num_skipped_empty == 0
