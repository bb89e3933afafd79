"""The optimal mechanism run k times: the exact leakage of k independent runs (docs/math.md §18, [C] §4).

Run the returned table q k times on the same data, independently: the joint output law under a secret s is

    Pr[y_1, …, y_k | s, θ] = Σ_v Pr[value = v | s, θ]·Π_r q(y_r | v),

and its exact leakage is the largest log-ratio over protected pairs, θ and output tuples.  The law is
symmetric in the order of the outputs, so the tuples are taken as multisets (each ratio is the same for every
order).  Every probability is a sum of products of the table and the laws, computed in log space; an output
tuple possible under s_i and impossible under s_j gives +inf — [C] §4's privacy collapse.  The leakage is
shown beside k·ε (what adding up would say) and [C] Theorem 6.2's bound for k runs of the a(b) route's
Laplace mechanism at the same ε (the composable alternative).  Optima are not unique: the leakage is that of
the table the programme returned.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..accounting.calibration import calibrate
from ..accounting.composition import compose
from ..engine.curve import InfluenceCurve
from ..validation import InvalidParameter, check_whole
from ..work import WorkEstimate
from .lp import OptimalMechanism

_BLOCK = 4_000_000  # law × tuple × value cells per block


def repeated_estimate(n_outputs: int, k: int, n_values: int, n_laws: int) -> WorkEstimate:
    """The work of :func:`repeated_leakage`: C(Y + k − 1, k) output multisets × V values × (laws + k) cells."""
    n_outputs, k = check_whole("n_outputs", n_outputs), check_whole("k", k)
    n_values, n_laws = check_whole("n_values", n_values), check_whole("n_laws", n_laws)
    tuples = math.comb(n_outputs + k - 1, k)
    cells = float(tuples) * n_values * (n_laws + k)
    return WorkEstimate(
        f"the exact leakage of {k} runs",
        {"enumeration": 2.0 * cells},  # a sum of logs, an exponential, a sum and a logarithm per cell (measured)
        8.0 * 6 * _BLOCK,
        f"{tuples:,} output multisets × {n_values:,} values × {n_laws:,} laws",
        "run the mechanism fewer times, or use a shorter sequence",
    )


@dataclass(frozen=True)
class RepeatedLeakage:
    """The exact leakage of ``k`` runs of the returned optimum, where it is attained, and what it is compared with.

    ``leakage`` may be +inf; ``pair`` names the pair attaining it and ``outputs`` the output multiset;
    ``k_eps`` = k·ε; ``theorem_6_2``: [C] Theorem 6.2's bound for k runs of the a(b)-calibrated Laplace
    mechanism at ε (None without a curve).
    """

    k: int
    eps: float
    leakage: float
    pair: str
    outputs: tuple[int, ...]
    k_eps: float
    theorem_6_2: float | None


def repeated_leakage(optimal: OptimalMechanism, k: int, curve: InfluenceCurve | None = None) -> RepeatedLeakage:
    """The exact leakage of k independent runs of ``optimal`` (module docstring)."""
    k = check_whole("k (how many runs)", k)
    if not isinstance(optimal, OptimalMechanism):
        raise InvalidParameter(f"optimal must be an OptimalMechanism (optimal_count_mechanism, "
                               f"optimal_histogram_mechanism); got {type(optimal).__name__}")
    if curve is not None and not isinstance(curve, InfluenceCurve):
        raise InvalidParameter(f"curve must be an InfluenceCurve or None; got {type(curve).__name__}")
    prog = optimal.programme
    n_values, n_out = optimal.table.shape
    used = np.unique(prog.pairs.reshape(-1))
    repeated_estimate(n_out, k, n_values, used.size).check()
    with np.errstate(divide="ignore"):
        log_q = np.log(optimal.table)  # (V, Y)
    laws = prog.log_laws[used]  # (L, V)
    where = {int(law): n for n, law in enumerate(used)}
    i = np.array([where[int(a)] for a in prog.pairs[:, 0]], dtype=int)
    j = np.array([where[int(b)] for b in prog.pairs[:, 1]], dtype=int)
    best, best_pair = -math.inf, -1
    best_tuple: tuple[int, ...] = ()
    chunk = max(1, _BLOCK // max(1, n_values * used.size))
    tuples = itertools.combinations_with_replacement(range(n_out), k)
    while True:
        block = np.array(list(itertools.islice(tuples, chunk)), dtype=int).reshape(-1, k)
        if block.size == 0:
            break
        log_m = log_q[:, block].sum(axis=2).T  # (tuples, V): Σ_r log q(y_r | v)
        cells = laws[:, None, :] + log_m[None, :, :]  # (L, tuples, V)
        top = cells.max(axis=2)
        finite = np.isfinite(top)
        safe = np.where(finite, top, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            joint = np.where(finite, np.log(np.exp(cells - safe[:, :, None]).sum(axis=2)) + safe, -np.inf)
            ratio = joint[i] - joint[j]  # (pairs, tuples)
        ratio = np.where(np.isneginf(joint[i]), -np.inf, ratio)
        ratio = np.where(np.isnan(ratio), -np.inf, ratio)
        r, t = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        if ratio[r, t] > best:
            best, best_pair, best_tuple = float(ratio[r, t]), int(r), tuple(int(y) for y in block[t])
    bound = None
    if curve is not None:
        cal = calibrate(curve, optimal.eps)
        bound = compose([cal] * k)
    pair = prog.names[best_pair] if best_pair >= 0 else "no protected pair"
    return RepeatedLeakage(k, optimal.eps, max(best, 0.0), pair, best_tuple, k * optimal.eps, bound)
