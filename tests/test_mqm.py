"""MQM's σ_max against a brute force of [S] Algorithm 1 (docs/math.md §5).

The brute force below enumerates every state sequence, builds the joint distribution, and
evaluates every minimal Markov quilt of every node straight from the definitions; it
shares no code with puffer_core.engine.mqm.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from puffer_core.engine.mqm import mqm_noise_scale, mqm_scale
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.secrets import Secrets
from tests.support.brute import converged_from, cutoff_distance, random_chain, random_distribution, secret_pairs


def _joint(transition, initial, length):
    k = len(transition)
    table = {}
    for seq in itertools.product(range(k), repeat=length):
        p = initial[seq[0]]
        for u, v in zip(seq, seq[1:]):
            p *= transition[u][v]
        table[seq] = p
    return table


def _max_influence(table, t, quilt, k, pairs=None):
    """max over pairs (x, x') with mass at t (in ``pairs``, a set, when given) and over x_Q of
    log Pr(x_Q | x) / Pr(x_Q | x')."""
    mass = [0.0] * k
    cond = [dict() for _ in range(k)]
    for seq, p in table.items():
        mass[seq[t]] += p
        key = tuple(seq[i] for i in quilt)
        cond[seq[t]][key] = cond[seq[t]].get(key, 0.0) + p
    worst = -math.inf
    has_pair = False
    for x in range(k):
        for xp in range(k):
            if x == xp or mass[x] <= 0 or mass[xp] <= 0 or (pairs is not None and (x, xp) not in pairs):
                continue
            has_pair = True
            for key in set(cond[x]) | set(cond[xp]):
                num = cond[x].get(key, 0.0) / mass[x]
                den = cond[xp].get(key, 0.0) / mass[xp]
                if num <= 0:
                    continue
                worst = max(worst, math.inf if den <= 0 else math.log(num / den))
    return worst if has_pair else None


def _brute_sigma(priors, eps, pairs=None, positions=None):
    """σ_max = max_θ max_t min_Q card(X_N) / (ε − e_θ(X_Q | X_t)), quilts of [S] Lemma II.5; with ``pairs`` and
    ``positions`` (0-based) the max over t and the max-influence's pairs restricted (docs/math.md §16)."""
    sigma = 0.0
    for transition, initial, length in priors:
        k = len(transition)
        table = _joint(transition, initial, length)
        T = length
        for t in range(1, T + 1):  # 1-based node
            if positions is not None and t - 1 not in positions:
                continue
            if _max_influence(table, t - 1, (), k, pairs) is None:
                continue  # no secret pair at this node
            quilts = [((), T)]  # empty quilt, X_N is the whole chain
            for a in range(1, t):
                quilts.append(((t - a - 1,), T - (t - a)))  # X_N = X_{t-a+1..T}
                for b in range(1, T - t + 1):
                    quilts.append(((t - a - 1, t + b - 1), (t + b - 1) - (t - a)))
            for b in range(1, T - t + 1):
                quilts.append(((t + b - 1,), t + b - 1))  # X_N = X_{1..t+b-1}
            best = math.inf
            for quilt, card in quilts:
                e = 0.0 if not quilt else _max_influence(table, t - 1, quilt, k, pairs)
                if e < eps:
                    best = min(best, card / (eps - e))
            sigma = max(sigma, best)
    return sigma


def _prior(transition, initial, length):
    return MarkovChainPrior(transition, initial, length)


CASES = [(seed, k, T) for seed, (k, T) in enumerate([(2, 1), (2, 2), (2, 3), (2, 5), (2, 6), (3, 3), (3, 4), (3, 5)])]


@pytest.mark.parametrize("seed,k,length", CASES)
@pytest.mark.parametrize("stationary", [True, False])
def test_matches_brute_force_single_prior(seed, k, length, stationary):
    rng = np.random.default_rng(100 + seed)
    transition = random_chain(rng, k)
    initial = None if stationary else random_distribution(rng, k)
    prior = _prior(transition, initial, length)
    for eps in (0.3, 1.0, 3.0):
        expected = _brute_sigma([(prior.transition, prior.initial, length)], eps)
        assert mqm_noise_scale(prior, eps) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_with_zeros(seed):
    """Zero transitions make some influences infinite and some pairs massless."""
    rng = np.random.default_rng(200 + seed)
    k, length = 3, 4
    transition = random_chain(rng, k, zeros=True)
    initial = random_distribution(rng, k, zeros=True)
    prior = _prior(transition, initial, length)
    for eps in (0.5, 2.0, 8.0):
        expected = _brute_sigma([(prior.transition, prior.initial, length)], eps)
        assert mqm_noise_scale(prior, eps) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_theta(seed):
    """Θ of two priors: one stationary, one not, of different lengths."""
    rng = np.random.default_rng(300 + seed)
    k = 2 + seed % 2
    first = _prior(random_chain(rng, k), None, 5 if k == 2 else 4)
    second = _prior(random_chain(rng, k), random_distribution(rng, k), 6 if k == 2 else 3)
    for eps in (0.4, 1.5):
        expected = _brute_sigma(
            [(p.transition, p.initial, p.length) for p in (first, second)], eps
        )
        assert mqm_noise_scale([first, second], eps) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_chosen_secrets_match_brute_force(seed):
    """σ_max for chosen pairs and positions (docs/math.md §16) against the brute force restricted the same way;
    never above the all-pairs σ_max."""
    rng = np.random.default_rng(400 + seed)
    k = 2 + seed % 2
    zeros = seed % 3 == 0
    first = _prior(random_chain(rng, k, zeros=zeros), random_distribution(rng, k, zeros=zeros), 5 if k == 2 else 4)
    priors = [first] if seed % 2 else [first, _prior(random_chain(rng, k), None, 4 if k == 2 else 3)]
    sensitive = int(rng.integers(k))
    pairs = secret_pairs(k, "sensitive", states=(sensitive,)) if seed % 4 < 2 else None
    positions = {int(v) for v in rng.choice(first.length, 2)} if seed % 4 != 1 else None
    secrets = Secrets(pairs="sensitive" if pairs else "all", states=(sensitive,) if pairs else (),
                      positions=None if positions is None else tuple(sorted(positions)))
    for eps in (0.4, 1.5, 6.0):
        expected = _brute_sigma([(p.transition, p.initial, p.length) for p in priors], eps, pairs, positions)
        got = mqm_noise_scale(priors, eps, secrets=secrets)
        assert got == pytest.approx(expected, rel=1e-9)
        assert got <= mqm_noise_scale(priors, eps) * (1 + 1e-12)


def _reference_sigma(transition, initial, length, eps):
    """[S] Algorithm 1 without any pruning, for chains too long to enumerate.

    Conditionals come from matrix powers: Pr(X_{t-a}=l, X_{t+b}=r | X_t=x) =
    p_{t-a}[l] P^a[l,x] / p_t[x] · P^b[x,r]; every quilt of every node, every pair.
    """
    P = np.asarray(transition, dtype=float)
    k = P.shape[0]
    T = length
    marg = [np.asarray(initial, dtype=float)]
    for _ in range(T - 1):
        marg.append(marg[-1] @ P)
    power = [np.eye(k)]
    for _ in range(T):
        power.append(power[-1] @ P)

    def cond_left(t, a):  # rows x: distribution of X_{t-a} given X_t = x (1-based t)
        p_far, p_t = marg[t - a - 1], marg[t - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (p_far[:, None] * power[a]).T / p_t[:, None]

    def influence(dists, t):
        joint = np.ones((k, 1))  # joint[x, x_Q] = Pr(X_Q = x_Q | X_t = x)
        for side, d in dists:
            m = cond_left(t, d) if side == "L" else power[d]
            joint = (joint[:, :, None] * m[:, None, :]).reshape(k, -1)
        valid = marg[t - 1] > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(np.where(valid[:, None], joint, 1.0))
            diff = logs[:, None, :] - logs[None, :, :]
        diff = np.where(joint[:, None, :] > 0, diff, -np.inf)  # only x_Q possible under x count
        pair = valid[:, None] & valid[None, :] & ~np.eye(k, dtype=bool)
        return max(0.0, float(diff[pair].max()))

    sigma = 0.0
    for t in range(1, T + 1):
        if np.count_nonzero(marg[t - 1] > 0) < 2:
            continue
        best = T / eps
        candidates = [((("L", a),), T - t + a) for a in range(1, t)]
        candidates += [((("R", b),), t + b - 1) for b in range(1, T - t + 1)]
        candidates += [((("L", a), ("R", b)), a + b - 1) for a in range(1, t) for b in range(1, T - t + 1)]
        for dists, card in candidates:
            if card / eps >= best:
                continue  # a score is at least card/ε: cannot win (keeps the reference quick)
            e = influence(dists, t)
            if e < eps:
                best = min(best, card / (eps - e))
        sigma = max(sigma, best)
    return sigma


@pytest.mark.parametrize("seed", range(6))
def test_longer_chains_match_the_unpruned_algorithm(seed):
    """T up to 40 and small ε: the certificate, the bounds between nodes and the doubling all matter."""
    rng = np.random.default_rng(500 + seed)
    k = 3 + seed % 2
    stickiness = (0.3, 0.8, 0.95)[seed % 3]
    transition = stickiness * np.eye(k) + (1 - stickiness) * random_chain(rng, k, zeros=seed >= 4)
    length = (24, 33, 40)[seed % 3]
    stationary = seed % 2 == 0
    initial = None if stationary else random_distribution(rng, k, zeros=seed == 5)
    prior = _prior(transition, initial, length)
    for eps in (0.05, 0.4, 2.0):
        expected = _reference_sigma(prior.transition, prior.initial, length, eps)
        assert mqm_noise_scale(prior, eps) == pytest.approx(expected, rel=1e-9)


def test_long_stationary_chain_matches_node_by_node_search():
    """The shared-table shortcut for stationary priors equals the node-by-node search."""
    rng = np.random.default_rng(7)
    transition = 0.6 * np.eye(5) + 0.4 * random_chain(rng, 5)
    stationary = MarkovChainPrior(transition, None, 120)
    explicit = MarkovChainPrior(transition, stationary.initial, 120)  # same chain, flagged non-stationary
    for eps in (0.2, 1.0, 4.0):
        assert mqm_noise_scale(stationary, eps) == pytest.approx(mqm_noise_scale(explicit, eps), rel=1e-12)


def test_independent_entries_need_one_node():
    """Independent entries (identical rows): every quilt has influence 0, the best is card 1."""
    prior = MarkovChainPrior([[0.3, 0.7], [0.3, 0.7]], None, 10)
    assert mqm_noise_scale(prior, 2.0) == pytest.approx(0.5)


def test_scale_report_names_a_quilt_that_attains_sigma():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 30)
    report = mqm_scale(prior, 1.0)
    assert report.card / (report.eps_puffer - report.influence) == pytest.approx(report.sigma_max)
    assert "σ_max" in report.describe()


def test_single_state_with_mass_needs_no_noise():
    prior = MarkovChainPrior([[1.0, 0.0], [1.0, 0.0]], [1.0, 0.0], 4)
    assert mqm_noise_scale(prior, 1.0) == 0.0


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "one", True])
def test_rejects_bad_epsilon(eps):
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 5)
    with pytest.raises(ValueError):
        mqm_noise_scale(prior, eps)


def test_rejects_curves_and_mixed_theta():
    from puffer_core.engine.influence import influence_curve

    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 5)
    with pytest.raises(ValueError, match="MarkovChainPrior"):
        mqm_noise_scale(influence_curve(prior), 1.0)
    with pytest.raises(ValueError, match="empty"):
        mqm_noise_scale([], 1.0)
    other = MarkovChainPrior(np.full((3, 3), 1 / 3), None, 5)
    with pytest.raises(ValueError, match="same number of states"):
        mqm_noise_scale([prior, other], 1.0)


def test_sigma_grows_as_epsilon_shrinks():
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], None, 40)
    values = [mqm_noise_scale(prior, eps) for eps in (4.0, 2.0, 1.0, 0.5, 0.1)]
    assert all(x < y for x, y in zip(values, values[1:]))


@pytest.mark.parametrize("seed", range(3))
def test_far_nodes_of_non_stationary_chains_match_the_unpruned_algorithm(seed):
    """Fast mixing, started away from π: nodes past convergence share one bound; σ never below the definition."""
    rng = np.random.default_rng(900 + seed)
    k = 3
    transition = 0.8 / k + 0.2 * rng.dirichlet(np.full(k, 0.3), size=k)
    transition /= transition.sum(axis=1, keepdims=True)
    initial = np.eye(k)[seed % k] if seed else rng.dirichlet(np.ones(k))
    prior = _prior(transition, initial, 48)
    assert converged_from(prior) + cutoff_distance(transition, np.ones(k, bool)) < 48  # the far-node bound is used
    for eps in (0.3, 1.0, 4.0):
        expected = _reference_sigma(prior.transition, prior.initial, 48, eps)
        got = mqm_noise_scale(prior, eps)
        assert expected * (1 - 1e-12) <= got <= expected * (1 + 1e-9)


def test_mqm_theta_with_far_nodes_and_cutoffs():
    """Θ of a fast-mixing non-stationary prior and a sticky stationary one: each prior's own quilts."""
    rng = np.random.default_rng(31)
    fast = 0.8 / 3 + 0.2 * rng.dirichlet(np.full(3, 0.3), size=3)
    fast /= fast.sum(axis=1, keepdims=True)
    sticky = 0.9 * np.eye(3) + 0.1 * random_chain(rng, 3)
    first = _prior(fast, np.array([1.0, 0.0, 0.0]), 40)
    second = _prior(sticky, None, 30)
    for eps in (0.5, 2.0):
        expected = max(
            _reference_sigma(p.transition, p.initial, p.length, eps) for p in (first, second)
        )
        got = mqm_noise_scale([first, second], eps)
        assert expected * (1 - 1e-12) <= got <= expected * (1 + 1e-9)
