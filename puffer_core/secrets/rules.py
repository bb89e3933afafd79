"""Rules on the time column that choose the protected entries: hours of the day, days of the week, dates
(docs/math.md §16).

A rule is public and chosen before the data are seen ("every entry between 22:00 and 05:59"), so the
positions it picks are not themselves secret.  Pufferfish's a(b) is computed over a sequence's positions
1..T, shared by every user; a user's entry at position t is protected when the rule matches its time.
Users' times differ, so a rule resolved on data protects the *union* over users of the positions it
matches: the maximum over that union is at least each user's own maximum, so the guarantee holds for
every user (and is exact when users share one time grid, e.g. one day at 5-minute steps).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..priors.models import MAX_LENGTH
from ..validation import InvalidParameter, is_whole

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _whole_set(name: str, values: object, low: int, high: int) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list of whole numbers {low}..{high}; got {values!r}")
    out = set()
    for v in values:
        if not is_whole(v):
            raise InvalidParameter(f"{name} must hold whole numbers {low}..{high}; got {v!r}")
        if not low <= int(v) <= high:
            raise ValueError(f"{name} must hold whole numbers {low}..{high}; got {v!r}")
        out.add(int(v))
    return tuple(sorted(out))


def _date(name: str, value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dt.date, pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).date().isoformat()
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a date as text (YYYY-MM-DD); got {value!r}")
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise ValueError(f"{name} must be a date written YYYY-MM-DD (e.g. 2024-01-31); got {value!r}") from None


def hour_runs(hours: tuple[int, ...]) -> list[tuple[int, int]]:
    """The hours as runs (first, last) of consecutive hours, a run through midnight kept whole (22..5)."""
    if not hours:
        return []
    runs: list[list[int]] = []
    for h in hours:
        if runs and h == runs[-1][1] + 1:
            runs[-1][1] = h
        else:
            runs.append([h, h])
    if len(runs) > 1 and runs[0][0] == 0 and runs[-1][1] == 23:
        last = runs.pop()
        runs[0][0] = last[0]
    return [(a, b) for a, b in runs]


@dataclass(frozen=True)
class TimeRule:
    """Protected entries by their time: ``hours`` of the day (0..23), ``weekdays`` (0 = Monday .. 6 = Sunday)
    and a date range ``start``..``end`` (inclusive, YYYY-MM-DD); an empty part places no condition, and an
    entry is protected when it meets every part.  ``name`` is how sentences call it ("night-time").

    Presets: :meth:`night` (22:00–05:59 by default) and :meth:`weekends`.
    """

    hours: tuple[int, ...] = ()
    weekdays: tuple[int, ...] = ()
    start: str | None = None
    end: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hours", _whole_set("hours", self.hours, 0, 23))
        object.__setattr__(self, "weekdays", _whole_set("weekdays", self.weekdays, 0, 6))
        object.__setattr__(self, "start", _date("start", self.start))
        object.__setattr__(self, "end", _date("end", self.end))
        if not isinstance(self.name, str):
            raise TypeError(f"name must be text; got {self.name!r}")
        if self.start and self.end and self.start > self.end:
            raise ValueError(f"the date range ends ({self.end}) before it starts ({self.start})")
        if not (self.hours or self.weekdays or self.start or self.end):
            raise ValueError("a time rule needs hours, weekdays or dates (no condition would protect every entry:"
                             " leave positions unset for that)")
        if len(self.hours) == 24 and not (self.weekdays or self.start or self.end):
            raise ValueError("every hour of every day is every entry: leave positions unset for that")

    @classmethod
    def night(cls, first_hour: int = 22, last_hour: int = 5) -> TimeRule:
        """Every entry from ``first_hour``:00 to ``last_hour``:59 (through midnight when first > last)."""
        for name, h in (("first_hour", first_hour), ("last_hour", last_hour)):
            if not is_whole(h) or not 0 <= h <= 23:
                raise ValueError(f"{name} must be an hour 0..23; got {h!r}")
        hours = range(first_hour, last_hour + 1) if first_hour <= last_hour else [
            *range(first_hour, 24), *range(0, last_hour + 1)]
        return cls(hours=tuple(hours), name="night-time")

    @classmethod
    def weekends(cls) -> TimeRule:
        """Every entry on a Saturday or a Sunday."""
        return cls(weekdays=(5, 6), name="weekend")

    def matches(self, times: object) -> np.ndarray:
        """A boolean array: which of ``times`` (dates and times, any array-like pandas reads) the rule protects."""
        values = np.asarray(times)
        try:
            if values.dtype.kind in "biufc":
                raise TypeError("numbers, not dates")
            stamps = pd.DatetimeIndex(pd.to_datetime(values))
        except (TypeError, ValueError):
            raise ValueError("a time rule needs a time column of dates and times; the times are not dates"
                             " (give positions instead)") from None
        out = np.ones(len(stamps), dtype=bool)
        if self.hours:
            out &= np.isin(stamps.hour, self.hours)
        if self.weekdays:
            out &= np.isin(stamps.day_of_week, self.weekdays)
        days = stamps.normalize()
        if self.start:
            out &= days >= pd.Timestamp(self.start, tz=days.tz)
        if self.end:
            out &= days <= pd.Timestamp(self.end, tz=days.tz)
        return out

    def words(self) -> str:
        """The rule in plain words: "at night-time hours (22:00–05:59)", "on weekends", "between … and …"."""
        parts = []
        if self.hours:
            spans = ", ".join(f"{a:02d}:00–{b:02d}:59" for a, b in hour_runs(self.hours))
            kind = f"{self.name} " if self.name == "night-time" else ""
            parts.append(f"at {kind}hours ({spans})")
        if self.weekdays:
            if self.weekdays == (5, 6):
                parts.append("on weekends")
            else:
                parts.append("on " + ", ".join(WEEKDAYS[d] + "s" for d in self.weekdays))
        if self.start and self.end:
            parts.append(f"between {self.start} and {self.end}")
        elif self.start:
            parts.append(f"from {self.start} on")
        elif self.end:
            parts.append(f"up to {self.end}")
        return " ".join(parts)

    def to_text(self) -> str:
        """A compact text form (``h22-23.0-5,w5-6,d2024-01-01..2024-01-31,nnight-time``); :meth:`from_text` reads it."""
        parts = []
        if self.hours:
            parts.append("h" + ".".join(f"{a}-{b}" if a != b else f"{a}" for a, b in _runs(self.hours)))
        if self.weekdays:
            parts.append("w" + ".".join(f"{a}-{b}" if a != b else f"{a}" for a, b in _runs(self.weekdays)))
        if self.start or self.end:
            parts.append(f"d{self.start or ''}..{self.end or ''}")
        if self.name:
            parts.append("n" + self.name.replace(",", " ").replace(";", " "))
        return ",".join(parts)

    @classmethod
    def from_text(cls, text: str) -> TimeRule:
        """The rule written by :meth:`to_text`."""
        fields: dict[str, object] = {}
        for part in text.split(","):
            if not part:
                continue
            key, value = part[0], part[1:]
            if key in "hw":
                fields["hours" if key == "h" else "weekdays"] = tuple(parse_runs(value, "."))
            elif key == "d":
                start, _, end = value.partition("..")
                fields["start"], fields["end"] = start or None, end or None
            elif key == "n":
                fields["name"] = value
            else:
                raise ValueError(f"cannot read the time rule {text!r}: unknown part {part!r}")
        return cls(**fields)  # type: ignore[arg-type]

    def source(self) -> str:
        """The rule as Python (for exported scripts)."""
        runs = hour_runs(self.hours)
        if self.name == "night-time" and len(runs) == 1 and self == TimeRule.night(*runs[0]):
            return f"TimeRule.night({runs[0][0]}, {runs[0][1]})"
        if self == TimeRule.weekends():
            return "TimeRule.weekends()"
        args = []
        if self.hours:
            args.append(f"hours={self.hours!r}")
        if self.weekdays:
            args.append(f"weekdays={self.weekdays!r}")
        if self.start:
            args.append(f"start={self.start!r}")
        if self.end:
            args.append(f"end={self.end!r}")
        if self.name:
            args.append(f"name={self.name!r}")
        return f"TimeRule({', '.join(args)})"


def _runs(values: tuple[int, ...]) -> list[tuple[int, int]]:
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return [(a, b) for a, b in runs]


def parse_runs(text: str, sep: str = ",") -> list[int]:
    """"0-5,9,12-13" → [0, 1, 2, 3, 4, 5, 9, 12, 13] (the runs written by :func:`runs_text`)."""
    out: list[int] = []
    for part in text.split(sep):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            a = int(first)
            b = int(last) if dash else a
        except ValueError:
            raise ValueError(f"cannot read {part!r} as a whole number or a range a-b") from None
        if b < a:
            raise ValueError(f"the range {part!r} ends before it starts")
        if b >= MAX_LENGTH or b - a + 1 + len(out) > MAX_LENGTH:
            raise ValueError(f"the range {part!r} is outside 0..{MAX_LENGTH - 1:,} (no sequence is longer)")
        out.extend(range(a, b + 1))
    return out


def runs_text(values: Iterable[int], sep: str = ",") -> str:
    """Sorted whole numbers as runs: [0, 1, 2, 5] → "0-2,5"."""
    return sep.join(f"{a}-{b}" if a != b else f"{a}" for a, b in _runs(tuple(sorted(set(values)))))
