"""`keras_transformer.utils.validation`: one wording for argument checks."""

import math

import numpy as np
import pytest

from keras_transformer.utils.validation import check_choice
from keras_transformer.utils.validation import check_int
from keras_transformer.utils.validation import check_number
from keras_transformer.utils.validation import check_rate

pytestmark = pytest.mark.backend_independent


def test_check_int():
    assert check_int("n", 3) == 3
    assert check_int("n", np.int64(3)) == 3
    assert check_int("n", 0, minimum=0) == 0
    assert check_int("n", None, allow_none=True) is None
    for bad in (0, -1, 2.0, True, "3", None):
        with pytest.raises(ValueError, match=r"n must be a positive int\. Received: n="):
            check_int("n", bad)
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 4\]\. Received: k=5"):
        check_int("k", 5, maximum=4)
    with pytest.raises(ValueError, match=r"non-negative int or None"):
        check_int("seed", -1, minimum=0, allow_none=True)
    with pytest.raises(ValueError, match=r"an int >= 2"):
        check_int("max_length", 1, minimum=2)


def test_check_number_and_rate():
    assert check_number("alpha", 0.6, minimum=0) == 0.6
    assert check_rate("dropout_rate", 0.0) == 0.0
    for bad in (1.0, -0.1, math.nan, "0.1", True):
        with pytest.raises(ValueError, match=r"dropout_rate must be a number in \[0, 1\)"):
            check_rate("dropout_rate", bad)
    with pytest.raises(ValueError, match=r"alpha must be a number >= 0\. Received: alpha=-1"):
        check_number("alpha", -1, minimum=0)
    with pytest.raises(ValueError, match=r"x must be a number < 1\. Received: x=1"):
        check_number("x", 1, maximum=1, include_maximum=False)
    with pytest.raises(ValueError, match="finite"):
        check_number("x", math.inf)


def test_check_choice():
    assert check_choice("bucketing", "packed", ("separate", "packed")) == "packed"
    with pytest.raises(ValueError, match=r"bucketing must be one of \('separate', 'packed'\)"):
        check_choice("bucketing", "pack", ("separate", "packed"))
