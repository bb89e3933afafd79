"""The whole-population view's numbers, chart and table (docs/math.md "Whole-population secrets").

θ₁ is the page's chain; θ₂ the alternative, with the same states and length: a copy of θ₁ with one state's stay
probability changed (the rest of its row scaled to fit), or a matrix typed in full.  The query is the number of
entries, over all users, in a set B of states; :func:`~puffer_core.mechanisms.population.population_scale` gives W
(≥ the exact W∞ of the count's two laws, in entries) and the Laplace release F + Lap(W/ε).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core.charts import Trace, line_figure
from puffer_core import MarkovChainPrior
from puffer_core.display import fmt
from puffer_core.mechanisms.population import PopulationScale, population_estimate, population_scale
from puffer_core.secrets import PopulationSecrets
from puffer_core.validation import WORK_LIMIT_SECONDS, check_probability, row_problems

Rows = tuple[tuple[float, ...], ...]
NAMES = ("θ₁", "θ₂")
DEFAULT_USERS = 100
GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)


def _rows(matrix: object) -> Rows:
    return tuple(tuple(float(x) for x in row) for row in np.asarray(matrix, dtype=float))


def changed_stay(first: MarkovChainPrior, state: int, stay: float) -> Rows:
    """θ₁'s matrix with state ``state``'s stay probability set to ``stay``; the rest of its row keeps its
    proportions (spread evenly over the other states when θ₁ never leaves ``state``)."""
    stay = check_probability("the stay probability", stay)
    matrix = np.array(first.transition, dtype=float)
    others = np.delete(np.arange(matrix.shape[0]), state)
    leave = matrix[state, others]
    share = leave / leave.sum() if leave.sum() > 0 else np.full(others.size, 1.0 / max(others.size, 1))
    matrix[state, others] = (1.0 - stay) * share
    matrix[state, state] = stay
    return _rows(matrix)


def default_stay(first: MarkovChainPrior, state: int) -> float:
    """A clear default for θ₂: state ``state`` stays 0.1 more often than under θ₁ (0.1 less if that passes 0.95)."""
    now = float(first.transition[state, state])
    return round(now + 0.1 if now <= 0.85 else now - 0.1, 2)


def read_matrix(text: str, k: int) -> Rows:
    """A matrix typed one row per line, numbers separated by spaces or commas; ValueError saying what is wrong."""
    lines = [line for line in text.replace(";", "\n").splitlines() if line.strip()]
    rows = []
    for i, line in enumerate(lines):
        cells = [c for c in line.replace(",", " ").split() if c]
        try:
            rows.append(tuple(float(c) for c in cells))
        except ValueError:
            raise ValueError(f"row {i + 1} of θ₂ holds something that is not a number: {line.strip()!r}") from None
    if len(rows) != k or any(len(row) != k for row in rows):
        raise ValueError(f"θ₂ needs {k} rows of {k} numbers (the states of θ₁); got {len(rows)} rows of"
                         f" {sorted({len(row) for row in rows}) or [0]} numbers")
    problems = row_problems(rows, None, "θ₂")
    if problems:
        raise ValueError("θ₂ is not a transition matrix: " + "; ".join(problems) + " (each row must sum to 1)")
    return tuple(rows)


def matrix_text(matrix: Rows) -> str:
    """A matrix as :func:`read_matrix` reads it."""
    return "\n".join(" ".join(f"{x:.6g}" for x in row) for row in matrix)


@dataclass(frozen=True)
class PopulationCase:
    """Everything the view computes from: θ₁ and θ₂'s matrices (θ₂ starts as θ₁ does), the states B counted, the
    number of users, the target ε and the per-entry ε_DP the page found for its own secrets."""

    first: Rows
    initial: tuple[float, ...] | None  # None: each chain starts in its own stationary law
    second: Rows
    length: int
    labels: tuple[str, ...]
    counted: tuple[int, ...]
    users: int
    eps: float
    eps_dp: float
    change: str  # θ₂ in words

    def priors(self) -> tuple[MarkovChainPrior, MarkovChainPrior]:
        """θ₁ and θ₂ (ValueError with the library's words if θ₂ is not a chain)."""
        return tuple(MarkovChainPrior(m, self.initial, self.length, labels=self.labels)  # type: ignore[return-value]
                     for m in (self.first, self.second))

    def secrets(self) -> PopulationSecrets:
        first, second = self.priors()
        return PopulationSecrets(((first, second),), names=(NAMES,))

    @property
    def counted_words(self) -> str:
        return ", ".join(self.labels[s] for s in self.counted)

    def sentence(self) -> str:
        """The sentence the library stands behind, at ε."""
        return self.secrets().sentence(list(self.labels), self.eps)


def users_within_limit(case: PopulationCase) -> int:
    """The most users whose W finishes within the work limit by the library's estimate (at least 1)."""
    secrets = case.secrets()
    low, high = 1, 2
    while high < 10**7 and population_estimate(secrets, [case.length] * high) <= WORK_LIMIT_SECONDS:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        fits = population_estimate(secrets, [case.length] * mid) <= WORK_LIMIT_SECONDS
        low, high = (mid, high) if fits else (low, mid)
    return low


@st.cache_data(show_spinner="Computing the count's two laws…", max_entries=64)
def scale_of(case: PopulationCase, users: int) -> PopulationScale:
    """W for ``users`` users (Refused, with the estimate, beyond the work limit)."""
    return population_scale(case.secrets(), case.counted, [case.length] * users)


@dataclass(frozen=True, eq=False)
class PopulationView:
    """The numbers at the chosen number of users, the same for fewer users (the chart), the sentence."""

    case: PopulationCase
    scale: PopulationScale
    table: pd.DataFrame
    figure: go.Figure
    notes: tuple[str, ...]
    sentence: str

    @property
    def laplace(self) -> float:
        return self.scale.w / self.case.eps

    @property
    def per_entry(self) -> float:
        """The Laplace scale per-entry secrets need for the same count: one entry moves it by 1, so 1/ε_DP."""
        return 1.0 / self.case.eps_dp if self.case.eps_dp > 0 else math.inf

    def figures(self) -> list[tuple[str, str]]:
        """The numbers the page shows and the script prints, as (label, value)."""
        means = self.scale.means
        return [
            ("W (entries)", str(self.scale.w)),
            ("Laplace scale W/ε", fmt(self.laplace)),
            (f"Mean count under {NAMES[0]}", fmt(means[0])),
            (f"Mean count under {NAMES[1]}", fmt(means[1])),
            ("Largest possible count", str(self.scale.total)),
            ("Per-entry Laplace scale 1/ε_DP", fmt(self.per_entry)),
        ]

    def honest_note(self) -> str:
        ratio = self.laplace / self.per_entry if math.isfinite(self.per_entry) and self.per_entry > 0 else math.inf
        return (f"This is much more noise than per-entry secrets need: hiding one entry of one user takes Laplace"
                f" scale 1/ε_DP = {fmt(self.per_entry)}, hiding which habit the whole population has takes"
                f" W/ε = {fmt(self.laplace)} ({fmt(ratio, 3)}× as much). W grows with the number of users, since"
                " every user's data speak about the same habit: that is the price of hiding a population's"
                " habits. W is the ∞-Wasserstein distance between the count's two laws: never below the gap"
                " between their means, and set by their tails, so it can exceed that gap by far.")


def user_grid(users: int) -> list[int]:
    """The numbers of users the chart shows: a rounded ladder below ``users``, then ``users``."""
    return [n for n in GRID if n < users] + [users]


def population_view(case: PopulationCase) -> PopulationView:
    """The view at ``case.users`` users (Refused beyond the work limit, checked first), and the ladder below."""
    scale = scale_of(case, case.users)
    rows = []
    for n in user_grid(case.users):
        at = scale if n == case.users else scale_of(case, n)
        rows.append({"users": n, "W (entries)": at.w, "Laplace scale W/ε": at.w / case.eps,
                     f"mean under {NAMES[0]}": at.means[0], f"mean under {NAMES[1]}": at.means[1],
                     "|difference of the means|": abs(at.means[0] - at.means[1]),
                     "largest possible count": at.total,
                     "per-entry Laplace scale 1/ε_DP": 1.0 / case.eps_dp if case.eps_dp > 0 else math.inf})
    table = pd.DataFrame(rows)
    figure, notes = noise_figure(table)
    return PopulationView(case, scale, table, figure, tuple(notes), case.sentence())


def noise_figure(table: pd.DataFrame) -> tuple[go.Figure, list[str]]:
    """Noise needed against the number of users: the whole population's W/ε, the per-entry 1/ε_DP, and the gap
    between the means for scale."""
    x = table["users"].to_numpy(dtype=float)
    traces = [
        Trace("Laplace scale W/ε (whole population)", x, table["Laplace scale W/ε"].to_numpy(dtype=float)),
        Trace("|mean under θ₁ − mean under θ₂|", x, table["|difference of the means|"].to_numpy(dtype=float),
              dash="dot"),
        Trace("Laplace scale 1/ε_DP (per-entry secrets)", x,
              table["per-entry Laplace scale 1/ε_DP"].to_numpy(dtype=float), dash="dash", markers=False),
    ]
    return line_figure(traces, "number of users n", "noise scale (entries)", log_y=True, y_name="entries",
                       x_name="users", log_x=len(x) > 2, height=380)


def labels_of(prior: MarkovChainPrior) -> tuple[str, ...]:
    return tuple(prior.labels) if prior.labels is not None else tuple(str(i) for i in range(prior.n_states))


def case_from(first: MarkovChainPrior, second: Rows, counted: Sequence[int], users: int, eps: float, eps_dp: float,
              change: str) -> PopulationCase:
    """The case for θ₁ = ``first`` and θ₂'s matrix ``second`` (θ₂ starts as θ₁ does)."""
    initial = None if first.stationary_initial else tuple(float(x) for x in np.asarray(first.initial))
    return PopulationCase(_rows(first.transition), initial, second, int(first.length), labels_of(first),
                          tuple(sorted(set(int(s) for s in counted))), int(users), float(eps), float(eps_dp), change)
