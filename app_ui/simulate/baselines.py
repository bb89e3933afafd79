"""The published baselines on the Simulate page: why one could not run, and why it wins or loses here.

Words for the findings of :func:`puffer_core.simulation.baselines.baseline_findings`
(docs/math.md §15); the Simulate page places them under its own explanation.
"""

from __future__ import annotations

import streamlit as st

from app_ui.core.tables import fmt
from puffer_core.simulation.baselines import baseline_findings
from puffer_core.simulation.explain import Finding
from puffer_core.simulation.run import SimulationResult


def sentence(finding: Finding) -> str:
    """One finding in words."""
    n = finding.numbers
    eps = "" if finding.eps_puffer is None else f" At ε_puffer = {finding.eps_puffer:g}:"
    if finding.code == "baseline_refused":
        return f"**Not run** — {n['reason']}."
    if finding.code == "wasserstein_scale":
        text = (
            f"{eps} the Wasserstein mechanism adds noise of scale W/ε = {fmt(n['noise'])} per count: one entry can"
            f" move the user's histogram by W = {fmt(n['w'])} counts in the best coupling of the two secrets"
            f" (group DP assumes all {n['t_max']} entries move:"
            f" {fmt(n['group_dp_noise'])})."
        )
        if "mqm_noise" in n:
            better = "less" if n["noise"] < n["mqm_noise"] else "more"
            text += (
                f" MQM adds {fmt(n['mqm_noise'])}: Wasserstein adds {better} here. Neither always wins: W counts the"
                " whole sequence, MQM's quilts only the nearby entries, which pays off at large ε."
            )
        return text
    if finding.code == "mqm_approx_looser":
        return (
            f"{eps} MQMApprox's σ_max is {n['ratio']:.3g}× exact MQM's: its eigen-gap bound on each quilt's"
            " influence is above the exact value, and quilts nearer than 2·log(1/π_min)/g are not bounded at all."
        )
    if finding.code == "influence_factor":
        return (
            f"{eps} the influence-matrix translation guarantees c·ε_DP with c = {fmt(n['factor'])} (group DP:"
            f" T = {n['t_max']}), so each release gets ε_DP = ε_puffer/{fmt(n['factor'])}."
        )
    return ""


def show_baselines(result: SimulationResult) -> None:
    """The baselines' findings as a short list (nothing when no baseline was chosen)."""
    lines = [sentence(f) for f in baseline_findings(result)]
    lines = [line for line in lines if line]
    if lines:
        with st.container(border=True, key="sim_baselines"):
            st.markdown("**The published baselines** (docs/math.md §15)")
            st.markdown("\n".join(f"- {line}" for line in lines))
