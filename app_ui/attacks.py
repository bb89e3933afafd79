"""The "How tight is my bound?" page: demo priors, cached attacks, the ladder chart and the exports.

For each prior the attacker (:mod:`puffer_core.attacks.attacker`, docs/math.md §11) gives a lower bound
on the true leakage, the exact audit (:mod:`puffer_core.audit.stream`, §9) the truth when the
chain is tiny, and the library the reported bounds (TPL for streams, the [C] bound, group DP),
so the page can show **lower bound ≤ truth ≤ reported bound** with the seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler

from puffer_core import MarkovChainPrior, certify, fit_markov_chain, influence_curve, load_dataset
from puffer_core.attacks.attacker import attack_histogram, attack_stream
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_leakage
from puffer_core.engine.curve import InfluenceCurve
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.priors.kinds import sticky_matrix
from puffer_core.stream.bounds import group_dp_bound
from puffer_core.stream.tpl import temporal_privacy_leakage

from .priors import kind_curve, prior_source
from .report import Section, html_report, python_script
from .streams import build_prior, chain_priors, emissions, exact_stream_refusal, power_text
from .tables import fmt, right_aligned

EXACT_HISTOGRAM_CELLS = 5_000_000  # sequences × outputs of the whole-sequence histogram (Laplace)
EXACT_RANKING_WORK = 20_000  # sequences × rankings of the exponential mechanism (a Python loop per sequence)
ATTACK_STREAM_CELLS = 40_000  # T × K of a stream attack the app runs (K = 20, T = 2,000: a few seconds)
ATTACK_HISTOGRAM_WORK = 15_000_000  # (T+1)^(K−1)·K² count cells × T of a histogram attack the app runs
ROUNDING = 1e-9  # the attack and the enumeration may differ in the last bits when the attack finds the truth


@dataclass(frozen=True)
class DemoPrior:
    """A prior the attack page offers by name; ``code`` builds it in a script (the same as ``build``)."""

    label: str
    short: str
    code: str
    build: Callable[[], MarkovChainPrior]


def _checkins() -> MarkovChainPrior:
    return fit_markov_chain(load_dataset("checkins"), smoothing=DEFAULT_SMOOTHING)


DEMO_PRIORS: dict[str, DemoPrior] = {
    "binary6": DemoPrior(
        "binary chain p = 0.9, q = 0.8, T = 6 (tiny: exact truth)",
        "binary, T = 6",
        "MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6)",
        lambda: MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6),
    ),
    "sticky3": DemoPrior(
        "3-state chain staying with probability 0.8, T = 4 (tiny: exact truth)",
        "3 states, T = 4",
        "MarkovChainPrior(sticky_matrix(3, 0.8), length=4)",
        lambda: MarkovChainPrior(sticky_matrix(3, 0.8), length=4),
    ),
    "binary100": DemoPrior(
        "binary chain p = 0.9, q = 0.8, T = 100",
        "binary, T = 100",
        "MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100)",
        lambda: MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100),
    ),
    "sticky5": DemoPrior(
        "5-state chain staying with probability 0.6, T = 100",
        "5 states, T = 100",
        "MarkovChainPrior(sticky_matrix(5, 0.6), length=100)",
        lambda: MarkovChainPrior(sticky_matrix(5, 0.6), length=100),
    ),
    "checkins": DemoPrior(
        "the chain fitted to the check-ins demo data (12 venue categories, T = 55)",
        "check-ins fitted",
        f"fit_markov_chain(load_dataset('checkins'), smoothing={DEFAULT_SMOOTHING!r})",
        _checkins,
    ),
}
USER = "user"  # the prior chosen (or fitted from data) on the Influence curves page

RELEASES: dict[str, str] = {
    "stream_rr": "a stream: randomized response at every step",
    "stream_histogram": "a stream: a noisy histogram at every step",
    "laplace": "one histogram of the whole sequence, Laplace noise",
    "exponential": "the top-k states of the whole sequence, exponential mechanism",
}

Source = tuple  # ("demo", key) or ("user", kind, params, description)


def is_stream(release: str) -> bool:
    return release.startswith("stream_")


def _stream_mechanism(release: str) -> str:
    return "rr" if release == "stream_rr" else "histogram"


@st.cache_data(show_spinner=False, max_entries=8)
def demo_prior(key: str) -> MarkovChainPrior:
    return DEMO_PRIORS[key].build()


@st.cache_data(show_spinner=False, max_entries=8)
def demo_curve(key: str) -> InfluenceCurve:
    return influence_curve(demo_prior(key))


def source_priors(source: Source) -> tuple[list[MarkovChainPrior], InfluenceCurve]:
    """The chain priors of an attack row and their (cached) a(b) curve."""
    if source[0] == "demo":
        return [demo_prior(source[1])], demo_curve(source[1])
    _, kind, params, _ = source
    chains = chain_priors(build_prior(kind, params))
    if chains is None:
        raise ValueError("the attacker needs a Markov chain prior")
    return chains, kind_curve(kind, params)


def source_label(source: Source) -> tuple[str, str]:
    """(label, short label) of an attack row's prior."""
    if source[0] == "demo":
        demo = DEMO_PRIORS[source[1]]
        return demo.label, demo.short
    return f"your prior: {source[3]}", "your prior"


def attack_refusal(release: str, n_states: int, length: int, k: int) -> str | None:
    """Why the app does not run this attack (the script has no such limit), or None."""
    if is_stream(release):
        if n_states * length > ATTACK_STREAM_CELLS:
            return (
                f"T × K = {length * n_states:,} is over the app's {ATTACK_STREAM_CELLS:,} for a stream attack"
                " (it would take minutes here); the downloaded script runs it"
            )
        return None
    if release == "exponential" and k > n_states:
        return f"k = {k} is larger than the number of states ({n_states})"
    cells = (length + 1) ** (n_states - 1) * n_states**2
    if cells * length > ATTACK_HISTOGRAM_WORK:
        return (
            f"the histogram attack tracks every count vector: {n_states} states over T = {length} steps give"
            f" (T+1)^(K−1)·K² ≈ 10^{math.floor(math.log10(cells))} cells, too many for the app"
            " (fewer states or a shorter chain)"
        )
    return None


def exact_refusal(release: str, n_states: int, length: int, n_priors: int, k: int) -> str | None:
    """Why the app does not compute the exact leakage of this release, or None."""
    if is_stream(release):
        return exact_stream_refusal(n_states, length, n_priors, _stream_mechanism(release))
    if release == "exponential" and k > n_states:
        return f"k = {k} is larger than the number of states ({n_states})"
    too_many = f"{power_text(n_states, length)} sequences are too many to enumerate in the app"
    if length * math.log10(n_states) > 7:
        return too_many
    sequences = n_states**length * n_priors
    if release == "laplace":
        work, limit = sequences * (length + 1) ** n_states, EXACT_HISTOGRAM_CELLS
    else:
        work, limit = sequences * math.perm(n_states, k), EXACT_RANKING_WORK
    return None if work <= limit else too_many


@dataclass(frozen=True)
class AttackRow:
    """One prior's ladder: lower bound (attack) ≤ truth (exact, when small enough) ≤ the reported bounds."""

    label: str
    short: str
    release: str
    eps: float
    k: int
    seed: int
    draws: int
    length: int
    lower: float | None  # None: not attacked (see ``attack_note``)
    entry: int | None  # 0-based
    pair: tuple[str, str] | None
    description: str
    exact: float | None  # None: not enumerated (see ``exact_note``)
    tpl: float | None  # None: not a stream
    c_bound: float
    group_dp: float
    attack_note: str = ""
    exact_note: str = ""

    @property
    def bound(self) -> float:
        """The tightest reported bound."""
        return min(v for v in (self.tpl, self.c_bound, self.group_dp) if v is not None)

    @property
    def bound_name(self) -> str:
        names = {"TPL": self.tpl, "[C]": self.c_bound, "group DP": self.group_dp}
        return min((v, n) for n, v in names.items() if v is not None)[1]

    @property
    def in_order(self) -> bool:
        """lower ≤ truth ≤ bound (up to rounding) — False would mean a wrong bound."""
        high = self.bound * (1 + ROUNDING) + ROUNDING
        ok = self.exact is None or self.exact <= high
        if self.lower is not None:
            ok = ok and self.lower <= high and (self.exact is None or self.lower <= self.exact + ROUNDING)
        return ok


@st.cache_data(show_spinner=False, max_entries=128)
def attack_row(source: Source, release: str, eps: float, k: int, seed: int, draws: int) -> AttackRow:
    """Attack one prior (seeded), with its exact leakage when small enough and every reported bound."""
    chains, curve = source_priors(source)
    label, short = source_label(source)
    n_states, length = chains[0].n_states, chains[0].length
    stream_release = is_stream(release)
    law = emissions(_stream_mechanism(release), n_states, [eps])[0] if stream_release else None
    attack = None
    attack_note = attack_refusal(release, n_states, length, k) or ""
    if not attack_note:
        if stream_release:
            attack = attack_stream(chains, law, seed=seed, draws=draws)
        else:
            attack = attack_histogram(chains, eps, mechanism=release, k=k, seed=seed, draws=draws)
    exact = None
    exact_note = exact_refusal(release, n_states, length, len(chains), k) or ""
    if not exact_note:
        if stream_release:
            exact = exact_stream_leakage(chains, law).eps
        else:
            exact = exact_histogram_leakage(chains, eps, mechanism=release, k=k)
    pair = None
    if attack is not None and attack.pair is not None:
        labels = chains[attack.prior_index or 0].labels
        pair = (labels[attack.pair[0]], labels[attack.pair[1]])
    row = AttackRow(
        label=label,
        short=short,
        release=release,
        eps=eps,
        k=k,
        seed=seed,
        draws=draws,
        length=length,
        lower=None if attack is None else attack.lower,
        entry=None if attack is None else attack.entry,
        pair=pair,
        description="",
        exact=exact,
        tpl=temporal_privacy_leakage(chains, eps).max_tpl if stream_release else None,
        c_bound=certify(curve, eps).eps_puffer,
        group_dp=group_dp_bound([eps] * length),
        attack_note=attack_note,
        exact_note=exact_note,
    )
    if attack is None:
        return row
    return replace(row, description=attack.describe(truth=exact, bound=row.bound) + f" ({row.bound_name})")


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def attack_table(rows: Sequence[AttackRow]) -> pd.DataFrame:
    """The ladder as a table, one row per prior (empty cells: not computed, see the notes)."""
    return pd.DataFrame(
        {
            "prior": [r.short for r in rows],
            "attack": [_or_nan(r.lower) for r in rows],
            "exact": [_or_nan(r.exact) for r in rows],
            "TPL": [_or_nan(r.tpl) for r in rows],
            "[C]": [r.c_bound for r in rows],
            "group DP": [r.group_dp for r in rows],
            "attack ÷ bound": [
                "" if r.lower is None or r.bound == 0 else f"{r.lower / r.bound:.0%}" for r in rows
            ],
            "worst t": ["" if r.entry is None else str(r.entry + 1) for r in rows],
            "pair": ["" if r.pair is None else f"{r.pair[0]} vs {r.pair[1]}" for r in rows],
        }
    )


def notes(rows: Sequence[AttackRow]) -> list[str]:
    """Why cells are empty, one sentence per reason (priors sharing a reason are named together)."""
    grouped: dict[str, list[str]] = {}
    for r in rows:
        if r.attack_note:
            grouped.setdefault(f"No attack: {r.attack_note}", []).append(r.short)
        if r.exact_note:
            grouped.setdefault(f"No exact truth: {_generic(r.exact_note)}", []).append(f"{r.short}")
    return [f"{reason} ({', '.join(names)})." for reason, names in grouped.items()]


def _generic(note: str) -> str:
    return "too many sequences to enumerate" if "sequences" in note else note


# the ladder: each series on its own sub-line of the prior's row, so equal values stay visible;
# colours from the Okabe–Ito palette (safe for colour-blind readers), a distinct symbol each
LADDER = (
    ("attack", "attack (lower bound)", "circle", "#D55E00", -0.3),
    ("exact", "exact (truth)", "diamond", "#009E73", -0.15),
    ("TPL", "TPL", "triangle-up", "#0072B2", 0.0),
    ("[C]", "[C] bound", "square", "#CC79A7", 0.15),
    ("group DP", "group DP", "x", "#444444", 0.3),
)
ROW_HEIGHT = 84  # px per prior: five sub-lines 12 px apart


def _log_ticks(low: float, high: float) -> list[float]:
    """1, 2, 5 in every decade from below ``low`` to above ``high``."""
    ticks = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [m * 10.0**exponent for m in (1, 2, 5)]
    return [t for t in ticks if low / 2.5 <= t <= high * 2.5]


def attack_figure(rows: Sequence[AttackRow]) -> go.Figure:
    """One band per prior: the attack's lower bound, the truth and each reported bound, on a log scale.

    The grey bar runs from the attack to the tightest bound: the truth lies on it.
    """
    table = attack_table(rows)
    fig = go.Figure()
    for i, r in enumerate(rows):
        if r.lower is not None and r.lower > 0:
            fig.add_trace(
                go.Scatter(
                    x=[r.lower, r.bound],
                    y=[i, i],
                    mode="lines",
                    line={"color": "rgba(120,120,120,0.22)", "width": 0.75 * ROW_HEIGHT},
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
    shown = []
    for column, name, symbol, colour, offset in LADDER:
        values = table[column].to_numpy(dtype=float)
        keep = np.isfinite(values) & (values > 0)
        if not keep.any():
            continue
        shown.append(values[keep])
        fig.add_trace(
            go.Scatter(
                x=values[keep],
                y=np.flatnonzero(keep) + offset,
                mode="markers",
                name=name,
                marker={"symbol": symbol, "size": 11, "color": colour, "line": {"width": 1, "color": "white"}},
                customdata=[fmt(v) for v in values[keep]],
                text=[r.short for r, k in zip(rows, keep) if k],
                hovertemplate=f"%{{text}}<br>{name} = %{{customdata}}<extra></extra>",
            )
        )
    everything = np.concatenate(shown) if shown else np.array([1.0])
    ticks = _log_ticks(float(everything.min()), float(everything.max()))
    fig.update_xaxes(
        type="log",
        title="ε (log scale) — the truth lies on the grey bar",
        tickvals=ticks,
        ticktext=[f"{t:g}" for t in ticks],
    )
    fig.update_yaxes(
        tickvals=list(range(len(rows))),
        ticktext=[r.short for r in rows],
        autorange="reversed",
        range=[len(rows) - 0.5, -0.5],
        showgrid=False,
        zeroline=False,
    )
    fig.update_layout(
        height=110 + ROW_HEIGHT * len(rows),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        hovermode="closest",
    )
    return fig


# --------------------------------------------------------------------------------------------
# report and script


@dataclass(frozen=True)
class AttackExport:
    sources: tuple[Source, ...]
    release: str
    eps: float
    k: int
    seed: int
    draws: int

    def rows(self) -> list[AttackRow]:
        return [attack_row(s, self.release, self.eps, self.k, self.seed, self.draws) for s in self.sources]


@st.cache_resource(show_spinner=False, max_entries=16)
def ladder(export: AttackExport) -> go.Figure:
    """The ladder chart of one run, built once (shared: callers must not change it)."""
    return attack_figure(export.rows())


BOUND_COLUMNS = ["prior", "attack", "exact", "TPL", "[C]", "group DP"]
WHERE_COLUMNS = ["prior", "attack ÷ bound", "worst t", "pair"]


@st.cache_resource(show_spinner=False, max_entries=16)
def ladder_tables(export: AttackExport) -> tuple[Styler, Styler]:
    """The ladder as the page prints it, in two tables narrow enough for a phone: the numbers, then how close
    the attack came and where (numbers as text, right-aligned), built once (shared: do not change them)."""
    table = attack_table(export.rows())
    return right_aligned(table[BOUND_COLUMNS]), right_aligned(table[WHERE_COLUMNS])


@st.cache_data(show_spinner=False, max_entries=32)
def attack_script(export: AttackExport) -> str:
    """A Python program that reruns the attacks with their seed and prints one line per prior.

    Each line: ``row <i> lower=<float|none> exact=<float|none> tpl=<float|none> c_bound=<float>
    group_dp=<float>  # <prior>`` (``none`` where the page shows no value).
    """
    rows = export.rows()
    user = [s for s in export.sources if s[0] != "demo"]
    expressions = [DEMO_PRIORS[s[1]].code if s[0] == "demo" else "your_prior" for s in export.sources]
    priors = ",\n    ".join(f"({r.short!r}, {code})" for r, code in zip(rows, expressions))
    attacked = [r.lower is not None for r in rows]
    exact = [r.exact is not None for r in rows]
    lines = [prior_source(user[0][1], user[0][2], name="your_prior")[1]] if user else []
    lines += [
        f"RELEASE = {export.release!r}  # {RELEASES[export.release]}",
        f"EPS = {export.eps!r}",
        f"K = {export.k!r}  # the exponential mechanism's top-k",
        f"SEED = {export.seed!r}",
        f"DRAWS = {export.draws!r}",
        "PRIORS = [",
        f"    {priors},",
        "]",
        f"ATTACKED = {attacked!r}  # the page ran these attacks (set True to run the others too: slow)",
        f"EXACT = {exact!r}  # small enough to enumerate every sequence",
        "",
        "",
        "def show(value):",
        '    return "none" if value is None else repr(float(value))',
        "",
        "",
        "for i, (name, prior) in enumerate(PRIORS):",
        "    chains = prior if isinstance(prior, list) else [prior]",
        "    n_states, length = chains[0].n_states, chains[0].length",
        "    lower = exact = tpl = None",
    ]
    if is_stream(export.release):
        make = "randomized_response_emission" if export.release == "stream_rr" else "laplace_histogram_emission"
        lines += [
            f"    law = {make}(n_states, EPS)",
            "    if ATTACKED[i]:",
            "        lower = attack_stream(chains, law, seed=SEED, draws=DRAWS).lower",
            "    if EXACT[i]:",
            "        exact = exact_stream_leakage(chains, law).eps",
            "    tpl = temporal_privacy_leakage(chains, EPS).max_tpl",
        ]
    else:
        lines += [
            "    if ATTACKED[i]:",
            "        lower = attack_histogram(chains, EPS, mechanism=RELEASE, k=K, seed=SEED, draws=DRAWS).lower",
            "    if EXACT[i]:",
            "        exact = exact_histogram_leakage(chains, EPS, mechanism=RELEASE, k=K)",
        ]
    lines += [
        "    c_bound = certify(influence_curve(prior), EPS).eps_puffer",
        "    group = group_dp_bound([EPS] * length)",
        "    print(",
        '        f"row {i} lower={show(lower)} exact={show(exact)} tpl={show(tpl)}"',
        '        f" c_bound={show(c_bound)} group_dp={show(group)}  # {name}"',
        "    )",
    ]
    return python_script(
        'Rerun the attacks of Pufferfish Lab\'s "How tight is my bound?" page, with their seed.',
        ["Prints one line per prior: the attack's lower bound, the exact leakage and the reported bounds."],
        "attack",
        [
            "from puffer_core import MarkovChainPrior, certify, fit_markov_chain, influence_curve, load_dataset",
            "from puffer_core.attacks import attack_histogram, attack_stream",
            "from puffer_core.priors import sticky_matrix",
            "from puffer_core.stream import (\n    group_dp_bound,\n    laplace_histogram_emission,\n"
            "    randomized_response_emission,\n    temporal_privacy_leakage,\n)",
            "from puffer_core.audit import exact_histogram_leakage, exact_stream_leakage",
        ],
        "\n".join(lines),
    )


def parse_attack_output(text: str) -> list[dict[str, float | None]]:
    """What an attack script printed: one dict of numbers per prior."""
    out = []
    for line in text.splitlines():
        if not line.startswith("row "):
            continue
        row: dict[str, float | None] = {}
        for field in line.split("#")[0].split()[2:]:
            name, _, value = field.partition("=")
            row[name] = None if value == "none" else float(value)
        out.append(row)
    return out


def attack_report(export: AttackExport) -> str:
    """The attack page as one offline HTML file (~4.6 MB: built when its download is clicked)."""
    rows = export.rows()
    sections = [
        Section(
            "Lower bound (attack) ≤ truth (exact) ≤ reported bound",
            "The attacker's posterior log-odds shift for the output it found is exact, so it is a lower bound on"
            " the true leakage; the truth lies between it and the tightest reported bound (docs/math.md §11).",
            attack_figure(rows),
            attack_table(rows).astype(object).fillna("—"),  # empty cells: not computed (see the note)
            tuple(notes(rows)),
        ),
        Section("In words", "; ".join(f"{r.short}: {r.description}" for r in rows if r.description) + "."),
    ]
    settings = {
        "release": RELEASES[export.release],
        "ε (per step, or per entry)": export.eps,
        "top-k (exponential mechanism)": export.k,
        "seed": export.seed,
        "draws": export.draws,
        "priors": [source_label(s)[0] for s in export.sources],
    }
    summary = (
        f"Attacks on {RELEASES[export.release]} with ε = {export.eps:g}, seed {export.seed}, {export.draws} draws,"
        f" for {len(rows)} priors."
    )
    return html_report("How tight is my bound?", summary, settings, sections)
