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
    merge_row_sums,
    row_problems,
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


# --------------------------------------------------------------------------------------------
# one rule for every number (issue 34) and wrong types as TypeError (issue 28)


def test_a_wrong_type_is_a_type_error_and_a_value_error():
    from puffer_core.validation import InvalidParameter, as_numbers, check_flag

    for call in (lambda: check_number("x", "1"), lambda: check_number("x", None), lambda: check_whole("k", 2.5),
                 lambda: check_whole("k", True), lambda: check_probability("p", "0.5"),
                 lambda: check_choice("law", 3, ("a", "b")), lambda: check_flag("f", "yes"),
                 lambda: check_rng(0), lambda: as_numbers("x", "m"), lambda: as_numbers([[True]], "m"),
                 lambda: check_number("x", 1j), lambda: check_number("x", np.array(2.0))):
        with pytest.raises(InvalidParameter) as caught:
            call()
        assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    for call in (lambda: check_number("x", math.nan), lambda: check_whole("k", 0), lambda: check_positive("s", -1.0),
                 lambda: check_choice("law", "c", ("a", "b")), lambda: check_probability("p", 1.5)):
        with pytest.raises(ValueError) as caught:
            call()
        assert not isinstance(caught.value, TypeError), "a wrong value stays a ValueError"


def test_numbers_beyond_a_double_signed_zero_subnormals_and_numpy_scalars():
    from puffer_core.validation import SMALLEST_NORMAL, as_numbers

    for bad in (10**400, -(10**400), np.longdouble("1e400")):
        with pytest.raises(ValueError, match="too large for a double-precision number"):
            check_number("x", bad)
    with pytest.raises(ValueError, match="an integer of 401 digits"):
        check_positive("x", 10**400)
    with pytest.raises(ValueError, match="between 0 and 1; got an integer of 401 digits"):
        check_probability("p", 10**400)
    with pytest.raises(ValueError, match="too large for a double"):
        check_whole("k", 10**400)
    with pytest.raises(ValueError, match="too large for a double"):
        as_numbers([[10**400, 0.0]], "the matrix")
    assert check_whole("k", 10**300) == 10**300  # beyond int64, within a double: a count like any other
    for zero in (-0.0, np.float64(-0.0), np.float32(-0.0)):
        value = check_number("x", zero)
        assert value == 0.0 and math.copysign(1.0, value) == 1.0
        assert math.copysign(1.0, check_eps("eps", zero, allow_zero=True)) == 1.0
        assert math.copysign(1.0, check_probability("p", zero)) == 1.0
    assert math.copysign(1.0, float(as_numbers([-0.0, 1.0], "v")[0])) == 1.0
    for tiny in (5e-324, 1e-310, np.float64(2e-308)):
        with pytest.raises(ValueError, match="too small: below 2.23e-308"):
            check_positive("scale", tiny)
        assert check_eps("eps", tiny, allow_zero=True) == float(tiny)  # a level that may be 0: never a divisor
    assert check_positive("scale", SMALLEST_NORMAL) == SMALLEST_NORMAL
    assert check_probability("p", 5e-324) == 5e-324  # probabilities are logged, never divided by
    for scalar, value in ((np.float32(0.5), 0.5), (np.float16(2.0), 2.0), (np.int8(3), 3.0), (np.uint64(7), 7.0)):
        got = check_number("x", scalar)
        assert got == value and type(got) is float
    assert check_whole("k", np.uint8(3)) == 3


def test_rows_that_do_not_sum_to_1_are_merged_into_one_message_and_other_problems_kept() -> None:
    rows = [[0.5, 0.4], [0.5, 0.5], [float("nan"), 1.0], [0.7, 0.7]]
    problems = row_problems(rows, ["a", "b", "c", "d"])
    merged = merge_row_sums(problems, "press the button")
    assert len(merged) == 2  # the two sums in one message, the empty cell in its own
    assert merged[0] == (
        "rows 'a' and 'd' do not sum to 1 — 'a' sums to 0.9; 'd' sums to 1.4. Rows must sum to 1: press the button"
    )
    assert merged[1] == problems[1] and "'c'" in merged[1]
    single = row_problems([[0.5, 0.4], [0.5, 0.5]], ["a", "b"])
    assert merge_row_sums(single) == single  # one row: its own message
