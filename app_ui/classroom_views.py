"""What the Classroom page shows, in words and charts: outputs, the run the secret fell, the Laplace chain.

Every sentence here is built from the numbers the page computed with :mod:`puffer_core.classroom`
(docs/math.md §8), so that it says what the data show: the run at which the attacker became
certain, and where the exact leakage of k releases is above or below k times one release.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from puffer_core.classroom import FiniteModel, appendix_j_example, example_1, example_2, example_3

from .charts import Trace, line_figure, show_figure

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
MAX_LINES = 8  # (secret pair, prior) lines on a posterior chart
TOLERANCE = 1e-9  # leakages closer than this to k × one release count as equal


def example_model(name: str) -> tuple[FiniteModel, tuple]:
    """The construction with the parameters set on the page, and those parameters."""
    if name == "[C] Example 1":
        prob_first = st.slider("Pr[s1]", 0.05, 0.95, 0.5, 0.05, key="w_ex1_prob", persist_state="session")
        return example_1(prob_first=prob_first), (prob_first,)
    if name == "[C] Example 2":
        n = st.slider("Number of fair bits n", 3, 6, 3, key="w_ex2_n", persist_state="session")
        return example_2(n), (n,)
    if name == "[C] Example 3":
        cols = st.columns(2)
        low_t, high_t = cols[0].slider(
            "Pr[U_T | s1] ranges over", 0.05, 0.95, (0.35, 0.65), 0.05, key="w_ex3_t", persist_state="session"
        )
        low_f, high_f = cols[1].slider(
            "Pr[U_F | ¬s1] ranges over", 0.05, 0.95, (0.4, 0.6), 0.05, key="w_ex3_f", persist_state="session"
        )
        return example_3(low_t, high_t, low_f, high_f), (low_t, high_t, low_f, high_f)
    return appendix_j_example(), ()


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


def posterior_chart(trace: pd.DataFrame, step: int, max_runs: int, key: str) -> None:
    wide = true_secret_posterior(trace)
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
    fig.update_xaxes(range=[-0.3, max_runs + 0.3], dtick=1)
    show_figure(fig, notes, key=key)
    if len(wide.columns) > MAX_LINES:
        st.caption(f"Showing {MAX_LINES} of {len(wide.columns)} (secret pair, prior) lines.")


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
