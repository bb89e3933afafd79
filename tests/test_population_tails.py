"""The whole-population W in the upper tails (docs/math.md §16): equal to the exact W∞ of the count's two laws for
populations whose distribution functions are within rounding of 1 over hundreds of counts.

The exact laws come from every sequence of one user enumerated in whole numbers (the chains' probabilities are
tenths), raised to the population by exact integer convolution: no floating point and no code shared with the
library.
"""

from __future__ import annotations

import itertools

import pytest

from puffer_core import MarkovChainPrior, PopulationSecrets
from puffer_core.mechanisms.population import population_scale

T = 8


def user_law(stay_0: int, stay_1: int, counted: set[int]) -> list[int]:
    """Pr[one user's count of ``counted`` = c] × a common denominator: a binary chain with stay chances stay_0/10 and
    stay_1/10, started in its stationary law ∝ (10 − stay_1, 10 − stay_0)."""
    move = {(0, 0): stay_0, (0, 1): 10 - stay_0, (1, 0): 10 - stay_1, (1, 1): stay_1}
    start = {0: 10 - stay_1, 1: 10 - stay_0}
    law = [0] * (T + 1)
    for seq in itertools.product((0, 1), repeat=T):
        weight = start[seq[0]]
        for a, b in itertools.pairwise(seq):
            weight *= move[(a, b)]
        law[sum(x in counted for x in seq)] += weight
    return law


def convolve(a: list[int], b: list[int]) -> list[int]:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def population_law(law: list[int], users: int) -> list[int]:
    total = [1]
    for _ in range(users):
        total = convolve(total, law)
    return total


def exact_w_infinity(a: list[int], b: list[int]) -> int:
    """The smallest w with F_a(k) ≤ F_b(k + w) and F_b(k) ≤ F_a(k + w) for every k, in whole numbers."""
    fa, fb = list(itertools.accumulate(a)), list(itertools.accumulate(b))
    sa, sb, top = fa[-1], fb[-1], len(a) - 1

    def holds(w: int) -> bool:
        return all(fa[k] * sb <= fb[min(k + w, top)] * sa and fb[k] * sa <= fa[min(k + w, top)] * sb
                   for k in range(top + 1))

    return next(w for w in range(top + 1) if holds(w))


@pytest.mark.parametrize(("first", "second", "counted", "users"),
                         [((9, 7), (8, 7), {0}, 60), ((9, 7), (8, 7), {1}, 60), ((6, 5), (7, 5), {0}, 80)])
def test_w_equals_the_exact_w_infinity_where_the_distribution_functions_round_to_one(
    first: tuple[int, int], second: tuple[int, int], counted: set[int], users: int
) -> None:
    chains = [MarkovChainPrior([[p / 10, 1 - p / 10], [1 - q / 10, q / 10]], None, T) for p, q in (first, second)]
    w = population_scale(PopulationSecrets(((chains[0], chains[1]),)), sorted(counted), [T] * users).w
    exact = exact_w_infinity(population_law(user_law(*first, counted), users),
                             population_law(user_law(*second, counted), users))
    assert w == exact
