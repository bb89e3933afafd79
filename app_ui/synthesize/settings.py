"""The Synthesize page's settings: the data it reads, ε_puffer, one chain per group, the noise's seed, the model
and what fidelity compares (docs/math.md §19).

Declared as Parameters (in the link, checked by their codecs; ``streamlit_app.py`` registers SYNTH_GROUP) and read
as one record (:class:`SynthesizeSettings`).  ε_puffer is the shared target (:data:`app_ui.core.state.EPS_PUFFER`),
so that the guided path's link opens this page at the target it chose.  The data travel as their name only
(``builtin:<dataset>:<user column>`` or ``upload:<file name>``): an uploaded file is never kept, whoever opens
the link is asked for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import EPS_PUFFER, DataText, ParameterGroup
from app_ui.secrets.settings import SecretsChoice
from puffer_core.priors.codecs import Choice, Flag, Number, Parameter
from puffer_core.synthesis.fidelity import QUERIES, QUERY_WORDS
from puffer_core.synthesis.model import METHODS

METHOD_WORDS = {
    "projection": "projection onto the public totals, rows near the noise borrow from the pooled chain",
    "dirichlet": "negative counts cut at 0, then 1/K added to every count (for comparison)",
}
SYNTH_DATA = Parameter("synth_data", None, "sdata", DataText(), label="The data synthesized")
SYNTH_BY_GROUP = Parameter("synth_by_group", True, "sgroup", Flag(), label="One chain per group")
SYNTH_REAL = Parameter("synth_real", False, "sreal", Flag(), label="Real release (OpenDP noise, no seed)")
SYNTH_SEED = Parameter("synth_seed", 0, "sseed", Number(0, 2**31 - 1, whole=True), label="Seed", step=1)
SYNTH_METHOD = Parameter(
    "synth_method", "projection", "smethod", Choice(METHODS, labels=METHOD_WORDS), label="Noisy counts → chain"
)
SYNTH_TOP_K = Parameter("synth_top_k", 3, "stopk", Number(1, 50, whole=True), label="Top-k states", step=1)
SYNTH_QUERY = Parameter(
    "synth_query", "visits", "squery", Choice(QUERIES, labels=QUERY_WORDS), label="Downstream query"
)
SYNTH_PARAMETERS: tuple[Parameter, ...] = (
    SYNTH_DATA, SYNTH_BY_GROUP, SYNTH_REAL, SYNTH_SEED, SYNTH_METHOD, SYNTH_TOP_K, SYNTH_QUERY,
)
SYNTH_GROUP = ParameterGroup("synthesize", SYNTH_PARAMETERS)  # registered by streamlit_app.py: in every link


@dataclass(frozen=True)
class SynthesizeSettings(SettingsRecord):
    """What the Synthesize page releases and compares: the data's name, ε_puffer, one chain per group (when the
    data have groups), a real release or a seed, the model of the noisy counts, top-k and the downstream query."""

    data: tuple[str, ...] | None = setting(SYNTH_DATA)
    eps_puffer: float = setting(EPS_PUFFER)
    by_group: bool = setting(SYNTH_BY_GROUP)
    real: bool = setting(SYNTH_REAL)
    seed: int = setting(SYNTH_SEED)
    method: str = setting(SYNTH_METHOD)
    top_k: int = setting(SYNTH_TOP_K)
    query: str = setting(SYNTH_QUERY)
    secrets: SecretsChoice = holds(SecretsChoice)  # what is secret: value pairs and entries (docs/math.md §16)

    @property
    def rng(self) -> int | None:
        """What the library's ``rng`` gets: None for a real release (OpenDP's noise), else the seed."""
        return None if self.real else self.seed

    def as_dict(self) -> Mapping[str, Any]:
        """The settings in words, for the report."""
        return {
            "ε_puffer": self.eps_puffer,
            "one chain per group": self.by_group,
            "noise": "real release (OpenDP, no seed)" if self.real else f"reproducible, seed {self.seed}",
            "noisy counts → chain": METHOD_WORDS[self.method],
            "top-k states": self.top_k,
            "downstream query": QUERY_WORDS[self.query],
        }
