"""The Streams page: the ε_t schedule, cached numbers, the charts over t, the report and the script.

A stream releases r_t at every step t = 1..T, ε_t-DP for one entry (docs/math.md §10).  This
module reads the ε_t schedule the user typed (checked row by row), computes every number once
per input through the registries of :mod:`puffer_core.stream.registry` (the bounds) and
:mod:`puffer_core.tightness.releases` (the releases and their exact leakage), draws the charts over
t, and writes the report and the script the page offers.  Nothing here computes a privacy formula;
a bound added to the registry appears in every metric, chart, table, plan and script by itself.
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

from app_ui.core.charts import Trace, line_figure
from app_ui.core.report import Section, html_report
from app_ui.core.tables import Shown, fmt, shown
from app_ui.core.templates import Code, fill
from app_ui.prior.current import Params, build_prior, chain_priors, kind_curve, prior_source
from app_ui.secrets.views import chosen_curve, value_secrets_of
from app_ui.streams.settings import MAX_STEP_EPS
from puffer_core.audit.stream import StreamAudit
from puffer_core.priors.kinds import PRIOR_KINDS
from puffer_core.secrets import Secrets
from puffer_core.stream.bounds import describe_bounds
from puffer_core.stream.registry import (
    STREAM_BOUNDS,
    BoundValues,
    StreamSetting,
    bound_table,
    plan_table,
    stream_setting,
)
from puffer_core.stream.schedule import StreamSchedule, optimal_schedule
from puffer_core.stream.supremum import DivergenceThreshold, tpl_divergence_threshold, tpl_supremum
from puffer_core.stream.tpl import TemporalLeakage
from puffer_core.tightness.releases import RELEASES

Directions = tuple[Any, Any]  # (backward, forward) matrices as nested tuples, None for the prior's own
DEFAULT_DIRECTIONS: Directions = (None, None)

# the words the page uses for a bound beside its registry label (a new bound needs none of these)
LEGENDS = {"tpl": "TPL (temporal leakage)", "group_dp": "group DP (Σ ε_t)"}
METRIC_LABELS = {"tpl": "Max TPL over t", "group_dp": "Group DP"}
METRIC_HELP = {
    "tpl": "[TPL]: max_t BPL_t + FPL_t − ε_t.",
    "c_bound": "min_b b·ε + a(b), refined per entry.",
    "group_dp": "Σ ε_t: every entry of the user may change.",
}
def legend(name: str) -> str:
    return LEGENDS.get(name, STREAM_BOUNDS[name].label)


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, STREAM_BOUNDS[name].label)


def plan_label(name: str) -> str:
    return f"ε per step under {STREAM_BOUNDS[name].short}"


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


def schedule_of(eps: Sequence[float], text: str) -> Schedule:
    """A schedule of any values (one segment per run of equal ε)."""
    values = tuple(float(v) for v in eps)
    segments = []
    start = 0
    for t in range(1, len(values) + 1):
        if t == len(values) or values[t] != values[start]:
            segments.append((start + 1, t, values[start]))
            start = t
    return Schedule(values, text, tuple(segments))


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
            seen = "nothing" if _blank(eps_raw) else (f"{eps:g}" if math.isfinite(eps) else eps_raw)
            problems.append(f"row {number}: ε must be a number from 0 to {MAX_STEP_EPS:g}; got {seen}")
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


def chosen_secrets(text: str) -> Secrets | None:
    """The value secrets written ``text`` (resolved on the prior's entries), None for "" (every pair, every entry)."""
    return value_secrets_of(text, "the stream bounds take value pairs and positions, not event secrets")


def setting_of(
    kind: str, params: Params, directions: Directions = DEFAULT_DIRECTIONS, secrets: str = ""
) -> StreamSetting:
    """What the stream bounds read: the chains (or the Gaussian prior), its cached a(b) curve and the directions;
    ``secrets``: the chosen value secrets' text ("" for every pair at every entry, docs/math.md §16)."""
    backward, forward = directions
    chosen = chosen_secrets(secrets)
    if chosen is None:
        return stream_setting(build_prior(kind, params), kind_curve(kind, params), backward, forward)
    curve = chosen_curve(kind, params, secrets)
    return stream_setting(build_prior(kind, params), curve, backward, forward, secrets=chosen)


@dataclass(frozen=True)
class StreamNumbers:
    """Every bound the chart over t shows (by registry name), for one prior and one schedule."""

    eps: np.ndarray
    bounds: dict[str, BoundValues]
    summary: str

    @property
    def temporal(self) -> TemporalLeakage | None:
        """TPL's BPL, FPL and TPL (None when TPL was not computed)."""
        tpl = self.bounds.get("tpl")
        return None if tpl is None or tpl.values is None else tpl.detail  # type: ignore[return-value]

    def max(self, name: str) -> float:
        return self.bounds[name].max

    @property
    def tighter(self) -> float:
        """The smallest of the upper bounds."""
        return min(v.max for v in self.bounds.values() if v.values is not None)


def summary_of(bounds: dict[str, BoundValues]) -> str:
    """Which bound is tightest, or why TPL is missing."""
    tpl = bounds["tpl"]
    c = bounds["c_bound"].max
    if tpl.values is None and tpl.refusal == "TPL needs a Markov chain prior":
        return f"TPL needs a Markov chain prior, so the [C] bound is the one: ε = {fmt(c)}."
    if tpl.values is None:
        return f"TPL is not computed: {tpl.refusal}. The [C] bound does not need it: ε = {fmt(c)}."
    chain_bounds = {
        STREAM_BOUNDS[name].in_words: values.max
        for name, values in bounds.items()
        if values.values is not None and STREAM_BOUNDS[name].compared
    }
    return describe_bounds(chain_bounds)


@st.cache_data(show_spinner=False, max_entries=64)
def stream_numbers(
    kind: str, params: Params, eps: tuple[float, ...], directions: Directions = DEFAULT_DIRECTIONS, secrets: str = ""
) -> StreamNumbers:
    """Every registered bound of the stream, through the app's cached curve (for the secrets written ``secrets``)."""
    bounds = bound_table(setting_of(kind, params, directions, secrets), eps)
    return StreamNumbers(np.array(eps), bounds, summary_of(bounds))


def exact_stream_refusal(n_states: int, length: int, n_priors: int, release: str) -> str | None:
    """Why the app does not enumerate this stream exactly, or None when it does."""
    return RELEASES[release].exact_refusal(n_states, length, n_priors)


@st.cache_data(show_spinner=False, max_entries=32)
def stream_exact(kind: str, params: Params, eps: tuple[float, ...], release: str, secrets: str = "") -> StreamAudit:
    """The exact leakage per entry by enumeration (docs/math.md §9); only for streams the app allows; about the
    chosen value pairs at the protected entries for ``secrets`` (0 at the others, docs/math.md §16)."""
    chains = chain_priors(build_prior(kind, params))
    if chains is None:
        raise ValueError("the exact audit needs a Markov chain prior")
    setting = setting_of(kind, params)
    return RELEASES[release].exact_stream(setting.chains, eps, chosen_secrets(secrets))


@dataclass(frozen=True)
class Supremum:
    """sup_t TPL_t of an unbounded stream with constant ε, and where it turns infinite."""

    eps: float
    value: float
    threshold: DivergenceThreshold
    chosen: bool = False  # for chosen value pairs: the threshold (every pair's) is not theirs

    def explain(self) -> str:
        limit = self.threshold
        if self.chosen:
            value = "∞" if math.isinf(self.value) else fmt(self.value)
            return (
                f"An unbounded stream (t = 1, 2, … without end) with ε = {self.eps:g} at every step leaks at most"
                f" sup TPL = {value} about any entry, for the chosen pairs of values (docs/math.md §16: positions do"
                " not lower the supremum of an endless stream, whose middle entries are all alike)."
            )
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
def stream_supremum(
    kind: str, params: Params, eps: float, directions: Directions = DEFAULT_DIRECTIONS, secrets: str = ""
) -> Supremum | None:
    """The supremum for constant ε (stationary Markov chain priors; None otherwise), for ``secrets``."""
    chains = chain_priors(build_prior(kind, params))
    if chains is None or not all(p.stationary_initial for p in chains):
        return None
    backward, forward = directions
    return Supremum(
        eps,
        tpl_supremum(chains, eps, backward=backward, forward=forward, secrets=chosen_secrets(secrets)),
        tpl_divergence_threshold(chains, backward=backward, forward=forward),
        bool(secrets),
    )


@st.cache_data(show_spinner=False, max_entries=64)
def stream_plan(
    kind: str,
    params: Params,
    target: float,
    unbounded: bool,
    directions: Directions = DEFAULT_DIRECTIONS,
    secrets: str = "",
) -> dict[str, float]:
    """The largest constant ε per step for a target under every bound (NaN where it does not apply)."""
    return plan_table(setting_of(kind, params, directions, secrets), target, unbounded)


@st.cache_data(show_spinner=False, max_entries=32)
def stream_schedule(
    kind: str, params: Params, target: float, directions: Directions = DEFAULT_DIRECTIONS, secrets: str = ""
) -> StreamSchedule:
    """The optimal schedule for the target over the prior's length (Markov chain priors), for ``secrets``."""
    setting = setting_of(kind, params, directions, secrets)
    backward, forward = directions
    return optimal_schedule(
        list(setting.chains), target, setting.length, backward, forward, chosen_secrets(secrets)
    )


def schedule_refusal(
    kind: str, params: Params, directions: Directions = DEFAULT_DIRECTIONS, secrets: str = ""
) -> str | None:
    """Why no optimal schedule is offered (it rests on TPL), or None."""
    setting = setting_of(kind, params, directions, secrets)
    values = STREAM_BOUNDS["tpl"]
    if setting.chains is None:
        return "the optimal schedule keeps TPL within the target, and TPL needs a Markov chain prior"
    return values.refusal(setting)


# --------------------------------------------------------------------------------------------
# the chart over t and the table


def stream_table(numbers: StreamNumbers, exact: StreamAudit | None) -> pd.DataFrame:
    """One row per step: ε_t, BPL, FPL, every bound and the exact leakage."""
    length = numbers.eps.size
    table = pd.DataFrame({"t": np.arange(1, length + 1), "ε_t": numbers.eps})
    temporal = numbers.temporal
    if temporal is not None:
        table["BPL"] = temporal.bpl
        table["FPL"] = temporal.fpl
    for name, values in numbers.bounds.items():
        if values.values is not None:
            table[STREAM_BOUNDS[name].label] = values.values
    if exact is not None:
        table["exact"] = np.asarray(exact.per_entry, dtype=float)
    return table


def stream_figure(numbers: StreamNumbers, exact: StreamAudit | None, log_y: bool) -> tuple[go.Figure, list[str]]:
    """Every bound, BPL and FPL, and the exact leakage over t: one chart."""
    t = np.arange(1, numbers.eps.size + 1, dtype=float)
    markers = t.size <= 60
    traces = []
    temporal = numbers.temporal
    for name, values in numbers.bounds.items():
        if values.values is None:
            continue
        if name == "tpl":
            traces.append(Trace(legend(name), t, values.values, width=3, markers=markers))
            traces.append(Trace("BPL (from the past)", t, temporal.bpl, dash="dash", width=2, markers=False))
            traces.append(Trace("FPL (from the future)", t, temporal.fpl, dash="dot", width=2, markers=False))
        elif np.all(values.values == values.values[0]):
            traces.append(Trace(legend(name), t, values.values, dash="longdash", markers=False))
        else:
            traces.append(Trace(legend(name), t, values.values, dash="dashdot", markers=markers))
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
    c, group = numbers.bounds["c_bound"].values, numbers.bounds["group_dp"].values
    if np.allclose(c, group, rtol=1e-12, atol=0):
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
    kind: str,
    params: Params,
    eps: tuple[float, ...],
    release: str,
    with_exact: bool,
    log_y: bool,
    directions: Directions = DEFAULT_DIRECTIONS,
    secrets: str = "",
) -> StreamView:
    """The chart and the table of one stream, built once per input (a figure costs ~0.1 s to build).

    Shared, not copied: callers must not change what they get.
    """
    numbers = stream_numbers(kind, params, eps, directions, secrets)
    exact = stream_exact(kind, params, eps, release, secrets) if with_exact else None
    figure, notes = stream_figure(numbers, exact, log_y)
    return StreamView(numbers, exact, figure, tuple(notes), shown(stream_table(numbers, exact)))


def schedule_figure(schedule: StreamSchedule) -> go.Figure:
    """ε_t of the optimal schedule beside the constant (and Cao et al.'s three-value) schedule for the same target."""
    length = schedule.eps.size
    t = np.arange(1, length + 1, dtype=float)
    traces = [Trace("optimal", t, schedule.eps, width=3, markers=length <= 60)]
    if schedule.three_value is not None:
        first, mid, last = schedule.three_value
        three = np.full(length, mid)
        three[0], three[-1] = first, last
        traces.append(Trace("three-value (Cao et al.)", t, three, dash="dash", markers=False))
    traces.append(Trace("constant", t, np.full(length, schedule.constant_eps), dash="dot", markers=False))
    fig, _ = line_figure(traces, x_title="time step t", y_title="ε_t", y_name="ε_t", x_name="t", height=300)
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0}, margin={"b": 10})
    return fig


def schedule_caption(schedule: StreamSchedule, target: float, length: int) -> str:
    """What the schedules chart shows, and whether the optimal schedule is Cao et al.'s here."""
    text = (
        f"All three keep max_t TPL_t ≤ {target:g} over T = {length} steps (checked by the recursion). The optimal"
        " schedule holds TPL at the target at every step; Cao et al.'s three-value schedule spends the supremum of"
        " BPL at the first step and of FPL at the last, ε_mid inside (stationary chains)."
    )
    if schedule.three_value is None:
        return text + " It is not defined for this prior (it needs one backward matrix for every step)."
    three = schedule.three_value_total
    if three is not None and math.isclose(schedule.total, three, rel_tol=1e-9):
        return text + " Here they coincide: for a stationary chain the three-value schedule is the tight one."
    return text


def schedule_totals(schedule: StreamSchedule) -> pd.DataFrame:
    """Σ_t ε_t of each schedule for the same target, with max_t TPL_t of the optimal one."""
    rows = [("optimal", schedule.total)]
    if schedule.three_value_total is not None:
        rows.append(("three-value (Cao et al.)", schedule.three_value_total))
    rows.append(("constant", schedule.constant_total))
    return pd.DataFrame(rows, columns=["schedule", "total ε over the stream"])


# --------------------------------------------------------------------------------------------
# the Streams page's report and script


@dataclass(frozen=True)
class StreamExport:
    """Everything the Streams page's report and script need (hashable: the report is cached on it)."""

    kind: str
    params: Params
    description: str
    schedule: Schedule
    release: str
    exact: bool
    target: float
    unbounded: bool
    log_y: bool
    directions: Directions = DEFAULT_DIRECTIONS
    secrets: str = ""  # the chosen value secrets' text, resolved ("" for every pair at every entry)
    protected: str = ""  # what is protected, in words (docs/math.md §16)


def _number(value: float) -> str:
    return "∞" if value == math.inf else fmt(value)


def stream_report(export: StreamExport) -> str:
    """The Streams page as one offline HTML file (~4.6 MB: built when its download is clicked)."""
    view = stream_view(
        export.kind,
        export.params,
        export.schedule.eps,
        export.release,
        export.exact,
        export.log_y,
        export.directions,
        export.secrets,
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
        supremum = stream_supremum(export.kind, export.params, constant, export.directions, export.secrets)
        if supremum is not None:
            sections.append(Section("Unbounded stream", supremum.explain()))
    plan = stream_plan(export.kind, export.params, export.target, export.unbounded, export.directions, export.secrets)
    sentence = plan_sentence(plan, export.target, numbers.eps.size, export.unbounded)
    sections.append(Section("Planner", sentence, table=plan_frame(plan)))
    settings = {
        "prior": export.description,
        "prior kind": PRIOR_KINDS[export.kind].label,
        **{name: value for name, value in export.params},
        "schedule": export.schedule.text,
        "release (for the exact leakage)": RELEASES[export.release].label,
        "P^B, P^F": "from the prior" if export.directions == DEFAULT_DIRECTIONS else str(export.directions),
        "planner target ε": export.target,
        "planner: unbounded stream": export.unbounded,
        "what is secret": export.secrets or "every pair of values at every entry",
    }
    if export.protected:
        sections.insert(0, Section("What is secret (docs/math.md §16)", export.protected))
    summary = f"A stream over {export.description}, {export.schedule.text}. {numbers.summary}"
    return html_report("Streams: leakage over time", summary, settings, sections)


def plan_frame(plan: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "bound": [STREAM_BOUNDS[name].label for name in plan],
            "largest ε per step": list(plan.values()),
        }
    )


def plan_sentence(plan: dict[str, float], target: float, length: int, unbounded: bool) -> str:
    """The planner's answer in words."""
    stream = "an unbounded stream" if unbounded else f"a stream of T = {length} steps"
    parts = []
    for name, value in plan.items():
        label = STREAM_BOUNDS[name].in_words
        if math.isnan(value):
            continue
        if not STREAM_BOUNDS[name].compared and unbounded:
            parts.append(f"{label} allows nothing (infinitely many entries)")
        elif value > 0:
            parts.append(f"{label} allows ε = {fmt(value)} per step")
        else:
            parts.append(f"{label} allows nothing (no ε within reach meets the target)")
    text = f"To keep {stream} within ε = {target:g}: " + ", ".join(parts) + "."
    chain = {n: v for n, v in plan.items() if STREAM_BOUNDS[n].compared and not math.isnan(v) and v > 0}
    if len(chain) >= 2:
        best = max(chain, key=chain.get)
        high, low = chain[best], min(chain.values())
        if not math.isclose(high, low, rel_tol=1e-9):
            label = STREAM_BOUNDS[best].in_words
            text += f" {label[:1].upper() + label[1:]} allows {high / low:.3g}× as much ε per step."
    return text


@st.cache_data(show_spinner=False, max_entries=32)
def stream_script(export: StreamExport) -> str:
    """A Python program that recomputes the Streams page's numbers with puffer_core and prints them
    (``app_ui/core/scripts/stream.py`` filled in).

    Output: ``name value`` lines (values as Python floats, ``inf`` for ∞): ``bound_<name>`` for every
    registered bound, ``exact``, ``sup_tpl``, ``divergence_eps``, ``plan_<name>``; then a header line
    ``t eps bpl fpl <bound names> exact`` and one line per step (``nan`` where the page shows no value).
    """
    names, prior = prior_source(export.kind, export.params)
    segments = ",\n    ".join(repr(s) for s in export.schedule.segments)
    backward, forward = export.directions
    chosen = chosen_secrets(export.secrets)
    secrets = Code("ALL_SECRETS") if chosen is None else Code(chosen.source())
    secret_names = ["ALL_SECRETS"] if chosen is None else ["Secrets", *(["TimeRule"] if chosen.rule else [])]
    return fill(
        "stream",
        doc={"Stream": f"{export.description}."},
        values={
            "SEGMENTS": Code(f"[\n    {segments},\n]"),
            "RELEASE": export.release,
            "EXACT": export.exact,
            "TARGET": export.target,
            "UNBOUNDED": export.unbounded,
            "BACKWARD": Code(repr(backward)),
            "FORWARD": Code(repr(forward)),
            "SECRETS": secrets,
        },
        blocks={"prior": prior},
        imports=[*names.split(", "), "influence_curve", *secret_names],
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
