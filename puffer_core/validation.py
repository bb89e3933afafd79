"""Shared checks at the library's boundary, with one message style.

Every public function validates what it is given with these helpers, so a student sees the
same words everywhere: what is wrong, what was found, and what to pass instead.  ``name``
is how the message names the argument; it may carry a short explanation, e.g.
``"k (how many top states to release)"``.

**One rule for every number.**  A number is a Python or numpy int or float (never a bool); it is
read as a double once, here: a value of the wrong type (a text, ``None``, a list, a bool) raises
:class:`InvalidParameter`, which is a ``TypeError`` and a ``ValueError`` at once; a value a double
cannot hold (a Python integer such as ``10**400``, a numpy ``longdouble`` beyond 1.8e308) is refused
as too large instead of raising ``OverflowError`` far away; −0.0 is read as 0.0; NaN and ±inf are
refused where a finite number is wanted.  A positive parameter (a scale, an ε, an error bound, a
length scale: :func:`check_positive`, :func:`check_eps`) must be at least the smallest normal
double, 2.2e-308: below it a double keeps only a few digits and its reciprocal overflows, so the
divisions that follow would return 0, inf or NaN.  Levels that may be 0 (``check_eps(…, allow_zero=True)``:
a leakage, an ε per step) and probabilities (:func:`check_probability`) may be as small as 5e-324: they
are never divided by.  Wrong values raise ``ValueError``.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TypeGuard

import numpy as np

PROBABILITY_TOLERANCE = 1e-9  # how far from 1 a list of probabilities may sum
SMALLEST_NORMAL = sys.float_info.min  # 2.2250738585072014e-308: the smallest positive parameter accepted
LARGEST_DOUBLE = sys.float_info.max  # 1.7976931348623157e308


class InvalidParameter(ValueError, TypeError):
    """A parameter of the wrong type (a text, ``None``, a list or a bool where a number is wanted, …).

    Both a ``TypeError`` (what it is) and a ``ValueError`` (what every caller of the library catches
    for bad input), as scikit-learn's ``InvalidParameterError``; wrong *values* raise ``ValueError``.
    """


def is_whole(value: object) -> TypeGuard[int | np.integer]:
    """True for an integer (Python or numpy); False for bools, floats and everything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float | np.integer | np.floating]:
    """True for a real number (Python or numpy int/float); False for bools and everything else."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """``repr(value)``, shortened for integers too long to read (``an integer of 401 digits``)."""
    if is_whole(value) and abs(int(value)) >= 10**30:
        return f"an integer of {len(str(abs(int(value))))} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def as_double(name: str, value: object) -> float:
    """``value`` (a number of any kind, see :func:`is_number`) as a double: InvalidParameter for other types,
    ValueError for a value too large for a double; −0.0 becomes 0.0 (NaN and ±inf are returned as such)."""
    if not is_number(value):
        raise InvalidParameter(f"{name} must be a number; got {_shown(value)}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        number = math.inf
    if math.isinf(number) and not (isinstance(value, (float, np.floating)) and np.isinf(value)):
        raise ValueError(
            f"{name} is too large for a double-precision number (at most {LARGEST_DOUBLE:.4g}); got {_shown(value)}"
        )
    return number + 0.0  # −0.0 + 0.0 = 0.0


def check_number(name: str, value: object) -> float:
    """A finite real number (the module docstring's rule for every number)."""
    number = as_double(name, value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite; got {number}")
    return number


def check_eps(name: str, value: object, allow_zero: bool = False) -> float:
    """A finite, positive privacy parameter (ε), at least the smallest normal double; 0 too when ``allow_zero``.

    With ``allow_zero`` the value is a level that may be 0 (a leakage, an ε per step), never a divisor: any
    value ≥ 0 is taken, subnormal ones too.
    """
    if not allow_zero:
        return check_positive(name, value)
    value = check_number(name, value)
    if value < 0:
        raise ValueError(f"{name} must be positive or 0; got {value}")
    return value


def check_positive(name: str, value: object) -> float:
    """A finite number > 0 (a sensitivity, a scale, a length scale), at least the smallest normal double."""
    value = check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive; got {value}")
    return _normal(name, value)


def _normal(name: str, value: float) -> float:
    if value < SMALLEST_NORMAL:
        raise ValueError(
            f"{name} = {value:g} is too small: below {SMALLEST_NORMAL:.3g}, the smallest normal double, a number"
            f" keeps only a few digits and its reciprocal overflows; use {name} ≥ {SMALLEST_NORMAL:.3g}"
        )
    return value


def check_probability(name: str, value: object, open_interval: bool = False) -> float:
    """A probability in [0, 1], or in (0, 1) with ``open_interval`` (subnormal values are allowed)."""
    if not is_number(value):
        raise InvalidParameter(f"{name} must be a probability between 0 and 1; got {_shown(value)}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        number = math.inf
    number += 0.0
    if open_interval and not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be a probability strictly between 0 and 1; got {_shown(value)}")
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a probability between 0 and 1; got {_shown(value)}")
    return number


def check_whole(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number ≥ ``minimum`` (and ≤ ``maximum``); bools are refused: ``True`` is not a count.

    A value that is not an integer (a float, a text, a bool) raises :class:`InvalidParameter`; one out of
    range, or beyond what a double holds (counts meet floating-point arithmetic), raises ValueError.
    """
    if not is_whole(value):
        wanted = f"between {minimum} and {maximum} (a whole number)" if maximum is not None else \
            f"a whole number ≥ {minimum}"
        raise InvalidParameter(f"{name} must be {wanted}; got {_shown(value)}")
    if abs(value) > LARGEST_DOUBLE:  # type: ignore[arg-type, operator]
        raise ValueError(
            f"{name} is too large for a double-precision number (at most {LARGEST_DOUBLE:.4g}); got {_shown(value)}"
        )
    if maximum is not None:
        if not minimum <= value <= maximum:  # type: ignore[operator]
            raise ValueError(f"{name} must be between {minimum} and {maximum} (a whole number); got {_shown(value)}")
    elif value < minimum:  # type: ignore[operator]
        raise ValueError(f"{name} must be a whole number ≥ {minimum}; got {_shown(value)}")
    return int(value)


def check_rng(rng: object) -> np.random.Generator:
    """A numpy random Generator (never the global numpy state)."""
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameter(
            f"rng must be a numpy random Generator, e.g. numpy.random.default_rng(0); got {type(rng).__name__}"
        )
    return rng


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """One of ``choices`` (compared as given: names are case-sensitive)."""
    options = tuple(choices)
    if not isinstance(value, str):
        raise InvalidParameter(f"{name} must be one of {', '.join(options)}; got {_shown(value)}")
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


def check_flag(name: str, value: object) -> bool:
    """A yes/no option: ``True`` or ``False`` only (a string such as ``'yes'`` or ``'x'`` is not a flag)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameter(f"{name} must be True or False; got {_shown(value)}")
    return bool(value)


def _has_bool(values: object) -> bool:
    """True when ``values`` (a number, a nested list or an array) holds a boolean, which numpy would read as 0/1."""
    if isinstance(values, (bool, np.bool_)):
        return True
    if isinstance(values, np.ndarray):
        return values.dtype == bool or (values.dtype == object and any(_has_bool(v) for v in values.flat))
    if isinstance(values, (list, tuple)):
        return any(_has_bool(v) for v in values)
    return False


def as_numbers(values: object, what: str) -> np.ndarray:
    """``values`` as a float array; refuses text, None and booleans (``True`` is not a probability)."""
    if values is None or isinstance(values, (str, bytes)):
        raise InvalidParameter(f"{what} must contain numbers only; got {_shown(values)}")
    if _has_bool(values):
        raise InvalidParameter(f"{what} must contain numbers, not True or False")
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        found = _non_number(values)
        if found is None:
            if _too_large(values):
                raise ValueError(
                    f"{what} holds a number too large for a double-precision number (at most {LARGEST_DOUBLE:.4g})"
                ) from None
            raise ValueError(f"{what} must be a table of numbers whose rows all have the same length") from None
        raise InvalidParameter(f"{what} must contain numbers only; found {_shown(found[0])}") from None
    if array.dtype == float and array.size and (array == 0).any():
        array = array + 0.0  # −0.0 becomes 0.0
    return array


def _too_large(values: object) -> bool:
    """True when ``values`` (a number or a nested list) holds an integer beyond what a double can hold."""
    if isinstance(values, (list, tuple)):
        return any(_too_large(v) for v in values)
    if is_whole(values):
        try:
            float(values)  # type: ignore[arg-type]
        except OverflowError:
            return True
    return False


def _non_number(values: object) -> tuple[object] | None:
    """The first cell of ``values`` (a number, a nested list or an array) that is not a number, as a 1-tuple."""
    if isinstance(values, (list, tuple, np.ndarray)):
        for value in values:
            found = _non_number(value)
            if found is not None:
                return found
        return None
    return None if is_number(values) else (values,)


def check_distribution(values: object, what: str, tolerance: float = PROBABILITY_TOLERANCE) -> np.ndarray:
    """Probabilities that are finite, non-negative and sum to 1 (within ``tolerance``), as a float array."""
    array = as_numbers(values, what)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} contains a value that is not a finite number")
    if np.any(array < 0):
        raise ValueError(f"{what} contains a negative probability ({array.min():g})")
    total = float(math.fsum(array.ravel()))
    if abs(total - 1.0) > tolerance:
        raise ValueError(f"{what} sums to {_sum_text(total, tolerance)}; probabilities must sum to 1")
    return array


def row_problems(
    rows: Sequence[Sequence[object]] | np.ndarray, labels: Sequence[object] | None = None, what: str | None = None
) -> list[str]:
    """One message per row that is not a probability distribution (an empty list: every row is fine).

    A row must hold finite, non-negative numbers that sum to 1 (within ``PROBABILITY_TOLERANCE``).
    Empty or non-numeric cells are reported, not raised, so that an editor can show every problem at
    once.  With ``labels`` the rows and columns are named by their states' labels, as an editor shows
    them ("row '2' … in column '0'"); without, they are counted from 1 ("row 3 … in columns 1").
    ``what`` names the matrix ("row 3 of the matrix Q …").
    """
    problems = []
    of = f" of {what}" if what else ""
    for i, row in enumerate(rows):
        name = (f"row '{labels[i]}'" if labels is not None and i < len(labels) else f"row {i + 1}") + of
        values = []
        for x in row:
            try:
                values.append(math.nan if isinstance(x, (bool, np.bool_)) else float(x))  # type: ignore[arg-type]
            except (TypeError, ValueError, OverflowError):
                values.append(math.nan)
        bad = [j for j, v in enumerate(values) if not math.isfinite(v)]
        if bad:
            problems.append(f"{name} has cells that are empty or not a finite number in {_columns(bad, labels)}")
            continue
        negative = [j for j, v in enumerate(values) if v < 0]
        if negative:
            problems.append(
                f"{name} has negative entries in {_columns(negative, labels)}; probabilities cannot be negative"
            )
            continue
        try:
            total = math.fsum(values)
        except OverflowError:
            total = math.inf
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            problems.append(f"{name} sums to {_sum_text(total)}{_MUST_SUM}")
    return problems


_MUST_SUM = "; rows must sum to 1"  # the end of row_problems' message for a row whose sum is not 1
_ROW_SUM = re.compile(r"row '(?P<row>.*)' sums to (?P<total>.*)" + re.escape(_MUST_SUM))


def merge_row_sums(problems: Sequence[str], fix: str = "correct them") -> list[str]:
    """:func:`row_problems`' messages with the rows that do not sum to 1 in one message, each with its sum (as
    many digits as show the difference), instead of one message per row; every other problem as it is.

    ``fix`` says what the user can do ("correct them, or press “Normalise rows” …"), in the interface in use.
    With one such row its own message stays.
    """
    sums = [_ROW_SUM.fullmatch(p) for p in problems]
    found = [m for m in sums if m is not None]
    if len(found) < 2:
        return list(problems)
    listed = "; ".join(f"'{m['row']}' sums to {m['total']}" for m in found)
    names = [f"'{m['row']}'" for m in found]
    rows = ", ".join(names[:-1]) + " and " + names[-1]
    merged = f"rows {rows} do not sum to 1 — {listed}. Rows must sum to 1: {fix}"
    return [merged, *(p for p, m in zip(problems, sums, strict=True) if m is None)]


def _sum_text(total: float, tolerance: float = PROBABILITY_TOLERANCE) -> str:
    """A sum that should be 1, with the digits that show it is not: "0.95", or "1.000000002 (1 + 2e-09; the
    tolerance is 1e-09)" when six digits would print 1."""
    short = f"{total:.6g}"
    if not math.isfinite(total) or float(short) != 1.0:
        return short
    return f"{total:.12g} (1 {'+' if total > 1 else '−'} {abs(total - 1.0):.2g}; the tolerance is {tolerance:g})"


def _columns(positions: list[int], labels: Sequence[object] | None) -> str:
    """``column '1'`` or ``columns '0', '2'`` by the states' labels; ``columns 1, 3`` counted from 1 without."""
    if labels is None or any(j >= len(labels) for j in positions):
        return "columns " + ", ".join(str(j + 1) for j in positions)
    shown = ", ".join(f"'{labels[j]}'" for j in positions)
    return f"column {shown}" if len(positions) == 1 else f"columns {shown}"


def check_rows(
    matrix: object,
    what: str,
    labels: Sequence[object] | None = None,
    square: bool = True,
    min_rows: int = 2,
    name_rows: bool = True,
) -> np.ndarray:
    """A matrix whose rows are probability distributions, each divided by its sum (exact within the tolerance).

    ``square``: K×K (a transition, backward or forward matrix); otherwise K×O (an emission: one row per
    state, one column per output).  ``min_rows`` rows at least (2: a single state has no secret).
    ``name_rows``: a row's message says which matrix it is in ("row 2 of the matrix Q sums to …").
    """
    array = as_numbers(matrix, what)
    if square and (array.ndim != 2 or array.shape[0] != array.shape[1]):
        raise ValueError(f"{what} must be square (K rows and K columns); got shape {array.shape}")
    if array.ndim != 2 or array.shape[1] < 1:
        raise ValueError(f"{what} must be a matrix with one row per state; got shape {array.shape}")
    if array.shape[0] < min_rows:
        raise ValueError(f"{what} needs at least {min_rows} states; a single state has no secret")
    with np.errstate(over="ignore", invalid="ignore"):
        sums = array.sum(axis=1)
    if not (np.all(np.isfinite(array)) and np.all(array >= 0) and np.all(np.abs(sums - 1.0) <= PROBABILITY_TOLERANCE)):
        names = None if labels is None else [str(x) for x in labels]
        problems = row_problems(array, names, what if name_rows else None)
        if problems:
            raise ValueError(problems[0])
    return array / sums[:, None]


WORK_LIMIT_SECONDS = 120.0  # work estimated to take longer is refused up front, with the estimate


def human_seconds(seconds: float) -> str:
    """A duration as people say it in a refusal: "40 s", "3.4 min", "12 min", "3.5 h"."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 600:  # near the 2-minute limits, a decimal: "2.1 min", never a bare "2 min" over a 120 s limit
        return f"{seconds / 60:.1f} min"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
