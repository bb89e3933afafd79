"""Choose the data: a built-in dataset or an upload, its columns and repair, loaded once and kept for the session.

The built-in datasets are :data:`puffer_core.data.datasets.DATASETS` (synthetic demos and real
public data, each with its source and licence, shown next to it); a real series such as the
Seattle weather offers a choice of what one user's sequence is (a month or a year).  An upload
is parsed once (:func:`puffer_core.data.readers.read_table`), previewed, its columns are offered for
the mapping (a group column is suggested from the text columns with few distinct values, and
used only when the user confirms it), it is repaired only when the user asks (rows with an
empty cell, rows repeated exactly: :func:`puffer_core.data.readers.load_with_repair`, which counts
what it dropped), and the chosen columns are loaded from that parse.  The Markov chain fitted to
the data (docs/math.md §6) is computed once per dataset and column mapping.  Nothing is written
to disk: an upload lives in this session's memory only.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from puffer_core.data.datasets import DATASETS, Dataset, load_dataset
from puffer_core.data.readers import Loaded, Repair, Table, find_repairs, load_with_repair, read_table
from puffer_core.data.sequences import Sequences
from puffer_core.errors import DataError
from puffer_core.priors.fitting import DEFAULT_SMOOTHING, fit_markov_chain
from puffer_core.priors.models import MarkovChainPrior

from .memo import session_memo

UPLOAD = "Upload a CSV or Parquet file"
# the built-in datasets by the title the picker shows
BY_TITLE: dict[str, Dataset] = {d.title: d for d in DATASETS.values()}
# what one user's sequence is, per user column of a built-in dataset
USER_WORDS = {"user": "user", "month": "month", "year": "year"}

# the column names each role is first looked for under (any case), in order
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "user": ("user", "user_id", "userid", "uid", "participant", "id"),
    "time": ("time", "timestamp", "datetime", "date", "ts", "t"),
    "state": ("state", "category", "activity", "venue", "label"),
}
GROUP_NAMES = ("group", "country", "age_group", "region", "city")
NO_GROUP = "(none)"
GROUP_GUESS_MAX = 20  # a text column with 2..20 distinct values, each seen 5 times on average, looks like a group
GROUP_GUESS_REPEAT = 5
PREVIEW_ROWS = 8
RAW_PREVIEW_LINES = 6
DROP_MISSING = "Drop rows with an empty cell"
DROP_DUPLICATES = "Drop rows that repeat an earlier row exactly"


@dataclass(frozen=True)
class LoadedData:
    """Sequences loaded in this session (kept in memory only) and where they came from.

    ``fingerprint`` tells two loads apart: the built-in dataset and its user column, or a digest
    of the uploaded bytes and the repair chosen (a file uploaded again under the same name with
    other content is other data).  ``dataset``: the key of a built-in dataset (None for an
    upload); ``repair``: what was found and dropped from an upload.
    """

    name: str
    sequences: Sequences
    columns: dict[str, str | None]
    fingerprint: str
    dataset: str | None = None
    repair: Repair | None = None

    @property
    def builtin(self) -> Dataset | None:
        return None if self.dataset is None else DATASETS[self.dataset]

    @property
    def description(self) -> str:
        """The name, and for a built-in dataset cut by a chosen column, what one user is."""
        builtin = self.builtin
        user = self.columns.get("user")
        if builtin is not None and len(builtin.user_choices) > 1 and user in USER_WORDS:
            return f"{self.name}, one sequence per {USER_WORDS[user]}"
        return self.name


@st.cache_data(show_spinner="Reading the dataset…", max_entries=6)
def load_demo(name: str, user: str | None = None) -> Sequences:
    """Built-in dataset ``name`` (a key of DATASETS) with ``user`` as the user column, read like an upload."""
    return load_dataset(name, user)


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
    fingerprint: str,
    _table: Table,
    user: str,
    time: str,
    state: str,
    group: str | None,
    drop_missing: bool = False,
    drop_duplicates: bool = False,
) -> Loaded:
    """The sequences in the chosen columns of a parsed upload, repaired as asked; DataError on bad values."""
    columns = {"user": user, "time": time, "state": state, "group": group}
    return load_with_repair(_table, **columns, drop_missing=drop_missing, drop_duplicates=drop_duplicates)


@st.cache_data(show_spinner=False, max_entries=4)
def group_candidates(fingerprint: str, _table: Table) -> list[tuple[str, tuple[str, ...]]]:
    """Text columns that look like a group: 2..GROUP_GUESS_MAX distinct values, each repeated (file order)."""
    out = []
    seen: set[str] = set()
    for position, name in enumerate(_table.columns):
        column = _table.frame[position]
        if name in seen or not (pd.api.types.is_string_dtype(column) or pd.api.types.is_object_dtype(column)):
            continue
        seen.add(name)
        values = column.dropna().astype(str).unique()
        if 2 <= len(values) <= GROUP_GUESS_MAX and len(values) * GROUP_GUESS_REPEAT <= _table.n_rows:
            out.append((name, tuple(sorted(values))))
    return out


def fitted_prior(data: LoadedData) -> MarkovChainPrior:
    """The Markov chain fitted to the loaded data (docs/math.md §6), once per dataset and column mapping."""
    key = (data.fingerprint, tuple(data.columns.items()))
    return session_memo("fitted_prior", key, lambda: fit_markov_chain(data.sequences, smoothing=DEFAULT_SMOOTHING), 8)


def _keep(loaded: LoadedData) -> LoadedData:
    """Make ``loaded`` the session's dataset (the sidebar names it)."""
    st.session_state["dataset"] = loaded
    st.session_state.pop("dataset_failed", None)
    return loaded


def _failed(file_name: str) -> None:
    """An upload could not be used: the session has no dataset now, and the sidebar says which file failed."""
    st.session_state.pop("dataset", None)
    st.session_state["dataset_failed"] = file_name


def dataset_picker(prefix: str) -> LoadedData | None:
    """Choose a built-in dataset or upload one, map its columns, and load it (kept in the session).

    Bad files give ``st.error`` with the loader's message, never a traceback.  Returns the
    loaded data, or None while nothing usable is loaded.
    """
    titles = list(BY_TITLE)
    source = st.radio(
        "Data",
        [*titles, UPLOAD],
        key=f"{prefix}_source",
        persist_state="session",
        index=_source_index(prefix, titles),
        horizontal=True,
    )
    st.session_state[f"{prefix}_last_source"] = source
    if source in BY_TITLE:
        return _builtin(prefix, BY_TITLE[source])
    return _upload(prefix)


def _builtin(prefix: str, dataset: Dataset) -> LoadedData | None:
    user = dataset.user
    if len(dataset.user_choices) > 1:
        user = st.radio(
            "One user's sequence is one",
            list(dataset.user_choices),
            format_func=lambda c: f"{USER_WORDS.get(c, c)} ({dataset.users[c]:,} users)",
            key=f"{prefix}_user_{dataset.name}",
            persist_state="session",
            horizontal=True,
            help="A real series has no users of its own: it is cut into one sequence per month or per year.",
        )
    kind = "Synthetic data" if dataset.synthetic else "Real data"
    st.caption(
        f"{dataset.description}.  \n**{kind}. Source:** {dataset.source}  \n**Licence:** {dataset.licence}"
    )
    try:
        loaded = builtin_data(dataset.name, user)
    except (DataError, ValueError) as exc:
        st.error(f"The dataset could not be loaded: {exc}")
        return None
    return _keep(loaded)


def builtin_data(name: str, user: str | None) -> LoadedData:
    """Built-in dataset ``name`` (a key of DATASETS) with ``user`` as the user column, loaded (cached)."""
    dataset = DATASETS[name]
    user = user or dataset.user
    sequences = load_demo(dataset.name, user)
    return LoadedData(dataset.title, sequences, dataset.columns(user), f"{dataset.name}:{user}", name)


def _upload(prefix: str) -> LoadedData | None:
    upload = st.file_uploader(
        "One row per entry: a user column, a time column, a state column, optionally a group column",
        type=["csv", "parquet", "pq", "gz"],
        key=f"{prefix}_upload",
        help="The file is read in memory and never written to disk.",
    )
    if upload is None:
        st.session_state.pop("dataset_failed", None)
        previous = st.session_state.get("dataset")
        if isinstance(previous, LoadedData) and previous.dataset is None:
            st.caption(f"Using the file loaded earlier in this session: **{previous.name}**.")
            return previous
        st.info("Upload a file to continue, or pick a built-in dataset.")
        return None
    content = upload.getvalue()
    fingerprint = hashlib.sha256(content).hexdigest()
    try:
        table = read_upload(fingerprint, content, upload.name)
    except DataError as exc:
        st.error(f"This file cannot be used: {exc}")
        _raw_preview(content)
        _failed(upload.name)
        return None
    columns = list(dict.fromkeys(table.columns))  # a repeated name is offered once; loading it says why not
    if not columns:
        st.error(f"The file '{upload.name}' has no columns.")
        _failed(upload.name)
        return None
    _preview(table, upload.name)
    mapping = _columns(prefix, table, columns, fingerprint)
    repair = st.columns(2)
    drop_missing = repair[0].checkbox(
        DROP_MISSING,
        key=f"{prefix}_drop_missing",
        help="Rows with an empty cell in the user, time, state or group column are left out (and counted).",
    )
    drop_duplicates = repair[1].checkbox(
        DROP_DUPLICATES,
        key=f"{prefix}_drop_duplicates",
        help="A row equal to an earlier one in the user, time, state and group columns is the same entry"
        " recorded twice: it is left out (and counted). Two states at the same time are a conflict and stay refused.",
    )
    try:
        loaded = load_upload(fingerprint, table, **mapping, drop_missing=drop_missing, drop_duplicates=drop_duplicates)
    except DataError as exc:
        st.error(f"This file cannot be used: {exc}")
        _repair_hint(table, mapping, drop_missing, drop_duplicates)
        _failed(upload.name)
        return None
    _repair_report(loaded.repair)
    signature = f"{fingerprint}:{int(drop_missing)}{int(drop_duplicates)}"
    return _keep(LoadedData(upload.name, loaded.sequences, mapping, signature, repair=loaded.repair))


def _preview(table: Table, file_name: str) -> None:
    with st.expander(f"Preview of {file_name}: {table.n_rows:,} rows, {len(table.columns)} columns"):
        head = table.frame.head(PREVIEW_ROWS).copy()
        head.columns = _unique_names(table.columns)
        st.dataframe(head, hide_index=True, width="stretch", key="preview_upload")
        st.caption(f"The first {min(PREVIEW_ROWS, table.n_rows)} rows as read; empty cells show as None.")


def _raw_preview(content: bytes) -> None:
    """The first lines of a file that could not be parsed, when it is text."""
    if b"\x00" in content[:4096] or content[:2] == b"\x1f\x8b" or not content.strip():
        return
    lines = content[:4096].decode("utf-8", errors="replace").splitlines()[:RAW_PREVIEW_LINES]
    with st.expander("The first lines of the file"):
        st.code("\n".join(lines), language=None)


def _unique_names(names: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in names:
        shown, n = name, 2
        while shown in out:
            shown, n = f"{name} ({n})", n + 1
        out.append(shown)
    return out


def _columns(prefix: str, table: Table, columns: list[str], fingerprint: str) -> dict[str, Any]:
    """The user, time, state and group selectboxes (guessed first from the names, then the first free column)."""
    starts = _guesses(columns)
    cols = st.columns(4)
    mapping: dict[str, Any] = {
        role: col.selectbox(
            f"{role.capitalize()} column",
            columns,
            key=f"{prefix}_col_{role}",
            persist_state="session",
            index=starts[role],
        )
        for col, role in zip(cols, COLUMN_NAMES)
    }
    named = next((i for i, c in enumerate(columns) if c.lower() in GROUP_NAMES and i not in starts.values()), None)
    group_key = f"{prefix}_col_group"
    group = cols[3].selectbox(
        "Group column",
        [NO_GROUP, *columns],
        index=0 if named is None else named + 1,
        key=group_key,
        persist_state="session",
        help="Optional: the query is answered per group (e.g. per country or season).",
    )
    mapping["group"] = None if group == NO_GROUP else group
    if mapping["group"] is None:
        taken = {mapping["user"], mapping["time"], mapping["state"]}
        guess = next((c for c in group_candidates(fingerprint, table) if c[0] not in taken), None)
        if guess is not None:
            name, values = guess
            shown = ", ".join(values[:6]) + (", …" if len(values) > 6 else "")
            left, right = st.columns([3, 1], vertical_alignment="center")
            left.caption(
                f"The column **{name}** looks like a group: {len(values)} text values ({shown})."
                " Use it, or leave the group at (none) for one group."
            )
            right.button(
                f"Use '{name}' as the group",
                key=f"{prefix}_use_group",
                on_click=st.session_state.__setitem__,
                args=(group_key, name),
            )
    return mapping


def _guesses(columns: list[str]) -> dict[str, int]:
    """Start positions of the user, time and state selectboxes: a column named like the role, else a free one."""
    lower = [c.lower() for c in columns]
    found: dict[str, int] = {}
    for role, names in COLUMN_NAMES.items():
        hit = next((lower.index(n) for n in names if n in lower and lower.index(n) not in found.values()), None)
        if hit is not None:
            found[role] = hit
    for role in COLUMN_NAMES:
        if role not in found:
            found[role] = next((i for i in range(len(columns)) if i not in found.values()), 0)
    return found


def _repair_hint(table: Table, mapping: dict[str, Any], drop_missing: bool, drop_duplicates: bool) -> None:
    """After a refusal: say which repair option would drop the rows at fault, with their counts."""
    try:
        found = find_repairs(table, **mapping)
    except DataError:
        return
    hints = []
    if found.missing and not drop_missing:
        hints.append(f"{found.missing:,} row(s) have an empty cell in the chosen columns: tick **{DROP_MISSING}**")
    if found.duplicates and not drop_duplicates:
        hints.append(f"{found.duplicates:,} row(s) repeat an earlier row exactly: tick **{DROP_DUPLICATES}**")
    if hints:
        st.info("To load the rest of the file: " + "; ".join(hints) + ".")


def _repair_report(repair: Repair) -> None:
    if not repair.dropped:
        return
    st.info(
        f"Dropped {repair.describe()}: {repair.rows_kept:,} of {repair.rows_read:,} rows kept."
        " The file itself is unchanged."
    )


def simulation_report(
    loaded: LoadedData, chosen: dict[str, Any], simulation: dict[str, Any], prior: str | None = None
) -> str:
    """The JSON report of a simulation: where the data came from, what was chosen, what ran.

    ``prior`` describes the prior used (default: the chain fitted on these data).
    """
    report: dict[str, Any] = {
        "app": "Pufferfish Lab — Simulate",
        "data_source": loaded.name,
        "columns": loaded.columns,
        "prior": prior or f"fitted on these data (docs/math.md §6), smoothing τ = {DEFAULT_SMOOTHING:g}",
        "settings": {key: list(v) if isinstance(v, tuple) else v for key, v in chosen.items()},
        "simulation": simulation,
    }
    builtin = loaded.builtin
    if builtin is not None:
        report["dataset"] = {"name": builtin.name, "source": builtin.source, "licence": builtin.licence}
    if loaded.repair is not None:
        repair = loaded.repair
        report["repair"] = {
            "rows_read": repair.rows_read,
            "rows_with_an_empty_cell_dropped": repair.missing_dropped,
            "repeated_rows_dropped": repair.duplicates_dropped,
            "rows_kept": repair.rows_kept,
        }
    return json.dumps(report, indent=2, allow_nan=False)


def _source_index(prefix: str, titles: list[str]) -> int:
    last = st.session_state.get(f"{prefix}_last_source")
    if last in titles:
        return titles.index(last)
    if last == UPLOAD:
        return len(titles)
    previous = st.session_state.get("dataset")
    if isinstance(previous, LoadedData):
        return titles.index(previous.name) if previous.name in titles else len(titles)
    return 0
