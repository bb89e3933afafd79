"""Gaussian noise under (α, ε)-Rényi Pufferfish, as pages show it (docs/math.md §17).

The release is each user's count of one state over the sequence, with N(0, σ²) noise.  Every number comes from
:func:`puffer_core.gaussian_count`: σ_GWM (the General Wasserstein Mechanism, σ² = α·W∞²/(2ε)) and the exact σ\\*
(the smallest σ whose certified divergence is ≤ ε for every protected pair and θ), the variance σ\\* saves, the
conversion to (ε_δ, δ)-Pufferfish, and the plain ε-Pufferfish bound only where one exists.  The words say every
time that this is a different, weaker guarantee than ε-Pufferfish: it is never added to ε-Pufferfish rows.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from app_ui.core import inputs, state
from app_ui.core.report import Section
from app_ui.core.tables import csv_download, fmt, show_table
from app_ui.gaussian.settings import COUNT_STATE, GAUSS_ALPHA, GAUSS_DELTA, GAUSS_ON, GaussianChoice
from puffer_core import gaussian_count
from puffer_core.accounting.renyi import approx_meaning
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.secrets import Secrets

NOTION = (
    "**(α, ε)-Rényi Pufferfish** (Pierquin, Bellet, Tommasi & Boussard, ICML 2024; docs/math.md §17): for every"
    " protected pair of secrets and every θ, the Rényi divergence of order α between the release's laws under the"
    " two secrets is at most ε. It bounds an *average* of the likelihood ratio, not its worst case: a weaker"
    " guarantee than ε-Pufferfish, so its ε is never added to ε-Pufferfish budgets."
)
CONFIDENCE = 0.95  # the intervals shown


@dataclass(frozen=True)
class GaussianNumbers:
    """What Gaussian noise on the count of one state gives at (α, ε) (module docstring); ``state`` is its index."""

    state: int
    state_label: str
    alpha: float
    eps: float
    delta: float
    w: float
    sigma_gwm: float
    sigma: float
    variance_saved: float
    divergence: float
    divergence_gwm: float
    eps_delta: float
    eps_delta_gwm: float
    pure_eps: float
    pure_note: str
    worst: str
    error_gwm: float
    error: float
    interval_gwm: float
    interval: float
    chosen: bool = False  # calibrated for the page's chosen value secrets (docs/math.md §16), not every pair

    def table(self) -> pd.DataFrame:
        """Both calibrations side by side, every number in full precision."""
        return pd.DataFrame(
            {
                "calibration": ["GWM: σ² = α·W∞²/(2ε)", "exact σ*"],
                "σ": [self.sigma_gwm, self.sigma],
                "variance": [self.sigma_gwm**2, self.sigma**2],
                "certified D_α ≤": [self.divergence_gwm, self.divergence],
                f"ε_δ at δ = {self.delta:g}": [self.eps_delta_gwm, self.eps_delta],
                "E|error| per count": [self.error_gwm, self.error],
                f"{CONFIDENCE:.0%} interval ±": [self.interval_gwm, self.interval],
            }
        )

    def pure_text(self) -> str:
        """The plain ε-Pufferfish bound where one exists, or why none does."""
        if math.isfinite(self.pure_eps):
            return (
                "A plain ε-Pufferfish bound exists here: the release at σ* is ε-Pufferfish with"
                f" ε ≤ {fmt(self.pure_eps)} (its own certified likelihood ratio)."
            )
        return f"**No plain ε-Pufferfish bound**: {self.pure_note}."

    def summary(self) -> str:
        """The numbers in one paragraph (the page's and the report's words)."""
        return (
            f"Gaussian noise on each user's count of state {self.state_label} is (α = {self.alpha:g}, ε ="
            f" {self.eps:g})-Rényi Pufferfish{' for the chosen secrets' if self.chosen else ''} with"
            f" σ_GWM = {fmt(self.sigma_gwm)} (W∞ = {self.w:g}), and with the exact"
            f" σ* = {fmt(self.sigma)}, which saves {100 * self.variance_saved:.1f}% of the variance (certified"
            f" D_α ≤ {self.divergence:.6g}, worst at {self.worst}). Converted: (ε_δ = {fmt(self.eps_delta)}, δ ="
            f" {self.delta:g})-Pufferfish at σ*."
        )


def state_labels(chains: Sequence[MarkovChainPrior]) -> list[str]:
    """The states' names (their indices when the chain has no labels)."""
    labels = chains[0].labels
    return [str(label) for label in labels] if labels is not None else [str(i) for i in range(chains[0].n_states)]


@st.cache_data(show_spinner=False, max_entries=32)
def gaussian_numbers(key: Hashable, _chains: Sequence[MarkovChainPrior], eps: float, choice: GaussianChoice,
                     secrets: Secrets | None = None) -> GaussianNumbers:
    """The numbers of :class:`GaussianNumbers` for these chains (``key`` names them), once per input; ``secrets``:
    the value pairs and positions protected (None: every pair at every entry, docs/math.md §16)."""
    chains = list(_chains)
    exact = gaussian_count(chains, [choice.state], eps, choice.alpha, exact=True, secrets=secrets)
    gwm = gaussian_count(chains, [choice.state], eps, choice.alpha, exact=False, secrets=secrets)
    cal = exact.calibration
    assert cal is not None  # a count's mechanism always carries its calibration
    return GaussianNumbers(
        state=choice.state,
        state_label=state_labels(chains)[choice.state],
        alpha=choice.alpha,
        eps=eps,
        delta=choice.delta,
        w=cal.w,
        sigma_gwm=gwm.sigma,
        sigma=exact.sigma,
        variance_saved=cal.variance_saved,
        divergence=exact.accounting.eps,
        divergence_gwm=gwm.accounting.eps,
        eps_delta=exact.accounting.approximate(choice.delta),
        eps_delta_gwm=gwm.accounting.approximate(choice.delta),
        pure_eps=cal.pure_eps,
        pure_note=cal.pure_note,
        worst=cal.worst,
        error_gwm=gwm.expected_abs_error,
        error=exact.expected_abs_error,
        interval_gwm=gwm.interval_halfwidth(CONFIDENCE),
        interval=exact.interval_halfwidth(CONFIDENCE),
        chosen=secrets is not None and not secrets.is_all,
    )


def count_controls(container: Any, chains: Sequence[MarkovChainPrior], key: str) -> int | None:
    """The state counted (its index), or None while the box holds a state the prior does not have."""
    labels = state_labels(chains)
    chosen = state.number_input(container, f"State counted (0..{len(labels) - 1})", COUNT_STATE, key=key)
    if inputs.is_invalid(key):
        return None
    if chosen >= len(labels):
        container.error(f"The prior has {len(labels)} states (0..{len(labels) - 1}); state {chosen} does not exist.")
        return None
    container.caption(f"The count of state **{labels[chosen]}** per user.")
    return int(chosen)


def gaussian_section(key: Hashable, chains: Sequence[MarkovChainPrior] | None, eps: float,
                     secrets: Secrets | None = None, note: str = "") -> GaussianNumbers | None:
    """The Calibrate page's Gaussian tab: the toggle, α, δ and the state, then the numbers (None while off);
    ``secrets``: the page's chosen value secrets (None: every pair), ``note``: said on the tab when the page's
    secrets are ones Gaussian noise cannot take (it then protects every pair)."""
    st.markdown(NOTION)
    if note:
        st.info(note, icon=":material/lock_open:")
    if chains is None:
        st.info("Gaussian noise is calibrated on the count laws of a Markov chain; this prior is a Gaussian process.")
        return None
    if not state.toggle(st, "Show what Gaussian noise gives at this ε", GAUSS_ON, key="w_gauss_on"):
        return None
    c1, c2, c3 = st.columns(3)
    state.number_input(c1, "Rényi order α", GAUSS_ALPHA, key="w_gauss_alpha")
    state.number_input(c2, "δ of the (ε, δ) conversion", GAUSS_DELTA, key="w_gauss_delta")
    counted = count_controls(c3, chains, "w_gauss_state")
    if counted is None or inputs.is_invalid("w_gauss_alpha") or inputs.is_invalid("w_gauss_delta"):
        return None
    choice = GaussianChoice.from_session()
    try:
        with st.spinner("Calibrating σ* (certified divergences)…"):
            numbers = gaussian_numbers(key, tuple(chains), eps, choice, secrets)
    except ValueError as exc:
        st.error(f"Gaussian noise cannot be calibrated here: {exc}")
        return None
    g1, g2, g3, g4 = st.columns(4)
    g1.metric("σ_GWM", fmt(numbers.sigma_gwm), help=f"σ² = α·W∞²/(2ε) with W∞ = {numbers.w:g} (exact, this chain).")
    g2.metric("Exact σ*", fmt(numbers.sigma), help="The smallest σ whose certified divergence is ≤ ε for every pair.")
    g3.metric("Variance saved", f"{100 * numbers.variance_saved:.1f}%", help="1 − σ*²/σ_GWM².")
    g4.metric(f"ε_δ (δ = {numbers.delta:g})", fmt(numbers.eps_delta),
              help="ε + log(1/δ)/(α − 1), with ε the certified divergence at σ*.")
    st.markdown(numbers.summary())
    st.markdown(f"**What (ε_δ, δ) means**: {approx_words(numbers)}. " + numbers.pure_text())
    show_table(numbers.table(), key="gauss_table", width="stretch")
    csv_download(numbers.table(), "gaussian.csv", "Download these numbers (CSV)", key="w_download_gauss")
    return numbers


def approx_words(numbers: GaussianNumbers) -> str:
    """What the converted (ε_δ, δ) guarantee means for a reader (the library's sentence)."""
    return approx_meaning(numbers.eps_delta, numbers.delta)


def gaussian_report(numbers: GaussianNumbers) -> Section:
    """The report's section for the Gaussian numbers."""
    return Section("Gaussian noise: (α, ε)-Rényi Pufferfish", f"{numbers.summary()} {numbers.pure_text()}",
                   table=numbers.table(), notes=(NOTION,))


def gaussian_settings(numbers: GaussianNumbers) -> dict[str, Any]:
    """The report's settings for the Gaussian numbers."""
    return {"Gaussian noise: α": numbers.alpha, "Gaussian noise: δ": numbers.delta,
            "Gaussian noise: state counted": numbers.state_label}


def gaussian_block(numbers: GaussianNumbers, prior_name: str = "prior", eps_name: str = "EPS_PUFFER"
                   ) -> tuple[str, list[str]]:
    """The script's block printing the same σ as the page, and the names it needs from puffer_core (with the
    script's ``SECRETS`` when the page calibrated for chosen value secrets)."""
    chosen = ", secrets=SECRETS" if numbers.chosen else ""
    code = (
        "# Gaussian noise on each user's count of one state: (α, ε)-Rényi Pufferfish (docs/math.md §17)\n"
        f"GAUSS_ALPHA = {numbers.alpha!r}  # the Rényi order\n"
        f"GAUSS_DELTA = {numbers.delta!r}  # δ of the (ε, δ) conversion\n"
        f"GAUSS_STATE = {numbers.state!r}  # the state counted (its index)\n"
        f"gauss = gaussian_count({prior_name}, [GAUSS_STATE], {eps_name}, GAUSS_ALPHA{chosen})  # the exact σ*\n"
        f"gwm = gaussian_count({prior_name}, [GAUSS_STATE], {eps_name}, GAUSS_ALPHA, exact=False{chosen})  # σ_GWM\n"
        'print(f"σ_GWM = {fmt(gwm.sigma)}")\n'
        'print(f"Exact σ* = {fmt(gauss.sigma)}")\n'
        'print(f"Variance saved = {100 * gauss.calibration.variance_saved:.1f}%")\n'
        'print(f"ε_δ (δ = {GAUSS_DELTA:g}) = {fmt(gauss.accounting.approximate(GAUSS_DELTA))}")\n'
    )
    return code, ["gaussian_count"]
