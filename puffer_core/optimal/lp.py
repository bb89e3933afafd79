"""The best possible ε-Pufferfish mechanism for a count, as a linear programme (docs/math.md §18).

A count F of a chain prior takes values c ∈ {0..T}; its law under each protected secret s = (X_t = x) and θ is
exact (:mod:`puffer_core.mechanisms.count_laws`).  A mechanism that sees the data only through F is a table
q(y | c) over the output grid y ∈ {0..T}.  The programme

    minimise   max_θ Σ_c Pr_θ[F = c] Σ_y q(y | c)·|y − c|
    subject to Σ_y q(y | c) = 1, q ≥ 0, and for every protected ordered pair (s_i, s_j), θ and y:
               Σ_c q(y | c)·Pr[F = c | s_i, θ] ≤ e^ε·Σ_c q(y | c)·Pr[F = c | s_j, θ]

is solved by HiGHS (scipy), with sparse constraints.  **Why the grid loses nothing**: any ε-Pufferfish
mechanism that depends on the data only through F and outputs a real number can be clamped to [0, T] (which
only shortens |y − c|) and then rounded at random to ⌊y⌋ or ⌈y⌉ with mean y — for an integer c, |z − c| is
linear on [⌊y⌋, ⌈y⌉], so the expected error is unchanged — and both steps are post-processing.  So the
optimum is a **floor** for every such mechanism: Laplace, MQM, group DP, the Wasserstein mechanism.

**Certified.**  The floor reported is a weak-duality bound computed from the solver's duals with the
constraints exactly as stated (so it is ≤ the true optimum whatever the solver's tolerances); the mechanism
returned is the solver's table, cleaned (negatives and values below 10⁻¹³ set to 0, rows renormalised) and, if
its exact audit finds any output above e^ε by the solver's tolerance, mixed with a data-independent law on
those outputs only, which makes it ε-Pufferfish exactly and leaves its zeros elsewhere.  Its own expected error
is reported beside the floor (the two agree to the solver's tolerance).  Optima are not unique: what is
audited and repeated is the one returned.

**Histograms** of small K: the same programme over the count vectors n (Σ n = T) and the output grid
{0..T}^K with the L1 error ‖y − n‖₁ (coordinate-wise clamping and random rounding preserve it, so again the
grid loses nothing); the laws are those of :mod:`puffer_core.mechanisms.wasserstein`, exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse

from ..mechanisms.count_laws import CountLaws, count_laws
from ..mechanisms.wasserstein import count_vector_laws
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import check_eps, check_whole
from ..work import WorkEstimate

_CLEAN = 1e-13  # table entries below this are set to 0 (the solver's noise)
_SECONDS_PER_NONZERO = 3e-7  # per nonzero of the whole constraint matrix (built, checked, a share solved)
_SECONDS_PER_VARIABLE = 2.5e-4  # per variable q(y | v): HiGHS's rounds (measured at load 8–10, with margin)
LP_LIMIT_SECONDS = 30.0  # the programme is refused beyond this estimate
MAX_EPS = 700.0  # e^ε is finite in double precision up to about 709.78
MAX_GRID = 200_000  # outputs × input values of one programme at most


@dataclass(frozen=True, eq=False)
class Programme:
    """The data of one optimal-mechanism programme: input values, their laws under the secrets, the grid.

    ``values`` (V × d): the input values (a count: d = 1; a histogram: the count vectors); ``log_laws``
    (L × V): log Pr[value | secret, θ]; ``pairs`` (R × 2): protected ordered pairs of laws; ``log_marginal``
    (|Θ| × V): log Pr_θ[value]; ``outputs`` (Y × d): the output grid; ``what``: "count" or "histogram";
    ``describe``: the words for each pair row.
    """

    values: np.ndarray
    log_laws: np.ndarray
    pairs: np.ndarray
    log_marginal: np.ndarray
    outputs: np.ndarray
    what: str
    names: tuple[str, ...]

    @property
    def distances(self) -> np.ndarray:
        """|y − c| (a count) or ‖y − n‖₁ (a histogram), shape (V, Y)."""
        return np.abs(self.values[:, None, :] - self.outputs[None, :, :]).sum(axis=2).astype(float)


def count_programme(laws: CountLaws) -> Programme:
    """The programme of a count from its laws (:func:`puffer_core.mechanisms.count_laws.count_laws`)."""
    size = laws.size
    grid = np.arange(size, dtype=float)[:, None]
    names = tuple(laws.describe_pair(r) for r in range(laws.n_pairs))
    return Programme(grid, laws.log_laws, laws.pairs, laws.log_marginal, grid.copy(), "count", names)


def histogram_programme(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], secrets: Secrets | None = None
) -> Programme:
    """The programme of the whole histogram (small K): count vectors and their exact laws under each secret."""
    priors = as_theta(prior_or_priors, "the optimal histogram mechanism")
    k, t_max = priors.n_states, priors.max_length
    chosen = as_secrets(secrets)
    chosen.check_within(t_max)
    vectors = [v for v in itertools.product(range(t_max + 1), repeat=k) if sum(v) in set(priors.lengths)]
    index = {v: i for i, v in enumerate(vectors)}
    rows: list = []
    pairs: list = []
    marginals: list = []
    names: list = []
    for p, prior in enumerate(priors):
        joint, totals = count_vector_laws(prior)
        mask = chosen.pair_mask(k, prior.length)
        slot = {}
        for t in range(prior.length):
            for x in range(k):
                if not totals[t][x] or not (mask[t, x].any() or mask[t, :, x].any()):
                    continue
                law = np.full(len(vectors), -np.inf)
                for n, v in joint[t][x].items():
                    law[index[n]] = math.log(v) - math.log(totals[t][x])
                slot[(t, x)] = len(rows)
                rows.append(law)
        for (t, x), i in slot.items():
            for xp in range(k):
                if mask[t, x, xp] and (t, xp) in slot:
                    pairs.append((i, slot[(t, xp)]))
                    prior_text = f" (prior {p + 1})" if len(priors) > 1 else ""
                    names.append(f"entry {t + 1}, state {x} rather than {xp}{prior_text}")
        marginal = np.full(len(vectors), -np.inf)
        total = sum(totals[0])
        for x in range(k):
            for n, v in joint[0][x].items():
                marginal[index[n]] = np.logaddexp(marginal[index[n]], math.log(v) - math.log(total))
        marginals.append(marginal)
    values = np.array(vectors, dtype=float)
    outputs = np.array(list(itertools.product(range(t_max + 1), repeat=k)), dtype=float)
    return Programme(values, np.array(rows).reshape(-1, len(vectors)), np.array(pairs, dtype=int).reshape(-1, 2),
                     np.array(marginals), outputs, "histogram", tuple(names))


def programme_estimate(n_values: int, n_outputs: int, n_pairs: int, nonzeros: float | None = None) -> WorkEstimate:
    """The work of one programme, before it is built: an upper model of HiGHS with constraint generation,
    measured on every family of chains (benchmarks/bench_optimal.py) — the constraint matrix's nonzeros (built
    and checked for every pair) and the variables (what the solver's rounds cost)."""
    n_values, n_outputs = check_whole("n_values", n_values), check_whole("n_outputs", n_outputs)
    n_pairs = check_whole("n_pairs", n_pairs, minimum=0)
    if nonzeros is not None:
        nonzeros = check_eps("nonzeros", nonzeros, allow_zero=True)
    nnz = nonzeros if nonzeros is not None else float(n_pairs) * n_outputs * n_values
    columns = float(n_values) * n_outputs
    seconds = _SECONDS_PER_NONZERO * nnz + _SECONDS_PER_VARIABLE * columns
    return WorkEstimate(
        "the optimal mechanism's linear programme",
        {"overhead": seconds * 1e6},
        8.0 * (3 * nnz + 20 * columns + 4 * n_pairs * n_outputs),
        f"{n_pairs:,} protected pairs × {n_outputs:,} outputs: {nnz:,.0f} nonzeros over {columns:,.0f} variables",
        "use a shorter sequence, fewer protected positions or pairs, or fewer states",
        limit=LP_LIMIT_SECONDS,
    )


@dataclass(frozen=True)
class Audit:
    """The exact leakage of a table: the largest log-ratio over pairs and outputs, per pair, and where."""

    eps: float
    per_pair: np.ndarray
    pair: int
    output: int


@dataclass(frozen=True, eq=False)
class OptimalMechanism:
    """The mechanism the programme returned, its certified floor and its exact audit (module docstring).

    ``table[v, y]`` = q(y | value v); ``floor`` ≤ every ε-Pufferfish mechanism's expected error (on F alone);
    ``error`` is this table's own expected error (max over θ), ``error_per_prior`` per θ; ``audit`` its exact
    leakage; ``mixed`` how much of it was mixed with a data-independent law to remove the solver's tolerance.
    """

    programme: Programme
    eps: float
    table: np.ndarray
    floor: float
    error: float
    error_per_prior: np.ndarray
    audit: Audit
    mixed: float
    status: str

    def expected_error(self, prior_index: int = 0) -> float:
        return float(self.error_per_prior[prior_index])


def _matrix(prog: Programme, eps: float, chosen: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray]:
    """The privacy rows (pair, y) of the ``chosen`` pairs × columns (v, y), each row scaled to a largest
    |coefficient| of 1 (the scales are returned, to read the duals back)."""
    laws = np.exp(prog.log_laws)
    n_values, n_out = prog.values.shape[0], prog.outputs.shape[0]
    data, rows, cols, scales = [], [], [], []
    y = np.arange(n_out)
    for r, (i, j) in enumerate(prog.pairs[chosen]):
        coef = laws[i] - math.exp(eps) * laws[j]
        used = np.flatnonzero(np.isfinite(prog.log_laws[i]) | np.isfinite(prog.log_laws[j]))
        scale = 1.0 / float(np.abs(coef[used]).max())
        scales.append(scale)
        # row r·Y + y holds coef[v]·scale at column v·Y + y for every used v
        rows.append((r * n_out + y)[None, :].repeat(used.size, axis=0).reshape(-1))
        cols.append((used[:, None] * n_out + y[None, :]).reshape(-1))
        data.append(np.repeat(coef[used] * scale, n_out))
    if not scales:
        return sparse.csr_matrix((0, n_values * n_out)), np.zeros(0)
    a = sparse.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(scales) * n_out, n_values * n_out),
    )
    return a, np.repeat(np.array(scales), n_out)


def _violated(prog: Programme, table: np.ndarray, eps: float) -> np.ndarray:
    """Which pairs the table breaks (Pr[y | s_i] > e^ε·Pr[y | s_j] + 10⁻⁹ at some y)."""
    laws = np.exp(prog.log_laws)
    out = laws @ table
    i, j = prog.pairs.T
    return np.any(out[i] - math.exp(eps) * out[j] > 1e-9, axis=1)


def audit_table(prog: Programme, table: np.ndarray) -> Audit:
    """The exact leakage of the table: max over pairs and outputs of log Pr[y | s_i] − log Pr[y | s_j]."""
    with np.errstate(divide="ignore"):
        log_q = np.log(table)  # (V, Y)
    cells = prog.log_laws[:, :, None] + log_q[None, :, :]
    top = cells.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        log_out = np.log(np.exp(cells - safe[:, None, :]).sum(axis=1)) + safe  # (L, Y)
    log_out = np.where(np.isfinite(top), log_out, -np.inf)
    i, j = prog.pairs.T
    with np.errstate(invalid="ignore"):
        ratio = log_out[i] - log_out[j]
    ratio = np.where(np.isneginf(log_out[i]), -np.inf, ratio)  # an output impossible under s_i
    per_pair = ratio.max(axis=1) if ratio.size else np.zeros(0)
    if per_pair.size == 0:
        return Audit(0.0, per_pair, -1, -1)
    worst = int(np.argmax(per_pair))
    return Audit(float(per_pair[worst]), per_pair, worst, int(np.argmax(ratio[worst])))


def _repair(prog: Programme, table: np.ndarray, eps: float) -> tuple[np.ndarray, float]:
    """Mix the table with a data-independent law on the outputs where it exceeds e^ε (module docstring)."""
    laws = np.exp(prog.log_laws)
    mixed = 0.0
    for _ in range(4):
        out = laws @ table  # (L, Y)
        i, j = prog.pairs.T
        excess = np.maximum(out[i] - math.exp(eps) * out[j], 0.0).max(axis=0) if i.size else np.zeros(0)
        total = float(excess.sum())
        if total == 0.0:
            break
        eta = 2.0 * total / (total + math.expm1(eps))
        table = (1.0 - eta) * table + eta * (excess / total)[None, :]
        mixed = 1.0 - (1.0 - mixed) * (1.0 - eta)
    return table, mixed


def _first_pairs(prog: Programme) -> np.ndarray:
    """The pairs the programme starts with: the most different laws (total variation), a tenth of all, ≥ 20."""
    laws = np.exp(prog.log_laws)
    i, j = prog.pairs.T
    tv = 0.5 * np.abs(laws[i] - laws[j]).sum(axis=1)
    chosen = np.zeros(len(prog.pairs), dtype=bool)
    chosen[np.argsort(-tv)[: max(20, len(prog.pairs) // 10)]] = True
    return chosen


def _linprog(prog: Programme, eps: float, chosen: np.ndarray, cost: np.ndarray) -> tuple:
    n_values, n_out = prog.values.shape[0], prog.outputs.shape[0]
    n_theta = cost.shape[0]
    a_priv, scales = _matrix(prog, eps, chosen)
    a_eq = sparse.kron(sparse.identity(n_values), np.ones((1, n_out)), format="csr")
    if n_theta == 1:
        c = cost[0].reshape(-1)
        a_ub = a_priv
    else:  # minimise t with t ≥ each prior's expected error
        c = np.concatenate([np.zeros(n_values * n_out), [1.0]])
        a_ub = sparse.vstack([
            sparse.hstack([a_priv, sparse.csr_matrix((a_priv.shape[0], 1))]),
            sparse.hstack([sparse.csr_matrix(cost.reshape(n_theta, -1)), -np.ones((n_theta, 1))]),
        ], format="csr")
        a_eq = sparse.hstack([a_eq, sparse.csr_matrix((n_values, 1))], format="csr")
    rows = a_ub.shape[0]
    result = optimize.linprog(
        c, A_ub=a_ub if rows else None, b_ub=np.zeros(rows) if rows else None, A_eq=a_eq,
        b_eq=np.ones(n_values), bounds=(0, None), method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if result.status != 0:
        raise ValueError(f"the linear programme did not solve: {result.message}")
    return result, scales, a_priv.nnz


def solve(prog: Programme, eps: float) -> OptimalMechanism:
    """Solve the programme at ε (module docstring): the certified floor, the returned table and its audit.

    Constraint generation: solve with the most different pairs, add every pair the answer breaks, solve again;
    the last answer meets every constraint, so it is optimal for the whole programme, and its duals (zero on
    the pairs left out) bound the whole programme's optimum from below.
    """
    eps = check_eps("ε_puffer", eps)
    if eps > MAX_EPS:
        raise ValueError(
            f"ε_puffer = {eps:g} is too large: e^ε overflows double precision above {MAX_EPS:g}, where the"
            " privacy constraints no longer bind (the error is already below 1e-300); use ε_puffer ≤ 700"
        )
    n_values, n_out = prog.values.shape[0], prog.outputs.shape[0]
    if n_values * n_out > MAX_GRID:
        raise ValueError(
            f"{n_values:,} input values × {n_out:,} outputs is over the limit of {MAX_GRID:,} for the programme;"
            " use a shorter sequence or fewer states"
        )
    weights = np.exp(prog.log_marginal)  # (Θ, V)
    cost = weights[:, :, None] * prog.distances[None, :, :]  # (Θ, V, Y)
    chosen = _first_pairs(prog) if len(prog.pairs) else np.zeros(0, dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        result, scales, _ = _linprog(prog, eps, chosen, cost)
        table = np.clip(result.x[: n_values * n_out].reshape(n_values, n_out), 0.0, None)
        broken = _violated(prog, table, eps) & ~chosen if len(prog.pairs) else np.zeros(0, dtype=bool)
        if not np.any(broken):
            break
        chosen |= broken
    table[table < _CLEAN] = 0.0
    table /= table.sum(axis=1, keepdims=True)
    table, mixed = _repair(prog, table, eps)
    floor = _dual_floor(prog, eps, result, scales, cost, chosen)
    per_prior = (cost * table[None, :, :]).sum(axis=(1, 2))
    audit = audit_table(prog, table)
    return OptimalMechanism(prog, eps, table, floor, float(per_prior.max()), per_prior, audit, mixed,
                            f"{result.message} ({rounds} rounds, {int(chosen.sum())} of {len(prog.pairs)} pairs)")


def _dual_floor(prog: Programme, eps: float, result: optimize.OptimizeResult, scales: np.ndarray,
                cost: np.ndarray, chosen: np.ndarray) -> float:
    """Σ_v min_y [Σ_θ μ_θ·cost_θ(v, y) + Σ_r λ_r·A_r(v, y)]: a lower bound on the optimum for any λ, μ ≥ 0,
    Σμ = 1 (weak duality), with the constraints exactly as stated and λ = 0 on the pairs left out."""
    n_out = prog.outputs.shape[0]
    n_theta = cost.shape[0]
    n_rows = scales.size
    marginals = -np.asarray(result.ineqlin.marginals) if n_rows or n_theta > 1 else np.zeros(0)
    if n_theta == 1:
        mu = np.ones(1)
    else:
        mu = np.maximum(marginals[n_rows:], 0.0)
        mu = mu / mu.sum() if mu.sum() > 0 else np.full(n_theta, 1.0 / n_theta)
    reduced = np.tensordot(mu, cost, axes=1)  # (V, Y)
    if n_rows:
        lam = (np.maximum(marginals[:n_rows], 0.0) * scales).reshape(-1, n_out)  # (chosen pairs, Y)
        laws = np.exp(prog.log_laws)
        i, j = prog.pairs[chosen].T
        reduced = reduced + laws[i].T @ lam - math.exp(eps) * (laws[j].T @ lam)
    floor = float(reduced.min(axis=1).sum())
    return max(0.0, floor - 1e-12 * (1.0 + abs(floor)))


def optimal_count_mechanism(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    states: object,
    eps_puffer: float,
    secrets: Secrets | None = None,
) -> OptimalMechanism:
    """The error-optimal ε-Pufferfish mechanism for the count of ``states`` (module docstring, docs/math.md §18)."""
    priors = as_theta(prior_or_priors, "the optimal mechanism")
    eps = check_eps("ε_puffer", eps_puffer)
    t_max = priors.max_length
    n_pairs_bound = t_max * priors.n_states * (priors.n_states - 1) * len(priors)
    programme_estimate(t_max + 1, t_max + 1, n_pairs_bound).check()
    return solve(count_programme(count_laws(priors, states, secrets)), eps)


def optimal_histogram_mechanism(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    secrets: Secrets | None = None,
) -> OptimalMechanism:
    """The L1-error-optimal ε-Pufferfish mechanism for the whole histogram of a small chain (module docstring)."""
    priors = as_theta(prior_or_priors, "the optimal mechanism")
    eps = check_eps("ε_puffer", eps_puffer)
    k, t_max = priors.n_states, priors.max_length
    n_values, n_out = math.comb(t_max + k - 1, k - 1), (t_max + 1) ** k
    if n_values * n_out > MAX_GRID:
        raise ValueError(
            f"the histogram programme of {k} states over T = {t_max} has {n_values:,} count vectors ×"
            f" {n_out:,} outputs, over the limit of {MAX_GRID:,}; use the count of a set of states instead"
        )
    programme_estimate(n_values, n_out, t_max * k * (k - 1) * len(priors)).check()
    return solve(histogram_programme(priors, secrets), eps)
