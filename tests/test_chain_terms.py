"""The compiled kernels and the chain's prepared terms against plain numpy (docs/math.md §2.1).

Each reference below is written from the definitions with numpy or plain loops and shares no code
with ``puffer_core.engine.kernels`` or ``puffer_core.engine.chain_terms``:

- ``max_log_ratio``, ``column_log_range``, ``stream_marginals`` against broadcasting and a loop;
- the left and right term tables against max log-ratios of matrix powers (0/0 skipped, x/0 = +inf),
  and past the cutoff against the exact terms (never below, above by at most ``TAIL_TOL``);
- the cutoff found by squaring and binary lifting against the powers taken one by one;
- supports and marginals against stepping the chain; the far-node start t_c ≤ 2D + 1 and its
  addition 2η(t_c) against every later node's η;
- ``far_zone`` and ``start_zone`` (every pruning bound) against the min over every split of the
  max over priors, at every node, for every pair.
"""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core import MarkovChainPrior
from puffer_core.engine.chain_terms import (
    TAIL_TOL,
    ChainProfile,
    ChainTerms,
    lifted_cutoff,
    marginal_profile,
    node_arrays,
    shared_tables,
)
from puffer_core.engine.influence import protected_neighbours
from puffer_core.engine.kernels import NEG, column_log_range, far_zone, max_log_ratio, start_zone, stream_marginals
from tests.support.brute import chain_of_kind

KINDS = ["dense", "sticky", "sparse", "near-periodic", "periodic", "ring", "grid", "fitted", "transient"]


def _logs(values):
    with np.errstate(divide="ignore"):
        return np.log(values)


# --------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("n_x", [1, 3, 4, 5, 9])
def test_max_log_ratio_against_broadcasting(n_x):
    rng = np.random.default_rng(n_x)
    n_r, n_y = 7, 6
    numer = np.log(rng.random((n_x, n_r)))
    den = np.log(rng.random((n_r, n_y)))
    numer[rng.random(numer.shape) < 0.3] = NEG
    den[rng.random(den.shape) < 0.3] = NEG
    numer[0] = NEG  # a row of zeros: nothing qualifies
    use = rng.random(n_r) < 0.8
    out = np.empty((n_x, n_y))
    max_log_ratio(numer, den, use, out)
    a = np.where(numer > NEG, numer, -np.inf)[:, :, None]
    d = np.where(den > NEG, den, -np.inf)[None, :, :]
    qualifies = (a > -np.inf) & use[None, :, None]
    with np.errstate(invalid="ignore"):
        diff = np.where(qualifies, a - d, -np.inf)  # a finite over −inf: +inf
    want = diff.max(axis=1)
    np.testing.assert_array_equal(np.isinf(out), np.isinf(want))
    np.testing.assert_array_equal(np.sign(out[np.isinf(out)]), np.sign(want[np.isinf(want)]))
    np.testing.assert_allclose(out[np.isfinite(want)], want[np.isfinite(want)], rtol=0, atol=1e-12)


def test_column_log_range_against_numpy():
    rng = np.random.default_rng(2)
    for _ in range(20):
        logs = np.log(rng.random((6, 5)))
        logs[rng.random(logs.shape) < 0.2] = NEG
        rows = rng.random(6) < 0.7
        sub = logs[rows]
        worst = 0.0
        for c in range(sub.shape[1]):
            col = sub[:, c]
            real = col[col > NEG]
            if real.size == 0:
                continue
            worst = np.inf if real.size < col.size else max(worst, real.max() - real.min())
        assert column_log_range(logs, rows) == worst


@pytest.mark.parametrize("kind", ["sparse", "transient", "ring"])
def test_stream_marginals_against_stepping_the_chain(kind):
    rng = np.random.default_rng(4)
    k, length = 6, 15
    transition = chain_of_kind(rng, k, kind)
    initial = np.eye(k)[1]
    pi = rng.dirichlet(np.ones(k))  # any positive reference law for η
    kept, support, bad, eta = stream_marginals(transition, initial, length, 1e-300, 4, pi)
    p, s = initial.copy(), initial > 0
    for t in range(length):
        if t < 4:
            np.testing.assert_allclose(kept[t], p, rtol=1e-14, atol=0)
        np.testing.assert_array_equal(support[t], s)
        want = np.max(np.abs(np.log(p) - np.log(pi))) if np.array_equal(s, pi > 0) else np.inf
        assert eta[t] == pytest.approx(want, rel=1e-12, abs=1e-14) if np.isfinite(want) else eta[t] == np.inf
        p, s = p @ transition, (s.astype(float) @ (transition > 0)) > 0
    assert bad == 0


def test_stream_marginals_reports_underflow():
    transition = np.array([[1 - 1e-200, 1e-200, 0.0], [1 - 1e-200, 0.0, 1e-200], [1.0, 0.0, 0.0]])
    _, _, bad, _ = stream_marginals(transition, np.array([1.0, 0.0, 0.0]), 4, 1e-300, 1, np.zeros(0))
    assert bad == 3  # p_3[2] ≈ 1e-400: structurally positive, not representable


# --------------------------------------------------------------------------- term tables


def _power_terms(transition, d, support):
    """right(d) and h_S(d) from P^d with numpy (0/0 skipped, positive/0 = +inf)."""
    power = np.linalg.matrix_power(transition, d)
    logs = _logs(power)
    k = len(transition)
    right = np.full((k, k), -np.inf)
    h = np.full((k, k), -np.inf)
    for x in range(k):
        for y in range(k):
            rows = power[x] > 0
            if rows.any():
                right[x, y] = np.max(np.where(power[y, rows] > 0, logs[x, rows] - _logs(power[y, rows]), np.inf))
            cols = support & (power[:, x] > 0)
            if cols.any():
                h[x, y] = np.max(np.where(power[cols, y] > 0, logs[cols, x] - _logs(power[cols, y]), np.inf))
    return right, h


def _assert_terms(got, want):
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("kind", KINDS)
def test_term_tables_against_matrix_powers(kind):
    rng = np.random.default_rng(len(kind))
    k = 9 if kind == "grid" else 5
    transition = chain_of_kind(rng, k, kind)
    support = rng.random(k) < 0.6
    support[0] = True
    prior = MarkovChainPrior(transition, np.eye(k)[0], length=40)
    terms = ChainTerms(prior, [support], pi=np.full(k, 1.0 / k))
    stored = terms.ensure(39)
    right, h = terms.right_table(39), terms.h_table(39, support)
    for d in range(1, 40):
        want_right, want_h = _power_terms(prior.transition, d, support)
        got_right, got_h = right[d - 1].reshape(k, k), h[d - 1].reshape(k, k)
        if d <= stored:
            _assert_terms(got_right, want_right)
            _assert_terms(got_h, want_h)
        else:  # past the cutoff: the cutoff's row, an upper bound within TAIL_TOL (plus rounding)
            for got, want in ((got_right, want_right), (got_h, want_h)):
                fin = np.isfinite(want)
                assert np.all(got[fin] >= want[fin] - 1e-11)
                assert np.all(got[fin] <= want[fin] + TAIL_TOL + 1e-11)


def _stepwise_cutoff(transition, rows, n):
    power = np.eye(len(transition))
    for d in range(1, n + 1):
        power = power @ transition
        sub = power[rows]
        spread = 0.0
        for c in range(sub.shape[1]):
            col = sub[:, c]
            if np.all(col == 0):
                continue
            spread = np.inf if np.any(col == 0) else max(spread, np.log(col.max()) - np.log(col.min()))
        if 2 * spread <= TAIL_TOL:
            return d
    return None


@pytest.mark.parametrize("kind", KINDS)
def test_the_lifted_cutoff_is_the_first_distance_of_the_powers_taken_one_by_one(kind):
    rng = np.random.default_rng(7)
    k = 9 if kind == "grid" else 5
    transition = chain_of_kind(rng, k, kind)
    rows = np.ones(k, dtype=bool)
    if kind == "transient":
        rows[0] = False  # the rows that can hold mass: the chain leaves state 0 for good
    for n in (3, 40, 300):
        assert lifted_cutoff(transition, rows, n) == _stepwise_cutoff(transition, rows, n)


# --------------------------------------------------------------------------- the prepared chain


@pytest.mark.parametrize("kind", ["dense", "sticky", "sparse", "ring", "grid", "fitted", "transient"])
@pytest.mark.parametrize("start", ["one state", "random"])
def test_supports_marginals_and_far_nodes_against_stepping_the_chain(kind, start):
    rng = np.random.default_rng(11)
    k = 9 if kind == "grid" else 5
    transition = chain_of_kind(rng, k, kind)
    initial = np.eye(k)[0] if start == "one state" else rng.dirichlet(np.ones(k))
    length = 160
    prior = MarkovChainPrior(transition, initial, length=length)
    profile = ChainProfile(prior, length - 1)
    profile.build()
    # supports and marginals, one step at a time
    p, s = prior.initial.copy(), prior.initial > 0
    margs, supports = [], []
    for _ in range(length):
        margs.append(p)
        supports.append(s)
        p, s = p @ prior.transition, (s.astype(float) @ (prior.transition > 0)) > 0
    ids = profile.support_ids(length)
    for t in range(length):
        np.testing.assert_array_equal(profile.unique_supports[ids[t]], supports[t])
    marg, support, _ = marginal_profile(prior, profile.pi, store=length)
    np.testing.assert_allclose(marg, np.array(margs), rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(support, np.array(supports))
    # the far nodes: t_c within 2D + 1 of the start once there is a cutoff, and 2η(t_c) bounds every later η
    pi = profile.pi
    if profile.t_c <= length:
        d = profile.terms.cutoff
        assert d is not None and profile.t_c <= max(2 * d + 1, profile._first_pi_support() + d)
        assert profile.t_c_bound >= profile.t_c
        for t in range(profile.t_c, length + 1):
            q = margs[t - 1]
            assert np.array_equal(q > 0, pi > 0)
            eta = np.max(np.abs(np.log(q[pi > 0]) - np.log(pi[pi > 0])))
            assert 2 * eta <= profile.far_addition


# --------------------------------------------------------------------------- the min over splits


def _node_value(t, b, p, t_max, left, right, present):
    """min over splits (dL + dR = b + 1) of max over the priors present of their left and right terms."""
    priors = [i for i in range(len(present)) if present[i]]
    if not priors:
        return -np.inf
    best = np.inf
    for dl in range(max(1, b + t - t_max), min(t, b) + 1):
        dr = b + 1 - dl
        best = min(best, max(left(i, dl) + right(i, dr) for i in priors))
    return best


def _theta(rng, k, kinds, lengths, starts):
    priors = []
    for kind, length, start in zip(kinds, lengths, starts):
        initial = None if start is None else rng.dirichlet(np.ones(k)) if start == "random" else np.eye(k)[start]
        priors.append(MarkovChainPrior(chain_of_kind(rng, k, kind), initial, length=length))
    return priors


def _tables(priors):
    t_max = max(p.length for p in priors)
    profiles = [ChainProfile(p, t_max - 1) for p in priors]
    for prof in profiles:
        prof.build()
    return profiles, shared_tables(profiles)


def _secrets_masks(rng, seed, t_max, k):
    """Seeds 0–3: every node and pair; seeds 4–7: a random set of protected nodes and of secret pairs
    (docs/math.md §16), drawn here independently of puffer_core.secrets."""
    if seed < 4:
        return np.ones(t_max, dtype=bool), np.ones(k * k, dtype=bool)
    prot = rng.random(t_max) < [0.1, 0.3, 0.5, 0.05][seed % 4]
    prot[rng.integers(t_max)] = True
    use = rng.random(k * k) < 0.4
    use[rng.integers(k * k)] = True
    return prot, use


@pytest.mark.parametrize("seed", range(8))
def test_far_zone_against_every_node_pair_and_split(seed):
    """Node-independent terms (stationary priors, plus an addition to the left terms) at every node ≥ t_lo;
    from seed 4 on, protected nodes and secret pairs only (the nearest protected node past each end of
    the evaluated range, docs/math.md §16)."""
    rng = np.random.default_rng(seed)
    k = 4
    kinds = [["dense", "sparse"], ["sparse", "ring"], ["ring", "near-periodic"], ["near-periodic", "sticky"]][seed % 4]
    priors = _theta(rng, k, kinds, [22, 17], [None, None])
    profiles, arr = _tables(priors)
    t_max = 22
    t_lo = 1 + (seed % 4) * 3
    add = rng.random(len(priors)) * 0.1
    members = arr["lengths"] >= t_lo
    prot, use = _secrets_masks(rng, seed, t_max, k)
    valid = arr["valid"] & members[:, None] & use[None, :]
    tab, stride, hpi, D, T, shift = arr["tab"], arr["stride"], arr["hpi"], arr["depth"], arr["lengths"], arr["shift"]
    best = np.zeros(t_max)
    before, after = protected_neighbours(prot)
    far_zone(best, 1, t_max - 1, t_lo, t_max, int(T[members].min()), tab, stride, hpi, D, T, shift, add, valid,
             np.full(k * k, np.inf), prot, before, after, np.zeros(5))

    def row(i, d, j):
        return tab[i, (min(d, D[i]) - 1) * stride[i] + j]

    for b in range(1, t_max):
        want = 0.0
        for t in range(t_lo, t_max + 1):
            if not prot[t - 1]:
                continue
            for p in range(k * k):
                present = [valid[i, p] and t <= T[i] for i in range(len(priors))]
                value = _node_value(
                    t, b, p, t_max,
                    lambda i, dl, t=t, p=p: row(i, dl, 1 + hpi[i])[p] + shift[i, p] + add[i] if dl <= t - 1 else 0.0,
                    lambda i, dr, t=t, p=p: row(i, dr, 0)[p] if t + dr <= T[i] else 0.0,
                    present,
                )
                want = max(want, value)
        assert best[b - 1] == pytest.approx(want, rel=1e-12, abs=1e-12), (b, best[b - 1], want)


@pytest.mark.parametrize("seed", range(8))
def test_start_zone_against_every_node_pair_and_split(seed):
    """Node-dependent left terms (each node's own marginal and the support of p_{t−d}), every pruning bound;
    from seed 4 on, protected nodes and secret pairs only (docs/math.md §16)."""
    rng = np.random.default_rng(100 + seed)
    k = 4
    kinds = [["sticky", "dense"], ["sparse", "dense"], ["ring", "sticky"], ["transient", "dense"]]
    starts = [[1, "random"], ["random", None], [0, 2], ["random", 0]]
    priors = _theta(rng, k, kinds[seed % 4], [20, 16], starts[seed % 4])
    profiles, arr = _tables(priors)
    t_max = 20
    m = t_max
    nodes = node_arrays(profiles, m, arr["hpi"])
    tab, stride, D, T, shift = arr["tab"], arr["stride"], arr["depth"], arr["lengths"], arr["shift"]
    best = np.zeros(t_max)
    prot, use = _secrets_masks(rng, seed, t_max, k)
    start_zone(best, 1, t_max - 1, m + 1, t_max, k, tab, stride, nodes["sid"], nodes["lm"], D, T, arr["hpi"],
               shift, arr["valid"] & use[None, :], nodes["moving"], nodes["dev"], nodes["delta"], nodes["bounded"],
               prot, use, np.zeros(5))
    lm, sid = nodes["lm"], nodes["sid"]

    def row(i, d, j):
        return tab[i, (min(d, D[i]) - 1) * stride[i] + j]

    for b in range(1, t_max):
        want = 0.0
        for t in range(1, m + 1):
            if not prot[t - 1]:
                continue
            for p in range(k * k):
                x, y = divmod(p, k)
                if x == y or not use[p]:
                    continue
                present = [t <= T[i] and lm[i, t - 1, x] > -1e299 and lm[i, t - 1, y] > -1e299
                           for i in range(len(priors))]

                def left(i, dl, t=t, p=p, x=x, y=y):
                    if dl > t - 1:
                        return 0.0
                    d = min(dl, D[i])
                    return row(i, d, 1 + sid[i, t - d - 1])[p] + lm[i, t - 1, y] - lm[i, t - 1, x]

                value = _node_value(t, b, p, t_max, left,
                                    lambda i, dr, t=t, p=p: row(i, dr, 0)[p] if t + dr <= T[i] else 0.0, present)
                want = max(want, value)
        assert best[b - 1] == pytest.approx(want, rel=1e-12, abs=1e-12), (b, best[b - 1], want)
