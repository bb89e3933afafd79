"""Choose the data: a built-in dataset, a deployer's large dataset or an upload, its columns and repair.

The built-in datasets are :data:`puffer_core.data.datasets.DATASETS` (synthetic demos and real
public data, each with its source and licence, shown next to it); a real series such as the
Seattle weather offers a choice of what one user's sequence is (a month or a year).  An upload
is parsed once in memory with pyarrow (:func:`puffer_core.data.engines.parse_upload`; nothing is
written to disk, and a file whose table would not fit in :data:`UPLOAD_MEMORY` is refused with
the estimate), previewed, its columns are offered for the mapping (a group column is suggested
from the text columns with few distinct values, and used only when the user confirms it), it is
repaired only when the user asks (rows with an empty cell, rows repeated exactly, counted), and
the chosen columns are aggregated by DuckDB over that Arrow table
(:func:`puffer_core.data.engines.load_stats`, the same SQL as for files of any size).

Large datasets are never a path typed into the page: the deployer lists them in a file named by
the environment variable ``PUFFER_DATASETS`` (TOML or JSON: a table per dataset with ``path`` —
a file, folder or glob of Parquet/CSV — and its ``user``, ``time``, ``state``, optional ``group``,
``time_format`` and ``title``).  One heavy scan runs at a time per process
(:data:`HEAVY_SCAN`), with DuckDB's memory limit :data:`MEMORY_LIMIT` (``PUFFER_MEMORY_LIMIT``).
What a page then uses is the data's :class:`~puffer_core.data.stats.SequenceStats`, computed once per
dataset and column mapping, as is the Markov chain fitted to it (docs/math.md §6).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st

from app_ui.core.memo import session_memo
from puffer_core.data.columns import COLUMN_NAMES, guess_columns, guess_group
from puffer_core.data.datasets import DATASETS, Dataset, load_dataset
from puffer_core.data.engines import load_stats, repair_counts
from puffer_core.data.readers import MAX_ROWS, Repair, load_sequences
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.data.times import DAY_FIRST, MONTH_FIRST
from puffer_core.data.uploads import ParsedTable, parse_upload, parsed_size
from puffer_core.errors import DataError
from puffer_core.priors.fitting import DEFAULT_SMOOTHING, fit_markov_chain
from puffer_core.priors.models import MarkovChainPrior

UPLOAD = "Upload a CSV or Parquet file"
# the built-in datasets by the title the picker shows
BY_TITLE: dict[str, Dataset] = {d.title: d for d in DATASETS.values()}
# what one user's sequence is, per user column of a built-in dataset
USER_WORDS = {"user": "user", "month": "month", "year": "year"}

# the column names each role is first looked for under (any case), in order
NO_GROUP = "(none)"
GROUP_GUESS_MAX = 20  # a text column with 2..20 distinct values, each seen 5 times on average, looks like a group
GROUP_GUESS_REPEAT = 5
PREVIEW_ROWS = 8
RAW_PREVIEW_LINES = 6
DROP_MISSING = "Drop rows with an empty cell"
DROP_DUPLICATES = "Drop rows that repeat an earlier row exactly"
# how numeric dates are read (puffer_core.data.times): decided from the column, or chosen
DATE_ORDERS = {"decided from the column": None, "day/month/year": DAY_FIRST, "month/day/year": MONTH_FIRST}
MEMORY_LIMIT = os.environ.get("PUFFER_MEMORY_LIMIT", "1GB")  # DuckDB's, per scan
UPLOAD_MEMORY = 1_000_000_000  # bytes an upload's parsed table may take in this process
HEAVY_SCAN = threading.Lock()  # one heavy scan (an upload's or a large dataset's aggregation) at a time per process


def _scan(what: str, work: Any) -> Any:
    """Run ``work()`` as the process's one heavy scan, saying so while it waits for another."""
    if not HEAVY_SCAN.acquire(blocking=False):
        with st.spinner("Another dataset is being read in this app; waiting for it to finish…"):
            HEAVY_SCAN.acquire()
    try:
        with st.spinner(what):
            return work()
    finally:
        HEAVY_SCAN.release()


@dataclass(frozen=True)
class LargeDataset:
    """A dataset the deployer lists in the ``PUFFER_DATASETS`` file: where it is and which columns are which."""

    name: str
    title: str
    path: str
    user: str
    time: str
    state: str
    group: str | None = None
    time_format: str | None = None

    def columns(self) -> dict[str, str | None]:
        return {"user": self.user, "time": self.time, "state": self.state, "group": self.group}


def large_datasets() -> dict[str, LargeDataset]:
    """The deployer's datasets by title (empty without ``PUFFER_DATASETS``); a broken file is reported on the page."""
    where = os.environ.get("PUFFER_DATASETS")
    if not where:
        return {}
    return _read_large_datasets(where, _mtime(where))


def _mtime(path: str) -> float:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return 0.0


@st.cache_resource(show_spinner=False, max_entries=2)
def _read_large_datasets(path: str, _mtime: float) -> dict[str, LargeDataset]:
    text = Path(path).read_text(encoding="utf-8")
    config = json.loads(text) if path.lower().endswith(".json") else tomllib.loads(text)
    out = {}
    for name, entry in config.items():
        record = LargeDataset(
            name=name,
            title=str(entry.get("title", name)),
            path=str(Path(path).parent / entry["path"]) if not Path(entry["path"]).is_absolute() else entry["path"],
            user=entry.get("user", "user"),
            time=entry.get("time", "time"),
            state=entry.get("state", "state"),
            group=entry.get("group"),
            time_format=entry.get("time_format"),
        )
        out[record.title] = record
    return out


@st.cache_resource(show_spinner=False, max_entries=8)
def large_stats(name: str, windows: tuple[int, ...] = ()) -> SequenceStats:
    """A deployer's dataset aggregated by DuckDB (shared by every session of the process), once per window count."""
    record = next(d for d in large_datasets().values() if d.name == name)
    return _scan(
        f"Reading {record.title} (DuckDB, memory limit {MEMORY_LIMIT})…",
        lambda: load_stats(
            record.path, **record.columns(), time_format=record.time_format, memory_limit=MEMORY_LIMIT,
            windows=windows,
        ),
    )


@dataclass(frozen=True)
class LoadedData:
    """The statistics of data loaded in this session (kept in memory only) and where they came from.

    ``fingerprint`` tells two loads apart: the built-in dataset and its user column, or a digest
    of the uploaded bytes and the repair chosen (a file uploaded again under the same name with
    other content is other data).  ``dataset``: the key of a built-in dataset (None otherwise);
    ``large``: the name of a deployer's dataset; ``upload``: the parsed upload (kept to count
    time windows on demand); ``repair``: what was found and dropped from an upload.
    """

    name: str
    stats: SequenceStats
    columns: dict[str, str | None]
    fingerprint: str
    dataset: str | None = None
    repair: Repair | None = None
    large: str | None = None
    upload: ParsedTable | None = None

    def windows(self, releases: int) -> SequenceStats:
        """The statistics with entries counted in ``releases`` time windows (computed once, when first asked)."""
        if releases in self.stats.window_counts:
            return self.stats
        if self.dataset is not None:
            return demo_windows(self.dataset, self.columns["user"], releases)
        if self.large is not None:
            return large_stats(self.large, (releases,))
        repair = self.repair or Repair(0, 0, 0)
        return session_memo(
            "upload_windows",
            (self.fingerprint, tuple(self.columns.items()), releases),
            lambda: _scan(
                "Counting the time windows…",
                lambda: load_stats(
                    self.upload, **self.columns, windows=(releases,), memory_limit=MEMORY_LIMIT,
                    drop_missing=repair.drop_missing, drop_duplicates=repair.drop_duplicates,
                ),
            ),
            4,
        )

    @property
    def builtin(self) -> Dataset | None:
        return None if self.dataset is None else DATASETS[self.dataset]

    @property
    def holds_sequences(self) -> bool:
        """Whether :attr:`sequences` can be built (cheap: nothing is read)."""
        return self.dataset is not None or (self.upload is not None and self.upload.table.num_rows <= MAX_ROWS)

    @property
    def sequences(self) -> Sequences | None:
        """Each user's sequence when the data are small enough to hold them (built-in data, uploads of at most
        :data:`puffer_core.data.readers.MAX_ROWS` rows); None for a deployer's large dataset, which exists here
        only as counts.  Post-processing with the prior needs them (docs/math.md §14)."""
        if not self.holds_sequences:
            return None
        if self.dataset is not None:
            return load_demo(self.dataset, self.columns["user"])
        repair = self.repair or Repair(0, 0, 0)
        return session_memo(
            "upload_sequences",
            (self.fingerprint, tuple(self.columns.items())),
            lambda: load_sequences(
                self.upload.table.to_pandas(), **self.columns,
                drop_missing=repair.drop_missing, drop_duplicates=repair.drop_duplicates,
            ),
            2,
        )

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


@st.cache_resource(show_spinner=False, max_entries=6)
def demo_stats(name: str, user: str | None = None) -> SequenceStats:
    """The statistics of a built-in dataset (numpy: the data are small), shared by every session."""
    return load_demo(name, user).stats()


@st.cache_resource(show_spinner=False, max_entries=16)
def demo_windows(name: str, user: str | None, releases: int) -> SequenceStats:
    return load_demo(name, user).stats(windows=(releases,))


class _NamedBytes(io.BytesIO):
    """Bytes with a file name, so the reader can tell Parquet from CSV by the name too."""

    def __init__(self, content: bytes, name: str) -> None:
        super().__init__(content)
        self.name = name


@st.cache_data(show_spinner="Reading your file…", max_entries=4)
def read_upload(fingerprint: str, _content: bytes, file_name: str) -> ParsedTable:
    """Parse uploaded bytes (CSV or Parquet) in memory with pyarrow, once per upload; DataError on bad input.

    A file whose parsed table would take more than UPLOAD_MEMORY bytes is refused before parsing, with the estimate.
    """
    estimate = parsed_size(_content, file_name)
    if estimate > UPLOAD_MEMORY:
        raise DataError(
            f"the file '{file_name}' ({len(_content) / 1e6:,.0f} MB) would take about {estimate / 1e9:,.1f} GB of"
            f" memory once read, over this app's limit of {UPLOAD_MEMORY / 1e9:,.1f} GB per upload. Aggregate it"
            " with the library or the command line (puffer prior --data …, any size), or ask the deployer to"
            " list it among the large datasets (PUFFER_DATASETS)"
        )
    return parse_upload(_NamedBytes(_content, file_name))


@st.cache_data(show_spinner=False, max_entries=8)
def load_upload(
    fingerprint: str,
    _table: ParsedTable,
    user: str,
    time: str,
    state: str,
    group: str | None,
    drop_missing: bool = False,
    drop_duplicates: bool = False,
    time_format: str | None = None,
) -> tuple[SequenceStats, Repair]:
    """The statistics of the chosen columns of a parsed upload (DuckDB), repaired as asked; DataError on bad values."""
    columns = {"user": user, "time": time, "state": state, "group": group, "time_format": time_format}
    stats = _scan(
        "Loading the columns…",
        lambda: load_stats(
            _table, **columns, drop_missing=drop_missing, drop_duplicates=drop_duplicates, memory_limit=MEMORY_LIMIT
        ),
    )
    repair = Repair(stats.rows_read, stats.missing, stats.duplicates, drop_missing, drop_duplicates)
    return stats, repair


@st.cache_data(show_spinner=False, max_entries=4)
def group_candidates(fingerprint: str, _table: ParsedTable) -> list[tuple[str, tuple[str, ...]]]:
    """Text columns that look like a group: 2..GROUP_GUESS_MAX distinct values, each repeated (file order).

    Columns whose values are all numbers are not text.
    """
    out = []
    seen: set[str] = set()
    table = _table.table
    for position, name in enumerate(_table.columns):
        column = table.column(position)
        if name in seen or not pa.types.is_string(column.type):
            continue
        seen.add(name)
        values = pc.unique(column.drop_null())
        if not 2 <= len(values) <= GROUP_GUESS_MAX or len(values) * GROUP_GUESS_REPEAT > table.num_rows:
            continue
        texts = [str(v).strip() for v in values.to_pylist()]
        if all(_is_number(v) for v in texts):
            continue
        out.append((name, tuple(sorted(texts))))
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def fitted_prior(data: LoadedData, smoothing: float = DEFAULT_SMOOTHING) -> MarkovChainPrior:
    """The Markov chain fitted to the loaded data (docs/math.md §6), once per dataset, column mapping and τ."""
    key = (data.fingerprint, tuple(data.columns.items()), smoothing)
    return session_memo("fitted_prior", key, lambda: fit_markov_chain(data.stats, smoothing=smoothing), 8)


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
    large = _large_datasets_or_error()
    titles = list(BY_TITLE) + list(large)
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
    if source in large:
        return _large(large[source])
    return _upload(prefix)


def _large_datasets_or_error() -> dict[str, LargeDataset]:
    try:
        return large_datasets()
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        st.error(f"The list of large datasets (PUFFER_DATASETS) cannot be read: {exc}")
        return {}


def _large(record: LargeDataset) -> LoadedData | None:
    st.caption(f"A large dataset of this deployment ({record.path}), aggregated by DuckDB.")
    try:
        stats = large_stats(record.name)
    except (DataError, ValueError) as exc:
        st.error(f"The dataset could not be loaded: {exc}")
        return None
    return _keep(LoadedData(record.title, stats, record.columns(), f"large:{record.name}", large=record.name))


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
    """Built-in dataset ``name`` (a key of DATASETS) with ``user`` as the user column, its statistics (cached)."""
    dataset = DATASETS[name]
    user = user or dataset.user
    stats = demo_stats(dataset.name, user)
    return LoadedData(dataset.title, stats, dataset.columns(user), f"{dataset.name}:{user}", name)


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
    time_format = st.radio(
        "Dates such as 01/05/2024 are",
        list(DATE_ORDERS),
        key=f"{prefix}_time_format",
        horizontal=True,
        help="Times written as text are read one way for the whole column. By default the order of day and month"
        " is decided from all the dates (a first number above 12 means day first); a column where both orders fit"
        " is refused until you choose here.",
    )
    try:
        stats, repair = load_upload(
            fingerprint, table, **mapping, drop_missing=drop_missing, drop_duplicates=drop_duplicates,
            time_format=DATE_ORDERS[time_format],
        )
    except DataError as exc:
        st.error(f"This file cannot be used: {in_page_words(str(exc))}")
        _repair_hint(table, mapping, drop_missing, drop_duplicates)
        _failed(upload.name)
        return None
    _repair_report(repair)
    signature = f"{fingerprint}:{int(drop_missing)}{int(drop_duplicates)}:{DATE_ORDERS[time_format]}"
    mapping = {**mapping, "time_format": DATE_ORDERS[time_format]} if DATE_ORDERS[time_format] else mapping
    return _keep(LoadedData(upload.name, stats, mapping, signature, repair=repair, upload=table))


def in_page_words(message: str) -> str:
    """A loader's message in this page's words: the date order is chosen with the control above, not with the
    library's ``time_format='…'``; the columns with the four boxes above, not ``user=…``."""
    message = re.sub(
        r"Choose the order: time_format='[^']*' \(day first\) or time_format='[^']*' \(month first\)",
        "Choose the order above: 'Dates such as 01/05/2024 are' day/month/year or month/day/year",
        message,
    )
    return message.replace(
        "Choose the columns with user=…, time=…, state=… (and group=…)", "Choose the columns in the boxes above"
    )


def _preview(table: ParsedTable, file_name: str) -> None:
    n_rows = table.table.num_rows
    with st.expander(f"Preview of {file_name}: {n_rows:,} rows, {len(table.columns)} columns"):
        head = table.table.slice(0, PREVIEW_ROWS).rename_columns([str(i) for i in range(len(table.columns))])
        frame = head.to_pandas()
        frame.columns = _unique_names(tuple(table.columns))
        st.dataframe(frame, hide_index=True, width="stretch", key="preview_upload")
        st.caption(f"The first {min(PREVIEW_ROWS, n_rows)} rows as read; empty cells show as None.")


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


def _columns(prefix: str, table: ParsedTable, columns: list[str], fingerprint: str) -> dict[str, Any]:
    """The user, time, state and group selectboxes (guessed first from the names, then the first free column)."""
    starts = guess_columns(columns)
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
    named = guess_group(columns, list(starts.values()))
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


def _repair_hint(table: ParsedTable, mapping: dict[str, Any], drop_missing: bool, drop_duplicates: bool) -> None:
    """After a refusal: say which repair option would drop the rows at fault, with their counts."""
    try:
        rows, missing, duplicates = _scan(
            "Counting the rows to repair…", lambda: repair_counts(table, **mapping, memory_limit=MEMORY_LIMIT)
        )
    except DataError:
        return
    found = Repair(rows, missing, duplicates)
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
