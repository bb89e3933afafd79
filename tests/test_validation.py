"""The shared boundary checks: one message style for every module."""

from __future__ import annotations

import math

import numpy as np
import pytest

from puffer_core.validation import (
    check_choice,
    check_distribution,
    check_eps,
    check_number,
    check_positive,
    check_probability,
    check_rng,
    check_whole,
    is_number,
    is_whole,
)


def test_whole_numbers_refuse_bools_floats_and_out_of_range():
    assert is_whole(3) and is_whole(np.int64(3)) and not is_whole(True) and not is_whole(3.0)
    assert check_whole("k", np.int32(4)) == 4 and type(check_whole("k", np.int32(4))) is int
    assert check_whole("k", 0, minimum=0) == 0
    for bad in (True, 2.0, "3", None, 0):
        with pytest.raises(ValueError, match="k must be a whole number ≥ 1"):
            check_whole("k", bad)
    with pytest.raises(ValueError, match=r"k must be between 1 and 5 \(a whole number\); got 6"):
        check_whole("k", 6, maximum=5)


def test_numbers_probabilities_and_eps():
    assert is_number(1) and is_number(np.float32(0.5)) and not is_number(False) and not is_number("1")
    assert check_number("x", np.float64(2.5)) == 2.5
    for bad, message in ((math.inf, "finite"), (math.nan, "finite"), ("1", "a number"), (True, "a number")):
        with pytest.raises(ValueError, match=message):
            check_number("x", bad)
    assert check_eps("eps", 2) == 2.0
    with pytest.raises(ValueError, match="eps must be positive"):
        check_eps("eps", 0.0)
    assert check_eps("eps", 0.0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match="scale must be positive"):
        check_positive("scale", -1)
    assert check_probability("p", 0) == 0.0 and check_probability("p", 1) == 1.0
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        check_probability("p", 1, open_interval=True)
    with pytest.raises(ValueError, match="between 0 and 1"):
        check_probability("p", 1.5)


def test_choices_distributions_and_rngs():
    assert check_choice("query", "topk", ("topk", "histogram")) == "topk"
    with pytest.raises(ValueError, match="query must be one of topk, histogram; got 'Topk'"):
        check_choice("query", "Topk", ("topk", "histogram"))
    np.testing.assert_array_equal(check_distribution([0.25, 0.75], "prior"), [0.25, 0.75])
    for bad, message in (([0.5, 0.6], "prior sums to 1.1"), ([1.5, -0.5], "negative"), ([np.nan, 1], "finite")):
        with pytest.raises(ValueError, match=message):
            check_distribution(bad, "prior")
    rng = np.random.default_rng(0)
    assert check_rng(rng) is rng
    with pytest.raises(ValueError, match="Generator"):
        check_rng(42)
