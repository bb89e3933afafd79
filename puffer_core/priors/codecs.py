"""Values as text: how a setting is written in a link or typed in a box, and read back within its range.

A :class:`Codec` writes one kind of value as text and reads it back, checked: a number in a range,
a flag, one of a few choices, a transition matrix, state labels, a distribution, pairs of
probabilities.  The app's links, its widgets and the notebook's widgets all read what a user
typed through these (one parser, one range per setting, one message per mistake), and
:class:`Parameter` ties a codec to a setting: its key, its default, its short name in a link and
the hints a front end needs to draw a control for it (label, help, step, slider or box).

Large values — a transition matrix of many states, long state labels — are written compressed
in a link (:func:`pack_matrix`, :func:`pack_text`: zlib, then URL-safe base64 behind the marker
``z``), exactly: every float reads back to the same float.  Whether the link is then short enough
to share is the caller's decision (``app_ui.core.state``).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

Matrix = tuple[tuple[float, ...], ...]

MAX_STATES = 20  # states of a matrix written as plain text in a link (more: compressed)
MAX_LINK_STATES = 1000  # states a matrix read from a link may have at all (its text is checked before reading)
MAX_THETA = 20  # priors in a set Θ in a link
PACKED = "z"  # the marker of a compressed value (no number, matrix or label list starts with it)
MAX_UNPACKED = 8 * MAX_LINK_STATES**2 + 16  # bytes a compressed value may expand to (no zip bomb)


class Codec(Protocol):
    """How one parameter is written as text (e.g. in a link) and read back, checked."""

    def parse(self, text: str) -> Any:
        """The value; ValueError with a short reason ("between 0 and 1") when the text is not usable."""
        ...

    def encode(self, value: Any) -> str: ...


# --------------------------------------------------------------------------- numbers


def finite(text: str, where: str = "") -> float:
    """A finite number typed as a decimal or a fraction (``1/3``); ValueError naming ``where`` otherwise."""
    prefix = f"{where}: " if where else ""
    try:
        value = float(Fraction(text.strip())) if "/" in text else float(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{prefix}{text.strip()[:20]!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{prefix}not a finite number")
    return value


def number_text(value: float) -> str:
    """The shortest text that reads back to exactly ``value``."""
    return f"{value:g}" if float(f"{value:g}") == value else repr(float(value))


@dataclass(frozen=True)
class Number:
    """A real number in [low, high]; a whole one with ``whole``."""

    low: float
    high: float
    whole: bool = False

    def parse(self, text: str) -> float | int:
        value = finite(text)
        problem = self.problem(value)
        if problem:
            raise ValueError(problem)
        return int(value) if self.whole else value

    def problem(self, value: float) -> str:
        """Why ``value`` is not allowed ("" when it is): the words a page shows under a box."""
        if not math.isfinite(value):
            return "not a finite number"
        if self.whole and value != int(value):
            return "a whole number"
        if not self.low <= value <= self.high:
            return f"between {self.low:,g} and {self.high:,g}"
        return ""

    def encode(self, value: float) -> str:
        return str(int(value)) if self.whole else number_text(float(value))


PROBABILITY = Number(0.0, 1.0)


@dataclass(frozen=True)
class Flag:
    """True or False, written 1 or 0."""

    def parse(self, text: str) -> bool:
        text = text.strip()
        if text not in ("0", "1", "true", "false"):
            raise ValueError("0 or 1")
        return text in ("1", "true")

    def encode(self, value: bool) -> str:
        return "1" if value else "0"


@dataclass(frozen=True)
class Choice:
    """One of ``options``; ``aliases`` are other spellings accepted when reading; ``labels`` their words."""

    options: tuple[str, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)

    def parse(self, text: str) -> str:
        value = self.aliases.get(text.strip(), text.strip())
        if value not in self.options:
            raise ValueError(f"one of {', '.join(self.options)}")
        return value

    def encode(self, value: str) -> str:
        return value

    def label(self, value: str) -> str:
        return self.labels.get(value, value)


@dataclass(frozen=True)
class PositiveNumbers:
    """A set of positive numbers, written 0.5,1,2 and read back sorted (``options``: what a control offers)."""

    options: tuple[float, ...] = ()

    def parse(self, text: str) -> tuple[float, ...]:
        if not text.strip():
            return ()
        values = {finite(x) for x in text.split(",")}
        if any(v <= 0 for v in values):
            raise ValueError("positive numbers")
        return tuple(sorted(values))

    def encode(self, value: Sequence[float]) -> str:
        return ",".join(f"{x:g}" for x in value)


# --------------------------------------------------------------------------- compressed values


def _pack(payload: bytes) -> str:
    return PACKED + base64.urlsafe_b64encode(zlib.compress(payload, 9)).decode("ascii").rstrip("=")


def _unpack(text: str) -> bytes:
    body = text.strip()[len(PACKED) :]
    try:
        compressed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        inflate = zlib.decompressobj()
        payload = inflate.decompress(compressed, MAX_UNPACKED)
    except (binascii.Error, ValueError, zlib.error):
        raise ValueError("a compressed value that is damaged (the link was cut or changed)") from None
    if inflate.unconsumed_tail or not inflate.eof:
        raise ValueError("a compressed value that is damaged or too large")
    return payload


def pack_matrix(matrix: Sequence[Sequence[float]]) -> str:
    """A square matrix, compressed: its size, then every entry as a little-endian float64 (exact)."""
    array = np.asarray(matrix, dtype="<f8")
    return _pack(struct.pack("<I", array.shape[0]) + array.tobytes())


def unpack_matrix(text: str) -> Matrix:
    payload = _unpack(text)
    if len(payload) < 4:
        raise ValueError("a compressed matrix that is damaged")
    (k,) = struct.unpack("<I", payload[:4])
    if len(payload) != 4 + 8 * k * k:
        raise ValueError("a compressed matrix that is damaged (its size does not match its entries)")
    array = np.frombuffer(payload[4:], dtype="<f8").reshape(k, k)
    return tuple(tuple(float(x) for x in row) for row in array)


def pack_text(items: Sequence[str]) -> str:
    """Short texts, compressed (separated by the unit separator, which no label holds)."""
    return _pack("\x1f".join(items).encode("utf-8"))


def unpack_text(text: str) -> tuple[str, ...]:
    try:
        return tuple(_unpack(text).decode("utf-8").split("\x1f"))
    except UnicodeDecodeError:
        raise ValueError("compressed labels that are damaged") from None


# --------------------------------------------------------------------------- tables


def _cells(line: str) -> list[str]:
    return [cell for cell in line.replace(",", " ").replace(";", " ").split() if cell]


@dataclass(frozen=True)
class MatrixText:
    """A square matrix of 2 to ``max_states`` states.

    Written in a link as rows separated by ``;`` and entries by ``,`` up to :data:`MAX_STATES`
    states, compressed beyond (:func:`pack_matrix`).  Read from a link or typed in a box: rows
    separated by ``;`` or new lines, entries by ``,`` or spaces, each a decimal or a fraction
    (``1/3``).  The entries are only required to be finite numbers: whether the rows are
    probabilities is the prior's check, so that an editor can show it row by row.
    """

    max_states: int = MAX_LINK_STATES

    def parse(self, text: str) -> Matrix:
        if text.strip().startswith(PACKED):
            rows = unpack_matrix(text)
        else:
            # typed in a box: a row per line (; then separates entries too); in a link: rows separated by ;
            body = text.strip()
            lines = [line for line in (body.splitlines() if "\n" in body else body.split(";")) if line.strip()]
            if not lines:
                raise ValueError("the matrix is empty: one row per line (or rows separated by ;)")
            if len(lines) > self.max_states:
                raise ValueError(f"a square matrix with 2 to {self.max_states} states; got {len(lines)} rows")
            rows = tuple(
                tuple(finite(cell, f"row {i}, entry {j}") for j, cell in enumerate(_cells(line), start=1))
                for i, line in enumerate(lines, start=1)
            )
        widths = sorted({len(r) for r in rows})
        if len(widths) != 1:
            counts = ", ".join(map(str, widths))
            raise ValueError(f"a square matrix: every row needs the same number of entries; the rows have {counts}")
        if widths[0] != len(rows):
            raise ValueError(
                f"the matrix must be square: {len(rows)} rows of {widths[0]} entries (one row and one column per state)"
            )
        if not 2 <= len(rows) <= self.max_states:
            raise ValueError(f"a square matrix with 2 to {self.max_states} states; got {len(rows)}")
        return rows

    def encode(self, value: Matrix) -> str:
        if len(value) > MAX_STATES:
            return pack_matrix(value)
        return ";".join(",".join(repr(float(x)) for x in row) for row in value)


def default_labels(n_states: int) -> tuple[str, ...]:
    """The states' names when none are given: 0, 1, …"""
    return tuple(str(i) for i in range(n_states))


@dataclass(frozen=True)
class LabelsText:
    """Distinct, non-empty state labels separated by | (compressed when long).

    The default labels 0, 1, … are written as the empty text (a link leaves them out).
    """

    plain_chars: int = 200  # longer lists of labels are written compressed

    def parse(self, text: str) -> tuple[str, ...]:
        raw = unpack_text(text) if text.strip().startswith(PACKED) else text.strip().split("|")
        labels = tuple(s.strip() for s in raw)
        if len(set(labels)) != len(labels) or any(not s for s in labels):
            raise ValueError("distinct, non-empty labels separated by |")
        return labels

    def encode(self, value: Sequence[str]) -> str:
        labels = tuple(value)
        if labels == default_labels(len(labels)):
            return ""
        plain = "|".join(labels)
        # packed when long, when a label holds the separator, or when the plain text would read as packed
        packed = len(plain) > self.plain_chars or "|" in "".join(labels) or plain.strip().startswith(PACKED)
        return pack_text(labels) if packed else plain


@dataclass(frozen=True)
class DistributionText:
    """A probability vector written 0.5,0.25,0.25 (the empty text: none, i.e. the stationary one).

    The entries are only required to be finite numbers: whether they form a distribution over
    the chain's states is the prior's check, with the states' names.
    """

    max_states: int = MAX_LINK_STATES

    def parse(self, text: str) -> tuple[float, ...] | None:
        if not text.strip():
            return None
        if text.strip().startswith(PACKED):
            values = tuple(float(x) for x in np.frombuffer(_unpack(text), dtype="<f8"))
        else:
            values = tuple(finite(x, f"entry {j}") for j, x in enumerate(_cells(text), start=1))
        if not 2 <= len(values) <= self.max_states:
            raise ValueError(f"2 to {self.max_states} numbers separated by ,")
        return values

    def encode(self, value: Sequence[float] | None) -> str:
        if value is None:
            return ""
        if len(value) > MAX_STATES:
            return _pack(np.asarray(value, dtype="<f8").tobytes())
        return ",".join(number_text(float(x)) for x in value)


@dataclass(frozen=True)
class PairsText:
    """1 to ``max_pairs`` pairs of probabilities p,q separated by ;."""

    max_pairs: int = MAX_THETA

    def parse(self, text: str) -> tuple[tuple[float, float], ...]:
        pairs = []
        for item in text.strip().split(";"):
            parts = item.split(",")
            if len(parts) != 2:
                raise ValueError("pairs p,q separated by ;")
            pairs.append((PROBABILITY.parse(parts[0]), PROBABILITY.parse(parts[1])))
        if not 1 <= len(pairs) <= self.max_pairs:
            raise ValueError(f"1 to {self.max_pairs} pairs")
        return tuple(pairs)

    def encode(self, value: Sequence[tuple[float, float]]) -> str:
        return ";".join(f"{p!r},{q!r}" for p, q in value)


TABLES = (MatrixText, DistributionText, PairsText)  # codecs of values a front end edits as a table


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Parameter:
    """One setting: its key (the keyword a builder takes), its default, and — when it can be shared
    in a link — its short name there and how it is written as text (``codec``, with its range).

    The rest are hints for a front end drawing a control for it: ``label`` and ``help`` (its words),
    ``step`` and ``format`` (of a number box), ``slider`` (a slider rather than a box), ``aliases``
    (older names in links, still read) and ``with_`` (the key of the parameter whose control also
    edits this one: a matrix's labels and initial distribution are edited with the matrix).
    """

    key: str
    default: Any
    url: str | None = None
    codec: Codec | None = None
    label: str = ""
    help: str = ""
    step: float | None = None
    format: str | None = None
    slider: bool = False
    aliases: tuple[str, ...] = ()
    with_: str | None = None

    @property
    def table(self) -> bool:
        """Whether a front end edits this value as a table (a matrix, a distribution, pairs)."""
        return isinstance(self.codec, TABLES)
