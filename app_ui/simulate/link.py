"""The Simulate page's link: its data and form (query, k, mechanisms, ε grid, releases, trials, seed, Θ, τ).

The form's widgets keep their values for the session (:mod:`app_ui.simulate.settings`); these Parameters (all
optional: None when a link did not set them) carry them in "Share these settings".  A link's values are written
into the widgets once, before the page draws them (:func:`open_link`); after every run the page writes the form
back (:func:`remember`) and :func:`share` puts them in the address bar.  Results are never in a link: whoever
opens it presses Run and, with the same seed, gets the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from app_ui.core import state
from app_ui.core.state import DataText, ParameterGroup
from app_ui.data.picker import BY_TITLE, UPLOAD, LoadedData
from app_ui.prior.smoothing import SMOOTHING_GRID
from app_ui.secrets.settings import SecretsChoice
from app_ui.simulate.settings import MAX_DRAWS_UI, MAX_TRIALS_UI, SimulateSettings
from puffer_core.mechanisms import MECHANISMS, QUERIES, TOPK_LAPLACE
from puffer_core.priors.codecs import Choice, Codec, Flag, Number, Parameter
from puffer_core.simulation.run import MAX_RELEASES, RELEASE_MODES

MAX_TEXT = 200  # characters of the ε grid in a link


@dataclass(frozen=True)
class Text:
    """Any text of at most :data:`MAX_TEXT` characters (the ε grid, checked by the page as it is typed)."""

    def parse(self, text: str) -> str:
        if not text.strip() or len(text) > MAX_TEXT:
            raise ValueError(f"a text of 1 to {MAX_TEXT} characters")
        return text

    def encode(self, value: str) -> str:
        return value


@dataclass(frozen=True)
class Names:
    """Names from ``options``, written a,b,c (the mechanisms)."""

    options: tuple[str, ...]

    def parse(self, text: str) -> tuple[str, ...]:
        names = tuple(name.strip() for name in text.split(",") if name.strip())
        unknown = [name for name in names if name not in self.options]
        if not names or unknown:
            raise ValueError(f"names among {', '.join(self.options)}")
        return names

    def encode(self, value: Sequence[str]) -> str:
        return ",".join(value)


def _optional(key: str, url: str, codec: Codec) -> Parameter:
    return Parameter(f"sim_{key}", None, url, codec, label=f"Simulate: {key}")


WHOLE = 2**31 - 1
DATA = _optional("data", "simdata", DataText())
QUERY = _optional("query", "simq", Choice(tuple(QUERIES)))
K = _optional("k", "simk", Number(1, 50, whole=True))
CHOSEN = _optional("mechanisms", "simmech", Names(tuple(MECHANISMS)))
GRID = _optional("grid", "simgrid", Text())
RELEASES = _optional("releases", "simrel", Number(1, MAX_RELEASES, whole=True))
MODE = _optional("release_mode", "simmode", Choice(RELEASE_MODES))
TRIALS = _optional("trials", "simtrials", Number(2, MAX_TRIALS_UI, whole=True))
SEED = _optional("seed", "simseed", Number(0, WHOLE, whole=True))
TOPK = _optional("topk_laplace", "simtopk", Choice(TOPK_LAPLACE))
POST = _optional("postprocess", "simpost", Flag())
ROBUST = _optional("robust", "simrobust", Flag())
DRAWS = _optional("draws", "simM", Number(1, MAX_DRAWS_UI, whole=True))
ALPHA = _optional("concentration", "simalpha", Number(0.0001, 100.0))
PRIOR_SEED = _optional("prior_seed", "simdseed", Number(0, WHOLE, whole=True))
TAU = _optional("smoothing", "simtau", Number(0.0, 1.0))
SIMULATE_LINK = (DATA, QUERY, K, CHOSEN, GRID, RELEASES, MODE, TRIALS, SEED, TOPK, POST, ROBUST, DRAWS, ALPHA,
                 PRIOR_SEED, TAU)  # fmt: skip
SIMULATE_GROUP = ParameterGroup("simulate", SIMULATE_LINK)
# each Parameter's widget on the page (the mechanisms' widget is per query)
WIDGETS = (
    (K, "w_sim_k"), (GRID, "w_sim_grid"), (RELEASES, "w_sim_releases"), (MODE, "w_sim_mode"),
    (TRIALS, "w_sim_trials"), (SEED, "w_sim_seed"), (TOPK, "w_sim_topk_laplace"), (POST, "w_sim_postprocess"),
    (ROBUST, "w_sim_robust"), (DRAWS, "w_sim_draws"), (ALPHA, "w_sim_alpha"), (PRIOR_SEED, "w_sim_prior_seed"),
    (QUERY, "w_sim_query"),
)  # fmt: skip
OPENED = "sim_link_opened"


def open_link() -> None:
    """Once per session, before the page draws its form: the values a link gave become the widgets' values."""
    if st.session_state.get(OPENED):
        return
    st.session_state[OPENED] = True
    session = st.session_state
    for parameter, key in WIDGETS:
        value = state.get(parameter)
        if value is not None:
            session[key] = list(value) if isinstance(value, tuple) else value
    query, chosen = state.get(QUERY), state.get(CHOSEN)
    if chosen is not None:
        session[f"w_sim_mechanisms_{query or 'topk'}"] = list(chosen)
    tau = state.get(TAU)
    if tau is not None and tau in SMOOTHING_GRID:
        session["w_sim_smoothing"] = tau
    data = state.get(DATA)
    if data is not None and data[0] == "builtin" and data[1] in {d.name for d in BY_TITLE.values()}:
        title = next(title for title, d in BY_TITLE.items() if d.name == data[1])
        session["sim_source"] = session["sim_last_source"] = title
        session[f"sim_user_{data[1]}"] = data[2]
    elif data is not None and data[0] == "upload":
        session["sim_source"] = session["sim_last_source"] = UPLOAD
        session["sim_link_file"] = data[1]


def remember(loaded: LoadedData, chosen: SimulateSettings) -> None:
    """The form as it ran: what the page's link carries."""
    if loaded.dataset is not None:
        state.put(DATA, ("builtin", loaded.dataset, str(loaded.columns.get("user"))))
    else:
        state.put(DATA, ("upload", loaded.name) if loaded.large is None else None)
    grid = ",".join(repr(float(eps)) if float(f"{eps:g}") != eps else f"{eps:g}" for eps in chosen.eps_grid)
    values = (
        (QUERY, chosen.query), (K, chosen.k), (CHOSEN, chosen.mechanisms), (GRID, grid), (RELEASES, chosen.releases),
        (MODE, chosen.release_mode), (TRIALS, chosen.trials), (SEED, chosen.seed), (TOPK, chosen.topk_laplace),
        (POST, chosen.postprocess), (ROBUST, chosen.robust), (TAU, chosen.smoothing),
        (DRAWS, chosen.draws if chosen.robust else None),
        (ALPHA, chosen.concentration if chosen.robust else None),
        (PRIOR_SEED, chosen.prior_seed if chosen.robust else None),
    )  # fmt: skip
    for parameter, value in values:
        state.put(parameter, value)


def share() -> None:
    """The page's link (its data and form) in the address bar and its Share button; a file a link named is asked
    for by its name."""
    wanted = st.session_state.get("sim_link_file")
    if wanted and not isinstance(st.session_state.get("dataset"), LoadedData):
        st.info(f"The link was made with the file **{wanted}**: upload it above (the app keeps no copy of it).")
    state.share((*SIMULATE_LINK, *SecretsChoice.from_session().link()))  # with what is secret (docs/math.md §16)
