"""Whole-population secrets (docs/math.md §16): W∞ between a count's laws under two priors over all users'
data, against the exact laws by enumerating every data set, and the release's exact leakage."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from puffer_core import MarkovChainPrior
from puffer_core.mechanisms.base import Refused
from puffer_core.mechanisms.population import population_laplace, population_scale
from puffer_core.secrets import PopulationSecrets
from tests.support.brute import random_chain


def _exact_count_law(prior, states, lengths):
    """Pr[F = f] as Fractions, F the count of entries in ``states`` over users of the given lengths, by
    enumerating every data set (every user's every sequence): shares no code with puffer_core."""
    P = [[Fraction(float(x)) for x in row] for row in prior.transition]
    init = [Fraction(float(x)) for x in prior.initial]
    per_user = []
    for length in lengths:
        law = {}
        for seq in itertools.product(range(len(P)), repeat=length):
            p = init[seq[0]]
            for a, b in zip(seq, seq[1:]):
                p *= P[a][b]
            c = sum(1 for s in seq if s in states)
            law[c] = law.get(c, Fraction(0)) + p
        per_user.append(law)
    total = {0: Fraction(1)}
    for law in per_user:
        joined = {}
        for a, pa in total.items():
            for b, pb in law.items():
                joined[a + b] = joined.get(a + b, Fraction(0)) + pa * pb
        total = joined
    mass = sum(total.values())  # the rows of a float matrix sum to 1 only to rounding: normalise exactly
    return {c: p / mass for c, p in total.items()}


def _exact_w(first, second, n):
    """The smallest w with F₁(k) ≤ F₂(k + w) and F₂(k) ≤ F₁(k + w) for every k, in exact arithmetic."""
    def cdf(law):
        out, run = [], Fraction(0)
        for k in range(n + 1):
            run += law.get(k, Fraction(0))
            out.append(run)
        return out

    c1, c2 = cdf(first), cdf(second)

    def shift(a, b):
        w = 0
        while w < n and any(a[k] > b[min(k + w, n)] for k in range(n + 1)):
            w += 1
        return w

    return max(shift(c1, c2), shift(c2, c1))


def _priors(rng, k, length):
    return (MarkovChainPrior(random_chain(rng, k), None, length),
            MarkovChainPrior(random_chain(rng, k), rng.dirichlet(np.ones(k)), length))


@pytest.mark.parametrize("seed", range(10))
def test_w_equals_the_exact_coupling_distance_of_every_data_set(seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed % 2
    length = 3 if k == 2 else 2
    lengths = [length] * (1 + seed % 3) + ([length - 1] if seed % 2 else [])
    first, second = _priors(rng, k, length)
    states = [int(rng.integers(k))]
    got = population_scale(PopulationSecrets(((first, second),)), states, lengths)
    law_1 = _exact_count_law(first, set(states), lengths)
    law_2 = _exact_count_law(second, set(states), lengths)
    assert got.w == _exact_w(law_1, law_2, sum(lengths))
    assert got.total == sum(lengths)
    mean_1 = float(sum(c * p for c, p in law_1.items()))
    assert got.means[0] == pytest.approx(mean_1, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_the_release_never_leaks_more_than_its_eps_between_the_two_priors(seed):
    """The release with noise Pr[z] ∝ e^{−ε|z|/W} (the Laplace noise on whole numbers) has exact leakage ≤ ε
    between θ₁ and θ₂, every output counted (beyond the support the ratio is constant)."""
    rng = np.random.default_rng(50 + seed)
    k, length, lengths = 2, 3, [3, 3]
    first, second = _priors(rng, k, length)
    eps = [0.3, 1.0, 2.5][seed % 3]
    secrets = PopulationSecrets(((first, second),))
    release = population_laplace(secrets, [1], lengths, eps)
    w = release.accounting.scale
    assert release.scale == pytest.approx(w / eps) and release.accounting.secrets is secrets
    n = sum(lengths)
    laws = [_exact_count_law(p, {1}, lengths) for p in (first, second)]
    worst = 0.0
    for omega in range(-3 * int(w) - 2, n + 3 * int(w) + 3):
        probs = [sum(float(p) * math.exp(-eps * abs(omega - f) / w) for f, p in law.items()) for law in laws]
        worst = max(worst, abs(math.log(probs[0] / probs[1])))
    assert worst <= eps * (1 + 1e-12)


def test_identical_priors_need_no_noise_and_far_apart_ones_need_more():
    rng = np.random.default_rng(3)
    first = MarkovChainPrior(random_chain(rng, 3), None, 6)
    with pytest.raises(Refused, match="same law"):
        population_laplace(PopulationSecrets(((first, first),)), [0], [6] * 5, 1.0)
    near = MarkovChainPrior(0.9 * first.transition + 0.1 / 3, None, 6)
    far = MarkovChainPrior(np.full((3, 3), 1 / 3) * 0.2 + 0.8 * np.eye(3)[[1, 2, 0]], None, 6)
    w_near = population_scale(PopulationSecrets(((first, near),)), [0], [6] * 20).w
    w_far = population_scale(PopulationSecrets(((first, far),)), [0], [6] * 20).w
    assert 0 < w_near <= w_far <= 120


def test_population_secrets_at_the_scale_of_a_real_data_set():
    """200 users of 30 entries (6,000 entries): the laws live ~10³ nats into their tails and W stays certified."""
    rng = np.random.default_rng(11)
    first, second = _priors(rng, 4, 30)
    scale = population_scale(PopulationSecrets(((first, second),)), [2], [30] * 200)
    assert 0 < scale.w <= 6000 and abs(scale.means[0] - scale.means[1]) <= scale.w
