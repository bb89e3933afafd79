"""What-if simulator: utility and privacy of repeated releases (docs/math.md §3–§7, [C] §7).

data → prior (fitted or given) → a(b) curve → one mechanism per (name, ε_puffer) → k
releases × n trials of a per-group query → metric means with 95% intervals, and a privacy
ledger per release.

- **Query** ``"topk"``: the k most frequent states of every group (e.g. the top-3 venue
  categories of each country, [C] §7.1.2), scored by Acc@j (j = 1..k), Hit Rate@k, NDCG@k
  and the L1 count error (docs/math.md §7).  ``"histogram"``: all counts of every group, scored
  by the L1 error Σ_j |noisy_j − c_j|.  Metrics are averaged over the groups that have
  entries, then over trials; the interval is mean ± 1.96·sd/√trials over trials.
- **Releases**: ``release_mode="repeat"`` answers the same query ``releases`` times with
  fresh noise; ``"windows"`` cuts the time span into ``releases`` equal-width windows and
  answers the query on each window's entries.  The privacy ledger is the same for both: each
  release is per-entry ε_DP-DP on the whole dataset, and sequential composition covers
  disjoint windows too (no parallel-composition discount is claimed, because a user's
  entries in different windows are correlated).
- **Post-processing with the prior** (``postprocess=True``, docs/math.md §14): every mechanism
  that releases noisy counts is also scored after its counts are smoothed with the prior — the
  linear MMSE estimate from the exact mean and covariance of each group's counts under the
  prior (:func:`puffer_core.inference.counts.count_moments`), projected onto the non-negative
  counts with the release's number of entries (public under replace-one neighbours).  The
  same draws are scored both ways, as ``name+prior`` (label "… + prior"); post-processing costs
  no privacy, so its ledger rows are those of the mechanism.
- **Refusals**: a mechanism that cannot be built for the prior (no guarantee, or out of reach:
  :class:`puffer_core.mechanisms.base.Refused`) is left out, with the reason in
  ``settings["refused"]``; the others run.
- **Ledger** per (mechanism, ε_puffer, release l): the cumulative ε_puffer after l releases
  ([C] Theorem 6.2 for curve-based mechanisms; the plain sum for MQM, [S] Theorem III.7),
  the naive sum l·ε_puffer, and what group DP would certify for the same releases,
  T_max·Σ ε_DP (docs/math.md §4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse

from ..accounting.composition import Accountant
from ..accounting.events import PrivacyEvent
from ..accounting.renyi import RenyiEvent, renyi_ledger
from ..data.sequences import Sequences
from ..data.stats import SequenceStats, window_of
from ..engine.influence import influence_curve
from ..inference.counts import count_moments, project_simplex
from ..mechanisms import (
    DEFAULT_MECHANISMS,
    MECHANISMS,
    QUERIES,
    TOPK_LAPLACE,
    Mechanism,
    Output,
    Refused,
    make_mechanism,
    mechanism_spec,
)
from ..priors.fitting import DEFAULT_SMOOTHING, fit_markov_chain
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.events import EventSecrets
from ..secrets.values import Secrets
from ..secrets.words import protected_words, secrets_text
from ..validation import check_choice, check_eps, check_flag, check_whole, is_whole
from .metrics import acc_at_k, hit_rate_at_k, l1_count_error, ndcg_at_k

DEFAULT_EPS_GRID = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0)
RELEASE_MODES = ("repeat", "windows")
MAX_RELEASES = 100
MAX_TRIALS = 100_000
MAX_CELLS = 10_000_000  # trials × groups × states drawn at once (80 MB per float array)
Z_95 = 1.959963984540054
POSTPROCESSED = "+prior"  # the suffix of a mechanism's name when its counts are smoothed with the prior
MAX_POSTPROCESS_LENGTH = 2000  # positions per sequence whose pairs the exact moments sum over
MAX_POSTPROCESS_PAIRS = 2e8  # Σ over users of (entries in a release and group)²: the work of the exact moments
POSTPROCESS_WORDS = (
    "linear MMSE estimate from the counts' exact mean and covariance under the prior (the fit, for a set Θ),"
    " projected onto non-negative counts with the release's number of entries (docs/math.md §14)"
)

Progress = Callable[[float, str], object]


@dataclass(frozen=True)
class SimulationResult:
    """The simulator's output (docs/math.md §4, §7).

    ``metrics``: one row per (mechanism, eps_puffer, release, metric) with columns
    ``mechanism, label, eps_puffer, release, metric, mean, ci_low, ci_high, std, trials``.
    ``ledger``: one row per (mechanism, eps_puffer, release) with the release's ε_DP, curve
    point or σ_max, and the running totals ``cumulative_eps_puffer``, ``naive_sum``,
    ``group_dp``.  ``settings``: every input and derived setting, JSON-serialisable.
    """

    metrics: pd.DataFrame
    ledger: pd.DataFrame
    settings: dict[str, Any]

    def table(self, metric: str, release: int = 1) -> pd.DataFrame:
        """Mean of one metric: rows ε_puffer, columns mechanism labels (like [C] Tables 2–5)."""
        rows = self.metrics[(self.metrics["metric"] == metric) & (self.metrics["release"] == release)]
        if rows.empty:
            known = ", ".join(dict.fromkeys(self.metrics["metric"]))
            raise ValueError(f"no metric {metric!r} for release {release}; the metrics are: {known}")
        order = list(dict.fromkeys(rows["label"]))
        out = rows.pivot(index="eps_puffer", columns="label", values="mean")
        return out[order]


def _jsonable(value: object) -> object:
    """Plain Python values for json.dumps(allow_nan=False): non-finite floats become strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else str(float(value))
    if value is None or isinstance(value, str):
        return value
    return str(value)


def _check_eps_grid(eps_grid: object) -> tuple[float, ...]:
    if isinstance(eps_grid, (str, bytes)) or not isinstance(eps_grid, (Sequence, np.ndarray)):
        raise ValueError(f"eps_grid must be a list of positive numbers, e.g. (0.5, 1, 2); got {eps_grid!r}")
    values = tuple(check_eps("every ε_puffer in eps_grid", e) for e in eps_grid)
    if not values:
        raise ValueError("eps_grid is empty; give at least one ε_puffer, e.g. (0.5, 1, 2)")
    if len(set(values)) != len(values):
        raise ValueError(f"eps_grid repeats a value: {list(values)}")
    return values


def _check_mechanisms(mechanisms: object, query: str) -> tuple[str, ...]:
    if mechanisms is None:
        return DEFAULT_MECHANISMS[query]
    if isinstance(mechanisms, str):
        mechanisms = (mechanisms,)
    if not isinstance(mechanisms, (Sequence, np.ndarray)):
        raise ValueError(f"mechanisms must be a list of names from {', '.join(MECHANISMS)}")
    names = tuple(mechanisms)
    if not names:
        raise ValueError(f"choose at least one mechanism from {', '.join(MECHANISMS)}")
    for name in names:
        mechanism_spec(name).check_query(query)
    if len(set(names)) != len(names):
        raise ValueError(f"mechanisms repeats a name: {list(names)}")
    return names


def _check_rng(rng: object) -> tuple[np.random.Generator, dict[str, Any]]:
    if isinstance(rng, np.random.Generator):
        return rng, {"generator": type(rng.bit_generator).__name__, "state": _jsonable(rng.bit_generator.state)}
    if is_whole(rng):
        if rng < 0:
            raise ValueError(f"a seed must be a whole number ≥ 0; got {rng}")
        return np.random.default_rng(int(rng)), {"seed": int(rng)}
    raise ValueError(
        "pass rng=numpy.random.default_rng(seed) or a whole-number seed, so the simulation is reproducible;"
        f" got {rng!r}"
    )


def _priors(prior: object, data: SequenceStats, smoothing: float) -> tuple[list[MarkovChainPrior], dict[str, Any]]:
    if prior is None:
        fitted = fit_markov_chain(data, smoothing=smoothing)
        return [fitted], {
            "source": "fitted on the data (docs/math.md §6)",
            "smoothing": smoothing,
            "n_states": fitted.n_states,
            "length": fitted.length,
            "stationary_initial": fitted.stationary_initial,
        }
    try:
        priors = as_theta(prior, "simulate")
    except ValueError as exc:
        raise ValueError(f"prior must be None (fit it), a MarkovChainPrior or a list of them: {exc}") from None
    for p in priors:
        if p.n_states != data.n_states:
            raise ValueError(
                f"the prior has {p.n_states} states but the data have {data.n_states}"
                f" ({', '.join(data.states[:12])}); fit the prior on these data"
            )
    longest = max(p.length for p in priors)
    if longest < data.max_length:
        raise ValueError(
            f"the prior describes sequences of at most {longest} entries, but the longest user has"
            f" {data.max_length}; use prior.with_length({data.max_length})"
        )
    return priors, {
        "source": "given",
        "priors": len(priors),
        "n_states": priors[0].n_states,
        "length": longest,
        "stationary_initial": [p.stationary_initial for p in priors],
    }


def _release_counts(data: SequenceStats, releases: int, mode: str) -> tuple[np.ndarray, dict[str, Any]]:
    """True counts per release, group and state: shape (releases, groups, K)."""
    if mode == "repeat":
        counts = data.group_counts
        return np.broadcast_to(counts, (releases, *counts.shape)), {}
    counts = data.windows(releases)
    sizes = counts.sum(axis=(1, 2))
    if np.any(sizes == 0):
        empty = int(np.flatnonzero(sizes == 0)[0]) + 1
        raise ValueError(f"time window {empty} of {releases} has no entries; use fewer releases")
    return counts, {"window_edges": data.window_edges(releases).tolist(), "window_entries": sizes.tolist()}


def _per_trial(values: np.ndarray, trials: int, groups: np.ndarray) -> np.ndarray:
    """Mean over the non-empty groups of per-(trial, group) values → one value per trial."""
    return values.reshape(trials, -1)[:, groups].mean(axis=1)


def _topk_metrics(ranking: np.ndarray, counts: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Per-trial metrics of rankings (trials, G, ≥k) against counts (G, K), docs/math.md §7."""
    trials, n_groups = ranking.shape[:2]
    nonempty = counts.sum(axis=1) > 0
    flat_rank = ranking.reshape(trials * n_groups, -1)
    flat_counts = np.broadcast_to(counts[None], (trials, n_groups, counts.shape[1])).reshape(trials * n_groups, -1)
    out = {f"Acc@{j}": _per_trial(acc_at_k(flat_rank, flat_counts, j), trials, nonempty) for j in range(1, k + 1)}
    out[f"HitRate@{k}"] = _per_trial(hit_rate_at_k(flat_rank, flat_counts, k), trials, nonempty)
    out[f"NDCG@{k}"] = _per_trial(ndcg_at_k(flat_rank, flat_counts, k), trials, nonempty)
    out[f"L1@{k}"] = _per_trial(l1_count_error(flat_rank, flat_counts, k), trials, nonempty)
    return out


def _summarise(values: np.ndarray) -> tuple[float, float, float, float]:
    mean = float(values.mean())
    std = float(values.std(ddof=1))
    half = Z_95 * std / math.sqrt(values.size)
    return mean, mean - half, mean + half, std


def _ledger_rows(
    name: str, eps: float, event: PrivacyEvent | RenyiEvent, releases: int, accountant: Accountant,
    label: str | None = None,
) -> list[dict[str, Any]]:
    """One ledger row per release; a Gaussian release (Rényi Pufferfish) also carries its order α and its
    certified cumulative D_α, since its pure ε (``cumulative_eps_puffer``) is +inf wherever none exists."""
    ledger = accountant.ledger([event] * releases)
    renyi = renyi_ledger([event] * releases) if isinstance(event, RenyiEvent) else None
    fields = event.to_dict()
    rows = []
    for release in range(1, releases + 1):
        rows.append(
            {
                "mechanism": name,
                "label": label or MECHANISMS[name].label,
                "eps_puffer": eps,
                "release": release,
                "eps_dp": event.eps_dp,
                "b": fields["b"],
                "a": fields["a"],
                "sigma_max": fields["sigma_max"],
                "eps_puffer_release": event.eps_puffer,
                "cumulative_eps_puffer": float(ledger.eps_puffer[release - 1]),
                "naive_sum": float(ledger.naive_sum[release - 1]),
                "group_dp": float(ledger.group_dp[release - 1]),
                "composition": str(ledger.composition),
                "alpha": None if renyi is None else renyi.alpha,
                "cumulative_eps_renyi": None if renyi is None else float(renyi.eps[release - 1]),
            }
        )
    return rows


@dataclass(frozen=True)
class _Smoother:
    """Per release and group: the counts' mean and covariance under the prior, and the release's entries."""

    means: np.ndarray  # (releases, groups, K)
    covs: np.ndarray  # (releases, groups, K, K)
    totals: np.ndarray  # (releases, groups)

    def smooth(self, release: int, draws: np.ndarray, variance: float) -> np.ndarray:
        """Noisy counts (trials, groups, K) of one release → the projected linear MMSE estimates."""
        out = np.empty_like(draws, dtype=float)
        k = draws.shape[-1]
        for g in range(draws.shape[1]):
            mean, cov = self.means[release, g], self.covs[release, g]
            gain = np.linalg.solve(cov + variance * np.eye(k), cov).T  # Σ(Σ + vI)^(−1), Σ symmetric
            out[:, g] = mean + (draws[:, g] - mean) @ gain.T
        return project_simplex(out, self.totals[release][None, :])


def _smoother(prior: MarkovChainPrior, data: Sequences, releases: int, window: np.ndarray | None) -> _Smoother:
    """The exact moments of every (release, group) count vector under the prior (docs/math.md §14)."""
    if data.max_length > MAX_POSTPROCESS_LENGTH:
        raise ValueError(
            f"post-processing with the prior sums over pairs of positions in a sequence; the longest has"
            f" {data.max_length} entries, more than {MAX_POSTPROCESS_LENGTH} (cut users into shorter sequences)"
        )
    k = data.n_states
    groups = np.zeros(data.n_entries, dtype=np.int64) if data.group_codes is None else data.group_codes.astype(int)
    n_groups = 1 if data.groups is None else len(data.groups)
    position = np.arange(data.n_entries) - data.offsets[:-1][data.user_index]
    length = int(position.max()) + 1
    which = np.zeros(data.n_entries, dtype=np.int64) if window is None else window
    parts = 1 if window is None else releases
    means = np.zeros((parts, n_groups, k))
    covs = np.zeros((parts, n_groups, k, k))
    totals = np.zeros((parts, n_groups))
    cell = (which * n_groups + groups) * data.n_users + data.user_index  # (release, group, user) of each entry
    per_user = np.bincount(cell, minlength=parts * n_groups * data.n_users).astype(float)
    pairs = float((per_user**2).sum())  # Σ_u |S_u|²: the work of W = IᵀI over every release and group
    if pairs > MAX_POSTPROCESS_PAIRS:
        raise ValueError(
            f"post-processing with the prior sums over the pairs of each user's entries: {pairs:.3g} pairs here,"
            f" more than {MAX_POSTPROCESS_PAIRS:.0e} (cut users into shorter sequences, or use fewer releases)"
        )
    for r in range(parts):
        for g in range(n_groups):
            chosen = (which == r) & (groups == g)
            if not chosen.any():
                continue
            presence = scipy.sparse.csr_matrix(
                (np.ones(int(chosen.sum())), (data.user_index[chosen], position[chosen])), shape=(data.n_users, length)
            )
            means[r, g], covs[r, g] = count_moments(prior, presence)
            totals[r, g] = float(chosen.sum())
    if window is None:
        means, covs, totals = (np.broadcast_to(a, (releases, *a.shape[1:])) for a in (means, covs, totals))
    return _Smoother(means, covs, totals)


def simulate(
    data: Sequences | SequenceStats,
    prior: MarkovChainPrior | list[MarkovChainPrior] | None = None,
    query: str = "topk",
    k: int = 3,
    mechanisms: Sequence[str] | None = None,
    eps_grid: Sequence[float] = DEFAULT_EPS_GRID,
    releases: int = 1,
    release_mode: str = "repeat",
    trials: int = 200,
    rng: np.random.Generator | int | None = None,
    progress: Progress | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    topk_laplace: str = "split",
    postprocess: bool = False,
    secrets: Secrets | EventSecrets | None = None,
) -> SimulationResult:
    """Simulate releases of a per-group query under several mechanisms and ε_puffer (module docstring).

    ``data``: :class:`~puffer_core.data.sequences.Sequences` (groups from its group column, else one
    group "all"), or their :class:`~puffer_core.data.stats.SequenceStats` (for
    ``release_mode="windows"``, computed with ``windows=(releases,)``; the same results).
    ``prior``: None fits a Markov chain on ``data`` (docs/math.md §6, with
    ``smoothing``); a given prior (or Θ) must have the data's states and cover the longest
    sequence.  T_max is the prior's length.  ``mechanisms`` are keys of
    :data:`puffer_core.mechanisms.MECHANISMS` (default: the four of [C] Tables 2–5 for top-k;
    the Laplace ones and MQM for a histogram).  ``rng``: a numpy Generator or a whole-number
    seed (required).  ``progress(fraction, message)`` is called as work completes.
    ``topk_laplace``: how Laplace mechanisms and MQM answer top-k — ``"split"`` (the papers'
    baseline, [C] §7.1.3: m counts with ε/m each, then sorted) or ``"histogram"`` (one
    histogram of L1 sensitivity 2, then sorted).  ``postprocess``: also score every mechanism that
    releases counts after smoothing them with the prior (module docstring), as ``name+prior``.
    ``secrets``: what every mechanism protects (docs/math.md §16; default every pair at every entry) — the
    curve, the calibrations, MQM's σ and the ledger are for them; a time rule is applied to ``data``
    (which must then be Sequences, whose entries carry their times).
    """
    if not isinstance(data, (Sequences, SequenceStats)):
        raise ValueError(
            "data must be Sequences from puffer_core.data.readers.load_sequences or SequenceStats from"
            f" puffer_core.data.engines.load_stats; got {type(data).__name__}"
        )
    check_choice("query", query, QUERIES)
    names = _check_mechanisms(mechanisms, query)
    if query == "topk":
        k = check_whole("k", k, 1, data.n_states)
    grid = _check_eps_grid(eps_grid)
    releases = check_whole("releases", releases, 1, MAX_RELEASES)
    check_choice("topk_laplace", topk_laplace, TOPK_LAPLACE)
    check_choice("release_mode", release_mode, RELEASE_MODES)
    trials = check_whole("trials", trials, 2, MAX_TRIALS)
    generator, rng_settings = _check_rng(rng)
    postprocess = check_flag("postprocess", postprocess)
    sequences = data if isinstance(data, Sequences) else None
    if isinstance(secrets, Secrets) and not secrets.resolved:
        if sequences is None:
            raise ValueError("the secrets' time rule needs each entry's time: give Sequences (load_sequences), or"
                             " resolve the rule first (secrets.resolve(data) or secrets.on_grid(...))")
        secrets = secrets.resolve(sequences)
    if postprocess and sequences is None:
        raise ValueError(
            "post-processing with the prior needs each user's sequence (Sequences from load_sequences): the"
            " smoother sums over the positions of every user's entries, which SequenceStats (counts) do not keep"
        )
    if isinstance(data, Sequences):
        data = data.stats(windows=(releases,) if release_mode == "windows" else ())
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a function progress(fraction, message) or None")
    n_groups = 1 if data.groups is None else len(data.groups)
    if trials * n_groups * data.n_states > MAX_CELLS:
        raise ValueError(
            f"{trials} trials × {n_groups} groups × {data.n_states} states is too much to simulate at once"
            f" (limit {MAX_CELLS:,}); use fewer trials"
        )

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(1.0, max(0.0, fraction)), message)

    report(0.0, "fitting the prior" if prior is None else "checking the prior")
    priors, prior_settings = _priors(prior, data, smoothing)
    t_max = max(p.length for p in priors)
    accountant = Accountant(t_max)
    report(0.02, "computing the a(b) curve")
    curve = influence_curve(priors, progress=lambda stage, done: report(0.02 + 0.03 * done, f"a(b) curve: {stage}"),
                            secrets=secrets)
    counts, window_settings = _release_counts(data, releases, release_mode)
    smoother = None
    if postprocess:
        report(0.04, "computing the counts' moments under the prior")
        window = None
        if release_mode == "windows":  # each entry's window, as the counts were cut (stats.window_of)
            window = window_of(sequences.time_key, data.window_edges(releases))
        smoother = _smoother(priors[0], sequences, releases, window)

    metric_rows: list[dict[str, Any]] = []
    ledger_rows: list[dict[str, Any]] = []
    accountings: list[dict[str, Any]] = []
    refused: dict[str, str] = {}  # mechanisms that cannot be built here, and why (docs/math.md §15)
    steps = len(names) * len(grid)
    done = 0
    for name in names:
        if release_mode == "windows" and releases > 1 and MECHANISMS[name].same_query_only:
            refused[name] = (
                f"{MECHANISMS[name].label}: its releases compose only when they answer the same query again;"
                " time windows are different queries (use release_mode='repeat')"
            )
            done += len(grid)
            continue
        for eps in grid:
            report(0.05 + 0.95 * done / steps, f"{MECHANISMS[name].label} at ε_puffer = {eps:g}")
            try:
                mechanism: Mechanism = make_mechanism(
                    name, eps, curve, priors, query, k, data.n_states, topk_laplace
                )
            except Refused as exc:
                refused.setdefault(name, f"{MECHANISMS[name].label}: {exc}")
                done += 1
                continue
            accountings.append({"eps_puffer_grid": eps, **mechanism.accounting.to_dict()})
            ledger_rows.extend(_ledger_rows(name, eps, mechanism.accounting, releases, accountant))
            smoothed = smoother is not None and MECHANISMS[name].releases is Output.COUNTS
            if smoothed:
                label = MECHANISMS[name].label + " + prior"
                ledger_rows.extend(
                    _ledger_rows(name + POSTPROCESSED, eps, mechanism.accounting, releases, accountant, label)
                )
            for release in range(releases):
                true = counts[release]
                draws = mechanism.simulate(true, trials, generator)
                scored = [(name, MECHANISMS[name].label, _metrics(mechanism, draws, true, query, k))]
                if smoothed:
                    estimates = smoother.smooth(release, draws, mechanism.variance)
                    after = _metrics(mechanism, estimates, true, query, k)
                    after.pop("L1 expected", None)  # the raw noise's expectation: not the smoothed counts'
                    scored.append((name + POSTPROCESSED, label, after))
                for shown_name, shown_label, per_trial in scored:
                    for metric, values in per_trial.items():
                        mean, low, high, std = _summarise(values)
                        metric_rows.append(
                            {
                                "mechanism": shown_name,
                                "label": shown_label,
                                "eps_puffer": eps,
                                "release": release + 1,
                                "metric": metric,
                                "mean": mean,
                                "ci_low": low,
                                "ci_high": high,
                                "std": std,
                                "trials": trials,
                            }
                        )
            done += 1
    report(1.0, "done")
    if not metric_rows:
        raise ValueError("no mechanism could be built for these data: " + "; ".join(refused.values()))

    metrics = pd.DataFrame(metric_rows)
    ledger = pd.DataFrame(ledger_rows).astype({"b": "Int64", "a": "Float64", "sigma_max": "Float64"})
    settings = _jsonable(
        {
            "query": query,
            "k": k if query == "topk" else None,
            "topk_laplace": topk_laplace if query == "topk" else None,
            "mechanisms": list(names),
            "eps_grid": list(grid),
            "releases": releases,
            "release_mode": release_mode,
            "trials": trials,
            "rng": rng_settings,
            "prior": prior_settings,
            "t_max": t_max,
            "curve": [[b, a] for b, a in curve.points()],
            "data": {**data.summary(), "group_labels": list(data.groups) if data.groups else ["all"]},
            "windows": window_settings,
            "accounting": accountings,
            "refused": refused,
            "interval": "mean ± 1.96·sd/√trials over trials (normal approximation)",
            "postprocess": POSTPROCESS_WORDS if postprocess else None,
            "secrets": secrets_text(curve.secrets),
            "protects": protected_words(curve.secrets, list(data.states)),
        }
    )
    return SimulationResult(metrics, ledger, settings)


def _metrics(
    mechanism: Mechanism, draws: np.ndarray, true: np.ndarray, query: str, k: int
) -> dict[str, np.ndarray]:
    """Per-trial metric values of what one release of one mechanism drew (or its post-processed counts)."""
    trials = draws.shape[0]
    if query == "topk":
        return _topk_metrics(mechanism.ranking(draws, k), true, k)
    nonempty = true.sum(axis=1) > 0
    errors = np.abs(draws - true[None]).sum(axis=2)  # (trials, groups)
    return {
        "L1": errors[:, nonempty].mean(axis=1),
        "L1 expected": np.full(trials, mechanism.expected_l1_error(true.shape[1])),
    }
