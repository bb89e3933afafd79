"""The "How tight is my bound?" page: demo priors, cached ladders, the ladder chart and the exports.

For each prior the library's ladder (:func:`puffer_core.tightness.ladder_row`, docs/math.md §11)
runs the seeded attack (a lower bound on the true leakage), the exact audit (the truth when the
chain is tiny) and every stream bound of the registry that applies, so the page can show
**lower bound ≤ truth ≤ reported bound** with the seed.  The releases and the bounds are read
from their registries: a new one shows here by itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler

from app_ui.attack.secrets import secrets_of
from app_ui.core.report import Section, html_report
from app_ui.core.tables import fmt, right_aligned
from app_ui.core.templates import Code, fill
from app_ui.prior.current import Params, kind_curve, prior_source
from app_ui.secrets.views import chosen_curve
from puffer_core import MarkovChainPrior, fit_markov_chain, influence_curve, load_dataset
from puffer_core.engine.curve import InfluenceCurve
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.priors.kinds import PRIOR_KINDS, sticky_matrix
from puffer_core.priors.models import theta_or_none
from puffer_core.secrets import Secrets
from puffer_core.stream.registry import STREAM_BOUNDS
from puffer_core.tightness.ladder import LadderRow, ladder_row, ratio_text
from puffer_core.tightness.releases import RELEASES


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

Source = tuple  # ("demo", key) or ("user", kind, params, description, secrets text: "" for every pair)


def is_stream(release: str) -> bool:
    return RELEASES[release].stream


def release_label(release: str) -> str:
    return RELEASES[release].label


@st.cache_data(show_spinner=False, max_entries=8)
def demo_prior(key: str) -> MarkovChainPrior:
    return DEMO_PRIORS[key].build()


@st.cache_data(show_spinner=False, max_entries=8)
def demo_curve(key: str) -> InfluenceCurve:
    return influence_curve(demo_prior(key))


def user_chains(kind: str, params: Params) -> list[MarkovChainPrior] | None:
    """The Markov chain priors of the user's prior (Θ: all of them), or None when it is not a chain."""
    chains = theta_or_none(PRIOR_KINDS[kind].prior(dict(params)), "the attacker")
    return None if chains is None else list(chains)


def source_priors(source: Source) -> tuple[list[MarkovChainPrior], InfluenceCurve]:
    """The chain priors of an attack row and their (cached) a(b) curve."""
    if source[0] == "demo":
        return [demo_prior(source[1])], demo_curve(source[1])
    _, kind, params, _, text = source
    chains = user_chains(kind, params)
    if chains is None:
        raise ValueError("the attacker needs a Markov chain prior")
    return chains, kind_curve(kind, params) if not text else chosen_curve(kind, params, text)


def source_secrets(source: Source) -> Secrets | None:
    """What an attack row's ladder protects: your prior's chosen value secrets (docs/math.md §16), else None
    (every pair at every entry: the demo priors)."""
    return secrets_of(source[4]) if source[0] == "user" else None


def source_label(source: Source) -> tuple[str, str]:
    """(label, short label) of an attack row's prior."""
    if source[0] == "demo":
        demo = DEMO_PRIORS[source[1]]
        return demo.label, demo.short
    return f"your prior: {source[3]}", "your prior"


@st.cache_data(show_spinner=False, max_entries=128)
def attack_row(source: Source, release: str, eps: float, k: int, seed: int, draws: int) -> LadderRow:
    """One prior's ladder (seeded attack, exact truth when small enough, every bound that applies)."""
    chains, curve = source_priors(source)
    label, short = source_label(source)
    return ladder_row(chains, release, eps, k=k, seed=seed, draws=draws, curve=curve, label=label, short=short,
                      secrets=source_secrets(source))


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def attack_table(rows: Sequence[LadderRow]) -> pd.DataFrame:
    """The ladder as a table, one row per prior (empty cells: not computed, see the notes)."""
    table = {
        "prior": [r.short for r in rows],
        "attack": [_or_nan(r.lower) for r in rows],
        "exact": [_or_nan(r.exact) for r in rows],
    }
    for name, bound in STREAM_BOUNDS.items():
        table[bound.short] = [_or_nan(r.value(name)) for r in rows]
    table["attack ÷ bound"] = [ratio_text(r) for r in rows]
    table["worst t"] = ["" if r.entry is None else str(r.entry + 1) for r in rows]
    table["pair"] = ["" if r.pair is None else f"{r.pair[0]} vs {r.pair[1]}" for r in rows]
    return pd.DataFrame(table)


def notes(rows: Sequence[LadderRow]) -> list[str]:
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
RUNG_STYLES = {
    "attack": ("attack (lower bound)", "circle", "#D55E00"),
    "exact": ("exact (truth)", "diamond", "#009E73"),
    "tpl": ("TPL", "triangle-up", "#0072B2"),
    "c_bound": ("[C] bound", "square", "#CC79A7"),
    "group_dp": ("group DP", "x", "#444444"),
}
SPARE_STYLES = (("star", "#E69F00"), ("triangle-down", "#56B4E9"), ("pentagon", "#F0E442"))


def ladder_series() -> tuple[tuple[str, str, str, str, float], ...]:
    """(table column, legend name, symbol, colour, offset) of every rung, from below: attack, exact, each bound."""
    rungs = [("attack", "attack"), ("exact", "exact")] + [(name, b.short) for name, b in STREAM_BOUNDS.items()]
    out = []
    spare = iter(SPARE_STYLES)
    for i, (key, column) in enumerate(rungs):
        if key in RUNG_STYLES:
            name, symbol, colour = RUNG_STYLES[key]
        else:
            symbol, colour = next(spare, ("circle-open", "#999999"))
            name = STREAM_BOUNDS[key].label
        offset = -0.3 + 0.6 * i / max(1, len(rungs) - 1)
        out.append((column, name, symbol, colour, offset))
    return tuple(out)


LADDER = ladder_series()
ROW_HEIGHT = 84  # px per prior: five sub-lines 12 px apart


def _log_ticks(low: float, high: float) -> list[float]:
    """1, 2, 5 in every decade from below ``low`` to above ``high``."""
    ticks = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [m * 10.0**exponent for m in (1, 2, 5)]
    return [t for t in ticks if low / 2.5 <= t <= high * 2.5]


def attack_figure(rows: Sequence[LadderRow]) -> go.Figure:
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

    def rows(self) -> list[LadderRow]:
        return [attack_row(s, self.release, self.eps, self.k, self.seed, self.draws) for s in self.sources]


@st.cache_resource(show_spinner=False, max_entries=16)
def ladder(export: AttackExport) -> go.Figure:
    """The ladder chart of one run, built once (shared: callers must not change it)."""
    return attack_figure(export.rows())


BOUND_COLUMNS = ["prior", "attack", "exact", *(b.short for b in STREAM_BOUNDS.values())]
WHERE_COLUMNS = ["prior", "attack ÷ bound", "worst t", "pair"]


@st.cache_resource(show_spinner=False, max_entries=16)
def ladder_tables(export: AttackExport) -> tuple[Styler, Styler]:
    """The ladder as the page prints it, in two tables narrow enough for a phone: the numbers, then how close
    the attack came and where (numbers as text, right-aligned), built once (shared: do not change them)."""
    table = attack_table(export.rows())
    return right_aligned(table[BOUND_COLUMNS]), right_aligned(table[WHERE_COLUMNS])


@st.cache_data(show_spinner=False, max_entries=32)
def attack_script(export: AttackExport) -> str:
    """A Python program that reruns the ladders with their seed and prints one line per prior
    (``app_ui/core/scripts/attack.py`` filled in).

    Each line: ``row <i> lower=<float|none> exact=<float|none> <bound name>=<float|none> …  # <prior>``
    (``none`` where the page shows no value).
    """
    rows = export.rows()
    user = [s for s in export.sources if s[0] != "demo"]
    expressions = [DEMO_PRIORS[s[1]].code if s[0] == "demo" else "your_prior" for s in export.sources]
    secrets = [source_secrets(s) for s in export.sources]  # what each ladder protects (docs/math.md §16)
    codes = ["None" if value is None else value.source() for value in secrets]
    priors = ",\n    ".join(f"({r.short!r}, {code}, {sec})" for r, code, sec in zip(rows, expressions, codes))
    names, prior = prior_source(user[0][1], user[0][2], name="your_prior") if user else ("", "")
    return fill(
        "attack",
        doc={"Release": f"{release_label(export.release)}, ε = {export.eps:g}, seed {export.seed}."},
        values={
            "RELEASE": export.release,
            "EPS": export.eps,
            "K": export.k,
            "SEED": export.seed,
            "DRAWS": export.draws,
            "PRIORS": Code(f"[\n    {priors},\n]"),
        },
        blocks={"prior": prior} if user else {},
        imports=[*(n for n in names.split(", ") if n), "fit_markov_chain", "load_dataset",
                 *(["Secrets"] if any(v is not None for v in secrets) else [])],  # kept where used
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
        Section("In words", "; ".join(f"{r.short}: {r.describe()}" for r in rows if r.lower is not None) + "."),
    ]
    settings = {
        "release": release_label(export.release),
        "ε (per step, or per entry)": export.eps,
        "top-k (exponential mechanism)": export.k,
        "seed": export.seed,
        "draws": export.draws,
        "priors": [source_label(s)[0] for s in export.sources],
        "what is secret": [
            f"{source_label(s)[1]}: " + (v.words(None) if (v := source_secrets(s)) is not None else "every pair of"
                                          " values at every entry")
            for s in export.sources
        ],
    }
    summary = (
        f"Attacks on {release_label(export.release)} with ε = {export.eps:g}, seed {export.seed}, {export.draws} draws,"
        f" for {len(rows)} priors."
    )
    return html_report("How tight is my bound?", summary, settings, sections)
