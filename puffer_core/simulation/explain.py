"""Why a mechanism wins or loses on these data: structured findings from a simulation (docs/math.md §3–§5).

:func:`explain_simulation` reads a :class:`~puffer_core.simulation.run.SimulationResult` (its
metrics, ledger and settings; nothing is re-simulated) and returns

- the best mechanism per ε_puffer for one metric, with its 95% interval, and the mechanisms
  whose interval overlaps it (a tie);
- findings, each a code with numbers, for the app to put into words:

  ``pufferfish_not_best``   a Pufferfish mechanism is beaten beyond the intervals where it
                            does not fall back (the composition paper's experiments rank it
                            first, [C] §7);
  ``fallback_not_best``     a Pufferfish mechanism that fell back to group DP at that ε_puffer
                            (so it *is* its group-DP twin there) is beaten beyond the intervals:
                            a comparison between group-DP mechanisms, not a loss of the
                            Pufferfish translation;
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
  ``a1_drivers``            (with the prior) where a(1) is attained: the secret pair and the
                            transitions of its left and right terms
                            (:func:`puffer_core.engine.drivers.influence_drivers`), and — given
                            the data's transition counts — which were never observed;
  ``sticky_chain``          (with the prior) a chain that repeats its state with probability
                            ≥ 1/2 at stationarity: entries give each other away, a(b) is large —
                            left out when transitions never observed carry most of a(1) (then
                            the smoothing, not the stickiness, makes a(1) large);
  ``unseen_transitions``    (with a fitted prior) transitions never seen in the data hold the
                            smoothing τ (§6); each such entry can add up to log(1/τ) to a(b).

At an ε_puffer where a Pufferfish mechanism falls back, it and its group-DP twin are the same
mechanism: the winner's ``identical`` names the twin, so no finding says one beats the other.
Mechanisms post-processed with the prior (``name+prior``, :func:`puffer_core.simulation.run.simulate`)
follow the mechanism they post-process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..engine.drivers import influence_drivers
from ..engine.influence import influence_curve
from ..mechanisms.registry import MECHANISMS, Calibrated, curve_mechanisms, group_dp_twins
from ..priors.models import MarkovChainPrior, theta_or_none
from ..validation import InvalidParameter, check_whole
from .run import SimulationResult

# read from the mechanism records: the curve-calibrated mechanisms, and the group-DP twin of those that have one
PUFFERFISH_CURVE_MECHANISMS = curve_mechanisms()
GROUP_DP_TWIN = group_dp_twins()
STICKY_REPEAT = 0.5  # stationary probability that the next entry repeats the current one
UNSEEN_SHARE = 0.5  # unseen transitions carrying this share of a(1) or more make it a smoothing story
POSTPROCESSED = "+prior"  # the suffix of a mechanism post-processed with the prior
LONG_CAP = 500  # largest b examined on long sequences (break-even length, b needed)
_REL = 1e-9


@dataclass(frozen=True)
class Winner:
    """The best mechanism at one ε_puffer for one metric; ``tied``: the others whose 95% interval overlaps.

    ``identical``: mechanisms that are the same mechanism as the best at this ε_puffer (a
    Pufferfish mechanism that fell back to group DP, and its group-DP twin).
    """

    eps_puffer: float
    mechanism: str
    label: str
    mean: float
    ci_low: float
    ci_high: float
    tied: tuple[str, ...] = ()
    identical: tuple[str, ...] = ()

    @property
    def tie(self) -> bool:
        return bool(self.tied or self.identical)


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
                    "identical": ", ".join(w.identical),
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
        raise InvalidParameter(f"result must be a SimulationResult from simulate(); got {type(result).__name__}")
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


def base_name(name: str) -> str:
    """The registry name of a mechanism, without the post-processing suffix."""
    return name.removesuffix(POSTPROCESSED)


def twin(name: str) -> str | None:
    """The group-DP twin of a curve-calibrated Pufferfish mechanism (post-processed alike), else None."""
    base = base_name(name)
    if base not in GROUP_DP_TWIN:
        return None
    return GROUP_DP_TWIN[base] + name[len(base):]


def fallbacks(ledger: pd.DataFrame, t_max: int) -> set[tuple[str, float]]:
    """(mechanism, ε_puffer) where a Pufferfish curve mechanism chose (T_max, 0): group DP (release 1)."""
    rows = ledger[ledger["mechanism"].map(base_name).isin(PUFFERFISH_CURVE_MECHANISMS) & (ledger["release"] == 1)]
    return {(str(r.mechanism), float(r.eps_puffer)) for r in rows.itertuples(index=False)
            if not pd.isna(r.b) and int(r.b) >= t_max}


def _winners(rows: pd.DataFrame, higher: bool, fallen: set[tuple[str, float]] | None = None) -> list[Winner]:
    fallen = fallen or set()
    out = []
    for eps, block in rows.groupby("eps_puffer", sort=True):
        block = block.reset_index(drop=True)
        best = int(block["mean"].idxmax() if higher else block["mean"].idxmin())
        low, high = float(block.at[best, "ci_low"]), float(block.at[best, "ci_high"])
        name = str(block.at[best, "mechanism"])
        same = {twin(m) for m, e in fallen if math.isclose(e, float(eps)) and m == name}
        same |= {m for m, e in fallen if math.isclose(e, float(eps)) and twin(m) == name}
        same &= set(block["mechanism"])
        overlaps = (block["ci_high"] >= low) & (block["ci_low"] <= high) & ~block["mechanism"].isin(same)
        overlaps[best] = False
        # a mechanism that fell back is its twin: tied with the best when either of the two is
        tied_names = set(block.loc[overlaps, "mechanism"])
        for m, e in fallen:
            if math.isclose(e, float(eps)) and twin(m) in set(block["mechanism"]) and m in set(block["mechanism"]):
                if {m, twin(m)} & tied_names:
                    overlaps |= block["mechanism"].isin({m, twin(m)} - same - {name})
        out.append(
            Winner(
                eps_puffer=float(eps),
                mechanism=name,
                label=str(block.at[best, "label"]),
                mean=float(block.at[best, "mean"]),
                ci_low=low,
                ci_high=high,
                tied=tuple(str(m) for m in block.loc[overlaps, "mechanism"]),
                identical=tuple(sorted(same)),
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
    chains = theta_or_none(prior, "the simulation's prior")
    if chains is not None:
        return list(chains)
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
                    "same_as": GROUP_DP_TWIN.get(str(row.mechanism)),
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
    """``mqm_group_dp_noise`` for every mechanism calibrated by MQM's exact σ_max (its record says so)."""
    t_max = int(settings["t_max"])
    out = []
    for name in (n for n, spec in MECHANISMS.items() if spec.calibrated is Calibrated.MQM):
        queries = {
            float(acc.get("eps_puffer_grid", acc.get("eps_puffer"))): int(acc.get("queries", 1))
            for acc in settings.get("accounting", [])
            if acc.get("mechanism") == name
        }
        for row in ledger[(ledger["mechanism"] == name) & (ledger["release"] == 1)].itertuples(index=False):
            if pd.isna(row.sigma_max):
                continue
            eps = float(row.eps_puffer)
            m = queries.get(eps, 1)
            empty = t_max * m / eps  # the empty quilt: card T over ε per query (docs/math.md §5)
            if float(row.sigma_max) >= empty * (1 - _REL):
                numbers = {"sigma_max": float(row.sigma_max), "t_max": t_max, "queries": m}
                out.append(Finding("mqm_group_dp_noise", eps, name, numbers))
    return out


def _drivers_finding(fit: MarkovChainPrior, counts: np.ndarray | None, tau: float | None) -> Finding:
    drivers = influence_drivers(fit, counts)

    def transition(t) -> dict[str, Any]:
        return {"name": drivers.name(t), "probability": t.probability, "count": t.count}

    terms = [
        {"side": term.side, "numerator": transition(term.numerator), "denominator": transition(term.denominator),
         "value": term.value}
        for term in drivers.terms
    ]
    return Finding(
        "a1_drivers",
        numbers={
            "a_1": drivers.a1,
            "entry": drivers.entry,
            "where": drivers.where,
            "pair": [drivers.labels[i] for i in drivers.pair],
            "terms": terms,
            "marginal": drivers.marginal,
            "unseen": sorted({drivers.name(t) for t in drivers.unseen}),
            "unseen_share": drivers.unseen_share,
            "smoothing": tau,
            "counts_known": counts is not None,
        },
    )


def _prior_findings(
    priors: list[MarkovChainPrior], settings: dict[str, Any], a1: float | None, counts: np.ndarray | None,
    smoothing: float | None,
) -> list[Finding]:
    fit = priors[0]
    pi = np.asarray(fit.initial) if fit.stationary_initial else fit.stationary
    diagonal = np.diag(fit.transition)
    repeat = float(pi @ diagonal)
    prior_settings = settings.get("prior") or {}
    tau = smoothing if smoothing is not None else prior_settings.get("smoothing")
    if not (isinstance(tau, (int, float)) and not isinstance(tau, bool) and tau > 0):
        tau = None
    drivers = _drivers_finding(fit, counts, tau)
    out = [drivers]
    if repeat >= STICKY_REPEAT and drivers.numbers["unseen_share"] < UNSEEN_SHARE:
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
    if counts is not None:
        unseen = np.asarray(counts) == 0
    elif tau is not None:
        unseen = fit.transition <= tau * (1 + 1e-6)
    else:
        unseen = np.zeros_like(fit.transition, dtype=bool)
    if unseen.any() and tau is not None:
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
    counts: np.ndarray | None = None,
    smoothing: float | None = None,
) -> Explanation:
    """The best mechanism per ε_puffer and the reasons behind the ranking, as data (module docstring).

    ``metric``: a metric of the result (default Acc@1 for top-k, L1 for a histogram);
    ``release``: which release's metrics to rank.  ``prior``: the prior (or Θ, the fit first)
    the simulation used, for the findings that need the chain itself (what drives a(1), sticky
    chain, unseen transitions, sequences of any length); without it those are left out.
    ``counts``: the K×K transition counts of the data the prior was fitted to, so that
    transitions never observed are named as such; ``smoothing``: the τ of that fit (default:
    the one in the result's settings, when the simulation fitted the prior itself).
    """
    result = _check_result(result)
    release = check_whole("release", release, 1)
    metric = _check_metric(result, metric, release)
    priors = _priors(prior)
    if counts is not None:
        counts = np.asarray(counts)
        if priors is None or counts.shape != (priors[0].n_states,) * 2:
            raise ValueError("counts must be the K×K transition counts of the data, given with the prior")
    higher = higher_is_better(metric)
    metrics = result.metrics
    rows = metrics[(metrics["metric"] == metric) & (metrics["release"] == release)]
    t_max = int(result.settings["t_max"])
    fallen = fallbacks(result.ledger, t_max)
    winners = _winners(rows, higher, fallen)
    findings: list[Finding] = []
    for w in winners:
        block = rows[rows["eps_puffer"] == w.eps_puffer]
        for name in PUFFERFISH_CURVE_MECHANISMS:
            mine = block[block["mechanism"] == name]
            if mine.empty or name == w.mechanism or name in w.tied or name in w.identical:
                continue
            fell = any(m == name and math.isclose(e, w.eps_puffer) for m, e in fallen)
            findings.append(
                Finding(
                    "fallback_not_best" if fell else "pufferfish_not_best",
                    w.eps_puffer,
                    w.mechanism,
                    {
                        "pufferfish": name,
                        "pufferfish_mean": float(mine["mean"].iloc[0]),
                        "best_mean": w.mean,
                        **({"same_as": GROUP_DP_TWIN.get(name)} if fell else {}),
                    },
                )
            )
    findings.extend(_fallback_findings(result.ledger, result.settings, priors))
    findings.extend(_mqm_findings(result.ledger, result.settings))
    if priors is not None:
        b_curve, a_curve = _curve(result.settings)
        a1 = float(a_curve[0]) if a_curve.size else None
        findings.extend(_prior_findings(priors, result.settings, a1, counts, smoothing))
    return Explanation(metric, release, higher, tuple(winners), tuple(findings))
