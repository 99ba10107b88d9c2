"""`DecodeOptions`: one validated set of decode settings (no Keras needed)."""

import pytest

from keras_transformer.decoding.options import DecodeOptions

pytestmark = pytest.mark.backend_independent


def test_defaults_are_the_papers():
    options = DecodeOptions()
    assert (options.beam_size, options.alpha, options.max_extra_length) == (4, 0.6, 50)
    assert options.search == "beam"
    assert options.replace(beam_size=1).search == "greedy"
    assert options.replace(beam_size=1, sampling=True).search == "sample"


@pytest.mark.parametrize(
    "changes, name",
    [
        ({"beam_size": 0}, "beam_size"),
        ({"beam_size": 2.0}, "beam_size"),
        ({"beam_size": True}, "beam_size"),
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": float("nan")}, "alpha"),
        ({"max_extra_length": 0}, "max_extra_length"),
        ({"min_length": -1}, "min_length"),
        ({"num_return": 0}, "num_return"),
        ({"max_source_length": 1}, "max_source_length"),
        ({"beam_size": 1, "sampling": True, "temperature": 0}, "temperature"),
        ({"beam_size": 1, "sampling": True, "temperature": -1.0}, "temperature"),
        ({"beam_size": 1, "sampling": True, "top_k": 0}, "top_k"),
        ({"beam_size": 1, "sampling": True, "top_p": 0.0}, "top_p"),
        ({"beam_size": 1, "sampling": True, "top_p": 1.5}, "top_p"),
        ({"beam_size": 1, "sampling": True, "seed": -3}, "seed"),
        ({"sampling": "yes"}, "sampling"),
    ],
)
def test_bad_values_name_the_argument(changes, name):
    with pytest.raises(ValueError, match=name):
        DecodeOptions(**changes)


def test_num_return_beyond_the_beam_is_refused():
    with pytest.raises(ValueError, match="num_return cannot exceed beam_size"):
        DecodeOptions(beam_size=2, num_return=3)
    # Sampling: k independent samples, no beam to exceed.
    assert DecodeOptions(beam_size=1, sampling=True, num_return=3).num_return == 3


def test_sampling_and_beam_options_do_not_mix():
    with pytest.raises(ValueError, match="beam_size=1 with sampling=True"):
        DecodeOptions(beam_size=4, sampling=True)
    with pytest.raises(ValueError, match="top_p=0.9 only apply with sampling=True"):
        DecodeOptions(top_p=0.9)
    with pytest.raises(ValueError, match="seed=1"):
        DecodeOptions(beam_size=1, seed=1)


def test_replace_and_from_dict_validate_and_refuse_unknown_keys():
    options = DecodeOptions()
    assert options.replace(alpha=1.0).alpha == 1.0
    assert options.alpha == 0.6  # frozen: replace makes a copy
    with pytest.raises(ValueError, match="beam_size"):
        options.replace(beam_size=-1)
    with pytest.raises(ValueError, match=r"Unknown decode option\(s\) \['beam'\]"):
        options.replace(beam=2)
    with pytest.raises(ValueError, match="lenght_penalty"):
        DecodeOptions.from_dict({"lenght_penalty": 1.0})
    assert DecodeOptions.from_dict(options.to_dict()) == options
