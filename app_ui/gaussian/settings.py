"""The Gaussian noise's settings (docs/math.md §17): shown or not, the Rényi order α, δ of the (ε, δ) conversion,
the state whose count is released, and (on Plan) each release's Rényi ε and how many releases of that count.

Declared as Parameters (in every link, checked by their codecs; ``streamlit_app.py`` registers GAUSSIAN_GROUP) and
read as one record (:class:`GaussianChoice`), which the Calibrate page and the best-possible page hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, setting
from app_ui.core.state import ParameterGroup
from puffer_core.priors.codecs import Flag, Number, Parameter

GAUSS_ON = Parameter("gauss_on", False, "gauss", Flag(), label="Gaussian noise (Rényi Pufferfish)")
GAUSS_ALPHA = Parameter(
    "gauss_alpha", 2.0, "galpha", Number(1.1, 64.0), label="Rényi order α", step=0.5,
    help="The order of the Rényi divergence the guarantee bounds: larger α is closer to a worst-case bound.",
)
GAUSS_DELTA = Parameter(
    "gauss_delta", 1e-5, "gdelta", Number(1e-12, 0.1), label="δ of the (ε, δ) conversion", format="%.1e",
    help="The probability of outcomes the converted (ε_δ, δ)-Pufferfish guarantee leaves unprotected.",
)
COUNT_STATE = Parameter(
    "count_state", 1, "cstate", Number(0, 99, whole=True), label="State counted (its index)", step=1,
    help="The release is each user's count of this state over the sequence (0 is the first state).",
)
GAUSS_EPS = Parameter("gauss_eps", 0.5, "geps", Number(0.01, 10.0), label="Rényi ε per release", step=0.1)
GAUSS_RELEASES = Parameter("gauss_releases", 4, "grel", Number(1, 20, whole=True), label="Releases k", step=1)
GAUSSIAN_PARAMETERS: tuple[Parameter, ...] = (
    GAUSS_ON, GAUSS_ALPHA, GAUSS_DELTA, COUNT_STATE, GAUSS_EPS, GAUSS_RELEASES
)
GAUSSIAN_GROUP = ParameterGroup("gaussian", GAUSSIAN_PARAMETERS)  # registered by streamlit_app.py: in every link


@dataclass(frozen=True)
class GaussianChoice(SettingsRecord):
    """Gaussian noise on the count of one state: on or off, α, δ and the state (its index)."""

    on: bool = setting(GAUSS_ON)
    alpha: float = setting(GAUSS_ALPHA)
    delta: float = setting(GAUSS_DELTA)
    state: int = setting(COUNT_STATE)
    eps: float = setting(GAUSS_EPS)  # each release's Rényi level (the Plan page's releases of one count)
    releases: int = setting(GAUSS_RELEASES)

    def link(self) -> tuple[Parameter, ...]:
        """In a link only while it is on (off is the default: nothing to carry)."""
        return GAUSSIAN_PARAMETERS if self.on else ()
