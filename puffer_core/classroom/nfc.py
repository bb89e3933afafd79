"""The necessary condition for linear composition (NfC) as linear programs ([C] §5.1, docs/math.md §4).

[C] Theorem 5.1: if mechanisms with finite ranges satisfy ε-Pufferfish and compose linearly,
then for every ordered secret pair (s1, s2) and every dataset D with s1 true there is a
convex combination β over the datasets D_ℓ with s2 true such that, for every output ω,

    log Pr[M(D) = ω] ≤ ε + Σ_ℓ β_ℓ log Pr[M(D_ℓ) = ω]                      (NfC, [C] Eq. 1)

β a unit vector is a differential-privacy inequality.  For fixed (s1, s2, D) the smallest
such ε is the dual linear program of [C] §5.1 ("Finding the Dual Linear Programs"):

    min_{x, β}  x   s.t.  β ≥ 0, Σ β_ℓ = 1,  x ≥ log Pr[ω|D] − Σ_ℓ β_ℓ log Pr[ω|D_ℓ]  for all ω

solved here with scipy's HiGHS.  Outputs D cannot produce impose nothing (0 ≤ anything); a
D_ℓ that gives probability 0 to an output D can produce cannot carry weight (its term would
be −inf), and if no D_ℓ is left the condition fails for every ε: +inf.  The LP's dual
variables are the primal α of [C] §5.1: the mix of outputs an attacker would collect.

Which datasets count: with priors, the proof's weights are Pr_θ[D | s], so Ξ1 and Ξ2 are the
datasets of positive probability under θ (per prior); a bare matrix uses every row.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from ..validation import check_distribution, is_whole
from .model import FiniteModel

TIGHT = 1e-9
WEIGHT_FLOOR = 1e-12


@dataclass(frozen=True)
class NfcConstraint:
    """The best NfC constraint for one (prior, ordered secret pair, dataset D with s1 true).

    ``eps`` is the smallest ε for which some β makes [C] Eq. 1 hold; ``beta`` maps the
    datasets D_ℓ (s2 true) to their weights (positive ones only; empty when eps is +inf;
    datasets with identical output distributions are interchangeable, one stands for all);
    ``tight_outputs`` are the outputs where the inequality holds with equality (for +inf: the
    outputs that rule out every D_ℓ); ``alpha`` the attacker's output mix (LP dual).
    """

    eps: float
    pair_index: int
    first: str
    second: str
    dataset: Hashable
    beta: dict[Hashable, float]
    tight_outputs: tuple[Hashable, ...]
    alpha: dict[Hashable, float]
    prior_index: int | None

    @property
    def dp_style(self) -> bool:
        """True when β is a unit vector: the constraint is a differential-privacy inequality."""
        return len(self.beta) == 1

    def describe(self) -> str:
        if math.isinf(self.eps):
            witnesses = ", ".join(map(repr, self.tight_outputs))
            return (
                f"For D = {self.dataset!r} ('{self.first}'), every dataset with '{self.second}'"
                f" gives probability 0 to an output D can produce ({witnesses}): no ε works."
            )
        terms = " + ".join(f"{w:.3g}·log Pr[M({d!r}) = ω]" for d, w in self.beta.items())
        return f"log Pr[M({self.dataset!r}) = ω] ≤ {self.eps:.4g} + {terms}"


@dataclass(frozen=True)
class ComposabilityReport:
    """Smallest ε at which [C] Theorem 5.1's necessary condition holds, and what binds.

    ``eps`` = max over all constraints (0 if no pair applies); ``binding`` the constraint that
    attains it; ``constraints`` every (prior, ordered pair, dataset) constraint, for a table.
    """

    eps: float
    binding: NfcConstraint | None
    constraints: tuple[NfcConstraint, ...]


def _solve(log_star: np.ndarray, log_rivals: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """min x s.t. x ≥ log_star[ω] − Σ_ℓ β_ℓ log_rivals[ℓ, ω] (all finite), β in the simplex.

    Returns (x, β, α) with α the multipliers of the output constraints (the primal mix).
    """
    n_out = log_star.size
    n_riv = log_rivals.shape[0]
    c = np.zeros(1 + n_riv)
    c[0] = 1.0
    a_ub = np.hstack([-np.ones((n_out, 1)), -log_rivals.T])
    b_ub = -log_star
    a_eq = np.hstack([[0.0], np.ones(n_riv)])[None, :]
    bounds = [(None, None)] + [(0.0, None)] * n_riv
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0:
        raise ValueError(f"the NfC linear program could not be solved ({res.message})")
    alpha = -np.asarray(res.ineqlin.marginals, dtype=float)
    return float(res.x[0]), np.asarray(res.x[1:], dtype=float), alpha


def _constraint_for(
    mechanism: np.ndarray,
    star: int,
    rivals: np.ndarray,
    datasets: Sequence[Hashable],
    outputs: Sequence[Hashable],
    meta: tuple[int, str, str, int | None],
) -> NfcConstraint:
    pair_index, first, second, prior_index = meta
    produce = np.flatnonzero(mechanism[star] > 0)
    allowed = [r for r in rivals if np.all(mechanism[r, produce] > 0)]
    if not allowed:
        witnesses = []
        for r in rivals:
            o = produce[np.argmax(mechanism[r, produce] <= 0)]
            if outputs[o] not in witnesses:
                witnesses.append(outputs[o])
        return NfcConstraint(
            math.inf, pair_index, first, second, datasets[star], {}, tuple(witnesses), {}, prior_index
        )
    allowed_arr = np.array(allowed)
    log_star = np.log(mechanism[star, produce])
    log_rivals = np.log(mechanism[np.ix_(allowed_arr, produce)])
    x, beta, alpha = _solve(log_star, log_rivals)
    slack = x - (log_star - beta @ log_rivals)
    keep = beta > WEIGHT_FLOOR
    weights = beta[keep] / beta[keep].sum()
    beta_map = {datasets[int(r)]: float(w) for r, w in zip(allowed_arr[keep], weights)}
    tight = tuple(outputs[int(o)] for o, s in zip(produce, slack) if s <= TIGHT * max(1.0, abs(x)))
    alpha_map = {outputs[int(o)]: float(a) for o, a in zip(produce, alpha) if a > WEIGHT_FLOOR}
    return NfcConstraint(
        max(x, 0.0), pair_index, first, second, datasets[star], beta_map, tight, alpha_map, prior_index
    )


def composability(
    mechanism: FiniteModel | np.ndarray | Sequence[Sequence[float]],
    secret_pairs: Sequence[tuple[Sequence[int], Sequence[int]]] | None = None,
    datasets: Sequence[Hashable] | None = None,
    outputs: Sequence[Hashable] | None = None,
) -> ComposabilityReport:
    """Smallest ε for which the NfC of [C] Theorem 5.1 holds, with the binding constraint.

    Either a :class:`FiniteModel` (its secret pairs; Ξ sets restricted to each prior's
    support) or a matrix (datasets × outputs) with ``secret_pairs`` given as pairs of row
    index lists (rows where s1 holds, rows where s2 holds).  Both orders of every pair are
    tested.  A mechanism that is ε-DP for neighbours across every pair passes at ε; [C]
    Example 1 gives +inf although one release leaks nothing.
    """
    if isinstance(mechanism, FiniteModel):
        if secret_pairs is not None:
            raise ValueError("a FiniteModel carries its own secret pairs; do not pass secret_pairs as well")
        model = mechanism
        matrix = model.mechanism
        names = model.datasets
        outs = model.outputs
        jobs = []
        for p, prior in enumerate(model.priors):
            positive = prior > 0
            for k, pair in enumerate(model.secret_pairs):
                m1, m2 = model.masks[k, 0] & positive, model.masks[k, 1] & positive
                if m1.any() and m2.any():
                    jobs.append((k, pair.first_label, pair.second_label, p, m1, m2))
    else:
        try:
            matrix = np.array(mechanism, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("the mechanism must be a matrix of probabilities (datasets × outputs)") from None
        if matrix.ndim != 2:
            raise ValueError(
                f"the mechanism must be a 2-D matrix (datasets × outputs); got shape {matrix.shape}"
            )
        n, m = matrix.shape
        names = tuple(datasets) if datasets is not None else tuple(range(n))
        outs = tuple(outputs) if outputs is not None else tuple(range(m))
        if len(names) != n or len(outs) != m:
            raise ValueError(f"need {n} dataset labels and {m} output labels for a {n}×{m} matrix")
        for r in range(n):
            check_distribution(matrix[r], f"row {r + 1} of the mechanism")
        if not secret_pairs:
            raise ValueError("give secret_pairs: pairs of (rows where s1 holds, rows where s2 holds)")
        jobs = []
        for k, (rows1, rows2) in enumerate(secret_pairs):
            m1, m2 = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
            for rows, mask in ((rows1, m1), (rows2, m2)):
                for r in rows:
                    if not is_whole(r) or not 0 <= r < n:
                        raise ValueError(
                            f"secret pair {k + 1}: row {r!r} is not a row index between 0 and {n - 1}"
                        )
                    mask[int(r)] = True
            if (m1 & m2).any():
                raise ValueError(f"secret pair {k + 1}: a row cannot make both secrets true")
            if not m1.any() or not m2.any():
                raise ValueError(f"secret pair {k + 1}: each secret needs at least one row")
            jobs.append((k, f"s{2 * k + 1}", f"s{2 * k + 2}", None, m1, m2))
    # The LP only sees output distributions: datasets with identical rows are interchangeable,
    # so each distinct row is solved once (β over row ids) and β names one representative
    # dataset per row, taken from the rivals of the constraint at hand.
    row_id = np.unique(matrix, axis=0, return_inverse=True)[1].reshape(-1)
    constraints: list[NfcConstraint] = []
    solved: dict[tuple[int, bytes], NfcConstraint] = {}
    for k, label1, label2, p, m1, m2 in jobs:
        for first, second, stars, rivals in ((label1, label2, m1, m2), (label2, label1, m2, m1)):
            rival_idx = np.flatnonzero(rivals)
            distinct, first_seen = np.unique(row_id[rival_idx], return_index=True)
            rival_rows = rival_idx[first_seen]
            representative = dict(zip(distinct.tolist(), rival_rows.tolist()))
            for star in np.flatnonzero(stars):
                key = (int(row_id[star]), distinct.tobytes())
                if key not in solved:
                    solved[key] = _constraint_for(
                        matrix, int(star), rival_rows, row_id, outs, (k, first, second, p)
                    )
                base = solved[key]
                beta = {names[representative[int(r)]]: w for r, w in base.beta.items()}
                constraints.append(
                    NfcConstraint(base.eps, k, first, second, names[star], beta, base.tight_outputs, base.alpha, p)
                )
    if not constraints:
        return ComposabilityReport(0.0, None, ())
    binding = max(constraints, key=lambda c: c.eps)
    return ComposabilityReport(binding.eps, binding, tuple(constraints))
