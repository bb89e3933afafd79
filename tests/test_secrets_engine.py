"""a(b) for chosen secrets (docs/math.md §16): value pairs and positions, event secrets, the Gaussian process's
protected coordinates, and the redaction planner — against brute-force enumeration and closed forms."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import GaussianProcessPrior, MarkovChainPrior, influence_curve
from puffer_core.engine.redaction import redaction_plan
from puffer_core.secrets import ALL_SECRETS, EventSecrets, Secrets
from tests.support.brute import (
    brute_event_curve,
    brute_influence_all,
    brute_redaction,
    chain_of_kind,
    random_chain,
    random_distribution,
    reference_curve,
    secret_pairs,
)


def _same(got, want, tol=1e-12):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert np.array_equal(np.isinf(got), np.isinf(want)), (got, want)
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=tol)


def _random_secrets(rng, k, t_max):
    """(Secrets, the same pairs as a plain set, the same positions as a plain set) — drawn together."""
    kind = ["all", "sensitive", "groups", "list"][int(rng.integers(4))]
    if kind == "sensitive":
        states = tuple(int(s) for s in rng.choice(k, int(rng.integers(1, k)), replace=False))
        secrets, plain = Secrets(pairs="sensitive", states=states), secret_pairs(k, "sensitive", states=states)
    elif kind == "groups":
        group = tuple(int(s) for s in rng.choice(k, 2, replace=False))
        secrets, plain = Secrets(pairs="groups", groups=(group,)), secret_pairs(k, "groups", groups=(group,))
    elif kind == "list":
        x, y = (int(s) for s in rng.choice(k, 2, replace=False))
        ordered = bool(rng.random() < 0.5)
        secrets = Secrets(pairs="list", listed=((x, y),), ordered=ordered)
        plain = secret_pairs(k, "list", listed=((x, y),), ordered=ordered)
    else:
        secrets, plain = Secrets(), None
    positions = None
    if rng.random() < 0.6:
        positions = {int(p) for p in rng.choice(t_max, int(rng.integers(1, t_max + 1)))}
        secrets = replace(secrets, positions=tuple(sorted(positions)))
    return secrets, plain, positions


def _random_prior(rng, k, length, zeros):
    while True:
        try:
            return MarkovChainPrior(random_chain(rng, k, zeros), None if rng.random() < 0.5 else
                                    random_distribution(rng, k, zeros), length)
        except ValueError:
            continue


@pytest.mark.parametrize("seed", range(60))
def test_chosen_secrets_equal_the_reference_for_small_chains(seed):
    """K ≤ 3, T ≤ 10, Θ of one or two, stationary or not, zeros (∞ patterns): the curve for chosen pairs and
    positions equals the plain reference of docs/math.md §2.1 with its outer max restricted (no pruning)."""
    rng = np.random.default_rng(seed)
    k, zeros = int(rng.integers(2, 4)), bool(seed % 3 == 0)
    priors = [_random_prior(rng, k, int(rng.integers(2, 11)), zeros) for _ in range(1 + seed % 2)]
    t_max = max(p.length for p in priors)
    secrets, plain, positions = _random_secrets(rng, k, t_max)
    if positions is not None and min(positions) >= t_max:
        return
    got = influence_curve(priors if len(priors) > 1 else priors[0], secrets=secrets)
    want = reference_curve([(p.transition, p.initial, p.length) for p in priors], t_max, plain, positions)
    _same(got.a, np.minimum.accumulate(want))
    assert got.secrets == secrets


@pytest.mark.parametrize("seed", range(12))
def test_chosen_secrets_equal_the_definition_by_enumeration(seed):
    """Every H (not only windows), every D_L, by enumerating sequences (tests/support/brute.py), K ≤ 3, T ≤ 6."""
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.integers(2, 4))
    priors = [_random_prior(rng, k, int(rng.integers(2, 7 if k == 2 else 6)), seed % 2 == 0)
              for _ in range(1 + seed % 2)]
    t_max = max(p.length for p in priors)
    secrets, plain, positions = _random_secrets(rng, k, t_max)
    got = influence_curve(priors if len(priors) > 1 else priors[0], secrets=secrets)
    want = brute_influence_all([(p.transition.tolist(), list(p.initial), p.length) for p in priors], plain, positions)
    _same(got.a, want)


def test_every_secret_and_none_are_todays_curve_bit_for_bit():
    rng = np.random.default_rng(7)
    for kind in ("dense", "sticky", "sparse", "ring"):
        prior = MarkovChainPrior(chain_of_kind(rng, 12, kind), rng.dirichlet(np.ones(12)), 90)
        base = influence_curve(prior).a
        for secrets in (ALL_SECRETS, Secrets(), Secrets(positions=tuple(range(90)))):
            assert np.array_equal(influence_curve(prior, secrets=secrets).a, base)


priors_strategy = st.builds(
    lambda seed, k, lengths, moving, zeros: (seed, k, lengths, moving, zeros),
    st.integers(0, 2**31 - 1), st.integers(2, 6), st.lists(st.integers(2, 40), min_size=1, max_size=3),
    st.booleans(), st.booleans(),
)


@settings(max_examples=320, deadline=None)
@given(priors_strategy, st.integers(0, 2**31 - 1))
def test_a_curve_with_fewer_pairs_or_positions_is_never_above_the_full_one(drawn, pick):
    """Property (docs/math.md §16): restricting the outer max can only lower a(b) — 320 random priors, single or
    Θ, stationary or started elsewhere, with zeros; each restriction also never above a larger one."""
    seed, k, lengths, moving, zeros = drawn
    rng = np.random.default_rng(seed)
    priors = []
    for length in lengths:
        kind = ["dense", "sticky", "sparse", "near-periodic", "transient"][int(rng.integers(5))]
        matrix = random_chain(rng, k, True) if zeros else chain_of_kind(rng, k, kind)
        try:
            priors.append(MarkovChainPrior(matrix, random_distribution(rng, k) if moving else None, length))
        except ValueError:
            priors.append(MarkovChainPrior(matrix, np.ones(k) / k, length))
    theta = priors if len(priors) > 1 else priors[0]
    full = influence_curve(theta).a
    draw = np.random.default_rng(pick)
    secrets, _, _ = _random_secrets(draw, k, max(lengths))
    if secrets.positions is not None and min(secrets.positions) >= max(lengths):
        return
    fewer = influence_curve(theta, secrets=secrets).a
    assert np.all(fewer <= full + 1e-9), (fewer, full)
    if secrets.positions is not None:
        wider = influence_curve(theta, secrets=replace(secrets, positions=None)).a
        assert np.all(fewer <= wider + 1e-9)


@pytest.mark.parametrize("seed", range(16))
def test_event_secrets_equal_enumeration(seed):
    """Event secrets against the definition over every H and D_L (K ≤ 3, T ≤ 6, Θ, several windows): a(b) = ∞
    exactly below the window's length where the window can hold A, and the curve says so."""
    rng = np.random.default_rng(500 + seed)
    k = int(rng.integers(2, 4))
    length = int(rng.integers(2, 7 if k == 2 else 6))
    priors = [_random_prior(rng, k, length, seed % 3 == 0) for _ in range(1 + seed % 2)]
    states = tuple(int(s) for s in rng.choice(k, int(rng.integers(1, k)), replace=False))
    windows = []
    for _ in range(1 + seed % 2):
        first = int(rng.integers(length))
        windows.append((first, int(rng.integers(first, length))))
    events = EventSecrets(states, tuple(windows))
    got = influence_curve(priors if len(priors) > 1 else priors[0], secrets=events)
    plain = [(p.transition.tolist(), list(p.initial), p.length) for p in priors]
    want = np.max([brute_event_curve(plain, set(states), a, b) for a, b in events.windows], axis=0)
    _same(got.a, want)
    assert got.secrets == events and "exact" in got.note


def test_event_secrets_cannot_be_met_below_the_window():
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], None, 30)
    curve = influence_curve(prior, secrets=EventSecrets(states=(1,), windows=((10, 16),)))
    assert np.all(np.isinf(curve.a[:6])) and np.all(np.isfinite(curve.a[6:]))
    assert "a(b) = ∞ for b < 7: the high-influence set must hold the whole window" in curve.note


@pytest.mark.parametrize("seed", range(14))
def test_redaction_windows_equal_enumeration(seed):
    """The leakage of every window size about one entry, and the planner's window, against enumerating every
    sequence and every window (T ≤ 12); chosen pairs too."""
    rng = np.random.default_rng(900 + seed)
    k = 2 if seed % 2 == 0 else 3
    length = int(rng.integers(2, 13 if k == 2 else 9))
    priors = [_random_prior(rng, k, length, seed % 4 == 1) for _ in range(1 + (seed % 3 == 0))]
    node = int(rng.integers(length))
    secrets, plain, _ = _random_secrets(rng, k, length)
    secrets = replace(secrets, positions=None)
    eps = float(rng.choice([0.1, 0.5, 2.0]))
    plan = redaction_plan(priors if len(priors) > 1 else priors[0], node, eps, secrets, max_size=length)
    want = brute_redaction([(p.transition.tolist(), list(p.initial), p.length) for p in priors], node, plain)
    _same(plan.leakages, want)
    smallest = next((b + 1 for b, v in enumerate(want) if v <= eps), None)
    assert plan.feasible == (smallest is not None)
    if smallest is not None:
        assert plan.size == smallest and plan.leakage <= eps
        assert plan.before <= node and plan.after <= length - 1 - node
    fast = redaction_plan(priors if len(priors) > 1 else priors[0], node, eps, secrets)  # bounds, then a search
    assert fast.size == (smallest if smallest is not None else length) and fast.leakage <= max(eps, 0.0) + 1e-12
    assert fast.leakage == pytest.approx(want[fast.size - 1], abs=1e-12)
    ruled_out = ~fast.exact
    assert np.all(np.asarray(want)[: fast.size][ruled_out] > eps)


def _closed_form_window(q: float, eps: float) -> tuple[int, float]:
    """The smallest window around an interior entry of the symmetric two-state chain (flip probability q) that
    keeps the leakage ≤ ε, and its leakage (docs/math.md §16): with c = |1 − 2q| and g(d) = log((1 + c^d)/(1 − c^d)),
    a window withholding d_L − 1 entries before and d_R − 1 after leaks g(d_L) + g(d_R); g is convex, so for
    d_L + d_R = s the balanced split is best: 2d entries − 1 need c^d ≤ tanh(ε/4), 2d entries need c^d ≤ y₋, the
    smaller root of c(E−1)y² − (1+c)(1+E)y + (E−1) = 0 (E = e^ε)."""
    c = abs(1 - 2 * q)

    def g(d: int) -> float:
        return math.log((1 + c**d) / (1 - c**d))

    if c == 0:
        return 1, 0.0
    big_e = math.exp(eps)
    d_even = max(1, math.ceil(math.log(math.tanh(eps / 4)) / math.log(c) - 1e-12))
    a, b_, c0 = c * (big_e - 1), -(1 + c) * (1 + big_e), big_e - 1
    y_minus = (-b_ - math.sqrt(b_ * b_ - 4 * a * c0)) / (2 * a)
    d_odd = max(1, math.ceil(math.log(y_minus) / math.log(c) - 1e-12))
    if 2 * d_even - 1 <= 2 * d_odd:
        return 2 * d_even - 1, 2 * g(d_even)
    return 2 * d_odd, g(d_odd) + g(d_odd + 1)


@pytest.mark.parametrize("q", [0.05, 0.2, 0.35, 0.5, 0.65, 0.9])
@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 3.0])
def test_redaction_window_matches_the_closed_form_of_the_symmetric_chain(q, eps):
    prior = MarkovChainPrior([[1 - q, q], [q, 1 - q]], None, 201)
    plan = redaction_plan(prior, 100, eps)
    size, leak = _closed_form_window(q, eps)
    assert plan.size == size and plan.leakage == pytest.approx(leak, rel=1e-9, abs=1e-12)
    if q == 0.5:  # i.i.d.: the entry alone, nothing revealed (a strong stationary time at d = 1)
        assert plan.zero_size == 1 and plan.leakage == 0.0


def test_gaussian_positions_are_coordinates_and_more_of_them_never_lower_the_curve():
    prior = GaussianProcessPrior(15, 2.0)
    centre = influence_curve(prior, secrets=Secrets(positions=(7,))).a
    assert np.array_equal(influence_curve(prior, secrets=Secrets(positions=(7, 7))).a, centre)
    edge = influence_curve(prior, secrets=Secrets(positions=(0, 14))).a
    every = influence_curve(prior, secrets=Secrets(positions=tuple(range(15)))).a
    assert np.array_equal(influence_curve(prior).a, every)  # the default protects every coordinate
    assert np.all(edge <= every) and np.all(centre <= every)
    assert edge[0] < centre[0]  # the first coordinate has one neighbour side only
    with pytest.raises(ValueError, match="intervals of one coordinate"):
        influence_curve(prior, secrets=Secrets(pairs="sensitive", states=(0,)))


def test_positions_beyond_the_sequence_are_refused():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 5)
    with pytest.raises(ValueError, match="lies beyond the sequences' 5 entries"):
        influence_curve(prior, secrets=Secrets(positions=(9,)))
