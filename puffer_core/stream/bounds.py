"""Bounds on a stream's leakage beside TPL: [C]'s translation and group DP (docs/math.md §3, §10).

**[C] translation** (docs/math.md §3).  Changing one entry changes one M_t, so the stream is
per-entry DP with ε_DP = max_t ε_t and ε_puffer = min_b b·ε_DP + a(b).  For a varying schedule
:func:`translation_bound` uses a refinement proven in its docstring.  The registry
(:mod:`puffer_core.stream.registry`) puts every bound side by side (``stream_bounds``) and answers the
inverse question for each (``plan_stream``).

All are upper bounds; :mod:`puffer_core.audit.stream` computes the exact leakage of tiny
chains by enumeration (docs/math.md §9) and :mod:`puffer_core.attacks` a lower bound at any
size (docs/math.md §11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..accounting.calibration import certify
from ..engine.curve import InfluenceCurve
from ..validation import InvalidParameter, check_flag
from .checks import check_schedule

_MAX_REFINED_CELLS = 50_000_000  # (curve points × T) cells of the varying-schedule [C] bound



@dataclass(frozen=True, eq=False)
class TranslationBound:
    """The [C] bound of a stream (docs/math.md §3, §10): ``per_entry[t]`` bounds entry t.

    ``eps_puffer`` = max over entries; ``eps_dp`` = max_t ε_t (the stream's per-entry DP level);
    ``b[t]`` the curve point used for entry t; ``refined`` tells whether the varying-schedule
    refinement was used (False: min_b b·max_t ε_t + a(b) for every entry).
    """

    eps_puffer: float
    per_entry: np.ndarray
    eps_dp: float
    b: np.ndarray
    refined: bool

    def __post_init__(self) -> None:
        for name in ("per_entry", "b"):
            value = np.array(getattr(self, name))
            value.setflags(write=False)
            object.__setattr__(self, name, value)


def _window_costs(schedule: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """W[p, t] = the largest sum of ε over a window of ``widths[p]`` consecutive steps containing t.

    Windows stay inside 1..T; a width ≥ T is the whole stream.
    """
    from scipy.ndimage import maximum_filter1d

    T = schedule.size
    cumulative = np.concatenate([[0.0], np.cumsum(schedule)])
    out = np.empty((widths.size, T))
    for p, b in enumerate(widths):
        if b >= T:
            out[p] = cumulative[-1]
            continue
        sums = cumulative[b:] - cumulative[:-b]  # window starting at s covers s..s+b−1, s = 0..T−b
        padded = np.concatenate([np.full(b - 1, -np.inf), sums, np.full(b - 1, -np.inf)])
        # entry t is covered by the starts t−b+1..t, i.e. padded[t .. t+b−1]; a centred filter of
        # size b at j covers padded[j − b//2 .. j − b//2 + b − 1], so j = t + b//2
        out[p] = maximum_filter1d(padded, size=b, mode="constant", cval=-np.inf)[b // 2 : b // 2 + T]
    return out


def _top_costs(schedule: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """W[p, t] = ε_t + the sum of the ``widths[p]`` − 1 largest other ε_s."""
    T = schedule.size
    order = np.argsort(-schedule, kind="stable")
    rank = np.empty(T, dtype=np.int64)
    rank[order] = np.arange(T)
    top = np.concatenate([[0.0], np.cumsum(schedule[order])])  # top[k] = sum of the k largest
    b = np.minimum(widths, T)[:, None]
    inside = rank[None, :] < b - 1  # entry t is itself among the b − 1 largest
    return np.where(inside, top[b], schedule[None, :] + top[b - 1])


def translation_bound(curve: InfluenceCurve, eps: object, contiguous: bool = False) -> TranslationBound:
    """The [C] bound of a stream with schedule ε_1..ε_T, per entry (docs/math.md §3, §10).

    The stream is per-entry DP with ε_DP = max_t ε_t, so every entry gets
    min_b b·ε_DP + a(b) (:func:`puffer_core.accounting.calibration.certify`).  With a varying schedule
    the bound of entry t is refined to ``min_b W_b(t) + a(b)``:

    - ``contiguous=False`` (any prior): W_b(t) = ε_t + the b − 1 largest other ε_s;
    - ``contiguous=True`` (**Markov chain priors only**, docs/math.md §2.1): W_b(t) = the
      largest Σ ε_s over a window of b consecutive steps containing t.

    **Proof.**  Fix entry t, a pair (x, x') and b.  By the definition of a(b) (docs/math.md §2)
    some H ∋ t with |H| ≤ b and complement L has a†(L) ≤ a(b), with one L for every θ ∈ Θ.
    The stream's output law given the whole sequence is Π_s Pr[r_s | X_s], and changing the
    entries in H changes only the factors s ∈ H, each by at most e^{ε_s}; so for any two
    values D_H, D'_H of the H entries Pr[r | D_H, D_L] ≤ e^{Σ_{s∈H} ε_s}·Pr[r | D'_H, D_L].
    Then, as in [C]'s translation theorem,
    Pr[r | x] ≤ Σ_{D_L} Pr[D_L | x]·max_{D_H} Pr[r | D_H, D_L]
    ≤ e^{Σ_H ε_s} Σ_{D_L} Pr[D_L | x]·min_{D_H} Pr[r | D_H, D_L]
    ≤ e^{Σ_H ε_s + a†(L)} Pr[r | x'].  Σ_{s∈H} ε_s ≤ ε_t + the b − 1 largest other ε_s.  For a
    Markov chain a†(L) depends only on the L entries nearest to t on each side, so the entries
    strictly between them — a window W ∋ t with W ⊆ H — serve as well (same a†, cost ≤); all
    ε ≥ 0, so widening W to b steps inside 1..T only adds cost.  The point (T, 0) — group DP —
    is always a candidate.  The refinement is audited against exact enumeration in the tests.

    ``curve`` must cover the stream: ``curve.length`` = T = ``len(eps)``.  When the schedule is
    too long for the O(T × points) refinement (over 5e7 cells) the plain bound is used.
    """
    if not isinstance(curve, InfluenceCurve):
        raise InvalidParameter(f"translation_bound takes an InfluenceCurve; got {type(curve).__name__}")
    contiguous = check_flag("contiguous", contiguous)
    schedule = check_schedule(eps, curve.length)
    eps_dp = float(schedule.max())
    T = schedule.size
    points = curve.points()
    if eps_dp == 0:
        zero = np.zeros(T)
        return TranslationBound(0.0, zero, 0.0, np.full(T, curve.length), False)
    plain = certify(curve, eps_dp)
    constant = bool(np.all(schedule == eps_dp))
    if constant or len(points) * T > _MAX_REFINED_CELLS:
        return TranslationBound(plain.eps_puffer, np.full(T, plain.eps_puffer), eps_dp, np.full(T, plain.b), False)
    widths = np.array([b for b, _ in points], dtype=np.int64)
    a = np.array([a for _, a in points])
    costs = _window_costs(schedule, widths) if contiguous else _top_costs(schedule, widths)
    with np.errstate(invalid="ignore"):
        totals = costs + a[:, None]
    best = np.argmin(totals, axis=0)
    per_entry = totals[best, np.arange(T)]
    return TranslationBound(float(per_entry.max()), per_entry, eps_dp, widths[best], True)


def group_dp_bound(eps: object) -> float:
    """Group DP over a user's whole stream: Σ_t ε_t (changing all T entries changes every release)."""
    return float(check_schedule(eps).sum())


# --------------------------------------------------------------------------------------------
# side by side, and the planner


def describe_bounds(values: dict[str, float]) -> str:
    """One sentence: which of these upper bounds (name → largest value over the steps) is tightest, and by how much
    against the next one."""
    known = sorted((v, name) for name, v in values.items() if not math.isnan(v))
    if len(known) < 2:
        return "" if not known else f"{_capital(known[0][1])}: ε = {known[0][0]:.4g}."
    (low, name), (high, other) = known[0], known[1]
    if not math.isfinite(low):
        names = [n for _, n in known]
        listed = f"{', '.join(names[:-1])} and {names[-1]}"
        return f"{'Both' if len(names) == 2 else 'All of'} {listed} are unbounded for this prior and schedule."
    if math.isclose(low, high, rel_tol=1e-9):
        return f"{_capital(name)} and {other} agree: ε = {low:.4g}."
    if not math.isfinite(high):
        return f"{_capital(name)} is tighter: ε = {low:.4g}, while {other} is unbounded."
    return (
        f"{_capital(name)} is tighter: ε = {low:.4g} against {high:.4g} for {other}"
        f" ({high / low:.3g}× as large, a difference of {high - low:.4g})."
    )


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
