"""An embedded translation task: English number words to German number words.

It needs no download and is small enough to train on a CPU in minutes, yet it
is a genuine translation problem: German reorders units before tens
("twenty-one" -> "einundzwanzig"), writes a number as one word, and uses
"eins" alone but "ein" in compounds.

Conventions: English is American style without "and" ("three hundred
forty-five"); German writes hundreds and thousands with an explicit count
("einhundert", "eintausend"), numbers 0 to 9999.

Example: 2024 -> "two thousand twenty-four" -> "zweitausendvierundzwanzig".
"""

import os

import numpy as np

from keras_transformer.data.text_files import write_lines
from keras_transformer.utils.validation import check_int

MAX_NUMBER = 9999
SPLITS = ("train", "valid", "test")

_EN_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve "
    "thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()

# Units inside compounds: "ein" (einundzwanzig, einhundert), not "eins".
_DE_UNITS = "_ ein zwei drei vier fünf sechs sieben acht neun".split()
_DE_TEENS = (
    "zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn "
    "neunzehn"
).split()
_DE_TENS = "_ _ zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()


def _check_number(n):
    # A TypeError for a non-int (a float or a word is a misuse, not a value
    # out of range); a ValueError naming ``n`` for one outside 0..MAX_NUMBER.
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"Expected an int. Received: {n!r}")
    return check_int("n", n, minimum=0, maximum=MAX_NUMBER)


def number_to_english(n):
    """English words of ``n`` in 0..9999, e.g. 345 -> "three hundred forty-five".

    Example:

    >>> number_to_english(2024)
    'two thousand twenty-four'
    """
    n = _check_number(n)
    if n == 0:
        return "zero"
    words = []
    thousands, rest = divmod(n, 1000)
    hundreds, below_hundred = divmod(rest, 100)
    if thousands:
        words += [_EN_ONES[thousands], "thousand"]
    if hundreds:
        words += [_EN_ONES[hundreds], "hundred"]
    if below_hundred:
        words.append(_english_below_hundred(below_hundred))
    return " ".join(words)


def _english_below_hundred(n):
    if n < 20:
        return _EN_ONES[n]
    tens, units = divmod(n, 10)
    return _EN_TENS[tens] + (f"-{_EN_ONES[units]}" if units else "")


def number_to_german(n):
    """German words of ``n`` in 0..9999, e.g. 345 -> "dreihundertfünfundvierzig".

    Example:

    >>> number_to_german(1001)
    'eintausendeins'
    """
    n = _check_number(n)
    if n == 0:
        return "null"
    thousands, rest = divmod(n, 1000)
    hundreds, below_hundred = divmod(rest, 100)
    word = ""
    if thousands:
        word += _DE_UNITS[thousands] + "tausend"
    if hundreds:
        word += _DE_UNITS[hundreds] + "hundert"
    if below_hundred:
        word += _german_below_hundred(below_hundred)
    return word


def _german_below_hundred(n):
    if n == 1:
        return "eins"  # Alone or at the end: "eins", "einhunderteins".
    if n < 10:
        return _DE_UNITS[n]
    if n < 20:
        return _DE_TEENS[n - 10]
    tens, units = divmod(n, 10)
    if units == 0:
        return _DE_TENS[tens]
    return _DE_UNITS[units] + "und" + _DE_TENS[tens]


def default_task_splits(seed=0, num_train=8000, num_valid=1000, num_test=1000):
    """Disjoint train/valid/test splits of the numbers 0..9999.

    Numbers are shuffled with ``seed`` and dealt out, so no valid or test
    number is seen in training. 0 always goes to training: "zero"/"null"
    occur in no other number, so a model could not translate it otherwise.

    Args:
        seed: int. Seed of the shuffle. Defaults to 0.
        num_train: int. Training pairs. Defaults to 8000.
        num_valid: int. Validation pairs. Defaults to 1000.
        num_test: int. Test pairs. Defaults to 1000.

    Returns:
        A dict ``{"train": (english, german), "valid": ..., "test": ...}`` of
        lists of str.

    Example:

    ```python
    splits = default_task_splits(seed=0)
    src, tgt = splits["train"]  # "twenty-one", "einundzwanzig", ...
    ```
    """
    # At least one training pair: 0 ("zero") always goes to training.
    check_int("num_train", num_train, minimum=1)
    check_int("num_valid", num_valid, minimum=0)
    check_int("num_test", num_test, minimum=0)
    sizes = {"train": num_train, "valid": num_valid, "test": num_test}
    total = num_train + num_valid + num_test
    if total > MAX_NUMBER + 1:
        raise ValueError(
            f"num_train + num_valid + num_test = {total} exceeds the "
            f"{MAX_NUMBER + 1} numbers 0..{MAX_NUMBER}."
        )
    rng = np.random.default_rng(seed)
    numbers = [0] + [int(n) for n in rng.permutation(np.arange(1, MAX_NUMBER + 1))]
    splits = {}
    start = 0
    for name in SPLITS:
        chosen = numbers[start : start + sizes[name]]
        start += sizes[name]
        splits[name] = (
            [number_to_english(n) for n in chosen],
            [number_to_german(n) for n in chosen],
        )
    return splits


def write_default_task(directory, seed=0, **split_sizes):
    """Write the default task as ``{split}.en`` / ``{split}.de`` text files.

    Args:
        directory: str. Created if missing.
        seed: int. Passed to `default_task_splits`. Defaults to 0.
        **split_sizes: ``num_train``, ``num_valid``, ``num_test`` for
            `default_task_splits`.

    Returns:
        A dict ``{"train": (en_path, de_path), "valid": ..., "test": ...}``.

    Example:

    ```python
    paths = write_default_task("runs/numbers")
    src_path, tgt_path = paths["train"]
    ```
    """
    splits = default_task_splits(seed=seed, **split_sizes)
    paths = {}
    for name, (english, german) in splits.items():
        en_path = write_lines(os.path.join(directory, f"{name}.en"), english)
        de_path = write_lines(os.path.join(directory, f"{name}.de"), german)
        paths[name] = (en_path, de_path)
    return paths
