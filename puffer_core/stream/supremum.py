"""Unbounded streams: the supremum of TPL, the largest ε for a target, and where TPL turns infinite
(docs/math.md §10, [TPL]).

:func:`leakage_supremum`, :func:`tpl_supremum` and :func:`tpl_divergence_threshold` (finite exactly when
ε < −log m, with m the largest mass that one row of the matrix puts on the columns where another row is 0);
:func:`max_eps_for_tpl` inverts them for a target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import check_eps, check_flag
from .checks import Directions, check_directions, check_row_stochastic, stream_priors
from .fronts import LeakageFront, add_up, build_front
from .tpl import backward_from, backward_matrix, forward_matrix, leakages, prepare_fronts

# --------------------------------------------------------------------------------------------
# unbounded streams and the inverse question


def leakage_supremum(matrix: object, eps: float) -> float:
    """sup_t of the leakage recursion α_1 = ε, α_t = L(α_{t−1}; matrix) + ε (docs/math.md §10).

    With a backward matrix this is sup_t BPL_t, with a forward matrix sup_t FPL_t, of an
    unbounded stream with the same ε at every step.  The value is the least fixed point
    α* = L(α*) + ε, or ``inf`` when the recursion grows without bound — never a truncated number.

    **Proof.**  L is the maximum over the prefix points (d, q) of
    g(α) = log(1 + (e^α−1)q) − log(1 + (e^α−1)d), and g'(α) ≤ e^α q / (1 + (e^α−1)q) ≤ 1, so
    D(α) = α − L(α) never decreases.  The iterates rise (α_2 = L(ε) + ε ≥ α_1, and L is
    increasing) and stay below every fixed point, so they converge to the least fixed point,
    the least root of D(α) = ε, or grow without bound if there is none.  Each point's own
    recursion has the fixed point x = e^α of d·x² + (1 − d − e^ε q)·x − e^ε(1 − q) = 0
    (closed form), and the least fixed point of the maximum is the maximum of the points'
    (each α − g(α) never decreases, so α ≥ α*_point gives g(α) + ε ≤ α).  As α → ∞, α − g(α)
    tends to −log q if d = 0 and to +∞ if d > 0, and approaches −log q strictly from below:
    so the supremum is finite exactly when e^ε·q < 1 for every point with d = 0, i.e. when
    ε < −log m with m the largest mass that one row of ``matrix`` puts on the columns where
    another row is 0 (always finite when m = 0, never when m = 1 — a deterministic chain).
    Values of e^ε·q within 1e-12 of 1 count as unbounded.  The result is certified: α − L(α) ≥ ε
    is checked at the returned α, so rounding never reports a value below the fixed point.
    """
    front = build_front(check_row_stochastic("the matrix", matrix))
    return front.supremum(check_eps("eps", eps))


def _stationary_fronts(
    prior: MarkovChainPrior, directions: Directions = Directions(), pairs: np.ndarray | None = None
) -> tuple[LeakageFront, ...]:
    """(backward, forward) fronts of a stationary prior; with ``pairs`` (the secret pairs, docs/math.md §16) also
    the two fronts over those pairs only."""
    if not prior.stationary_initial:
        raise ValueError(
            "an unbounded stream needs a prior with the stationary initial distribution (initial=None);"
            " for a non-stationary prior use temporal_privacy_leakage over its length"
        )
    pi = np.asarray(prior.initial)
    back = backward_from(pi, pi, prior.transition) if directions.backward is None else directions.backward
    fwd = prior.transition if directions.forward is None else directions.forward
    if pairs is None:
        return build_front(back, pi > 0), build_front(fwd, pi > 0)
    return (build_front(back, pi > 0), build_front(fwd, pi > 0), build_front(back, pi > 0, None, pairs),
            build_front(fwd, pi > 0, None, pairs))


def tpl_supremum(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: float,
    backward: object = None,
    forward: object = None,
    secrets: Secrets | None = None,
) -> float:
    """sup_t TPL_t of an unbounded stream with constant ε: sup BPL + sup FPL − ε (docs/math.md §10).

    The middle entries of a long stream approach it.  Needs stationary priors; ``inf`` when
    either supremum is infinite (:func:`leakage_supremum`).  Θ: the maximum over the priors.
    ``backward``, ``forward``: the matrices of :class:`Directions` (default: the prior's own).
    ``secrets``: over the secret pairs only (docs/math.md §16): ε + L_E(sup BPL) + L_E(sup FPL), which
    can stay finite where BPL grows without bound; positions do not lower a supremum over an endless
    stream (its middle entries are all alike) and are not used.
    """
    priors = stream_priors(prior_or_priors, finite=False)
    directions = check_directions(backward, forward, priors.n_states)
    eps = check_eps("eps", eps)
    pairs = _pairs_of(secrets, priors.n_states)
    return max(_supremum_tpl(_stationary_fronts(p, directions, pairs), eps) for p in priors)


def _pairs_of(secrets: Secrets | None, n_states: int) -> np.ndarray | None:
    """The secret pairs as a K×K matrix, None for every pair (docs/math.md §16)."""
    pairs = as_secrets(secrets).pair_matrix(n_states)
    return None if pairs[~np.eye(n_states, dtype=bool)].all() else pairs


def leakage_suprema(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: float,
    backward: object = None,
    forward: object = None,
) -> np.ndarray:
    """sup_t BPL_t, sup_t FPL_t and L(sup FPL; P^F) of an unbounded constant-ε stream, one row per prior.

    Each supremum is the certified least fixed point of :func:`leakage_supremum` (``inf`` when
    there is none); the third column is what the future adds to an entry at that supremum
    (sup FPL − ε, never rounded below).  Stationary priors; ``backward``, ``forward``: :class:`Directions`.
    """
    priors = stream_priors(prior_or_priors, finite=False)
    directions = check_directions(backward, forward, priors.n_states)
    eps = check_eps("eps", eps)
    rows = []
    for prior in priors:
        back, fwd = _stationary_fronts(prior, directions)
        top_back, top_fwd = back.supremum(eps), fwd.supremum(eps)
        gain = float(fwd.leakage(np.array([top_fwd]))[0]) if math.isfinite(top_fwd) else math.inf
        rows.append((top_back, top_fwd, gain))
    return np.array(rows)


def _supremum_tpl(fronts: tuple[LeakageFront, ...], eps: float) -> float:
    """sup BPL + sup FPL − ε, as sup BPL + L(sup FPL) (= sup FPL − ε at the fixed point), rounded up.

    With the secret-pair fronts (docs/math.md §16): ε + L_E(sup BPL) + L_E(sup FPL), each L_E taken at +inf
    as its limit (finite when no secret pair's prefix point has d = 0 < q)."""
    back, fwd = fronts[:2]
    top_back, top_fwd = back.supremum(eps), fwd.supremum(eps)
    if len(fronts) == 4:
        past = float(fronts[2].leakage(np.array([top_back]))[0]) if fronts[2].q.size else 0.0
        future = float(fronts[3].leakage(np.array([top_fwd]))[0]) if fronts[3].q.size else 0.0
        return float(add_up(add_up(eps, past), future))
    if not (math.isfinite(top_back) and math.isfinite(top_fwd)):
        return math.inf
    return float(add_up(top_back, fwd.leakage(np.array([top_fwd]))[0]))


def _largest_within(evaluate, target: float) -> float:
    """The largest ε in [0, target] with evaluate(ε) ≤ target, for an increasing ``evaluate`` of arrays.

    Grid refinement (33 points a round) until the bracket is below 1e-12 relative (or below 1e-300:
    nothing positive within reach, e.g. a deterministic chain over an unbounded stream); returns the
    lower end, whose value was checked to be within the target.
    """
    lo, hi = 0.0, target
    top = evaluate(np.array([hi]))[0]
    if top <= target:
        return hi
    while hi - lo > 1e-12 * hi and hi > 1e-300:
        grid = np.linspace(lo, hi, 34)[1:-1]
        ok = evaluate(grid) <= target
        below = np.flatnonzero(ok)
        if below.size:
            lo = float(grid[below[-1]])
        above = np.flatnonzero(~ok)
        hi = float(grid[above[0]]) if above.size else hi
    return lo


def max_eps_for_tpl(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    target: float,
    unbounded: bool = False,
    backward: object = None,
    forward: object = None,
    secrets: Secrets | None = None,
) -> float:
    """The largest constant ε whose stream stays within a TPL target (docs/math.md §10).

    Over the prior's length T: max_t TPL_t ≤ ``target``.  ``unbounded=True``: sup_t TPL_t of an
    unbounded stream ≤ ``target`` (stationary priors).  TPL grows with ε and TPL_t ≥ ε, so the
    answer lies in (0, target]; it is found by grid refinement to 1e-12 relative and the value
    returned was checked to meet the target.  ``backward``, ``forward``: see :class:`Directions`.
    ``secrets``: TPL about the chosen pairs at the protected steps (docs/math.md §16).
    """
    unbounded = check_flag("unbounded", unbounded)
    priors = stream_priors(prior_or_priors, finite=not unbounded)
    directions = check_directions(backward, forward, priors.n_states)
    target = check_eps("target", target)
    chosen = as_secrets(secrets).check(priors.n_states)
    if unbounded:
        pairs = _pairs_of(chosen, priors.n_states)
        fronts = [_stationary_fronts(p, directions, pairs) for p in priors]

        def evaluate(values: np.ndarray) -> np.ndarray:
            return np.array([max(_supremum_tpl(f, float(e)) for f in fronts) if e > 0 else 0.0 for e in values])

    else:
        prepared = prepare_fronts(priors, directions, None, chosen)
        length = priors[0].length
        protected = None if chosen.positions is None and chosen.rule is None else chosen.position_mask(length)

        def evaluate(values: np.ndarray) -> np.ndarray:
            return leakages(priors, np.repeat(values[:, None], length, axis=1), prepared, protected)[2].max(axis=1)

    return _largest_within(evaluate, target)


# --------------------------------------------------------------------------------------------
# where the supremum turns infinite


@dataclass(frozen=True)
class DivergenceThreshold:
    """sup_t TPL_t of an unbounded stream with constant ε is finite exactly when ε < ``eps``.

    ``eps = −log m`` (``inf`` when m = 0: always finite; 0 when m = 1: never finite).  ``m`` is
    attained by ``direction`` ("backward" or "forward") of prior ``prior_index`` for the states
    ``pair = (i, i')``: row i puts mass m on the states row i' rules out.
    """

    eps: float
    m: float
    direction: str | None
    prior_index: int | None
    pair: tuple[int, int] | None


def excluded_mass(matrix: np.ndarray, secrets: np.ndarray) -> tuple[float, tuple[int, int] | None]:
    """m = max over ordered pairs (i, i') of secret states of Σ_{j : Q[i', j] = 0} Q[i, j], and the pair.

    (0, None) when no row puts mass where another has none.  For i = i' the sum is 0, so the
    diagonal never counts.
    """
    states = np.flatnonzero(secrets)
    rows = np.asarray(matrix, dtype=float)[states]
    masses = rows @ (rows == 0).astype(float).T  # masses[a, b] = Σ_j rows[a, j]·[rows[b, j] = 0]
    if masses.size == 0 or masses.max() <= 0:
        return 0.0, None
    a, b = np.unravel_index(int(np.argmax(masses)), masses.shape)
    return float(masses[a, b]), (int(states[a]), int(states[b]))


def tpl_divergence_threshold(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None
) -> DivergenceThreshold:
    """The ε from which sup_t TPL_t of an unbounded constant-ε stream is +inf (docs/math.md §10).

    TPL's supremum is sup BPL + sup FPL − ε, infinite when either is; each is infinite exactly
    when ε ≥ −log m of its matrix (P^B of the stationary prior, or P; or the matrices given, see
    :class:`Directions`), over the pairs of states with positive stationary probability.  For a
    set Θ the smallest threshold counts.  Needs priors with the stationary initial distribution,
    as :func:`puffer_core.stream.tpl_supremum`.
    """
    priors = as_theta(prior_or_priors, "tpl_divergence_threshold")
    directions = check_directions(backward, forward, priors.n_states)
    best = DivergenceThreshold(math.inf, 0.0, None, None, None)
    for index, prior in enumerate(priors):
        if not prior.stationary_initial:
            raise ValueError(
                "an unbounded stream needs a prior with the stationary initial distribution (initial=None)"
            )
        secrets = np.asarray(prior.initial) > 0
        back = backward_matrix(prior) if directions.backward is None else directions.backward
        fwd = forward_matrix(prior) if directions.forward is None else directions.forward
        for direction, matrix in (("backward", back), ("forward", fwd)):
            m, pair = excluded_mass(matrix, secrets)
            if m > best.m:
                eps = max(0.0, -math.log(m))
                best = DivergenceThreshold(eps, m, direction, index, pair)
    return best
