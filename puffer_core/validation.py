"""Shared checks at the library's boundary, with one message style.

Every public function validates what it is given with these helpers, so a student sees the
same words everywhere: what is wrong, what was found, and what to pass instead.  ``name``
is how the message names the argument; it may carry a short explanation, e.g.
``"k (how many top states to release)"``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

PROBABILITY_TOLERANCE = 1e-9  # how far from 1 a list of probabilities may sum


def is_whole(value: object) -> bool:
    """True for an integer (Python or numpy); False for bools, floats and everything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for a real number (Python or numpy int/float); False for bools and everything else."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_number(name: str, value: object) -> float:
    """A finite real number."""
    if not is_number(value):
        raise ValueError(f"{name} must be a number; got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite; got {number}")
    return number


def check_eps(name: str, value: object, allow_zero: bool = False) -> float:
    """A finite, positive privacy parameter (ε); 0 too when ``allow_zero``."""
    if not allow_zero:
        return check_positive(name, value)
    value = check_number(name, value)
    if value < 0:
        raise ValueError(f"{name} must be positive or 0; got {value}")
    return value


def check_positive(name: str, value: object) -> float:
    """A finite number > 0 (a sensitivity, a scale, a length scale)."""
    value = check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive; got {value}")
    return value


def check_probability(name: str, value: object, open_interval: bool = False) -> float:
    """A probability in [0, 1], or in (0, 1) with ``open_interval``."""
    if not is_number(value):
        raise ValueError(f"{name} must be a probability between 0 and 1; got {value!r}")
    number = float(value)
    if open_interval and not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be a probability strictly between 0 and 1; got {value!r}")
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a probability between 0 and 1; got {value!r}")
    return number


def check_whole(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number ≥ ``minimum`` (and ≤ ``maximum``); bools are refused: ``True`` is not a count."""
    if maximum is not None:
        if not is_whole(value) or not minimum <= value <= maximum:
            raise ValueError(f"{name} must be between {minimum} and {maximum} (a whole number); got {value!r}")
    elif not is_whole(value) or value < minimum:
        raise ValueError(f"{name} must be a whole number ≥ {minimum}; got {value!r}")
    return int(value)


def check_rng(rng: object) -> np.random.Generator:
    """A numpy random Generator (never the global numpy state)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy random Generator, e.g. numpy.random.default_rng(0); got {type(rng).__name__}"
        )
    return rng


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """One of ``choices`` (compared as given: names are case-sensitive)."""
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


def check_flag(name: str, value: object) -> bool:
    """A yes/no option: ``True`` or ``False`` only (a string such as ``'yes'`` or ``'x'`` is not a flag)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
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
        raise ValueError(f"{what} must contain numbers only; got {values!r}")
    if _has_bool(values):
        raise ValueError(f"{what} must contain numbers, not True or False")
    try:
        return np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        found = _non_number(values)
        if found is None:
            raise ValueError(f"{what} must be a table of numbers whose rows all have the same length") from None
        raise ValueError(f"{what} must contain numbers only; found {found[0]!r}") from None


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
        raise ValueError(f"{what} sums to {total:.6g}; probabilities must sum to 1")
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
            problems.append(f"{name} sums to {total:.6g}; rows must sum to 1")
    return problems


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
