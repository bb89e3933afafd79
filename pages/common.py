"""Shared state, cached library calls and drawing helpers for the app's pages.

Every page is a thin view: it reads widgets, calls :mod:`puffer_core` through the cached
wrappers below, and draws.  What the user set lives in ``st.session_state["settings"]`` so it
survives page switches; the shareable part is written to ``st.query_params`` by each page and
read back once, when a session starts.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from puffer_core import (
    GaussianProcessPrior,
    InfluenceCurve,
    MarkovChainPrior,
    binary_chain_curve,
    influence_curve,
)
from puffer_core.data import Sequences, load_sequences, read_columns
from puffer_core.errors import DataError
from puffer_core.fitting import fit_markov_chain
from puffer_core.gaussian import JITTER
from puffer_core.priors import KERNELS, ROW_TOLERANCE

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"

# url_path (pages/<url_path>.py) → (title, icon): app.py's navigation and the home page's links
PAGES: dict[str, tuple[str, str]] = {
    "home": ("Home", ":material/home:"),
    "curves": ("Influence curves", ":material/show_chart:"),
    "calibrate": ("Calibrate", ":material/tune:"),
    "plan": ("Plan & compose", ":material/event_note:"),
    "simulate": ("Simulate", ":material/science:"),
    "classroom": ("Classroom", ":material/school:"),
}

PRIOR_KINDS: dict[str, str] = {
    "binary": "Binary chain (p, q)",
    "matrix": "K-state Markov chain",
    "theta": "Set of priors Θ",
    "gaussian": "Gaussian process",
}
KERNEL_NAMES: dict[str, str] = {
    "squared_exponential": "squared exponential  exp(−(j−k)²/ℓ)",
    "exponential": "exponential  exp(−|j−k|/ℓ)",
}
FIGURE3_LENGTH_SCALES: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0)
MAX_STATES = 20
MAX_MARKOV_LENGTH = 10_000
MAX_GP_N = 200
MAX_PINNED = 8

DEMO_DATASETS: dict[str, dict[str, str]] = {
    "Check-ins (synthetic, after Foursquare)": {
        "file": "checkins.csv",
        "user": "user",
        "time": "time",
        "state": "state",
        "group": "country",
        "blurb": "2,000 users, 71,861 check-ins, 12 venue categories, 20 countries",
    },
    "Activities (synthetic, after Capture-24)": {
        "file": "activities.csv",
        "user": "user",
        "time": "time",
        "state": "state",
        "group": "age_group",
        "blurb": "150 participants, one day at 5-minute resolution, 11 activities, 4 age groups",
    },
}

# the column names each role is first looked for under (any case), in order
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "user": ("user", "user_id", "userid", "uid", "participant", "id"),
    "time": ("time", "timestamp", "datetime", "date", "ts", "t"),
    "state": ("state", "category", "activity", "venue", "label"),
}

DEFAULTS: dict[str, Any] = {
    "prior_kind": "binary",
    "p": 0.9,
    "q": 0.8,
    "length": 100,
    "matrix": ((0.8, 0.1, 0.1), (0.1, 0.8, 0.1), (0.1, 0.1, 0.8)),
    "labels": ("0", "1", "2"),
    "theta": ((0.8, 0.8), (0.9, 0.7), (0.7, 0.9)),
    "gp_kernel": "squared_exponential",
    "gp_ell": 1.0,
    "gp_n": 50,
    "gp_gamma": 5.0,
    "gp_delta": 0.1,
    "gp_overlay": (),
    "log_y": False,
    "closed_form": False,
    "eps_puffer": 1.0,
    "eps_dp": 0.1,
    "plan_total": 6.0,
    "plan_releases": 12,
}

# name in the URL → (settings key, kind); kinds are parsed and checked by _parse_param
URL_KEYS: dict[str, tuple[str, str]] = {
    "prior": ("prior_kind", "kind"),
    "p": ("p", "prob"),
    "q": ("q", "prob"),
    "T": ("length", "length"),
    "P": ("matrix", "matrix"),
    "labels": ("labels", "labels"),
    "theta": ("theta", "theta"),
    "kernel": ("gp_kernel", "kernel"),
    "ell": ("gp_ell", "ell"),
    "n": ("gp_n", "gp_n"),
    "gamma": ("gp_gamma", "gamma"),
    "delta": ("gp_delta", "delta"),
    "overlay": ("gp_overlay", "floats"),
    "log": ("log_y", "bool"),
    "cf": ("closed_form", "bool"),
    "eps": ("eps_puffer", "eps"),
    "epsdp": ("eps_dp", "eps_dp"),
    "E": ("plan_total", "eps"),
    "k": ("plan_releases", "releases"),
}
# the ranges of the widgets these settings feed (a link cannot set what a widget cannot show)
NUMBER_RANGES: dict[str, tuple[float, float]] = {
    "ell": (0.1, 20.0),
    "gamma": (0.5, 20.0),
    "delta": (0.01, 5.0),
    "eps": (0.01, 1000.0),
    "eps_dp": (0.0001, 100.0),
}
WHOLE_RANGES: dict[str, tuple[int, int]] = {
    "length": (2, MAX_MARKOV_LENGTH),
    "gp_n": (3, MAX_GP_N),
    "releases": (1, 365),
}
PRIOR_URL_KEYS: dict[str, tuple[str, ...]] = {
    "binary": ("prior", "p", "q", "T", "cf"),
    "matrix": ("prior", "P", "labels", "T"),
    "theta": ("prior", "theta", "T"),
    "gaussian": ("prior", "kernel", "ell", "n", "gamma", "delta", "overlay"),
}


# --------------------------------------------------------------------------- navigation

NAVIGATION_FLAG = "_app_navigation"
DEEP_LINK = "_deep_link"


def enter_page(url_path: str) -> None:
    """Call first on every page: make sure it runs inside app.py's ``st.navigation``.

    A Streamlit server that has not yet run app.py treats ``pages/`` as an old-style pages
    folder, so a link opened first on a fresh server (``/calibrate?eps=2``) would run the page
    without the app around it.  Then hand the link to app.py, which switches back to this
    page with the same query parameters under its own navigation.
    """
    if not st.session_state.get(NAVIGATION_FLAG):
        st.session_state[DEEP_LINK] = {"page": url_path, "query": st.query_params.to_dict()}
        st.switch_page(str(ROOT / "app.py"))


# --------------------------------------------------------------------------- settings


def settings() -> dict[str, Any]:
    """The user's settings for this session; on the first run, read from the link."""
    if "settings" not in st.session_state:
        values = dict(DEFAULTS)
        values["pinned"] = []
        values["matrix_version"] = 0
        values["theta_version"] = 0
        ignored = []
        for name, raw in st.query_params.to_dict().items():
            if name not in URL_KEYS:
                continue
            key, kind = URL_KEYS[name]
            try:
                values[key] = _parse_param(kind, raw)
            except ValueError as exc:
                ignored.append(f"`{name}={raw[:40]}` ({exc})")
        if "P" in st.query_params and "labels" not in st.query_params:
            values["labels"] = tuple(str(i) for i in range(len(values["matrix"])))
        if len(values["labels"]) != len(values["matrix"]):
            ignored.append(f"`labels` ({len(values['labels'])} labels for {len(values['matrix'])} states)")
            values["labels"] = tuple(str(i) for i in range(len(values["matrix"])))
        values["link_ignored"] = ignored
        values["matrix_base"] = values["matrix"]
        values["theta_base"] = values["theta"]
        st.session_state["settings"] = values
    return st.session_state["settings"]


def _parse_param(kind: str, raw: str) -> Any:
    """A URL value, checked; ValueError with a short reason when it is not usable."""
    raw = raw.strip()
    if kind == "kind":
        aliases = {"gp": "gaussian"}
        value = aliases.get(raw, raw)
        if value not in PRIOR_KINDS:
            raise ValueError(f"one of {', '.join(PRIOR_KINDS)}")
        return value
    if kind == "kernel":
        if raw not in KERNELS:
            raise ValueError(f"one of {', '.join(KERNELS)}")
        return raw
    if kind == "bool":
        if raw not in ("0", "1", "true", "false"):
            raise ValueError("0 or 1")
        return raw in ("1", "true")
    if kind == "labels":
        labels = tuple(s.strip() for s in raw.split("|"))
        if len(set(labels)) != len(labels) or any(not s for s in labels):
            raise ValueError("distinct, non-empty labels separated by |")
        return labels
    if kind == "matrix":
        rows = tuple(tuple(_finite(x) for x in row.split(",")) for row in raw.split(";"))
        if not 2 <= len(rows) <= MAX_STATES or any(len(r) != len(rows) for r in rows):
            raise ValueError(f"a square matrix with 2 to {MAX_STATES} states, rows separated by ;")
        return rows
    if kind == "theta":
        pairs = []
        for item in raw.split(";"):
            parts = item.split(",")
            if len(parts) != 2:
                raise ValueError("pairs p,q separated by ;")
            pairs.append((_probability(parts[0]), _probability(parts[1])))
        if not 1 <= len(pairs) <= 20:
            raise ValueError("1 to 20 pairs")
        return tuple(pairs)
    if kind == "floats":
        if not raw:
            return ()
        return tuple(sorted({_positive(x) for x in raw.split(",")}))
    if kind == "prob":
        return _probability(raw)
    number = _finite(raw)
    if kind in NUMBER_RANGES:
        low, high = NUMBER_RANGES[kind]
        if not low <= number <= high:
            raise ValueError(f"between {low:g} and {high:g}")
        return number
    if number != int(number):
        raise ValueError("a whole number")
    low_whole, high_whole = WHOLE_RANGES[kind]
    if not low_whole <= number <= high_whole:
        raise ValueError(f"between {low_whole} and {high_whole}")
    return int(number)


def _finite(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _probability(raw: str) -> float:
    value = _finite(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError("a probability between 0 and 1")
    return value


def _positive(raw: str) -> float:
    value = _finite(raw)
    if value <= 0:
        raise ValueError("a positive number")
    return value


def _encode(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if key == "matrix":
        return ";".join(",".join(repr(float(x)) for x in row) for row in value)
    if key == "labels":
        return "|".join(value)
    if key == "theta":
        return ";".join(f"{p!r},{q!r}" for p, q in value)
    if key == "gp_overlay":
        return ",".join(f"{x:g}" for x in value)
    if isinstance(value, float):
        return f"{value:g}" if float(f"{value:g}") == value else repr(value)
    return str(value)


def share_settings(names: Iterable[str]) -> None:
    """Write the named settings (URL names) to the address bar so the page can be shared."""
    values = settings()
    params = {}
    for name in names:
        key = URL_KEYS[name][0]
        if key in ("matrix", "labels") and len(values["matrix"]) > MAX_STATES:
            continue  # too many states for a link (see link_note)
        if key == "labels" and values["labels"] == tuple(str(i) for i in range(len(values["matrix"]))):
            continue
        params[name] = _encode(key, values[key])
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def link_note() -> str:
    """What the link in the address bar leaves out, if anything."""
    values = settings()
    if values["prior_kind"] == "matrix" and len(values["matrix"]) > MAX_STATES:
        return (
            f" A matrix with more than {MAX_STATES} states is too large for a link: the link carries the"
            " other settings only."
        )
    return ""


def prior_url_keys() -> tuple[str, ...]:
    return PRIOR_URL_KEYS[settings()["prior_kind"]]


def editor_state(name: str) -> tuple[str, Any]:
    """The key of the ``st.data_editor`` for setting ``name``, and the value it starts from.

    The editor starts from ``<name>_base``; when the setting was changed while its editor was
    not on screen (another page, a callback), it restarts from the current value under a new key.
    """
    values = settings()
    key = f"w_{name}_{values[f'{name}_version']}"
    if key not in st.session_state and values[name] != values[f"{name}_base"]:
        values[f"{name}_base"] = values[name]
        values[f"{name}_version"] += 1
        key = f"w_{name}_{values[f'{name}_version']}"
    return key, values[f"{name}_base"]


def show_ignored_link_settings() -> None:
    """Tell the user which parts of the link they opened could not be used (once)."""
    values = settings()
    if values.get("link_ignored"):
        st.warning("Some settings in the link were ignored: " + "; ".join(values["link_ignored"]) + ".")
        values["link_ignored"] = []


# --------------------------------------------------------------------------- priors and curves


def binary_transition(p: float, q: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """P = [[p, 1−p], [1−q, q]] of [C] Example 3 (docs/math.md §2.2)."""
    return ((p, 1.0 - p), (1.0 - q, q))


@st.cache_data(show_spinner=False, max_entries=512)
def markov_curve(
    transition: tuple[tuple[float, ...], ...], length: int, labels: tuple[str, ...] | None = None
) -> InfluenceCurve:
    """The exact a(b) curve of one stationary Markov chain prior (docs/math.md §2.1)."""
    return influence_curve(MarkovChainPrior(transition, length=length, labels=labels))


@st.cache_data(show_spinner=False, max_entries=128)
def theta_curve(pairs: tuple[tuple[float, float], ...], length: int) -> InfluenceCurve:
    """The a(b) curve of a set Θ of binary chains (docs/math.md §2.1: sup over θ inside the min)."""
    priors = [MarkovChainPrior(binary_transition(p, q), length=length) for p, q in pairs]
    return influence_curve(priors)


@st.cache_data(show_spinner=False, max_entries=256)
def gaussian_curve(n: int, length_scale: float, kernel: str, gamma: float, delta: float) -> InfluenceCurve:
    """a(b) of a Gaussian-process prior (docs/math.md §2.3)."""
    return influence_curve(GaussianProcessPrior(n, length_scale, kernel, gamma, delta))


@st.cache_data(show_spinner=False, max_entries=128)
def closed_form_curve(p: float, q: float, max_b: int, length: int) -> InfluenceCurve:
    """[C]'s closed form for the binary chain with sequences of ``length`` entries (docs/math.md §2.2)."""
    return binary_chain_curve(p, q, max_b, length)


@dataclass(frozen=True)
class CurrentCurve:
    """The curve of the prior the user chose, with a one-line description of that prior."""

    curve: InfluenceCurve
    description: str
    members: tuple[InfluenceCurve, ...] = ()


def describe_prior(values: dict[str, Any]) -> str:
    kind = values["prior_kind"]
    if kind == "binary":
        return f"binary chain p = {values['p']:g}, q = {values['q']:g}, T = {values['length']}"
    if kind == "matrix":
        return f"{len(values['matrix'])}-state Markov chain, T = {values['length']}"
    if kind == "theta":
        pairs = ", ".join(f"({p:g}, {q:g})" for p, q in values["theta"])
        return f"Θ of {len(values['theta'])} binary chains (p, q) ∈ {{{pairs}}}, T = {values['length']}"
    return (
        f"Gaussian process, {values['gp_kernel'].replace('_', ' ')} kernel, ℓ = {values['gp_ell']:g},"
        f" n = {values['gp_n']}, γ = {values['gp_gamma']:g}, δ = {values['gp_delta']:g}"
    )


def current_curve() -> CurrentCurve:
    """The a(b) curve of the prior in the settings; ValueError with the library's message."""
    values = settings()
    kind = values["prior_kind"]
    description = describe_prior(values)
    if kind == "binary":
        curve = markov_curve(binary_transition(values["p"], values["q"]), values["length"])
        return CurrentCurve(curve, description)
    if kind == "matrix":
        problems = matrix_problems(values["matrix"], values["labels"])
        if problems:
            raise ValueError("the transition matrix is not valid: " + "; ".join(problems))
        curve = markov_curve(tuple(map(tuple, values["matrix"])), values["length"], tuple(values["labels"]))
        return CurrentCurve(curve, description)
    if kind == "theta":
        pairs = tuple(values["theta"])
        if not pairs:
            raise ValueError("the set Θ is empty; add at least one prior (a row p, q)")
        curve = theta_curve(pairs, values["length"])
        members = tuple(markov_curve(binary_transition(p, q), values["length"]) for p, q in pairs)
        return CurrentCurve(curve, description, members)
    curve = gaussian_curve(
        values["gp_n"], values["gp_ell"], values["gp_kernel"], values["gp_gamma"], values["gp_delta"]
    )
    return CurrentCurve(curve, description)


def matrix_problems(matrix: Sequence[Sequence[object]], labels: Sequence[str]) -> list[str]:
    """One message per row that cannot be a row of a transition matrix (empty list: all fine)."""
    problems = []
    for i, row in enumerate(matrix):
        name = f"row {i + 1} (from state '{labels[i]}')" if i < len(labels) else f"row {i + 1}"
        values = []
        missing = []
        for j, x in enumerate(row):
            try:
                value = float(x)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                value = math.nan
            if math.isnan(value):
                missing.append(j + 1)
            values.append(value)
        if missing:
            problems.append(f"{name} has empty or non-numeric cells in columns {', '.join(map(str, missing))}")
            continue
        if any(not math.isfinite(v) for v in values):
            problems.append(f"{name} contains a value that is not a finite number")
            continue
        negative = [j + 1 for j, v in enumerate(values) if v < 0]
        if negative:
            problems.append(f"{name} has negative probabilities in columns {', '.join(map(str, negative))}")
            continue
        total = math.fsum(values)
        if abs(total - 1.0) > ROW_TOLERANCE:
            problems.append(f"{name} sums to {total:.6g}, not 1")
    return problems


def normalise_rows(matrix: Sequence[Sequence[object]]) -> tuple[tuple[tuple[float, ...], ...], list[int]]:
    """Each row divided by its sum (empty cells count as 0); rows that sum to 0 are left as they are.

    Returns the matrix and the 1-based numbers of the rows that could not be normalised.
    """
    out = []
    skipped = []
    for i, row in enumerate(matrix):
        values = []
        for x in row:
            try:
                value = float(x)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                value = 0.0
            values.append(0.0 if math.isnan(value) else value)
        total = math.fsum(values)
        if total > 0 and math.isfinite(total) and all(v >= 0 for v in values):
            scaled = [v / total for v in values]
            # put the rounding residue on the largest entry so the row sums to 1 within 1e-15
            k = int(np.argmax(scaled))
            scaled[k] = 1.0 - math.fsum(scaled[:k] + scaled[k + 1 :])
            out.append(tuple(scaled))
        else:
            skipped.append(i + 1)
            out.append(tuple(values))
    return tuple(out), skipped


def set_matrix(matrix: tuple[tuple[float, ...], ...], labels: tuple[str, ...]) -> None:
    """Make ``matrix`` the K-state chain of the settings and restart its editor from it."""
    values = settings()
    values.update(matrix=matrix, matrix_base=matrix, labels=labels)
    values["matrix_version"] += 1


def use_fitted_prior(data: LoadedData) -> None:
    """Make the chain fitted to ``data`` (docs/math.md §6) the K-state chain of the settings, with its T."""
    prior = fitted_prior(data)
    settings()["length"] = int(prior.length)
    set_matrix(tuple(tuple(float(x) for x in row) for row in prior.transition), tuple(prior.labels))


def sticky_matrix(k: int, stay: float) -> tuple[tuple[float, ...], ...]:
    """Stay in the current state with probability ``stay``, otherwise move to any other state."""
    move = (1.0 - stay) / (k - 1)
    return tuple(tuple(stay if i == j else move for j in range(k)) for i in range(k))


def cyclic_matrix(k: int, stay: float) -> tuple[tuple[float, ...], ...]:
    """Stay with probability ``stay``, otherwise move on to the next state (k−1 wraps to 0)."""
    return tuple(
        tuple(stay if j == i else (1.0 - stay if j == (i + 1) % k else 0.0) for j in range(k)) for i in range(k)
    )


def random_matrix(k: int, seed: int) -> tuple[tuple[float, ...], ...]:
    """Rows drawn from a flat Dirichlet distribution (seeded, so the same seed gives the same matrix)."""
    rows = np.random.default_rng(seed).dirichlet(np.ones(k), size=k)
    normalised, _ = normalise_rows(rows.tolist())
    return normalised


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class LoadedData:
    """Sequences loaded in this session (kept in memory only) and where they came from.

    ``fingerprint`` tells two loads apart: the demo's name, or a digest of the uploaded bytes
    (a file uploaded again under the same name with other content is other data).
    """

    name: str
    sequences: Sequences
    columns: dict[str, str | None]
    fingerprint: str


@st.cache_data(show_spinner="Reading the demo dataset…", max_entries=4)
def load_demo(name: str) -> Sequences:
    spec = DEMO_DATASETS[name]
    return load_sequences(
        ASSETS / spec["file"], user=spec["user"], time=spec["time"], state=spec["state"], group=spec["group"]
    )


@st.cache_data(show_spinner="Reading your file…", max_entries=4)
def load_upload(content: bytes, file_name: str, user: str, time: str, state: str, group: str | None) -> Sequences:
    """Parse uploaded bytes (CSV or Parquet) in memory; DataError on bad input."""
    return load_sequences(_NamedBytes(content, file_name), user=user, time=time, state=state, group=group)


class _NamedBytes(io.BytesIO):
    """Bytes with a file name, so the loader can tell Parquet from CSV by the name too."""

    def __init__(self, content: bytes, name: str) -> None:
        super().__init__(content)
        self.name = name


@st.cache_data(show_spinner=False, max_entries=32)
def header_columns(content: bytes, file_name: str) -> list[str]:
    """The column names of an uploaded CSV or Parquet file, to offer in the column mapping; DataError on bad input."""
    return read_columns(_NamedBytes(content, file_name))


def fitted_prior(data: LoadedData) -> MarkovChainPrior:
    """The Markov chain fitted to the loaded data (docs/math.md §6), cached per dataset and column mapping."""
    cache = st.session_state.setdefault("fitted_priors", {})
    key = (data.fingerprint, tuple(data.columns.items()))
    if key not in cache:
        cache[key] = fit_markov_chain(data.sequences)
    return cache[key]


def dataset_picker(prefix: str) -> LoadedData | None:
    """Choose a demo dataset or upload one, map its columns, and load it (kept in the session).

    Bad files give ``st.error`` with the loader's message, never a traceback.  Returns the
    loaded data, or None while nothing usable is loaded.
    """
    demo_names = list(DEMO_DATASETS)
    source = st.radio(
        "Data",
        [*demo_names, "Upload a CSV or Parquet file"],
        key=f"{prefix}_source",
        persist_state="session",
        index=_source_index(prefix, demo_names),
        horizontal=True,
    )
    if source in DEMO_DATASETS:
        st.caption(DEMO_DATASETS[source]["blurb"] + ". Synthetic data: see assets/README.md.")
        try:
            sequences = load_demo(source)
        except DataError as exc:
            st.error(f"The demo dataset could not be loaded: {exc}")
            return None
        spec = DEMO_DATASETS[source]
        loaded = LoadedData(source, sequences, {k: spec[k] for k in ("user", "time", "state", "group")}, source)
        st.session_state["dataset"] = loaded
        st.session_state[f"{prefix}_last_source"] = source
        return loaded
    st.session_state[f"{prefix}_last_source"] = source
    upload = st.file_uploader(
        "One row per entry: a user column, a time column, a state column, optionally a group column",
        type=["csv", "parquet", "pq", "gz"],
        key=f"{prefix}_upload",
        help="The file is read in memory and never written to disk.",
    )
    if upload is None:
        previous = st.session_state.get("dataset")
        if isinstance(previous, LoadedData) and previous.name not in DEMO_DATASETS:
            st.caption(f"Using the file loaded earlier in this session: **{previous.name}**.")
            return previous
        st.info("Upload a file to continue, or pick a demo dataset.")
        return None
    content = upload.getvalue()
    try:
        columns = header_columns(content, upload.name)
    except DataError as exc:
        st.error(f"This file cannot be used: {exc}")
        return None
    if not columns:
        st.error(f"The file '{upload.name}' has no columns.")
        return None
    cols = st.columns(4)
    taken: list[int] = []
    mapping: dict[str, str | None] = {
        role: col.selectbox(
            f"{role.capitalize()} column",
            columns,
            key=f"{prefix}_col_{role}",
            persist_state="session",
            index=_guess(columns, names, taken),
        )
        for col, (role, names) in zip(cols, COLUMN_NAMES.items())
    }
    group_options = ["(none)", *columns]
    named = _guess(columns, ("group", "country", "age_group", "region", "city"), taken, fallback=False)
    group = cols[3].selectbox(
        "Group column",
        group_options,
        index=0 if named is None else named + 1,
        key=f"{prefix}_col_group",
        persist_state="session",
    )
    mapping["group"] = None if group == "(none)" else group
    try:
        sequences = load_upload(content, upload.name, **mapping)
    except DataError as exc:
        st.error(f"This file cannot be used: {exc}")
        return None
    loaded = LoadedData(upload.name, sequences, mapping, hashlib.sha256(content).hexdigest())
    st.session_state["dataset"] = loaded
    return loaded


def simulation_report(loaded: LoadedData, chosen: dict[str, Any], simulation: dict[str, Any]) -> str:
    """The JSON report of a simulation: where the data came from, what was chosen, what ran."""
    report = {
        "app": "Pufferfish Lab — Simulate",
        "data_source": loaded.name,
        "columns": loaded.columns,
        "settings": {key: list(v) if isinstance(v, tuple) else v for key, v in chosen.items()},
        "simulation": simulation,
    }
    return json.dumps(report, indent=2, allow_nan=False)


def _source_index(prefix: str, demo_names: list[str]) -> int:
    last = st.session_state.get(f"{prefix}_last_source")
    if last in demo_names:
        return demo_names.index(last)
    previous = st.session_state.get("dataset")
    if isinstance(previous, LoadedData):
        return demo_names.index(previous.name) if previous.name in demo_names else len(demo_names)
    return 0


def _guess(columns: list[str], names: tuple[str, ...], taken: list[int], fallback: bool = True) -> int | None:
    """Position of the first column named like ``names`` (any case) and not taken yet.

    Without such a column: the first column not taken (or None when ``fallback`` is False).
    The position chosen is added to ``taken``, so user, time and state start on different columns.
    """
    lower = [c.lower() for c in columns]
    choice = next((lower.index(n) for n in names if n in lower and lower.index(n) not in taken), None)
    if choice is None and fallback:
        choice = next((i for i in range(len(columns)) if i not in taken), 0)
    if choice is not None:
        taken.append(choice)
    return choice


# --------------------------------------------------------------------------- formatting and drawing


def fmt(value: float, digits: int = 4) -> str:
    """A number for a table or a metric: ∞ for +inf, 4 significant digits otherwise."""
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


@dataclass(frozen=True)
class Trace:
    """One line of a chart: x values, y values (may hold +inf) and how to draw it."""

    label: str
    x: np.ndarray
    y: np.ndarray
    dash: str = "solid"
    width: float = 2.5
    markers: bool = True
    color: str | None = None


def curve_trace(curve: InfluenceCurve, label: str, dash: str = "solid", width: float = 2.5) -> Trace:
    """The plotted points of a curve: b = 1..B (a(b) = 0 from b = T on)."""
    return Trace(label, np.asarray(curve.b, dtype=float), np.asarray(curve.a, dtype=float), dash, width)


def traces_frame(traces: Sequence[Trace], x_name: str, y_name: str) -> pd.DataFrame:
    """Long table of what is plotted (one row per point), for the CSV download."""
    frames = [pd.DataFrame({"curve": t.label, x_name: t.x, y_name: t.y}) for t in traces]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["curve", x_name, y_name])


def line_figure(
    traces: Sequence[Trace],
    x_title: str,
    y_title: str,
    log_y: bool = False,
    y_name: str = "a(b)",
    x_name: str = "b",
    height: int = 430,
    y_range: tuple[float, float] | None = None,
) -> tuple[go.Figure, list[str]]:
    """A plotly line chart with hover values; +inf is drawn at the top edge as ▲.

    Returns the figure and notes to print under it (what was clipped or left out).
    """
    finite = np.concatenate([t.y[np.isfinite(t.y)] for t in traces]) if traces else np.array([])
    positive = finite[finite > 0]
    notes = []
    if y_range is not None:
        bottom, top = y_range
    elif log_y:
        top = float(positive.max()) * 3 if positive.size else 10.0
        bottom = float(positive.min()) / 3 if positive.size else 0.1
    else:
        top = float(finite.max()) * 1.12 if finite.size and finite.max() > 0 else 1.0
        bottom = 0.0
    any_inf = False
    any_zero_hidden = False
    fig = go.Figure()
    for trace in traces:
        y = trace.y.astype(float)
        inf = np.isposinf(y)
        any_inf |= bool(inf.any())
        shown = np.where(inf, top, y)
        if log_y:
            zero = shown <= 0
            any_zero_hidden |= bool(zero.any())
            shown = np.where(zero, np.nan, shown)
        text = [fmt(v) for v in y]
        fig.add_trace(
            go.Scatter(
                x=trace.x,
                y=shown,
                mode="lines+markers" if trace.markers else "lines",
                name=trace.label,
                line={"dash": trace.dash, "width": trace.width, "color": trace.color},
                marker={
                    "size": [11 if i else 5 for i in inf],
                    "symbol": ["triangle-up" if i else "circle" for i in inf],
                },
                customdata=text,
                hovertemplate=f"%{{fullData.name}}<br>{x_name} = %{{x}}<br>{y_name} = %{{customdata}}<extra></extra>",
            )
        )
    if any_inf:
        notes.append(f"▲ marks {y_name} = ∞ (drawn at the top edge of the plot; the table shows ∞).")
    if any_zero_hidden:
        notes.append(f"Points with {y_name} = 0 cannot be drawn on a log scale and are left out.")
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        hovermode="closest",
        xaxis_title=x_title,
        yaxis_title=y_title,
    )
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    elif log_y:
        decades = math.log10(top * 1.5) - math.log10(bottom)
        fig.update_yaxes(type="log", range=[math.log10(bottom), math.log10(top * 1.5)])
        if decades <= 4:
            fig.update_yaxes(tickformat=".3~g", dtick="D2")  # 1, 2, 5 in every decade
        else:  # powers of ten, as 10⁻⁶ … 10⁶, at most about eight of them
            low, high = math.floor(math.log10(bottom)), math.ceil(math.log10(top * 1.5))
            step = max(1, math.ceil((high - low) / 8))
            powers = list(range(low, high + 1, step))
            fig.update_yaxes(tickvals=[10.0**e for e in powers], ticktext=[_power_of_ten(e) for e in powers])
    else:
        fig.update_yaxes(range=[bottom, top * 1.04])
    return fig, notes


SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(exponent: int) -> str:
    """10 to the exponent as text: 1, 10, 100, then 10³, 10⁻⁶ …"""
    if 0 <= exponent <= 2:
        return str(10**exponent)
    return "10" + str(exponent).translate(SUPERSCRIPTS)


def show_figure(fig: go.Figure, notes: Sequence[str], key: str) -> None:
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
    for note in notes:
        st.caption(note)


def display_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every float column as text: ∞ shown as ∞, 4 significant digits."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            out[column] = [fmt(float(v)) if not pd.isna(v) else "" for v in out[column]]
    return out


def show_problems(problems: Iterable[str]) -> None:
    """One ``st.error`` per problem, as a sentence."""
    for problem in problems:
        st.error(problem[0].upper() + problem[1:] + ".")


def show_table(frame: pd.DataFrame, key: str, **kwargs: Any) -> None:
    """``st.dataframe`` of :func:`display_table`, with the number columns right-aligned."""
    shown = display_table(frame)
    config = {
        str(c): st.column_config.TextColumn(str(c), alignment="right")
        for c in frame.columns
        if pd.api.types.is_float_dtype(frame[c])
    }
    st.dataframe(shown, hide_index=True, key=key, column_config=config, **kwargs)


def csv_download(frame: pd.DataFrame, file_name: str, label: str, key: str) -> None:
    """A download button for a table (``inf`` written as inf), without rerunning the page."""
    st.download_button(
        label,
        frame.to_csv(index=False).encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def prior_summary() -> CurrentCurve | None:
    """Show which prior the page uses (set on the curves page); its curve, or None after st.error."""
    values = settings()
    cols = st.columns([4, 1])
    cols[0].markdown(f"**Prior:** {describe_prior(values)}")
    cols[1].page_link("pages/curves.py", label="Change the prior", icon=":material/tune:")
    try:
        with st.spinner("Computing the a(b) curve…"):
            return current_curve()
    except ValueError as exc:
        st.error(f"The prior chosen on the Influence curves page cannot be used: {exc}")
        return None


JITTER_NOTE = (
    "Gaussian prior: as in [C] Example 4, a(b) ignores how the truncation to [−γ, γ] reshapes the"
    " conditional distribution (docs/math.md §2.3).  Each a(b) is an upper bound for the exact kernel:"
    f" the solver's nugget of {JITTER:g} is certified away, r is bounded between grid points, and a(b) is ∞"
    " where double precision cannot certify the conditional variance (very long length scales)."
)
