"""The Wasserstein mechanism (Song, Wang & Chaudhuri, SIGMOD 2017), exactly, for small chains (docs/math.md §15).

A user's histogram N (the count of each state over the user's T entries) gets Lap(W/ε) noise on
every count, with

    W = max over θ ∈ Θ, entries t and pairs of states (x, x') of W∞(law(N | X_t = x, θ), law(N | X_t = x', θ)),

the ∞-Wasserstein distance in the L1 norm: the smallest w such that the two laws can be coupled
with ‖N − N'‖₁ ≤ w surely.  No public code exists; this is the project's implementation.

**Why it is ε-Pufferfish private.**  Take the coupling γ of the two laws with ‖N − N'‖₁ ≤ W.  For an
output ω, Pr[ω | x] = ∫ p(ω − N) dγ and the Laplace density with scale W/ε on each count gives
p(ω − N) ≤ e^{ε‖N − N'‖₁/W} p(ω − N') ≤ e^ε p(ω − N'), so Pr[ω | x] ≤ e^ε Pr[ω | x'].  Other users'
counts are independent of the target's entries and add the same law under both secrets; a table of
counts per group holds the user's counts in one row (the same argument).  Repeated releases of
the same counts reuse the same coupling: k of them are kε-private (:data:`Composition.SAME_QUERY`).

**Exactly.**  The law of N given X_t = x is a dynamic program over (t, partial counts, state),
forward and backward, combined at t — computed in exact integer arithmetic (every probability of
the chain is a ratio of integers, made exact by dividing each row by its own sum), so no tiny
probability of a far-out count vector is lost to rounding; the W∞ question "can the laws be
coupled within w?" is then exact: for two states (the counts are one number) a comparison of the
two distribution functions shifted by w, for more states a maximum flow over the count vectors
(Hall's condition).  The work grows as the number of count vectors squared; anything estimated
beyond the work limit is refused up front, with the estimate.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..accounting.events import Composition, NoiseEvent
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import WORK_LIMIT_SECONDS, check_eps, human_seconds
from .base import HISTOGRAM_SENSITIVITY, Refused
from .laplace import LaplaceCounts

_SECONDS_PER_EDGE = 1e-6  # one edge of a flow (pure Python)
# one big-integer multiply-add of the count program: measured 33 µs at 5,800-bit numbers, growing as bits^1.3
_SECONDS_PER_PRODUCT = 33e-6
_BITS_MEASURED = 5_800
_WASSERSTEIN_LIMIT = WORK_LIMIT_SECONDS


@dataclass(frozen=True)
class WassersteinScale:
    """W (in units of counts, L1) and where it is attained: ``entry`` (0-based), ``pair`` and ``prior_index``."""

    w: int
    entry: int
    pair: tuple[int, int]
    prior_index: int


def _cells(length: int, k: int) -> int:
    return math.comb(length + k - 1, k - 1)


def wasserstein_work(n_states: int, length: int, n_priors: int = 1) -> float:
    """About how many seconds :func:`wasserstein_scale` takes (an estimate, on the high side).

    The count program's numbers have about 55·K bits per step (each row of the chain made exact has a
    53-bit scale), so T·55·K bits at the end; its products cost more as they grow.
    """
    k, T = n_states, length
    program = sum(_cells(t, k) for t in range(1, T + 1)) * k * k * 2
    joint = sum(_cells(t, k) * _cells(T - t, k) for t in range(1, T + 1)) * k
    bits = T * (55 * k + 10)
    product = max(1e-6, _SECONDS_PER_PRODUCT * (bits / _BITS_MEASURED) ** 1.3)
    coupling = 0.0
    if k > 2:  # one flow per pair of states and entry, a few more where W grows
        cells = _cells(T, k)
        coupling = (T * k * (k - 1) / 2 + math.log2(max(2, T)) * 4) * cells * cells * 3 * _SECONDS_PER_EDGE
    return n_priors * ((program + joint) * product + coupling)


def wasserstein_refusal(n_states: int, length: int, n_priors: int = 1) -> str | None:
    """Why the exact W would take longer than the work limit (with the estimate), or None."""
    seconds = wasserstein_work(n_states, length, n_priors)
    if seconds <= _WASSERSTEIN_LIMIT:
        return None
    year = 365.25 * 24 * 3600
    duration = human_seconds(seconds) if seconds < year else f"{seconds / year:.2g} years"
    vectors = _cells(length, n_states)
    return (
        f"the exact Wasserstein mechanism couples the laws of every count vector: {n_states} states over"
        f" T = {length} entries ({vectors:,} count vectors) would take about {duration}; the limit is"
        f" {_WASSERSTEIN_LIMIT:g} s. Use MQM, the a(b) curve, or a chain with fewer states or shorter sequences"
    )


def _integers(rows: np.ndarray) -> tuple[list[list[int]], list[int]]:
    """Each row of probabilities as integers a_ij with P_ij = a_ij / s_i exactly (s_i = Σ_j a_ij)."""
    out, sums = [], []
    for row in np.atleast_2d(rows):
        fractions = [Fraction(float(x)) for x in row]
        scale = math.lcm(*(f.denominator for f in fractions))
        ints = [int(f * scale) for f in fractions]
        out.append(ints)
        sums.append(sum(ints))
    return out, sums


def _joint_laws(prior: MarkovChainPrior) -> tuple[list[list[dict[tuple[int, ...], int]]], list[list[int]]]:
    """J[t][x][n] = Pr[N = n, X_t = x]·S (S one common integer scale) and the totals p[t][x]·S."""
    k, T = prior.n_states, prior.length
    (init,), _ = _integers(np.asarray(prior.initial)[None, :])
    rows, sums = _integers(prior.transition)
    common = math.lcm(*sums)
    c = [[rows[x][y] * (common // sums[x]) for y in range(k)] for x in range(k)]  # P[x, y]·common
    unit = [tuple(int(i == y) for i in range(k)) for y in range(k)]

    def plus(n: tuple[int, ...], y: int) -> tuple[int, ...]:
        return tuple(a + b for a, b in zip(n, unit[y]))

    alpha: list[list[dict[tuple[int, ...], int]]] = [[{unit[x]: init[x]} if init[x] else {} for x in range(k)]]
    for _ in range(1, T):
        previous = alpha[-1]
        step: list[dict[tuple[int, ...], int]] = [{} for _ in range(k)]
        for x in range(k):
            for n, value in previous[x].items():
                for y in range(k):
                    if c[x][y]:
                        key = plus(n, y)
                        step[y][key] = step[y].get(key, 0) + value * c[x][y]
        alpha.append(step)
    zero = (0,) * k
    beta: list[list[dict[tuple[int, ...], int]]] = [[{zero: 1} for _ in range(k)]]  # β_T
    for _ in range(T - 1, 0, -1):
        later = beta[0]
        step = [{} for _ in range(k)]
        for x in range(k):
            for y in range(k):
                if not c[x][y]:
                    continue
                for m, value in later[y].items():
                    key = plus(m, y)
                    step[x][key] = step[x].get(key, 0) + c[x][y] * value
        beta.insert(0, step)
    joint: list[list[dict[tuple[int, ...], int]]] = []
    totals: list[list[int]] = []
    for t in range(T):
        laws = []
        for x in range(k):
            law: dict[tuple[int, ...], int] = {}
            for n, a in alpha[t][x].items():
                for m, b in beta[t][x].items():
                    key = tuple(i + j for i, j in zip(n, m))
                    law[key] = law.get(key, 0) + a * b
            laws.append(law)
        joint.append(laws)
        totals.append([sum(law.values()) for law in laws])
    return joint, totals


def count_vector_laws(prior: MarkovChainPrior) -> tuple[list[list[dict[tuple[int, ...], int]]], list[list[int]]]:
    """The exact laws of the count vector N under each secret: J[t][x][n] = Pr[N = n, X_t = x]·S and the totals
    Σ_n J[t][x][n] (S one integer scale), refused beyond the work limit (module docstring)."""
    refusal = wasserstein_refusal(prior.n_states, prior.length)
    if refusal is not None:
        raise Refused("out_of_reach", refusal)
    return _joint_laws(prior)


def _shift_1d(first: list[int], second: list[int], total_first: int, total_second: int) -> int:
    """The smallest j ≥ 0 with F_first(k) ≤ F_second(k + j) for every k (exact: cross-multiplied integers)."""
    size = len(first)
    cum_first = np.cumsum(np.array(first, dtype=object))
    cum_second = np.cumsum(np.array(second, dtype=object))
    j = 0
    for k in range(size):
        if first[k] == 0 and k > 0 and cum_first[k] == cum_first[k - 1]:
            continue
        while k + j < size - 1 and cum_first[k] * total_second > cum_second[k + j] * total_first:
            j += 1
    return j


def _flow_feasible(supply: dict, demand: dict, width: int) -> bool:
    """Can the two (integer-weighted, equal-total) laws be coupled with ‖n − n'‖₁ ≤ width? Max flow, exactly."""
    left = [n for n, v in supply.items() if v]
    right = [n for n, v in demand.items() if v]
    nl = len(left)
    source, sink = nl + len(right), nl + len(right) + 1
    graph: list[list[list]] = [[] for _ in range(sink + 1)]  # edge: [to, capacity, index of reverse]

    def edge(u: int, v: int, cap: int) -> None:
        graph[u].append([v, cap, len(graph[v])])
        graph[v].append([u, 0, len(graph[u]) - 1])

    for i, n in enumerate(left):
        edge(source, i, supply[n])
    total = sum(supply[n] for n in left)
    infinite = total
    for i, n in enumerate(left):
        for j, m in enumerate(right):
            if sum(abs(a - b) for a, b in zip(n, m)) <= width:
                edge(i, nl + j, infinite)
    for j, m in enumerate(right):
        edge(nl + j, sink, demand[m])
    flow = 0
    while True:  # Dinic: BFS levels, then blocking flows by DFS
        level = _levels(graph, source, sink)
        if level[sink] < 0:
            return flow == total
        pointer = [0] * (sink + 1)
        while True:
            sent = _push(graph, level, pointer, source, sink, infinite)
            if not sent:
                break
            flow += sent


def _levels(graph: list[list[list]], source: int, sink: int) -> list[int]:
    level = [-1] * (sink + 1)
    level[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v, cap, _ in graph[u]:
            if cap > 0 and level[v] < 0:
                level[v] = level[u] + 1
                queue.append(v)
    return level


def _push(graph: list[list[list]], level: list[int], pointer: list[int], u: int, sink: int, limit: int) -> int:
    """One augmenting path along increasing levels from u (depth ≤ 3 in this bipartite graph)."""
    if u == sink:
        return limit
    while pointer[u] < len(graph[u]):
        e = graph[u][pointer[u]]
        v, cap, back = e
        if cap > 0 and level[v] == level[u] + 1:
            sent = _push(graph, level, pointer, v, sink, min(limit, cap))
            if sent:
                e[1] -= sent
                graph[v][back][1] += sent
                return sent
        pointer[u] += 1
    return 0


def _marginal_bound(first: dict, second: dict, total_first: int, total_second: int, k: int, length: int) -> int:
    """2·max_j W∞ of count j alone: a lower bound on W∞ in L1 (‖n − n'‖₁ ≥ 2|n_j − n'_j| at equal sums),
    and for two states W∞ itself."""
    low = 0
    for j in range(k if k > 2 else 1):
        a = [0] * (length + 1)
        b = [0] * (length + 1)
        for n, v in first.items():
            a[n[j]] += v
        for n, v in second.items():
            b[n[j]] += v
        low = max(low, 2 * max(_shift_1d(a, b, total_first, total_second), _shift_1d(b, a, total_second, total_first)))
    return low


def _distance(
    first: dict, second: dict, total_first: int, total_second: int, k: int, length: int, enough: int = 0
) -> int:
    """W∞ in L1 between the laws first/total_first and second/total_second of count vectors.

    When the answer is at most ``enough`` (W of the pairs seen so far), any value ≤ ``enough`` may be
    returned: only the maximum over pairs counts.
    """
    low = _marginal_bound(first, second, total_first, total_second, k, length)
    if k == 2 or low >= 2 * length:
        return low
    supply = {n: v * total_second for n, v in first.items()}
    demand = {n: v * total_first for n, v in second.items()}
    if low <= enough and _flow_feasible(supply, demand, enough):
        return low
    low = max(low, enough + 2)
    high = 2 * length
    while low < high:
        mid = (low + high) // 2
        mid -= mid % 2  # L1 distances between vectors of the same sum are even
        if _flow_feasible(supply, demand, mid):
            high = mid
        else:
            low = mid + 2
    return low


def wasserstein_scale(prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
                      secrets: Secrets | None = None) -> WassersteinScale:
    """W of the histogram of a user's whole sequence, exactly (module docstring); refused beyond the work limit.

    ``secrets``: the max over the protected entries and secret pairs only (docs/math.md §16; W∞ is symmetric,
    so a pair protected one way counts as both).
    """
    priors = as_theta(prior_or_priors, "the Wasserstein mechanism")
    chosen = as_secrets(secrets)
    chosen.check_within(priors.max_length)
    pairs = chosen.pair_matrix(priors.n_states)
    pairs = pairs | pairs.T
    refusal = wasserstein_refusal(priors.n_states, priors.max_length, len(priors))
    if refusal is not None:
        raise Refused("out_of_reach", refusal)
    best: WassersteinScale | None = None
    for index, prior in enumerate(priors):
        joint, totals = _joint_laws(prior)
        k, T = prior.n_states, prior.length
        protected = chosen.position_mask(T)
        for t in range(T):
            if not protected[t]:
                continue
            for x in range(k):
                for xp in range(x + 1, k):
                    if not (totals[t][x] and totals[t][xp]) or not pairs[x, xp]:
                        continue
                    enough = 0 if best is None else best.w
                    w = _distance(joint[t][x], joint[t][xp], totals[t][x], totals[t][xp], k, T, enough)
                    if best is None or w > best.w:
                        best = WassersteinScale(w, t, (x, xp), index)
    if best is None:  # no entry has two possible states: no secret; the noise of one entry's own move, 2
        best = WassersteinScale(2, 0, (0, 0), 0)
    return best


def wasserstein_laplace(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], eps_puffer: float, secrets: Secrets | None = None
) -> LaplaceCounts:
    """Counts + Lap(W/ε) on every count: the Wasserstein mechanism for the histogram query (module docstring).

    Its per-entry DP level is 2ε/W (a histogram moves by 2 in L1 when one entry changes); ``secrets``: W over
    the chosen pairs and entries (docs/math.md §16).  W = 0 — no histogram tells any secret pair apart, e.g. a
    deterministic alternation of even length, where every sequence holds each state T/2 times — needs no noise
    for ε-Pufferfish privacy; the mechanism adds that of W = 2 (one entry's own move, as when no entry has a
    secret), so that its per-entry DP level 2ε/W = ε stays finite for the ledger and group DP (docs/math.md §15).
    """
    eps = check_eps("eps_puffer", eps_puffer)
    w = max(wasserstein_scale(prior_or_priors, secrets).w, HISTOGRAM_SENSITIVITY)
    scale = w / eps
    event = NoiseEvent("wasserstein", eps, HISTOGRAM_SENSITIVITY / scale, float(w), Composition.SAME_QUERY, 1,
                       as_secrets(secrets))
    return LaplaceCounts(event, scale, HISTOGRAM_SENSITIVITY)
