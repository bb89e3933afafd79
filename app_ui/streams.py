"""The Streams page: the ε_t schedule, cached numbers, the chart over t, the report and the script.

A stream releases r_t at every step t = 1..T, ε_t-DP for one entry (docs/math.md §10).  This
module reads the ε_t schedule the user typed (checked row by row), computes every number once
per input through :mod:`puffer_core.stream` and :mod:`puffer_core.audit.stream` (cached),
draws the chart over t, and writes the report and the script the page offers.  Nothing here
computes a privacy formula.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from puffer_core import MarkovChainPrior, calibrate
from puffer_core.audit.stream import StreamAudit, exact_stream_leakage
from puffer_core.priors.kinds import PRIOR_KINDS
from puffer_core.stream.bounds import (
    StreamPlan,
    TranslationBound,
    group_dp_bound,
    plan_stream,
    stream_bounds,
    translation_bound,
)
from puffer_core.stream.laws import laplace_histogram_emission, randomized_response_emission
from puffer_core.stream.tpl import (
    DivergenceThreshold,
    TemporalLeakage,
    tpl_divergence_threshold,
    tpl_refusal,
    tpl_supremum,
)

from .charts import Trace, line_figure
from .priors import Params, kind_curve, prior_source
from .report import Section, html_report, python_script
from .tables import Shown, fmt, shown

MAX_STEP_EPS = 10.0  # the largest ε_t a schedule row may hold
EXACT_STREAM_SEQUENCES = 5_000  # puffer_core.audit.stream's own limit
EXACT_STREAM_WORK = 30_000_000  # sequences × joint outputs × T × priors: about a second on one core

MECHANISMS: dict[str, str] = {
    "rr": "randomized response (report the state, or another one at random)",
    "histogram": "noisy histogram (discretised Laplace noise on each state's count)",
}
MECHANISM_SHORT = {"rr": "randomized response", "histogram": "noisy histogram"}


# --------------------------------------------------------------------------------------------
# the schedule


@dataclass(frozen=True)
class Schedule:
    """ε_1..ε_T; ``constant`` is the common value when every step has the same ε."""

    eps: tuple[float, ...]
    text: str
    segments: tuple[tuple[int, int, float], ...]

    @property
    def constant(self) -> float | None:
        return self.eps[0] if len(set(self.eps)) == 1 else None

    @property
    def length(self) -> int:
        return len(self.eps)


def constant_schedule(eps: float, length: int) -> Schedule:
    return Schedule((float(eps),) * length, f"ε = {eps:g} at every step t = 1..{length}", ((1, length, float(eps)),))


def _whole(value: object) -> int | None:
    """A whole number out of an editor cell, or None (empty, not a number, not whole)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number) or number != int(number):
        return None
    return int(number)


def _blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip() or value.strip().lower() == "end"
    try:
        return math.isnan(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _steps(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first}–{last}"


def _missing(first: int, last: int) -> str:
    return f"{_steps(first, last)} {'has' if first == last else 'have'} no ε"


def parse_segments(rows: Sequence[Sequence[object]], length: int) -> tuple[Schedule | None, list[str]]:
    """The schedule of an edited table of (from step, to step, ε per step) rows, or what is wrong with it.

    A blank "to" (or "end") means "to the end of the stream" (step T).  Every step 1..T needs exactly one ε.
    """
    problems: list[str] = []
    segments: list[tuple[int, int, float, int]] = []
    filled = [(i + 1, row) for i, row in enumerate(rows) if not all(_blank(v) for v in row)]
    if not filled:
        return None, ["the table is empty: add a row with the first step, the last step and ε"]
    for number, (first_raw, last_raw, eps_raw) in filled:
        first = _whole(first_raw)
        if first is None or first < 1:
            problems.append(f"row {number}: “from” must be a whole step number from 1 to T = {length}; got {first_raw}")
            continue
        if first > length:
            problems.append(f"row {number}: “from” is step {first}, beyond the stream's last step T = {length}")
            continue
        if _blank(last_raw):
            last = length
        else:
            last = _whole(last_raw)
            if last is None:
                problems.append(f"row {number}: “to” must be a whole step number or “end”; got {last_raw}")
                continue
            if last < first:
                problems.append(f"row {number}: “to” (step {last}) comes before “from” (step {first})")
                continue
            if last > length:
                problems.append(
                    f"row {number}: “to” is step {last}, beyond the stream's last step T = {length}"
                    " (write “end” for the last step)"
                )
                continue
        try:
            eps = float(eps_raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            eps = math.nan
        if not 0 <= eps <= MAX_STEP_EPS:
            shown = "nothing" if _blank(eps_raw) else (f"{eps:g}" if math.isfinite(eps) else eps_raw)
            problems.append(f"row {number}: ε must be a number from 0 to {MAX_STEP_EPS:g}; got {shown}")
            continue
        segments.append((first, last, eps, number))
    if problems:
        return None, problems
    segments.sort()
    covered = 0  # the last step covered so far
    owner = 0
    for first, last, _, number in segments:
        if first <= covered:
            overlap = _steps(first, min(last, covered))
            verb = "is" if first == min(last, covered) else "are"
            problems.append(f"{overlap} {verb} in rows {owner} and {number}: give each step one ε")
        elif first > covered + 1:
            problems.append(f"{_missing(covered + 1, first - 1)}: add a row for them or widen a neighbouring one")
        if last > covered:
            covered, owner = last, number
    if covered < length:
        problems.append(f"{_missing(covered + 1, length)}: add a row or write “end” as the last “to”")
    if problems:
        return None, problems
    eps = [0.0] * length
    for first, last, value, _ in segments:
        eps[first - 1 : last] = [value] * (last - first + 1)
    if not any(eps):
        return None, ["every ε_t is 0, so nothing is released: give at least one step a positive ε"]
    clean = tuple((first, last, value) for first, last, value, _ in segments)
    text = "; ".join(f"ε = {value:g} at {_steps(first, last)}" for first, last, value in clean)
    return Schedule(tuple(eps), text, clean), []


# --------------------------------------------------------------------------------------------
# the prior, and what can be computed for it


def build_prior(kind: str, params: Params) -> Any:
    """The prior of ``kind`` with these parameters (a MarkovChainPrior, a list of them, or a Gaussian one)."""
    return PRIOR_KINDS[kind].prior(dict(params))


def chain_priors(prior: Any) -> list[MarkovChainPrior] | None:
    """The Markov chain priors of a prior (Θ: all of them), or None for a Gaussian-process prior."""
    if isinstance(prior, MarkovChainPrior):
        return [prior]
    if isinstance(prior, (list, tuple)) and all(isinstance(p, MarkovChainPrior) for p in prior):
        return list(prior)
    return None


def _outputs_per_step(mechanism: str, n_states: int) -> int:
    return n_states if mechanism == "rr" else 2**n_states


def power_text(base: int, exponent: int) -> str:
    """base^exponent as text: the number itself when short, else its power of ten (no overflow)."""
    digits = exponent * math.log10(base)
    if digits < 7:
        return f"{base}^{exponent} = {base**exponent:,}"
    return f"{base}^{exponent} ≈ 10^{math.floor(digits)}"


def exact_stream_refusal(n_states: int, length: int, n_priors: int, mechanism: str) -> str | None:
    """Why the app does not enumerate this stream exactly, or None when it does."""
    outputs = _outputs_per_step(mechanism, n_states)
    if length * math.log10(n_states) > math.log10(EXACT_STREAM_SEQUENCES):
        return (
            f"{n_states} states over T = {length} steps give {power_text(n_states, length)} sequences;"
            f" the app enumerates at most {EXACT_STREAM_SEQUENCES:,}"
        )
    if n_states**length * outputs**length * length * n_priors > EXACT_STREAM_WORK:
        return (
            f"{n_states**length:,} sequences × {power_text(outputs, length)} joint outputs of the release"
            " would take well over a second to enumerate"
        )
    return None


def largest_exact_length(n_states: int, n_priors: int, mechanism: str) -> int | None:
    """The longest stream the app still enumerates exactly for this many states (None: not even T = 2)."""
    best = None
    for length in range(2, 40):
        if exact_stream_refusal(n_states, length, n_priors, mechanism) is not None:
            break
        best = length
    return best


def emissions(mechanism: str, n_states: int, eps: Sequence[float]) -> list[np.ndarray]:
    """The output law of each step's release (docs/math.md §10): one K×O matrix per step."""
    make = randomized_response_emission if mechanism == "rr" else laplace_histogram_emission
    return [make(n_states, e) for e in eps]


@dataclass(frozen=True)
class StreamNumbers:
    """Everything the chart over t shows, for one prior and one schedule."""

    eps: np.ndarray
    temporal: TemporalLeakage | None  # None: not a Markov chain prior
    translation: TranslationBound
    group_dp: float
    summary: str

    @property
    def tighter(self) -> float:
        """The smallest of the upper bounds."""
        values = [self.translation.eps_puffer, self.group_dp]
        if self.temporal is not None:
            values.append(self.temporal.max_tpl)
        return min(values)


@st.cache_data(show_spinner=False, max_entries=64)
def stream_numbers(kind: str, params: Params, eps: tuple[float, ...]) -> StreamNumbers:
    """TPL (Markov chain priors), the [C] bound and group DP of the stream, through the app's cached curve."""
    curve = kind_curve(kind, params)
    chains = chain_priors(build_prior(kind, params))
    if chains is None:
        translation = translation_bound(curve, eps)
        group = group_dp_bound(eps)
        summary = f"TPL needs a Markov chain prior, so the [C] bound is the one: ε = {fmt(translation.eps_puffer)}."
        return StreamNumbers(np.array(eps), None, translation, group, summary)
    refusal = tpl_refusal(chains)
    if refusal is not None:
        translation = translation_bound(curve, eps)
        summary = (
            f"TPL is not computed: {refusal}. The [C] bound does not need it: ε = {fmt(translation.eps_puffer)}."
        )
        return StreamNumbers(np.array(eps), None, translation, group_dp_bound(eps), summary)
    bounds = stream_bounds(chains if len(chains) > 1 else chains[0], eps, curve=curve)
    return StreamNumbers(np.array(eps), bounds.temporal, bounds.translation, bounds.group_dp, bounds.describe())


@st.cache_data(show_spinner=False, max_entries=32)
def stream_exact(kind: str, params: Params, eps: tuple[float, ...], mechanism: str) -> StreamAudit:
    """The exact leakage per entry by enumeration (docs/math.md §9); only for streams the app allows."""
    chains = chain_priors(build_prior(kind, params))
    if chains is None:
        raise ValueError("the exact audit needs a Markov chain prior")
    return exact_stream_leakage(chains, emissions(mechanism, chains[0].n_states, eps))


@dataclass(frozen=True)
class Supremum:
    """sup_t TPL_t of an unbounded stream with constant ε, and where it turns infinite."""

    eps: float
    value: float
    threshold: DivergenceThreshold

    def explain(self) -> str:
        limit = self.threshold
        if math.isfinite(self.value):
            where = (
                f" It stays finite for every ε below {fmt(limit.eps)}."
                if math.isfinite(limit.eps)
                else " It is finite for every ε: no state rules out a next (or previous) state another one allows."
            )
            return (
                f"An unbounded stream (t = 1, 2, … without end) with ε = {self.eps:g} at every step leaks at most"
                f" sup TPL = {fmt(self.value)} about any entry: the middle of a long stream gets there.{where}"
            )
        if limit.eps == 0:
            reason = (
                "some state's next (or previous) state is certain and ruled out by another state — a deterministic"
                " step, so every release adds its full ε to what the attacker knows and the sum never levels off"
            )
            return f"sup TPL = ∞ for every ε > 0: {reason}. Only a finite stream has a finite bound."
        return (
            f"sup TPL = ∞: with ε = {self.eps:g} ≥ −log m = {fmt(limit.eps)} the leakage grows without bound along"
            f" an unbounded stream. Here m = {fmt(limit.m)} is the probability with which one state's"
            f" {'previous' if limit.direction == 'backward' else 'next'} state is one that another state rules"
            f" out; each step then adds at least ε + log m > 0. Keep ε below {fmt(limit.eps)} for a finite supremum."
        )


@st.cache_data(show_spinner=False, max_entries=64)
def stream_supremum(kind: str, params: Params, eps: float) -> Supremum | None:
    """The supremum for constant ε (stationary Markov chain priors; None otherwise)."""
    chains = chain_priors(build_prior(kind, params))
    if chains is None or not all(p.stationary_initial for p in chains):
        return None
    return Supremum(eps, tpl_supremum(chains, eps), tpl_divergence_threshold(chains))


@st.cache_data(show_spinner=False, max_entries=64)
def stream_plan(kind: str, params: Params, target: float, unbounded: bool) -> StreamPlan:
    """The largest constant ε per step for a target, under TPL (NaN for a Gaussian prior), [C] and group DP."""
    curve = kind_curve(kind, params)
    chains = chain_priors(build_prior(kind, params))
    if chains is None or (not unbounded and tpl_refusal(chains) is not None):  # TPL out of reach: [C] alone
        return StreamPlan(target, math.nan, calibrate(curve, target).eps_dp, target / curve.length, False)
    return plan_stream(chains, target, curve=curve, unbounded=unbounded)


# --------------------------------------------------------------------------------------------
# the chart over t and the table


def stream_table(numbers: StreamNumbers, exact: StreamAudit | None) -> pd.DataFrame:
    """One row per step: ε_t, BPL, FPL, TPL, the [C] bound, group DP and the exact leakage."""
    length = numbers.eps.size
    table = pd.DataFrame({"t": np.arange(1, length + 1), "ε_t": numbers.eps})
    if numbers.temporal is not None:
        table["BPL"] = numbers.temporal.bpl
        table["FPL"] = numbers.temporal.fpl
        table["TPL"] = numbers.temporal.tpl
    table["[C] bound"] = numbers.translation.per_entry
    table["group DP"] = np.full(length, numbers.group_dp)
    if exact is not None:
        table["exact"] = np.asarray(exact.per_entry, dtype=float)
    return table


def stream_figure(numbers: StreamNumbers, exact: StreamAudit | None, log_y: bool) -> tuple[go.Figure, list[str]]:
    """BPL, FPL, TPL, the [C] bound, group DP and the exact leakage over t: one chart."""
    t = np.arange(1, numbers.eps.size + 1, dtype=float)
    markers = t.size <= 60
    traces = []
    if numbers.temporal is not None:
        traces += [
            Trace("TPL (temporal leakage)", t, numbers.temporal.tpl, width=3, markers=markers),
            Trace("BPL (from the past)", t, numbers.temporal.bpl, dash="dash", width=2, markers=False),
            Trace("FPL (from the future)", t, numbers.temporal.fpl, dash="dot", width=2, markers=False),
        ]
    traces.append(Trace("[C] bound", t, numbers.translation.per_entry, dash="dashdot", markers=markers))
    traces.append(Trace("group DP (Σ ε_t)", t, np.full(t.size, numbers.group_dp), dash="longdash", markers=False))
    if exact is not None:
        traces.append(Trace("exact (every sequence)", t, np.asarray(exact.per_entry), symbol="diamond", size=9))
    fig, notes = line_figure(
        traces,
        x_title="time step t",
        y_title="leakage about the entry at t (ε)",
        log_y=log_y,
        y_name="ε",
        x_name="t",
        height=440,
    )
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0}, margin={"b": 10})
    if np.allclose(numbers.translation.per_entry, numbers.group_dp, rtol=1e-12, atol=0):
        notes.append("The [C] bound equals group DP here (its best window is the whole stream): the lines coincide.")
    if t.size <= 12:
        fig.update_xaxes(dtick=1)
    return fig, notes


@dataclass(frozen=True, eq=False)
class StreamView:
    """What the page draws for one input: the numbers, the chart and the table (numbers and text)."""

    numbers: StreamNumbers
    exact: StreamAudit | None
    figure: go.Figure
    notes: tuple[str, ...]
    table: Shown


@st.cache_resource(show_spinner=False, max_entries=16)
def stream_view(
    kind: str, params: Params, eps: tuple[float, ...], mechanism: str, with_exact: bool, log_y: bool
) -> StreamView:
    """The chart and the table of one stream, built once per input (a figure costs ~0.1 s to build).

    Shared, not copied: callers must not change what they get.
    """
    numbers = stream_numbers(kind, params, eps)
    exact = stream_exact(kind, params, eps, mechanism) if with_exact else None
    figure, notes = stream_figure(numbers, exact, log_y)
    return StreamView(numbers, exact, figure, tuple(notes), shown(stream_table(numbers, exact)))


# --------------------------------------------------------------------------------------------
# the Streams page's report and script


@dataclass(frozen=True)
class StreamExport:
    """Everything the Streams page's report and script need (hashable: the report is cached on it)."""

    kind: str
    params: Params
    description: str
    schedule: Schedule
    mechanism: str
    exact: bool
    target: float
    unbounded: bool
    log_y: bool


def _number(value: float) -> str:
    return "∞" if value == math.inf else fmt(value)


def stream_report(export: StreamExport) -> str:
    """The Streams page as one offline HTML file (~4.6 MB: built when its download is clicked)."""
    view = stream_view(
        export.kind, export.params, export.schedule.eps, export.mechanism, export.exact, export.log_y
    )
    numbers, exact, fig, notes, table = view.numbers, view.exact, view.figure, list(view.notes), view.table.frame
    stride = max(1, math.ceil(len(table) / 500))
    table_notes = [] if stride == 1 else [f"Every {stride}th step is shown (the script prints all {len(table)})."]
    sections = [
        Section(
            "Leakage over time",
            numbers.summary
            + ("" if exact is None else f" The exact leakage (every sequence enumerated) is {_number(exact.eps)}."),
            fig,
            table.iloc[::stride],
            tuple(notes + table_notes),
        )
    ]
    constant = export.schedule.constant
    if constant is not None:
        supremum = stream_supremum(export.kind, export.params, constant)
        if supremum is not None:
            sections.append(Section("Unbounded stream", supremum.explain()))
    plan = stream_plan(export.kind, export.params, export.target, export.unbounded)
    sections.append(Section("Planner", plan_sentence(plan, numbers.eps.size), table=plan_table(plan)))
    settings = {
        "prior": export.description,
        "prior kind": PRIOR_KINDS[export.kind].label,
        **{name: value for name, value in export.params},
        "schedule": export.schedule.text,
        "mechanism (for the exact leakage)": MECHANISMS[export.mechanism],
        "planner target ε": export.target,
        "planner: unbounded stream": export.unbounded,
    }
    summary = f"A stream over {export.description}, {export.schedule.text}. {numbers.summary}"
    return html_report("Streams: leakage over time", summary, settings, sections)


def plan_table(plan: StreamPlan) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "bound": ["TPL", "[C] bound", "group DP"],
            "largest ε per step": [plan.eps_tpl, plan.eps_translation, plan.eps_group_dp],
        }
    )


def plan_sentence(plan: StreamPlan, length: int) -> str:
    """The planner's answer in words."""
    stream = "an unbounded stream" if plan.unbounded else f"a stream of T = {length} steps"
    parts = []
    if not math.isnan(plan.eps_tpl):
        parts.append(f"TPL allows ε = {fmt(plan.eps_tpl)} per step")
    parts.append(
        f"the [C] bound allows {fmt(plan.eps_translation)}"
        if plan.eps_translation > 0
        else "the [C] bound allows nothing (no curve point within reach meets the target)"
    )
    parts.append(
        "group DP allows nothing (infinitely many entries)" if plan.unbounded else f"group DP {fmt(plan.eps_group_dp)}"
    )
    text = f"To keep {stream} within ε = {plan.target:g}: " + ", ".join(parts) + "."
    if not math.isnan(plan.eps_tpl) and plan.eps_tpl > 0 and plan.eps_translation > 0:
        high, low = max(plan.eps_tpl, plan.eps_translation), min(plan.eps_tpl, plan.eps_translation)
        winner = "TPL" if plan.eps_tpl >= plan.eps_translation else "The [C] bound"
        if not math.isclose(high, low, rel_tol=1e-9):
            text += f" {winner} allows {high / low:.3g}× as much ε per step."
    return text


@st.cache_data(show_spinner=False, max_entries=32)
def stream_script(export: StreamExport) -> str:
    """A Python program that recomputes the Streams page's numbers with puffer_core and prints them.

    Output: ``name value`` lines (values as Python floats, ``inf`` for ∞), then a header line
    ``t eps bpl fpl tpl c_bound exact`` and one line per step (``nan`` where the page shows no value).
    """
    markov = chain_priors(build_prior(export.kind, export.params))
    chains = markov is not None and tpl_refusal(markov) is None  # else the page shows [C] and group DP only
    why = "TPL needs a Markov chain prior" if markov is None else "TPL is out of reach here (tpl_refusal(prior))"
    names, prior = prior_source(export.kind, export.params)
    segments = ",\n    ".join(repr(s) for s in export.schedule.segments)
    lines = [
        prior.rstrip("\n"),
        f"SEGMENTS = [  # (first step, last step, ε per step)\n    {segments},\n]",
        f"MECHANISM = {export.mechanism!r}  # the release at each step, for the exact leakage",
        f"EXACT = {export.exact!r}  # the page enumerates every sequence only for tiny chains",
        f"TARGET = {export.target!r}  # the planner's target ε",
        f"UNBOUNDED = {export.unbounded!r}",
        "",
        "curve = influence_curve(prior)  # the a(b) curve (docs/math.md §2)",
        "length = curve.length",
        "eps = [0.0] * length",
        "for first, last, value in SEGMENTS:",
        "    eps[first - 1 : last] = [value] * (last - first + 1)",
        "",
        "nan = [math.nan] * length",
        "",
    ]
    if chains:
        lines += [
            "bounds = stream_bounds(prior, eps, curve=curve)  # TPL, the [C] bound, group DP (docs/math.md §10)",
            "temporal, translation = bounds.temporal, bounds.translation",
            'print("max_tpl", repr(temporal.max_tpl))',
            'print("c_bound", repr(translation.eps_puffer))',
            'print("group_dp", repr(bounds.group_dp))',
            'print("summary", bounds.describe())',
            "bpl, fpl, tpl = list(temporal.bpl), list(temporal.fpl), list(temporal.tpl)",
            "exact = nan",
            "if EXACT:",
            "    chains = prior if isinstance(prior, list) else [prior]",
            "    make = randomized_response_emission if MECHANISM == 'rr' else laplace_histogram_emission",
            "    audit = exact_stream_leakage(prior, [make(chains[0].n_states, e) for e in eps])",
            "    exact = list(audit.per_entry)",
            '    print("exact", repr(audit.eps))',
            "if len(set(eps)) == 1:  # constant ε: the unbounded stream's supremum",
            '    print("sup_tpl", repr(float(tpl_supremum(prior, eps[0]))))',
            '    print("divergence_eps", repr(float(tpl_divergence_threshold(prior).eps)))',
            "plan = plan_stream(prior, TARGET, curve=curve, unbounded=UNBOUNDED)",
            'print("plan_eps_tpl", repr(plan.eps_tpl))',
            'print("plan_eps_c", repr(plan.eps_translation))',
            'print("plan_eps_group_dp", repr(plan.eps_group_dp))',
        ]
    else:
        lines += [
            f"translation = translation_bound(curve, eps)  # {why}: [C] and group DP only",
            "group = group_dp_bound(eps)",
            'print("c_bound", repr(translation.eps_puffer))',
            'print("group_dp", repr(group))',
            "bpl = fpl = tpl = exact = nan",
            'print("plan_eps_c", repr(calibrate(curve, TARGET).eps_dp))',
            'print("plan_eps_group_dp", repr(TARGET / length))',
        ]
    lines += [
        'print("t eps bpl fpl tpl c_bound exact")',
        "for t in range(length):",
        "    row = (eps[t], bpl[t], fpl[t], tpl[t], translation.per_entry[t], exact[t])",
        '    print(t + 1, " ".join(repr(float(v)) for v in row))',
    ]
    return python_script(
        f"Recompute the Streams page of Pufferfish Lab: {export.description}.",
        ["Prints one `name value` line per number, then one line per time step t = 1..T."],
        "stream",
        [
            "import math",
            f"from puffer_core import {names}, calibrate, influence_curve",
            "from puffer_core.stream import (\n    group_dp_bound,\n    laplace_histogram_emission,\n    plan_stream,\n"
            "    randomized_response_emission,\n    stream_bounds,\n    tpl_supremum,\n    translation_bound,\n)",
            "from puffer_core.audit import exact_stream_leakage",
            "from puffer_core.stream import tpl_divergence_threshold",
        ],
        "\n".join(lines),
    )


def parse_script_output(text: str) -> tuple[dict[str, str], pd.DataFrame]:
    """What a stream script printed: the named values (as text) and the table per step."""
    named: dict[str, str] = {}
    rows = []
    header = None
    for line in text.splitlines():
        if header is not None:
            rows.append([float(v) for v in line.split()])
        elif line.startswith("t eps "):
            header = line.split()
        else:
            name, _, value = line.partition(" ")
            named[name] = value
    return named, pd.DataFrame(rows, columns=header)
