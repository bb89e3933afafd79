"""What the Classroom page shows: its numbers, charts and words for each of its three tabs.

The numbers come from :mod:`puffer_core.classroom` and :mod:`puffer_core.audit` (docs/math.md
§8, §9); each tab's are computed once per input and shared between sessions
(:func:`collapse_view`, :func:`posterior_figure`, :func:`laplace_view`, :func:`chain_view`, with
``st.cache_resource``: nobody changes what they get).  Every sentence is built from those numbers,
so that it says what the data show: the run at which the attacker became certain, and where the
exact leakage of k releases is above or below k times one release.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core.charts import Trace, line_figure
from app_ui.core.tables import fmt
from puffer_core import (
    LAPLACE,
    MECHANISMS,
    MarkovChainPrior,
    Output,
    certify,
    cumulative,
    curve_mechanisms,
    group_dp_cumulative,
    influence_curve,
    make_mechanism,
)
from puffer_core.audit.exact import leakage_report
from puffer_core.classroom import (
    FiniteModel,
    appendix_j_example,
    composability,
    example_1,
    example_2,
    example_3,
    expected_runs_to_reveal,
    laplace_sum_leakage,
    leakage_by_runs,
    posterior_trace,
    randomized_response,
    randomized_response_per_entry,
)

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
MAX_LINES = 8  # (secret pair, prior) lines on a posterior chart
TOLERANCE = 1e-9  # leakages closer than this to k × one release count as equal


MAX_RUNS = 12  # runs the attacker may see
MAX_K_CHECKED = 6  # runs whose exact leakage is computed


def example_parameters(name: str) -> tuple:
    """The construction's parameters, set with the controls drawn here."""
    if name == "[C] Example 1":
        return (st.slider("Pr[s1]", 0.05, 0.95, 0.5, 0.05, key="w_ex1_prob", persist_state="session"),)
    if name == "[C] Example 2":
        return (st.slider("Number of fair bits n", 3, 6, 3, key="w_ex2_n", persist_state="session"),)
    if name == "[C] Example 3":
        cols = st.columns(2)
        low_t, high_t = cols[0].slider(
            "Pr[U_T | s1] ranges over", 0.05, 0.95, (0.35, 0.65), 0.05, key="w_ex3_t", persist_state="session"
        )
        low_f, high_f = cols[1].slider(
            "Pr[U_F | ¬s1] ranges over", 0.05, 0.95, (0.4, 0.6), 0.05, key="w_ex3_f", persist_state="session"
        )
        return (low_t, high_t, low_f, high_f)
    return ()


@st.cache_resource(show_spinner=False, max_entries=32)
def example_model(name: str, params: tuple) -> FiniteModel:
    """The construction ``name`` with these parameters (ValueError if they cannot build it)."""
    if name == "[C] Example 1":
        return example_1(prob_first=params[0])
    if name == "[C] Example 2":
        return example_2(params[0])
    if name == "[C] Example 3":
        return example_3(*params)
    return appendix_j_example()


EXAMPLES: dict[str, str] = {
    "[C] Example 1": "One prior; every output is equally likely under both secrets, yet two different"
    " outputs reveal the dataset.",
    "[C] Example 2": "n fair bits; each output alone says nothing about any bit, one output of each type"
    " reveals them all.",
    "[C] Example 3": "Many priors Θ; each run leaks a finite ε, two different outputs reveal the secret.",
    "[P] Appendix J": "Two bits; one run leaks nothing, two runs can leak everything (ε = ∞).",
}


def readable(value: Hashable) -> str:
    """An output or a dataset without Python's quotes: ('A1', 'B2') → (A1, B2), (0, 1) → (0, 1)."""
    if isinstance(value, tuple):
        return "(" + ", ".join(readable(v) for v in value) + ")"
    return str(value)


def output_text(output: Hashable) -> str:
    """An output as the page shows it; [C] Example 2's two types of output say what they hold."""
    if isinstance(output, tuple) and len(output) == 2 and output[0] == "A" and isinstance(output[1], tuple):
        bits = ", ".join(f"x{str(i + 2).translate(SUBSCRIPTS)}⊕x₁ = {bit}" for i, bit in enumerate(output[1]))
        return f"type A: {bits}"
    if isinstance(output, tuple) and len(output) == 2 and output[0] == "B" and isinstance(output[1], int):
        return f"type B: parity {output[1]}"
    return readable(output)


def true_secret_posterior(trace: pd.DataFrame) -> pd.DataFrame:
    """Posterior of the secret that actually holds, one column per (pair, prior), one row per run."""
    frame = trace[trace["truth"] != "neither"].copy()
    frame["posterior of the truth"] = np.where(frame["truth"] == "i", frame["posterior_i"], frame["posterior_j"])
    frame["line"] = frame["pair"] + " | " + frame["prior"]
    return frame.pivot_table(index="run", columns="line", values="posterior of the truth", sort=False)


@dataclass(frozen=True, eq=False)
class CollapseView:
    """A construction run after run beside randomized response: traces, exact ε of k runs, the ε chart."""

    model: FiniteModel
    collapse_trace: pd.DataFrame
    rr_trace: pd.DataFrame
    collapse_eps: list[float]
    rr_eps: list[float]
    expected_runs: float
    composability: float
    rr_composability: float
    figure: go.Figure
    notes: tuple[str, ...]
    traces_csv: pd.DataFrame
    eps_csv: pd.DataFrame


@st.cache_resource(show_spinner=False, max_entries=64)
def collapse_view(name: str, params: tuple, true_dataset: Hashable, seed: int, rr_eps: float) -> CollapseView:
    """Everything the first tab shows for one construction, truth, seed and ε (ValueError if it cannot run)."""
    model = example_model(name, params)
    collapse_trace = posterior_trace(model, true_dataset, MAX_RUNS, np.random.default_rng(seed))
    rr_model = randomized_response(model, rr_eps)
    rr_trace = posterior_trace(rr_model, true_dataset, MAX_RUNS, np.random.default_rng(seed))
    collapse_eps = leakage_by_runs(model, MAX_K_CHECKED)
    rr_eps_k = leakage_by_runs(rr_model, MAX_K_CHECKED)
    ks = np.arange(1, MAX_K_CHECKED + 1, dtype=float)
    fig, notes = line_figure(
        [
            Trace(
                "k × ε of one randomized-response run",
                ks,
                ks * rr_eps_k[0],
                dash="dot",
                width=5,
                markers=False,
                color="#c7c7c7",
            ),
            Trace(name, ks, np.array(collapse_eps)),
            Trace("randomized response", ks, np.array(rr_eps_k), width=2),
        ],
        x_title="number of runs k",
        y_title="exact ε_puffer of k runs",
        y_name="ε",
        x_name="k",
        height=320,
    )
    both = pd.concat([collapse_trace.assign(mechanism=name), rr_trace.assign(mechanism="randomized response")])
    traces_csv = both.assign(output=[None if o is None else output_text(o) for o in both["output"]])
    eps_csv = pd.DataFrame({"runs": ks.astype(int), name: collapse_eps, "randomized response": rr_eps_k})
    return CollapseView(
        model,
        collapse_trace,
        rr_trace,
        collapse_eps,
        rr_eps_k,
        expected_runs_to_reveal(model, true_dataset),
        composability(model).eps,
        composability(rr_model).eps,
        fig,
        tuple(notes),
        traces_csv,
        eps_csv,
    )


@st.cache_resource(show_spinner=False, max_entries=256)
def posterior_figure(
    name: str, params: tuple, true_dataset: Hashable, seed: int, rr_eps: float, which: str, step: int
) -> tuple[go.Figure, tuple[str, ...]]:
    """The posterior of the true secret over the first ``step`` runs (``which``: "collapse" or "rr"); its notes."""
    view = collapse_view(name, params, true_dataset, seed, rr_eps)
    wide = true_secret_posterior(view.collapse_trace if which == "collapse" else view.rr_trace)
    total = len(wide.columns)
    wide = wide.loc[wide.index <= step]
    traces = [
        Trace(str(column), wide.index.to_numpy(dtype=float), wide[column].to_numpy(dtype=float))
        for column in wide.columns[:MAX_LINES]
    ]
    fig, notes = line_figure(
        traces,
        x_title="runs seen by the attacker",
        y_title="posterior of the true secret",
        y_name="posterior",
        x_name="run",
        y_range=(0.0, 1.05),
        height=330,
    )
    fig.update_xaxes(range=[-0.3, MAX_RUNS + 0.3], dtick=1)
    if total > MAX_LINES:
        notes.append(f"Showing {MAX_LINES} of {total} (secret pair, prior) lines.")
    return fig, tuple(notes)


def first_certain(trace: pd.DataFrame, step: int) -> dict[str, int | None]:
    """For each true secret: the first run ≤ ``step`` after which every attacker (every prior) is certain of it."""
    frame = trace[(trace["truth"] != "neither") & (trace["run"] <= step)]
    out: dict[str, int | None] = {}
    for _, rows in frame.groupby("pair", sort=False):
        truth = rows["secret_i"].iloc[0] if rows["truth"].iloc[0] == "i" else rows["secret_j"].iloc[0]
        certain = rows.groupby("run")["revealed"].all()
        runs = certain.index[certain.to_numpy()]
        out[str(truth)] = int(runs.min()) if len(runs) else None
    return out


def reveal_sentence(trace: pd.DataFrame, step: int) -> str | None:
    """What the attacker knows after ``step`` runs, from the trace: None while no secret has fallen."""
    runs = first_certain(trace, step)
    fallen = {secret: run for secret, run in runs.items() if run is not None}
    if not fallen:
        return None
    first = min(fallen.values())
    when = f"After run {first}" if first == step else f"Since run {first} (of the {step} so far)"
    if len(fallen) == len(runs) and len(set(fallen.values())) == 1:
        what = "the secret" if len(runs) == 1 else "every secret"
        return f"{when} the attacker is **certain** of {what}: {', '.join(fallen)}. Privacy collapsed."
    parts = ", ".join(f"{secret} (since run {run})" for secret, run in fallen.items())
    open_ = [secret for secret, run in runs.items() if run is None]
    rest = f"; not yet of {', '.join(open_)}." if open_ else ". Privacy collapsed."
    return f"The attacker is **certain** of {parts}{rest}"


def laplace_reading(p: float, q: float, plain: Sequence[float]) -> str:
    """What the exact leakage of k releases of X₁+X₂+Lap(1) shows against k × one release, for these p, q."""
    if len(plain) < 2:
        return "Add releases to compare the exact leakage of k releases with k × one release."
    ks = np.arange(1, len(plain) + 1)
    excess = np.asarray(plain, dtype=float) - ks * plain[0]
    above = [int(k) for k, e in zip(ks, excess) if e > TOLERANCE]
    below = [int(k) for k, e in zip(ks, excess) if e < -TOLERANCE]
    chain = f"With p = {p:g} and q = {q:g}"
    if not above:
        return (
            f"{chain}, the exact leakage of k releases stays at or below k × one release for every k shown:"
            " this chain does not break linear composition. [S]'s counterexample needs strong correlation,"
            " such as p = 0.9 and q = 0.01, and no theorem rules it out for a general Pufferfish mechanism."
        )
    worst = int(np.argmax(excess))
    k_worst, gap = worst + 1, float(excess[worst])
    where = (
        f"{k_worst} releases leak" if len(above) == 1 else f"k releases leak more at k = {_ks(above)}; {k_worst} leak"
    )
    sentence = (
        f"{chain}, {where} {gap:.4f} nats more than {k_worst} × one release: the attacker's odds can move"
        f" {np.expm1(gap):.2%} further than adding up the per-release ε allows. The excess is small, but one is"
        " enough: the ε of a general Pufferfish mechanism cannot be added up into a guarantee for several"
        " releases ([S] Theorem III.4)."
    )
    if below:
        sentence += (
            f" At k = {_ks(below)} the exact leakage is below k × one release: the lesson is not that leakage"
            " always grows faster than linearly, but that a general Pufferfish mechanism comes with no rule for"
            " the total; only an exact computation like this one tells. The calibrated releases come with one,"
            " [C] Theorem 6.2 (dashed)."
        )
    return sentence


def _ks(values: Sequence[int]) -> str:
    return ", ".join(str(v) for v in values)


def excess_delta(plain: Sequence[float]) -> str:
    """The metric's delta: two releases against twice one release."""
    return f"{plain[1] - 2 * plain[0]:+.4f} vs 2 × one release"


@dataclass(frozen=True, eq=False)
class LaplaceView:
    """[S] Theorem III.4's two-node chain: X₁+X₂+Lap(1) k times, and the calibrated releases with their bound."""

    plain: np.ndarray
    calibrated: np.ndarray
    bound: np.ndarray
    scale: float
    eps_dp: float
    figure: go.Figure
    notes: tuple[str, ...]
    table: pd.DataFrame


# the curve-calibrated mechanism that adds Laplace noise to counts (its record says so)
LAPLACE_COUNTS = next(
    name for name in curve_mechanisms()
    if MECHANISMS[name].noise is LAPLACE and MECHANISMS[name].releases is Output.COUNTS
)


@st.cache_resource(show_spinner=False, max_entries=128)
def laplace_view(p: float, q: float, releases: int, target: float) -> LaplaceView:
    """The second tab's numbers for one chain, number of releases and ε_puffer (ValueError for a bad chain)."""
    ks = np.arange(1, releases + 1)
    plain = np.array([laplace_sum_leakage(p, q, int(k)) for k in ks])
    chain = MarkovChainPrior([[1 - q, q], [1 - p, p]], length=2)
    # X₁ + X₂ moves by at most 1 when one entry changes: sensitivity 1; the curve-calibrated Laplace counts
    calibrated_laplace: Any = make_mechanism(
        LAPLACE_COUNTS, float(target), influence_curve(chain), chain, query="histogram", sensitivity=1.0
    )
    cal = calibrated_laplace.accounting.calibration
    scale = calibrated_laplace.scale
    calibrated = np.array([laplace_sum_leakage(p, q, int(k), scale=scale) for k in ks])
    bound = np.asarray(cumulative([cal] * releases), dtype=float)
    kx = ks.astype(float)
    fig, notes = line_figure(
        [
            Trace("X₁+X₂+Lap(1): exact", kx, plain),
            Trace("k × one release of Lap(1)", kx, kx * plain[0], dash="dot"),
            Trace(f"calibrated Lap({fmt(scale)}): exact", kx, calibrated),
            Trace("Theorem 6.2 bound for the calibrated releases", kx, bound, dash="dash"),
        ],
        x_title="releases k",
        y_title="ε_puffer of k releases (secret X₁)",
        y_name="ε",
        x_name="k",
    )
    fig.update_xaxes(dtick=1)
    table = pd.DataFrame(
        {
            "k": ks,
            "Lap(1) exact": plain,
            "k × one": kx * plain[0],
            "excess": plain - kx * plain[0],
            "calibrated exact": calibrated,
            "Theorem 6.2 bound": bound,
        }
    )
    return LaplaceView(plain, calibrated, bound, scale, cal.eps_dp, fig, tuple(notes), table)


@dataclass(frozen=True, eq=False)
class ChainView:
    """A tiny chain audited exactly, release after release, beside its guarantee and group DP."""

    table: pd.DataFrame  # empty when not even one release could be enumerated
    stopped: str  # why the audit stopped before the last release ("" when it did not)
    figure: go.Figure | None
    notes: tuple[str, ...]


@st.cache_resource(show_spinner=False, max_entries=64)
def chain_view(matrix: tuple[tuple[float, ...], ...], length: int, eps_dp: float, releases: int) -> ChainView:
    """The exact leakage of randomized response on every entry of this chain, 1..``releases`` releases.

    ValueError when the chain cannot be audited (its message says why).
    """
    prior = MarkovChainPrior(np.array(matrix, dtype=float), length=length)
    curve = influence_curve(prior)
    mechanism = randomized_response_per_entry(len(matrix), eps_dp)
    guarantees = cumulative([certify(curve, eps_dp)] * releases)  # Theorem 6.2 (docs/math.md §3, §4)
    group_eps = group_dp_cumulative(length, [eps_dp] * releases)  # k·T·ε_DP (docs/math.md §1, §4)
    rows, stopped = [], ""
    for k in range(1, releases + 1):
        try:
            report = leakage_report(prior, mechanism, releases=k)
        except ValueError as exc:
            stopped = f"{k} releases: {exc}"
            break
        rows.append(
            {
                "k": k,
                "exact leakage": report.eps,
                "guarantee": float(guarantees[k - 1]),
                "group DP": float(group_eps[k - 1]),
                "worst entry": None if report.entry is None else report.entry + 1,
                "worst pair": "" if report.pair is None else f"{report.pair[0]} vs {report.pair[1]}",
            }
        )
    table = pd.DataFrame(rows)
    if not rows:
        return ChainView(table, stopped, None, ())
    kx = table["k"].to_numpy(dtype=float)
    fig, notes = line_figure(
        [
            Trace("exact leakage", kx, table["exact leakage"].to_numpy(dtype=float)),
            Trace(
                "guarantee (a(b) curve, Theorem 6.2)",
                kx,
                table["guarantee"].to_numpy(dtype=float),
                dash="dash",
            ),
            Trace("group DP (k·T·ε_DP)", kx, table["group DP"].to_numpy(dtype=float), dash="dot"),
        ],
        x_title="releases",
        y_title="ε_puffer",
        y_name="ε",
        x_name="releases",
        height=320,
    )
    fig.update_xaxes(dtick=1)
    return ChainView(table, stopped, fig, tuple(notes))
