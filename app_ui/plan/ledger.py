"""The Plan & compose page's ledger: its rows, how they are checked, written in a link and read from a CSV.

A ledger row is ``(release, mechanism, ε_puffer)``: a name the user chose, the registry name of a
curve-calibrated mechanism (:data:`puffer_core.mechanisms.MECHANISMS`) and the ε_puffer that release
must guarantee on its own.  The rows compose by [C] Theorem 6.2 (docs/math.md §4).  Everything a
user can type — a cell of the editor, a link, a CSV file — goes through the checks here, and every
problem is reported in the page's words ("Mar: ε_puffer must be a positive number; found −1").

The link form is compact: rows are separated by ``;`` and the fields of a row by ``,``
(``Jan,pe,0.5;Feb;Mar``); a row given by its name alone repeats the mechanism and ε_puffer of the row
before it; ``%``, ``,`` and ``;`` in a name are written ``%25``, ``%2C`` and ``%3B``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

import pandas as pd

from app_ui.core.state import ParameterGroup
from puffer_core.accounting.events import Composition
from puffer_core.mechanisms import MECHANISMS
from puffer_core.priors.codecs import Number, Parameter

Row = tuple[str, str, float]  # (release name, mechanism name, ε_puffer)

MAX_RELEASES = 365  # as many as the planner plans
MAX_NAME = 60  # characters in a release name
MAX_EPS = 1000.0  # the largest ε_puffer any page accepts
MAX_CSV_BYTES = 1_000_000  # a ledger CSV of MAX_RELEASES rows is under 100 kB
MAX_LISTED = 5  # problems listed one by one before "and N more"

QUERY_LABELS = {"topk": "top-k ranking", "histogram": "histogram"}
# a ledger composes by Theorem 6.2: its rows use the curve-calibrated mechanisms, each for the query its
# release answers as it is (the registry's first query)
LEDGER_QUERIES: dict[str, str] = {
    name: spec.queries[0]
    for name, spec in MECHANISMS.items()
    if spec.composition is Composition.THEOREM_6_2 and not spec.needs_chains
}
LABELS: dict[str, str] = {
    name: f"{MECHANISMS[name].label} ({QUERY_LABELS[query]})" for name, query in LEDGER_QUERIES.items()
}
BY_LABEL: dict[str, str] = {label: name for name, label in LABELS.items()}
# names in links: each record's link code (its name when it has none)
CODES: dict[str, str] = {name: MECHANISMS[name].code for name in LEDGER_QUERIES}
BY_CODE: dict[str, str] = {**{name: name for name in LEDGER_QUERIES}, **{code: name for name, code in CODES.items()}}
# the first of them that releases a ranking: the default ledger (the papers' mechanism, [C] §7); the first that
# answers a histogram: the planner's example
DEFAULT_MECHANISM = next(name for name, query in LEDGER_QUERIES.items() if query == "topk")
HISTOGRAM_MECHANISM = next(name for name, query in LEDGER_QUERIES.items() if query == "histogram")

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DEFAULT_LEDGER: tuple[Row, ...] = tuple((month, DEFAULT_MECHANISM, 0.5) for month in MONTHS)


def display_name(name: str, position: int) -> str:
    """What a row is called on the page: its name, or "release 3" (1-based) when it has none."""
    return name if name.strip() else f"release {position + 1}"


def _number_text(value: float) -> str:
    """The shortest text that reads back to exactly ``value``."""
    return f"{value:g}" if float(f"{value:g}") == value else repr(float(value))


def eps_problem(value: object) -> tuple[float | None, str]:
    """An ε_puffer cell as a number, or None and what is wrong with it (in the page's words)."""
    if (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    ):
        return None, "ε_puffer must be a positive number; the cell is empty"
    try:
        number = float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        hint = " (write decimals with a point: 0.5)" if isinstance(value, str) and "," in value else ""
        return None, f"ε_puffer must be a positive number; found '{str(value)[:20]}'{hint}"
    if not math.isfinite(number) or number <= 0:
        return None, f"ε_puffer must be a positive number; found {_number_text(number)}"
    if number > MAX_EPS:
        return None, f"ε_puffer must be at most {MAX_EPS:g}; found {_number_text(number)}"
    return number, ""


def too_many(count: int) -> str:
    return (
        f"the ledger has {count} releases; at most {MAX_RELEASES} can be composed here."
        " Delete some rows (or split the series into several ledgers)"
    )


@dataclass(frozen=True)
class EditedLedger:
    """What the ledger editor holds: the usable rows, one problem per bad row, the rows that were given a name."""

    rows: tuple[Row, ...]
    problems: list[str]
    named: list[str]


def rows_from_editor(frame: pd.DataFrame) -> EditedLedger:
    """The usable rows of the ledger editor (columns release, mechanism, ε_puffer) and one problem per bad row.

    A row with a problem is left out of the ledger and named in its message by its release name.
    A row without a name is called by its position ("release 3") from then on; ``named`` lists
    those names so that the page can say so.
    """
    rows: list[Row] = []
    problems: list[str] = []
    named: list[str] = []
    if len(frame) > MAX_RELEASES:
        return EditedLedger((), [too_many(len(frame))], [])
    for i, (name, label, eps) in enumerate(frame.itertuples(index=False, name=None)):
        name = name.strip() if isinstance(name, str) else ""
        shown = display_name(name, i)
        number, problem = eps_problem(eps)
        if number is None:
            problems.append(f"{shown}: {problem}")
            continue
        if label not in BY_LABEL:
            problems.append(f"{shown}: choose a mechanism in the Mechanism column")
            continue
        if not name:
            named.append(shown)
        rows.append((shown, BY_LABEL[label], number))
    return EditedLedger(tuple(rows), problems, named)


def editor_frame(rows: Iterable[Row]) -> pd.DataFrame:
    """Rows as the editor shows them: the mechanism by its label."""
    return pd.DataFrame(
        [(name, LABELS[mechanism], eps) for name, mechanism, eps in rows], columns=["release", "mechanism", "ε_puffer"]
    ).astype({"release": "string", "ε_puffer": float})


# --------------------------------------------------------------------------- the link


def _escape(name: str) -> str:
    return name.replace("%", "%25").replace(",", "%2C").replace(";", "%3B")


@dataclass(frozen=True)
class LedgerText:
    """A ledger in a link: ``Jan,pe,0.5;Feb;Mar`` (see the module docstring)."""

    max_rows: int = MAX_RELEASES

    def parse(self, text: str) -> tuple[Row, ...]:
        text = text.strip()
        if not text:
            return ()
        items = text.split(";")
        if len(items) > self.max_rows:
            raise ValueError(f"{len(items)} releases; a ledger holds at most {self.max_rows}")
        rows: list[Row] = []
        for i, item in enumerate(items):
            fields = item.split(",")
            name = unquote(fields[0]).strip()
            if len(name) > MAX_NAME:
                raise ValueError(f"release {i + 1}: a name has at most {MAX_NAME} characters")
            if len(fields) == 1:
                if not rows:
                    raise ValueError("the first release needs name,mechanism,ε_puffer")
                rows.append((name, rows[-1][1], rows[-1][2]))
                continue
            if len(fields) != 3:
                raise ValueError(f"release {i + 1}: write name,mechanism,ε_puffer (found {len(fields)} fields)")
            code = fields[1].strip()
            if code not in BY_CODE:
                raise ValueError(
                    f"release {i + 1}: unknown mechanism '{code[:20]}' (one of {', '.join(CODES.values())})"
                )
            number, problem = eps_problem(fields[2])
            if number is None:
                raise ValueError(f"release {i + 1}: {problem}")
            rows.append((name, BY_CODE[code], number))
        return tuple(rows)

    def encode(self, value: Sequence[Row]) -> str:
        parts = []
        previous: tuple[str, float] | None = None
        for name, mechanism, eps in value:
            if previous == (mechanism, eps):
                parts.append(_escape(name))
            else:
                parts.append(f"{_escape(name)},{CODES[mechanism]},{_number_text(float(eps))}")
            previous = (mechanism, eps)
        return ";".join(parts)


LEDGER = Parameter("ledger", DEFAULT_LEDGER, "ledger", LedgerText())
LEDGER_K = Parameter("ledger_k", 3, "topk", Number(1, 50, whole=True), label="k for the top-k rankings")
LEDGER_PARAMETERS = (LEDGER, LEDGER_K)
LEDGER_GROUP = ParameterGroup("ledger", LEDGER_PARAMETERS)  # registered by app.py: in every link


# --------------------------------------------------------------------------- CSV files

RELEASE_HEADERS = ("release", "name")
MECHANISM_HEADERS = ("mechanism",)
EPS_HEADERS = ("ε_puffer", "eps_puffer", "epsilon_puffer")
K_HEADERS = ("k", "top-k k")


@dataclass(frozen=True)
class LoadedLedger:
    """What a ledger CSV holds: its rows, and the k of its top-k rankings when the file says."""

    rows: tuple[Row, ...]
    k: int | None


def _decode(data: bytes) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _column(header: list[str], names: tuple[str, ...]) -> int | None:
    lowered = [h.strip().lower() for h in header]
    for name in names:
        if name.lower() in lowered:
            return lowered.index(name.lower())
    return None


def _listed(problems: list[str]) -> str:
    shown = "; ".join(problems[:MAX_LISTED])
    more = len(problems) - MAX_LISTED
    return shown + (f"; and {more} more" if more > 0 else "")


def read_ledger_csv(data: bytes, file_name: str = "the file") -> LoadedLedger:
    """The ledger in a CSV file (as the page downloads it: release, mechanism, ε_puffer, k, …).

    Only the columns release, mechanism (its label on the page or its registry name), ε_puffer and
    k are read; the computed columns are recomputed.  Raises ValueError saying what is wrong, where,
    and how to fix it; nothing is loaded from a file with a problem.
    """
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(
            f"{file_name} is {len(data) / 1e6:.1f} MB; a ledger CSV of {MAX_RELEASES} releases is under 0.1 MB."
            " Upload the ledger CSV this page downloads"
        )
    if data[:4] == b"PK\x03\x04":
        raise ValueError(f"{file_name} is an Excel workbook or a zip archive; save the sheet as CSV and upload that")
    text = _decode(data)
    if "\x00" in text:
        raise ValueError(f"{file_name} is not a text (CSV) file")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise ValueError(f"{file_name} is empty: a ledger CSV starts with the header release,mechanism,ε_puffer")
    separator = max((",", ";", "\t"), key=lines[0].count)
    try:
        records = list(csv.reader(io.StringIO(text), delimiter=separator))
    except csv.Error as exc:
        raise ValueError(f"{file_name} could not be read as CSV ({exc})") from None
    header, body = records[0], [r for r in records[1:] if any(cell.strip() for cell in r)]
    where = {
        "release": _column(header, RELEASE_HEADERS),
        "mechanism": _column(header, MECHANISM_HEADERS),
        "ε_puffer": _column(header, EPS_HEADERS),
    }
    missing = [name for name, index in where.items() if index is None]
    if missing:
        found = ", ".join(h.strip() for h in header[:10]) or "none"
        raise ValueError(
            f"{file_name} has no column {' or '.join(repr(m) for m in missing)} (its columns: {found})."
            " A ledger CSV needs the columns release, mechanism and ε_puffer: download one from this page"
            " to see the format"
        )
    if not body:
        raise ValueError(f"{file_name} has a header but no releases")
    if len(body) > MAX_RELEASES:
        raise ValueError(f"{file_name} has {len(body)} releases; a ledger holds at most {MAX_RELEASES}")
    k_index = _column(header, K_HEADERS)
    rows: list[Row] = []
    problems: list[str] = []
    ks: set[int] = set()
    for line, record in enumerate(body, start=2):
        cells = {key: record[index].strip() if index < len(record) else "" for key, index in where.items()}
        name = cells["release"]
        shown = f"row {line} ({name})" if name else f"row {line}"
        if len(name) > MAX_NAME:
            problems.append(f"{shown}: a release name has at most {MAX_NAME} characters")
        label = cells["mechanism"]
        mechanism = BY_LABEL.get(label) or BY_CODE.get(label)
        if mechanism is None:
            problems.append(
                f"{shown}: unknown mechanism '{label[:40]}' (use one of: {', '.join(LABELS.values())})"
                if label
                else f"{shown}: the mechanism is empty"
            )
        number, problem = eps_problem(cells["ε_puffer"])
        if number is None:
            problems.append(f"{shown}: {problem}")
        if k_index is not None and k_index < len(record) and record[k_index].strip():
            k_text = record[k_index].strip()
            try:
                k_value = float(k_text)
            except ValueError:
                k_value = math.nan
            if not (k_value == int(k_value) if math.isfinite(k_value) else False) or not 1 <= k_value <= 50:
                problems.append(f"{shown}: k must be a whole number from 1 to 50; found '{k_text[:20]}'")
            else:
                ks.add(int(k_value))
        if mechanism is not None and number is not None and len(name) <= MAX_NAME:
            rows.append((name, mechanism, number))
    if len(ks) > 1:
        problems.append(
            f"the rows give different k ({', '.join(map(str, sorted(ks)))}); the page uses one k for every ranking"
        )
    if problems:
        raise ValueError(f"{file_name} was not loaded: {_listed(problems)}")
    return LoadedLedger(tuple(rows), ks.pop() if ks else None)
