"""Reading times written as text, one way for the whole column (docs/math.md §1).

Only the order of a user's entries matters, so a column must never be read two ways: with
``01/05/2024`` read as 5 January and ``13/05/2024`` as 13 May, a user's entries would be sorted
inconsistently and nothing would say so.  A text column is therefore read as follows, the same
way by numpy (:mod:`puffer_core.data`) and by the SQL engines (:mod:`puffer_core.data.engines`):

- ``2024-05-01``, ``2024-05-01 13:45``, ``2024-05-01T13:45:10.5+02:00`` (ISO 8601, with or
  without a time, seconds, fraction up to µs or an offset; no offset means UTC);
- ``2024/05/13`` or ``2024.05.13`` (year, month, day), optionally followed by a time;
- ``01/05/2024`` with ``/``, ``-`` or ``.`` between day, month and a four-digit year, optionally
  followed by ``13:45`` or ``13:45:10``: the order (day first or month first) is chosen **once for
  the column** from its values — a first number above 12 means day first, a second number above
  12 month first.  A column where both orders fit and give different dates is refused with a
  message naming both formats; a column that needs both orders is refused too;
- ``1 May 2024``, ``May 1 2024``, ``May 1, 2024``, ``1-May-2024`` (English month names,
  abbreviated or not, optionally followed by a time): never ambiguous.

``time_format="%d/%m/%Y"`` or ``"%m/%d/%Y"`` chooses the order of the numeric dates (any of the
separators, with or without a time) and reads everything else as above; any other ``strftime``
format (such as ``"%Y%m%d %H%M"``), or ``"ISO8601"``, reads every value with that one format
and refuses the values it does not fit.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError

ISO8601 = "ISO8601"
DAY_FIRST = "%d/%m/%Y"
MONTH_FIRST = "%m/%d/%Y"
# ISO 8601: date, optional time (minutes, seconds, up to 6 fraction digits) and an offset after a time
ISO_PATTERN = (
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}"
    "([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?$"
)
# day and month in either order, a four-digit year, an optional time; groups: 1 first, 2 second, 3 year,
# 5 hour, 6 minute, 8 second, 9 fraction
NUMERIC_PATTERN = (
    "^([0-9]{1,2})[/.-]([0-9]{1,2})[/.-]([0-9]{4})"
    "([ T]([0-9]{1,2}):([0-9]{2})(:([0-9]{2})([.][0-9]{1,6})?)?)?$"
)
_MONTH_DATES = ("%d %b %Y", "%d %B %Y", "%b %d %Y", "%B %d %Y", "%b %d, %Y", "%B %d, %Y", "%d-%b-%Y")
_CLOCKS = ("", " %H:%M", " %H:%M:%S")
# year first with / or . (2024/05/13, 2024.05.13 13:45): never ambiguous; the groups as in NUMERIC_PATTERN,
# with 1 the year, 2 the month and 3 the day
YEAR_FIRST_PATTERN = (
    "^([0-9]{4})[/.]([0-9]{1,2})[/.]([0-9]{1,2})"
    "([ T]([0-9]{1,2}):([0-9]{2})(:([0-9]{2})([.][0-9]{1,6})?)?)?$"
)
MONTH_NAME_FORMATS = tuple(date + clock for date in _MONTH_DATES for clock in _CLOCKS)
MONTH_NAME_PATTERN = "[A-Za-z]{3}"


@dataclass(frozen=True)
class NumericDates:
    """What decides the order of ``dd/mm/yyyy``-like values: counts over the column's numeric dates.

    ``first_big``/``second_big``: values whose first/second number is above 12;
    ``different``: values whose first and second numbers differ (both orders read them differently).
    """

    count: int
    first_big: int
    second_big: int
    different: int
    example_first_big: str | None = None
    example_second_big: str | None = None
    example_different: str | None = None


def numeric_order(found: NumericDates, name: str) -> str | None:
    """The one order (DAY_FIRST or MONTH_FIRST) of the column's numeric dates, None if it has none.

    Raises DataError when both orders fit values that they read differently (ambiguous), or when
    the column needs both orders (some values can only be day first, others only month first).
    """
    if found.count == 0:
        return None
    if found.first_big and found.second_big:
        raise DataError(
            f"the time column '{name}' writes dates in two orders: {found.example_first_big!r} can only be"
            f" day/month/year and {found.example_second_big!r} only month/day/year. Write every date one way"
            f" (for example 2024-05-13), or pass time_format with the one format of the column"
        )
    if found.first_big:
        return DAY_FIRST
    if found.second_big:
        return MONTH_FIRST
    if found.different:
        example = found.example_different
        day, month = _fields(example)
        raise DataError(
            f"the time column '{name}' is ambiguous: every date in it fits both day/month/year and month/day/year,"
            f" so {example!r} could be {_day_words(day, month)} or {_day_words(month, day)}. Choose the order:"
            f" time_format='{DAY_FIRST}' (day first) or time_format='{MONTH_FIRST}' (month first)"
        )
    return DAY_FIRST  # day and month are equal in every value: both orders read the same dates


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _day_words(day: int, month: int) -> str:
    return f"{day} {_MONTHS[month - 1]}" if 1 <= month <= 12 else f"day {day} of month {month}"


def _fields(value: str | None) -> tuple[int, int]:
    match = re.match(NUMERIC_PATTERN, value or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def numeric_dates(text: pd.Series) -> NumericDates:
    """The order-deciding counts of the numeric dates in ``text`` (stripped strings), with an example each."""
    parts = text.str.extract(NUMERIC_PATTERN)
    numeric = parts[0].notna().to_numpy()
    if not numeric.any():
        return NumericDates(0, 0, 0, 0)
    first = pd.to_numeric(parts[0]).to_numpy()
    second = pd.to_numeric(parts[1]).to_numpy()
    values = text.to_numpy()

    def example(mask: np.ndarray) -> str | None:
        hits = np.flatnonzero(mask & numeric)
        return str(values[hits[0]]) if hits.size else None

    first_big = numeric & (first > 12)
    second_big = numeric & (second > 12)
    different = numeric & (first != second)
    return NumericDates(
        int(numeric.sum()), int(first_big.sum()), int(second_big.sum()), int(different.sum()),
        example(first_big), example(second_big), example(different),
    )


def parse_text_times(text: pd.Series, name: str, time_format: str | None = None) -> pd.Series:
    """Times written as text (stripped strings) → UTC timestamps in µs, NaT where a value does not fit.

    ``time_format`` None reads the column as the module docstring says (one order for its numeric
    dates, chosen from all of them); DAY_FIRST or MONTH_FIRST fixes that order; any other format
    reads every value with that one format.
    Raises DataError for an ambiguous column or one mixing the two orders.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if time_format not in (None, DAY_FIRST, MONTH_FIRST):
            return _as_us(_to_datetime(text, time_format))
        out = pd.Series(pd.NaT, index=text.index, dtype="datetime64[us, UTC]")
        iso = text.str.match(ISO_PATTERN).to_numpy(dtype=bool)
        if iso.any():
            out[iso] = _as_us(_to_datetime(text[iso], ISO8601))
        parts = text.str.extract(NUMERIC_PATTERN)
        numeric = parts[0].notna().to_numpy()
        order = time_format or numeric_order(numeric_dates(text), name)
        if order is not None:
            day, month = (0, 1) if order == DAY_FIRST else (1, 0)
            out[numeric] = _as_us(_to_datetime(_canonical(parts, 2, month, day)[numeric], CANONICAL))
        years = text.str.extract(YEAR_FIRST_PATTERN)
        year_first = years[0].notna().to_numpy()
        if year_first.any():
            out[year_first] = _as_us(_to_datetime(_canonical(years, 0, 1, 2)[year_first], CANONICAL))
        named = ~iso & ~numeric & ~year_first & text.str.contains(MONTH_NAME_PATTERN).to_numpy(dtype=bool)
        if named.any():
            rest = text[named]
            found = pd.Series(pd.NaT, index=rest.index, dtype="datetime64[us, UTC]")
            for fmt in MONTH_NAME_FORMATS:
                missing = found.isna()
                if not missing.any():
                    break
                found[missing] = _as_us(_to_datetime(rest[missing], fmt))
            out[named] = found
    return out


CANONICAL = "%Y-%m-%d %H:%M:%S.%f"


def _canonical(parts: pd.DataFrame, year: int, month: int, day: int) -> pd.Series:
    """``YYYY-MM-DD HH:MM:SS.ffffff`` from the groups of NUMERIC_PATTERN or YEAR_FIRST_PATTERN (0-based columns)."""
    fraction = parts[8].fillna(".").str.ljust(7, "0").str.slice(1)  # ".5" → "500000", none → "000000"
    return (
        parts[year] + "-" + parts[month].str.zfill(2) + "-" + parts[day].str.zfill(2) + " "
        + parts[4].fillna("0").str.zfill(2) + ":" + parts[5].fillna("00") + ":" + parts[7].fillna("00")
        + "." + fraction
    )


def _to_datetime(text: pd.Series, fmt: str) -> pd.Series:
    try:
        return pd.to_datetime(text, errors="coerce", utc=True, format=fmt)
    except (ValueError, TypeError, OverflowError):
        return pd.Series(pd.NaT, index=text.index, dtype="datetime64[us, UTC]")


def _as_us(parsed: pd.Series) -> pd.Series:
    if not isinstance(parsed.dtype, pd.DatetimeTZDtype):
        parsed = pd.Series(pd.NaT, index=parsed.index, dtype="datetime64[us, UTC]")
    return parsed.dt.as_unit("us")


def check_time_format(time_format: object) -> str | None:
    """None, "ISO8601", or a strftime format with at least one directive; ValueError otherwise."""
    if time_format is None:
        return None
    if not isinstance(time_format, str) or (time_format != ISO8601 and "%" not in time_format):
        raise ValueError(
            f"time_format must be a strftime format such as '{DAY_FIRST}' or '{DAY_FIRST} %H:%M', or 'ISO8601';"
            f" got {time_format!r}"
        )
    return time_format


def java_pattern(time_format: str) -> str:
    """A strftime format as a Java DateTimeFormatter pattern (Spark's ``to_timestamp``); ValueError if unknown."""
    table = {"%Y": "yyyy", "%m": "M", "%d": "d", "%H": "H", "%M": "m", "%S": "s", "%f": "SSSSSS", "%b": "MMM",
             "%B": "MMMM", "%y": "yy", "%I": "h", "%p": "a", "%z": "Z", "%%": "%"}
    out = []
    i = 0
    while i < len(time_format):
        chunk = time_format[i : i + 2]
        if chunk in table:
            out.append(table[chunk])
            i += 2
        elif time_format[i] == "%":
            raise ValueError(f"time_format {time_format!r}: {chunk!r} has no Spark equivalent")
        else:
            literal = time_format[i]
            out.append(f"'{literal}'" if literal.isalpha() else ("''" if literal == "'" else literal))
            i += 1
    return "".join(out)
