"""Why a mechanism wins or loses on these data: structured findings from a simulation (docs/math.md §3–§5).

:func:`explain_simulation` reads a :class:`~puffer_core.simulation.run.SimulationResult` (its
metrics, ledger and settings; nothing is re-simulated) and returns

- the best mechanism per ε_puffer for one metric, with its 95% interval, and the mechanisms
  whose interval overlaps it (a tie);
- findings, each a code with numbers, for the app to put into words:

  ``pufferfish_not_best``   a Pufferfish mechanism is beaten beyond the intervals (the
                            composition paper's experiments rank it first, [C] §7);
  ``pufferfish_gain``       per curve-calibrated Pufferfish mechanism and ε_puffer: its per-entry
                            ε_DP over group DP's ε_puffer / T_max (1 on a fallback), with (b, a);
  ``group_dp_fallback``     the calibration chose the point (T_max, 0): group DP over the whole
                            sequence, ε_DP = ε_puffer / T_max (§3) — either no point of the
                            curve has a(b) < ε_puffer for b < T_max, or every such point allows
                            a smaller ε_DP than ε_puffer / T_max; the mechanism is then the
                            same as its group-DP baseline (``same_as``), and any difference
                            between their results is simulation noise;
  ``short_sequences``       with a fallback: the first b where a(b) < ε_puffer, against T_max;
                            with the prior, the same on sequences of any length
                            (``b_needed_any_length``) and the sequence length from which the
                            curve beats group DP (``break_even_length``), both for the first
                            prior — lower bounds for a set Θ, whose curve is above each member's;
  ``mqm_group_dp_noise``    MQM found no usable quilt and adds group-DP noise (σ_max = T_max per
                            unit of ε, the empty quilt of §5);
  ``sticky_chain``          (with the prior) a chain that repeats its state with probability
                            ≥ 1/2 at stationarity: entries give each other away, a(b) is large;
  ``unseen_transitions``    (with a fitted prior) transitions never seen in the data hold the
                            smoothing τ (§6); each such entry can add up to log(1/τ) to a(b).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..engine.influence import influence_curve
from ..priors.models import MarkovChainPrior
from ..validation import check_whole
from .run import SimulationResult

PUFFERFISH_CURVE_MECHANISMS = ("pufferfish_exponential", "pufferfish_laplace")
GROUP_DP_TWIN = {"pufferfish_exponential": "group_dp_exponential", "pufferfish_laplace": "group_dp_laplace"}
STICKY_REPEAT = 0.5  # stationary probability that the next entry repeats the current one
LONG_CAP = 500  # largest b examined on long sequences (break-even length, b needed)
_REL = 1e-9


@dataclass(frozen=True)
class Winner:
    """The best mechanism at one ε_puffer for one metric; ``tied``: the others whose 95% interval overlaps."""

    eps_puffer: float
    mechanism: str
    label: str
    mean: float
    ci_low: float
    ci_high: float
    tied: tuple[str, ...] = ()

    @property
    def tie(self) -> bool:
        return bool(self.tied)


@dataclass(frozen=True)
class Finding:
    """One reason, as a code and numbers (module docstring); ``eps_puffer``/``mechanism`` None when general."""

    code: str
    eps_puffer: float | None = None
    mechanism: str | None = None
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain_simulation` found: the winners per ε_puffer and the findings."""

    metric: str
    release: int
    higher_is_better: bool
    winners: tuple[Winner, ...]
    findings: tuple[Finding, ...]

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    def find(self, code: str, eps_puffer: float | None = None) -> list[Finding]:
        """The findings with ``code`` (at ``eps_puffer`` when given)."""
        wanted = [f for f in self.findings if f.code == code]
        return wanted if eps_puffer is None else [f for f in wanted if _same_eps(f.eps_puffer, eps_puffer)]

    def winners_frame(self) -> pd.DataFrame:
        """One row per ε_puffer: the best mechanism, its mean and interval, and the tied ones."""
        return pd.DataFrame(
            [
                {
                    "eps_puffer": w.eps_puffer,
                    "best": w.label,
                    "mechanism": w.mechanism,
                    "mean": w.mean,
                    "ci_low": w.ci_low,
                    "ci_high": w.ci_high,
                    "tied_with": ", ".join(w.tied),
                }
                for w in self.winners
            ]
        )


def _same_eps(found: float | None, wanted: float) -> bool:
    return found is not None and math.isclose(found, wanted)


def higher_is_better(metric: str) -> bool:
    """Accuracy-like metrics (Acc, HitRate, NDCG) are better high; L1 errors are better low (docs/math.md §7)."""
    return not metric.startswith("L1")


def _check_result(result: object) -> SimulationResult:
    if not isinstance(result, SimulationResult):
        raise ValueError(f"result must be a SimulationResult from simulate(); got {type(result).__name__}")
    return result


def _check_metric(result: SimulationResult, metric: str | None, release: int) -> str:
    known = list(dict.fromkeys(result.metrics["metric"]))
    if metric is None:
        metric = "Acc@1" if "Acc@1" in known else "L1"
    if metric not in known:
        raise ValueError(f"no metric {metric!r} in this result; the metrics are: {', '.join(known)}")
    releases = sorted(set(int(r) for r in result.metrics["release"]))
    if release not in releases:
        raise ValueError(f"release must be one of {releases}; got {release}")
    return metric


def _winners(rows: pd.DataFrame, higher: bool) -> list[Winner]:
    out = []
    for eps, block in rows.groupby("eps_puffer", sort=True):
        block = block.reset_index(drop=True)
        best = int(block["mean"].idxmax() if higher else block["mean"].idxmin())
        low, high = float(block.at[best, "ci_low"]), float(block.at[best, "ci_high"])
        overlaps = (block["ci_high"] >= low) & (block["ci_low"] <= high)
        overlaps[best] = False
        out.append(
            Winner(
                eps_puffer=float(eps),
                mechanism=str(block.at[best, "mechanism"]),
                label=str(block.at[best, "label"]),
                mean=float(block.at[best, "mean"]),
                ci_low=low,
                ci_high=high,
                tied=tuple(str(m) for m in block.loc[overlaps, "mechanism"]),
            )
        )
    return out


def _curve(settings: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    points = settings.get("curve") or []
    b = np.array([int(p[0]) for p in points], dtype=np.int64)
    a = np.array([float(p[1]) for p in points], dtype=float)  # "inf" strings parse to inf
    return b, a


def _priors(prior: object) -> list[MarkovChainPrior] | None:
    if prior is None:
        return None
    if isinstance(prior, MarkovChainPrior):
        return [prior]
    if isinstance(prior, (list, tuple)) and prior and all(isinstance(p, MarkovChainPrior) for p in prior):
        return list(prior)
    raise ValueError(
        f"prior must be None, a MarkovChainPrior or a list of them (the simulation's prior); got {prior!r}"
    )


def _long_chain(prior: MarkovChainPrior, t_max: int) -> tuple[np.ndarray, int]:
    """a(b) for b = 1..cap on sequences long enough that every b ≤ cap sees an interior node.

    One prior only: for a set Θ the first prior's numbers are lower bounds (Θ's curve is
    above each member's), at a fraction of the cost of Θ on long sequences.
    """
    cap = min(max(4 * t_max, 50), LONG_CAP)
    return influence_curve(prior.with_length(2 * cap + 1), cap).a, cap


def _fallback_findings(
    ledger: pd.DataFrame, settings: dict[str, Any], priors: list[MarkovChainPrior] | None
) -> list[Finding]:
    t_max = int(settings["t_max"])
    b_curve, a_curve = _curve(settings)
    inner = b_curve < t_max
    rows = ledger[ledger["mechanism"].isin(PUFFERFISH_CURVE_MECHANISMS) & (ledger["release"] == 1)]
    findings: list[Finding] = []
    long_curve: tuple[np.ndarray, int] | None = None
    short_done: set[float] = set()
    for row in rows.itertuples(index=False):
        if pd.isna(row.b):
            continue
        eps = float(row.eps_puffer)
        gain = float(row.eps_dp) * t_max / eps
        findings.append(
            Finding("pufferfish_gain", eps, str(row.mechanism), {"gain": gain, "b": int(row.b), "a": float(row.a)})
        )
        if int(row.b) < t_max:
            continue
        below = inner & (a_curve < eps)
        allowed = (eps - a_curve[below]) / b_curve[below]
        first = int(b_curve[below][0]) if below.any() else None
        best_i = int(np.argmax(allowed)) if below.any() else None
        findings.append(
            Finding(
                "group_dp_fallback",
                eps,
                str(row.mechanism),
                {
                    "t_max": t_max,
                    "eps_dp": float(row.eps_dp),
                    "points_below_eps": int(below.sum()),
                    "first_b_below": first,
                    "a_at_first_b_below": float(a_curve[below][0]) if below.any() else None,
                    "a_at_t_max_minus_1": float(a_curve[inner][-1]) if inner.any() else None,
                    "best_curve_b": int(b_curve[below][best_i]) if best_i is not None else None,
                    "best_curve_eps_dp": float(allowed[best_i]) if best_i is not None else None,
                    "same_as": GROUP_DP_TWIN[str(row.mechanism)],
                },
            )
        )
        if eps in short_done:
            continue
        short_done.add(eps)
        numbers: dict[str, Any] = {"t_max": t_max, "first_b_below": first}
        if priors is not None:
            if long_curve is None:
                long_curve = _long_chain(priors[0], t_max)
            a_long, cap = long_curve
            b_long = np.arange(1, a_long.size + 1)
            ok = a_long < eps
            numbers["b_needed_any_length"] = int(b_long[ok][0]) if ok.any() else None
            rate = np.where(ok, (eps - a_long) / b_long, -np.inf)
            i = int(np.argmax(rate))
            numbers["break_even_length"] = float(eps / rate[i]) if ok.any() and b_long[i] < cap else None
            numbers["examined_up_to_b"] = cap
        findings.append(Finding("short_sequences", eps, None, numbers))
    return findings


def _mqm_findings(ledger: pd.DataFrame, settings: dict[str, Any]) -> list[Finding]:
    t_max = int(settings["t_max"])
    queries = {
        float(acc.get("eps_puffer_grid", acc.get("eps_puffer"))): int(acc.get("queries", 1))
        for acc in settings.get("accounting", [])
        if acc.get("mechanism") == "mqm"
    }
    out = []
    for row in ledger[(ledger["mechanism"] == "mqm") & (ledger["release"] == 1)].itertuples(index=False):
        if pd.isna(row.sigma_max):
            continue
        eps = float(row.eps_puffer)
        m = queries.get(eps, 1)
        empty = t_max * m / eps  # the empty quilt: card T over ε per query (docs/math.md §5)
        if float(row.sigma_max) >= empty * (1 - _REL):
            numbers = {"sigma_max": float(row.sigma_max), "t_max": t_max, "queries": m}
            out.append(Finding("mqm_group_dp_noise", eps, "mqm", numbers))
    return out


def _prior_findings(priors: list[MarkovChainPrior], settings: dict[str, Any], a1: float | None) -> list[Finding]:
    fit = priors[0]
    pi = np.asarray(fit.initial) if fit.stationary_initial else fit.stationary
    diagonal = np.diag(fit.transition)
    repeat = float(pi @ diagonal)
    out = []
    if repeat >= STICKY_REPEAT:
        i = int(np.argmax(diagonal))
        out.append(
            Finding(
                "sticky_chain",
                numbers={
                    "repeat_probability": repeat,
                    "stickiest_state": fit.labels[i],
                    "stickiest_stay": float(diagonal[i]),
                    "a_1": a1,
                },
            )
        )
    prior_settings = settings.get("prior") or {}
    tau = prior_settings.get("smoothing")
    if isinstance(tau, (int, float)) and not isinstance(tau, bool) and tau > 0:
        unseen = fit.transition <= tau * (1 + 1e-6)
        if unseen.any():
            r, c = np.argwhere(unseen)[0]
            out.append(
                Finding(
                    "unseen_transitions",
                    numbers={
                        "count": int(unseen.sum()),
                        "smoothing": float(tau),
                        "log_inverse_smoothing": float(-math.log(tau)),
                        "example": f"{fit.labels[r]} → {fit.labels[c]}",
                        "a_1": a1,
                    },
                )
            )
    return out


def explain_simulation(
    result: SimulationResult,
    metric: str | None = None,
    release: int = 1,
    prior: MarkovChainPrior | list[MarkovChainPrior] | None = None,
) -> Explanation:
    """The best mechanism per ε_puffer and the reasons behind the ranking, as data (module docstring).

    ``metric``: a metric of the result (default Acc@1 for top-k, L1 for a histogram);
    ``release``: which release's metrics to rank.  ``prior``: the prior (or Θ, the fit first)
    the simulation used, for the findings that need the chain itself (sticky chain, unseen
    transitions, sequences of any length); without it those are left out.
    """
    result = _check_result(result)
    release = check_whole("release", release, 1)
    metric = _check_metric(result, metric, release)
    priors = _priors(prior)
    higher = higher_is_better(metric)
    metrics = result.metrics
    rows = metrics[(metrics["metric"] == metric) & (metrics["release"] == release)]
    winners = _winners(rows, higher)
    findings: list[Finding] = []
    for w in winners:
        block = rows[rows["eps_puffer"] == w.eps_puffer]
        for name in PUFFERFISH_CURVE_MECHANISMS:
            mine = block[block["mechanism"] == name]
            if mine.empty or name == w.mechanism or name in w.tied:
                continue
            findings.append(
                Finding(
                    "pufferfish_not_best",
                    w.eps_puffer,
                    w.mechanism,
                    {"pufferfish": name, "pufferfish_mean": float(mine["mean"].iloc[0]), "best_mean": w.mean},
                )
            )
    findings.extend(_fallback_findings(result.ledger, result.settings, priors))
    findings.extend(_mqm_findings(result.ledger, result.settings))
    if priors is not None:
        b_curve, a_curve = _curve(result.settings)
        a1 = float(a_curve[0]) if a_curve.size else None
        findings.extend(_prior_findings(priors, result.settings, a1))
    return Explanation(metric, release, higher, tuple(winners), tuple(findings))
