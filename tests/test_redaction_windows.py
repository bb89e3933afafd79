"""The redaction planner's window family (docs/math.md §16, "Redaction"): leakage is non-increasing as the withheld
window grows, on either side and in size, for stationary and non-stationary starts and for sets Θ — checked on a
brute-force enumeration written here from the definition (every sequence, every window), not on the code — and
the planner's cheap parts (O(K²) tops for cliques and stars, the candidate-pair lower bound) against it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior
from puffer_core.engine.redaction import chart_sizes, redaction_plan
from puffer_core.engine.redaction_terms import WindowTerms, pair_shape
from puffer_core.secrets import Secrets
from puffer_core.work import WorkCounter
from tests.support.brute import random_chain, random_distribution, secret_pairs


def _window_leak(priors, node, first, last, pairs):
    """max over θ, protected ordered pairs (x, x') with mass at ``node`` and released values v of
    log P(v | x) / P(v | x') (+inf over a zero), the entries first..last (0-based, inclusive) withheld and every
    other entry released: plain enumeration of every sequence."""
    worst = 0.0
    for transition, initial, length in priors:
        if node >= length:
            continue
        k = len(transition)
        joint: dict[tuple[int, tuple[int, ...]], float] = {}
        mass = [0.0] * k
        for seq in itertools.product(range(k), repeat=length):
            p = initial[seq[0]]
            for a, b in zip(seq, seq[1:]):
                p *= transition[a][b]
            if p == 0.0:
                continue
            released = tuple(seq[s] for s in range(length) if s < first or s > last)
            joint[(seq[node], released)] = joint.get((seq[node], released), 0.0) + p
            mass[seq[node]] += p
        for x, xp in pairs:
            if mass[x] <= 0 or mass[xp] <= 0:
                continue
            for (value, released), p in joint.items():
                if value != x:
                    continue
                q = joint.get((xp, released), 0.0)
                worst = max(worst, math.inf if q <= 0 else math.log((p / mass[x]) / (q / mass[xp])))
    return worst


def _draw(seed, k_max=3, t_cap=6):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, k_max + 1))
    cap = {2: t_cap + 1, 3: t_cap, 4: 5, 5: 4}[k]
    zeros = bool(rng.random() < 0.35)
    priors = []
    for _ in range(1 + int(rng.random() < 0.35)):  # Θ of one or two priors, perhaps of different lengths
        while True:
            try:
                initial = None if rng.random() < 0.5 else random_distribution(rng, k, zeros)
                priors.append(MarkovChainPrior(random_chain(rng, k, zeros), initial, int(rng.integers(2, cap + 1))))
                break
            except ValueError:
                continue
    kind = ["all", "sensitive", "groups", "list"][int(rng.integers(4))]
    if kind == "sensitive":
        states = tuple(int(s) for s in rng.choice(k, int(rng.integers(1, k)), replace=False))
        secrets, plain = Secrets(pairs="sensitive", states=states), secret_pairs(k, "sensitive", states=states)
    elif kind == "groups":
        order = [int(s) for s in rng.permutation(k)]
        groups = (tuple(order[:2]),) if k < 4 else (tuple(order[:2]), tuple(order[2:]))
        secrets, plain = Secrets(pairs="groups", groups=groups), secret_pairs(k, "groups", groups=groups)
    elif kind == "list":
        x, y = (int(s) for s in rng.choice(k, 2, replace=False))
        secrets = Secrets(pairs="list", listed=((x, y),), ordered=bool(rng.random() < 0.5))
        plain = secret_pairs(k, "list", listed=((x, y),), ordered=secrets.ordered)
    else:
        secrets, plain = Secrets(), secret_pairs(k, "all")
    t_max = max(p.length for p in priors)
    node = int(rng.integers(t_max))
    plain_priors = [(p.transition.tolist(), list(p.initial), p.length) for p in priors]
    return priors, plain_priors, secrets, plain, node, t_max, rng


@settings(max_examples=70, deadline=None)
@given(st.integers(0, 10**9))
def test_leakage_never_grows_with_the_window(seed):
    """Every window [i, j] ∋ t: leak([i − 1, j]) ≤ leak([i, j]) ≥ leak([i, j + 1]), and the smallest leak of a size is
    non-increasing in the size — by enumeration; then the planner's chart equals those smallest leaks (no running
    minimum taken on either side) and its window is the first size within ε, with the leak of that very window."""
    priors, plain_priors, secrets, plain, node, t_max, rng = _draw(seed)
    leak = {(i, j): _window_leak(plain_priors, node, i, j, plain) for i in range(node + 1) for j in range(node, t_max)}
    for (i, j), value in leak.items():
        if i > 0:
            assert leak[(i - 1, j)] <= value + 1e-12
        if j + 1 < t_max:
            assert leak[(i, j + 1)] <= value + 1e-12
    smallest = [min(v for (i, j), v in leak.items() if j - i + 1 == size) for size in range(1, t_max + 1)]
    assert all(b <= a + 1e-12 for a, b in zip(smallest, smallest[1:]))
    theta = priors if len(priors) > 1 else priors[0]
    chart = redaction_plan(theta, node, 1.0, secrets, max_size=t_max)
    got = np.asarray(chart.leakages, dtype=float)
    want = np.asarray(smallest)
    assert np.array_equal(np.isinf(got), np.isinf(want)), (got, want)
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=0, atol=1e-12)
    eps = float(rng.choice([0.05, 0.3, 1.0, 3.0]))
    plan = redaction_plan(theta, node, eps, secrets)
    first = next((size for size, v in enumerate(smallest, start=1) if v <= eps), None)
    assert plan.feasible == (first is not None)
    assert plan.size == (first if first is not None else t_max)
    assert plan.leakage == pytest.approx(leak[(node - plan.before, node + plan.after)], abs=1e-12)
    assert np.all(want[: plan.size][~plan.exact] > eps)  # sizes ruled out by bounds do leak more than ε
    stated = sorted({int(b) for b in rng.integers(1, t_max + 1, 3)})
    chart = redaction_plan(theta, node, eps, secrets, sizes=stated)
    assert chart.sizes.tolist() == sorted(set(stated) | {plan.size}) and chart.exact.all()
    assert (chart.before, chart.after, chart.leakage) == (plan.before, plan.after, plan.leakage)
    picked = want[chart.sizes - 1]
    assert np.array_equal(np.isinf(chart.leakages), np.isinf(picked))
    np.testing.assert_allclose(chart.leakages[np.isfinite(picked)], picked[np.isfinite(picked)], rtol=0, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10**9))
def test_tops_and_the_candidate_bound_against_enumeration(seed):
    """For one prior (K ≤ 5): top(d) on each side equals the leak of the window that releases only that side's
    entries at distance ≥ d (O(K²) for cliques and stars), and the candidate-pair lower bound of every two-sided
    window is at most its enumerated leak (and equal when it says exact)."""
    priors, plain_priors, secrets, plain, node, t_max, _ = _draw(seed, k_max=5)
    prior, plain_prior = priors[0], plain_priors[:1]
    t_len = prior.length
    node = min(node, t_len - 1)
    terms = WindowTerms(prior, node + 1, secrets.pair_matrix(prior.n_states).reshape(-1), WorkCounter())
    for d in range(1, node + 1):  # release only entries ≤ node − d
        assert terms.top(d, True) == pytest.approx(_window_leak(plain_prior, node, node - d + 1, t_len - 1, plain),
                                                   abs=1e-12)
    for d in range(1, t_len - node):  # release only entries ≥ node + d
        assert terms.top(d, False) == pytest.approx(_window_leak(plain_prior, node, 0, node + d - 1, plain), abs=1e-12)
    for dl in range(1, node + 1):
        for dr in range(1, t_len - node):
            want = _window_leak(plain_prior, node, node - dl + 1, node + dr - 1, plain)
            bound, exact = terms.lower(dl, dr)
            assert bound <= want + 1e-12 or (math.isinf(bound) and math.isinf(want))
            if exact:
                assert bound == pytest.approx(want, abs=1e-12)
            assert terms.leak(dl, dr) == pytest.approx(want, abs=1e-12)


def test_pair_shapes_are_recognised_only_when_exact():
    def matrix(secrets, k, mass=None):
        out = secrets.pair_matrix(k) & np.outer(mass, mass) if mass is not None else secrets.pair_matrix(k)
        np.fill_diagonal(out, False)
        return out

    kind, parts = pair_shape(matrix(Secrets(), 4))
    assert kind == "cliques" and [g.tolist() for g in parts] == [[0, 1, 2, 3]]
    kind, parts = pair_shape(matrix(Secrets(pairs="groups", groups=((0, 2), (1, 3, 4))), 6))
    assert kind == "cliques" and sorted(g.tolist() for g in parts) == [[0, 2], [1, 3, 4]]
    kind, parts = pair_shape(matrix(Secrets(pairs="sensitive", states=(1, 3)), 5))
    assert kind == "star" and parts[0].tolist() == [False, True, False, True, False] and parts[1].all()
    kind, parts = pair_shape(matrix(Secrets(pairs="sensitive", states=(1,)), 4, np.array([1, 1, 0, 1], bool)))
    assert kind == "star" and parts[1].tolist() == [True, True, False, True]
    assert pair_shape(matrix(Secrets(pairs="list", listed=((0, 1),), ordered=True), 3)) is None
    kind, parts = pair_shape(matrix(Secrets(pairs="groups", groups=((0, 1), (1, 2))), 3))  # a star about 1
    assert kind == "star" and parts[0].tolist() == [False, True, False]
    assert pair_shape(matrix(Secrets(pairs="groups", groups=((0, 1, 2), (2, 3))), 4)) is None  # neither shape
    assert pair_shape(np.zeros((3, 3), dtype=bool)) is None


def test_stated_chart_sizes_and_their_errors():
    assert chart_sizes(400) == tuple(sorted(set(chart_sizes(400))))
    assert chart_sizes(400)[:12] == tuple(range(1, 13)) and chart_sizes(400)[-1] == 120
    assert chart_sizes(7) == tuple(range(1, 8)) and chart_sizes(400, limit=400)[-1] == 400
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 30)
    with pytest.raises(ValueError, match="not both"):
        redaction_plan(prior, 10, 1.0, max_size=5, sizes=(1, 2))
    with pytest.raises(ValueError, match="sizes is empty"):
        redaction_plan(prior, 10, 1.0, sizes=())
    with pytest.raises(ValueError, match="each window size"):
        redaction_plan(prior, 10, 1.0, sizes=(0, 3))
    with pytest.raises(ValueError, match="each window size"):
        redaction_plan(prior, 10, 1.0, sizes=(31,))
    with pytest.raises(TypeError, match="list of window sizes"):
        redaction_plan(prior, 10, 1.0, sizes="12")


@pytest.mark.parametrize("seed", range(8))
def test_the_planners_bounds_never_change_its_answer_on_larger_chains(seed):
    """K = 30–60, T = 80 (too large to enumerate): the planner, which passes windows over by bounds and candidate
    pairs, finds the first size whose exact leakage — every size evaluated pair by pair — is within ε, and the
    same leakage; for every pair, one or two sensitive states, and two groups."""
    rng = np.random.default_rng(4200 + seed)
    k = int(rng.integers(30, 61))
    stay = float(rng.choice([0.0, 0.6, 0.9]))
    m = rng.dirichlet(np.full(k, float(rng.choice([0.2, 1.0]))), size=k)
    if seed % 3 == 2:  # near-periodic: a cyclic shift most of the time
        m = 0.9 * np.roll(np.eye(k), 1, axis=1) + 0.1 * m
    transition = stay * np.eye(k) + (1 - stay) * m
    prior = MarkovChainPrior(transition / transition.sum(axis=1, keepdims=True), None, 80)
    node = int(rng.integers(80))
    half = tuple(int(s) for s in rng.permutation(k))
    for secrets in (Secrets(), Secrets(pairs="sensitive", states=half[:1 + seed % 2]),
                    Secrets(pairs="groups", groups=(half[: k // 2], half[k // 2:]))):
        eps = float(rng.choice([0.3, 1.0, 2.0]))
        plan = redaction_plan(prior, node, eps, secrets)
        chart = redaction_plan(prior, node, eps, secrets, max_size=80)
        first = int(np.argmax(chart.leakages <= eps)) + 1
        assert plan.size == first
        assert plan.leakage == pytest.approx(chart.leakages[first - 1], abs=1e-12)
