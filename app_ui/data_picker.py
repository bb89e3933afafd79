"""Choose the data: a demo dataset or an upload, its columns, loaded once and kept for the session.

An upload is parsed once (:func:`puffer_core.readers.read_table`), its columns are offered for
the mapping, and the chosen ones are loaded from that parse; the Markov chain fitted to the data
(docs/math.md §6) is computed once per dataset and column mapping.  Nothing is written to disk.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from typing import Any

import streamlit as st

from puffer_core.data import Sequences
from puffer_core.errors import DataError
from puffer_core.fitting import DEFAULT_SMOOTHING, fit_markov_chain
from puffer_core.priors import MarkovChainPrior
from puffer_core.readers import Table, load_sequences, read_table

from . import ASSETS

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


class _NamedBytes(io.BytesIO):
    """Bytes with a file name, so the reader can tell Parquet from CSV by the name too."""

    def __init__(self, content: bytes, name: str) -> None:
        super().__init__(content)
        self.name = name


@st.cache_data(show_spinner="Reading your file…", max_entries=4)
def read_upload(fingerprint: str, _content: bytes, file_name: str) -> Table:
    """Parse uploaded bytes (CSV or Parquet) in memory, once per upload; DataError on bad input."""
    return read_table(_NamedBytes(_content, file_name))


@st.cache_data(show_spinner="Loading the columns…", max_entries=8)
def load_upload(
    fingerprint: str, _table: Table, user: str, time: str, state: str, group: str | None
) -> Sequences:
    """The sequences in the chosen columns of a parsed upload; DataError on bad values."""
    return load_sequences(_table, user=user, time=time, state=state, group=group)


def fitted_prior(data: LoadedData) -> MarkovChainPrior:
    """The Markov chain fitted to the loaded data (docs/math.md §6), once per dataset and column mapping."""
    cache = st.session_state.setdefault("fitted_priors", {})
    key = (data.fingerprint, tuple(data.columns.items()))
    if key not in cache:
        cache[key] = fit_markov_chain(data.sequences, smoothing=DEFAULT_SMOOTHING)
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
    fingerprint = hashlib.sha256(content).hexdigest()
    try:
        table = read_upload(fingerprint, content, upload.name)
    except DataError as exc:
        st.error(f"This file cannot be used: {exc}")
        return None
    columns = list(dict.fromkeys(table.columns))  # a repeated name is offered once; loading it says why not
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
        sequences = load_upload(fingerprint, table, **mapping)
    except DataError as exc:
        st.error(f"This file cannot be used: {exc}")
        return None
    loaded = LoadedData(upload.name, sequences, mapping, fingerprint)
    st.session_state["dataset"] = loaded
    return loaded


def simulation_report(loaded: LoadedData, chosen: dict[str, Any], simulation: dict[str, Any]) -> str:
    """The JSON report of a simulation: where the data came from, what was chosen, what ran."""
    report = {
        "app": "Pufferfish Lab — Simulate",
        "data_source": loaded.name,
        "columns": loaded.columns,
        "prior": f"fitted on these data (docs/math.md §6), smoothing τ = {DEFAULT_SMOOTHING:g}",
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


