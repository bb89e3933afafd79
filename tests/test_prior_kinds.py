"""The prior-kind registry: every record builds, describes, reads back and writes its parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from puffer_core.priors.kinds import KIND_CODEC, MATRIX_PRESETS, PRIOR_KINDS, kind_of, normalise_rows, prior_kind
from puffer_core.priors.models import GaussianProcessPrior, MarkovChainPrior
from puffer_core.validation import row_problems


@pytest.mark.parametrize("name", list(PRIOR_KINDS))
def test_every_kind_builds_its_defaults_and_reads_them_back(name: str) -> None:
    kind = PRIOR_KINDS[name]
    prior = kind.prior(kind.defaults)
    assert kind.problems(kind.defaults) == []
    assert isinstance(prior, (MarkovChainPrior, GaussianProcessPrior, list))
    found, params = kind_of(prior)
    assert found is kind  # the registry's first match is the kind itself (binary before matrix)
    rebuilt = kind.prior(params)
    first, again = (prior[0], rebuilt[0]) if isinstance(prior, list) else (prior, rebuilt)
    if isinstance(first, MarkovChainPrior):
        np.testing.assert_array_equal(first.transition, again.transition)
        assert first.length == again.length
    else:
        assert first == again
    assert kind.description(kind.defaults) and kind.short_label(kind.defaults)


@pytest.mark.parametrize("name", list(PRIOR_KINDS))
def test_every_shared_parameter_reads_back_what_it_writes(name: str) -> None:
    for parameter in PRIOR_KINDS[name].parameters:
        if parameter.url is None or parameter.default is None:
            continue
        text = parameter.codec.encode(parameter.default)
        assert parameter.codec.parse(text) == parameter.default, parameter.key


def test_descriptions_by_hand() -> None:
    binary = PRIOR_KINDS["binary"].description({"p": 0.9, "q": 0.5, "length": 7})
    assert binary == "binary chain p = 0.9, q = 0.5, T = 7"
    theta = PRIOR_KINDS["theta"].description({"theta": ((0.8, 0.8), (0.9, 0.7)), "length": 10})
    assert theta == "Θ of 2 binary chains (p, q) ∈ {(0.8, 0.8), (0.9, 0.7)}, T = 10"
    assert PRIOR_KINDS["gaussian"].short_label({"length_scale": 2.5}) == "ℓ = 2.5"


def test_link_codecs_refuse_what_a_widget_cannot_show() -> None:
    codecs = {p.key: p.codec for kind in PRIOR_KINDS.values() for p in kind.parameters if p.codec}
    for key, text, reason in [
        ("p", "7", "between 0 and 1"),
        ("length", "abc", "not a number"),
        ("length", "2.5", "a whole number"),
        ("length", "1", "between 2 and"),
        ("length_scale", "inf", "not a finite number"),
        ("matrix", "0.5,0.5;0.5", "square matrix"),
        ("labels", "a|a", "distinct"),
        ("theta", "0.5", "pairs p,q"),
        ("kernel", "matern", "one of"),
    ]:
        with pytest.raises(ValueError, match=reason):
            codecs[key].parse(text)
    assert KIND_CODEC.parse("gp") == "gaussian"
    with pytest.raises(ValueError, match="unknown kind of prior"):
        prior_kind("bogus")


def test_the_editor_and_the_prior_share_one_row_check() -> None:
    rows = [[0.5, 0.6], [float("nan"), 1.0], [-0.5, 1.5]]
    problems = row_problems(rows, ["a", "b", "c"])
    assert problems == [
        "row 'a' sums to 1.1; rows must sum to 1",
        "row 'b' has cells that are empty or not a finite number in column 'a'",
        "row 'c' has negative entries in column 'a'; probabilities cannot be negative",
    ]
    with pytest.raises(ValueError, match="row 1 sums to 1.1; rows must sum to 1"):
        MarkovChainPrior([[0.5, 0.6], [0.5, 0.5]])
    matrix = PRIOR_KINDS["matrix"]
    assert matrix.problems({"matrix": rows[:1] + [[0.2, 0.8]], "labels": ("a", "b")}) == problems[:1]
    with pytest.raises(ValueError, match="sums to 1.1"):
        matrix.prior({"matrix": ((0.5, 0.6), (0.2, 0.8))})
    assert PRIOR_KINDS["theta"].problems({"theta": ()}) == ["the set Θ is empty; add at least one prior (a row p, q)"]


def test_normalise_rows_and_presets_give_transition_matrices() -> None:
    fixed, skipped = normalise_rows([[0.5, 0.2, 0.1], [0.0, 0.0, 0.0], [None, 2.0, 2.0]])
    assert skipped == [2]
    assert fixed[0] == pytest.approx((5 / 8, 2 / 8, 1 / 8)) and math.fsum(fixed[0]) == 1.0
    assert fixed[2] == (0.0, 0.5, 0.5)
    for name, preset in MATRIX_PRESETS.items():
        for k in (2, 5):
            matrix = preset(k, 0.7 if name != "Random" else 3)
            assert row_problems(matrix) == [], name
            assert len(matrix) == k
    assert MATRIX_PRESETS["Sticky"](3, 0.7)[0] == pytest.approx((0.7, 0.15, 0.15))
    assert MATRIX_PRESETS["Cyclic"](3, 0.7)[2] == pytest.approx((0.3, 0.0, 0.7))
    assert MATRIX_PRESETS["Random"](4, 1) == MATRIX_PRESETS["Random"](4, 1)
