"""Which columns of a file are likely its user, time, state and group columns, guessed from their names.

One guess serves everyone who asks: the app's upload page starts its column boxes from it, and a
message about a column the file lacks (the library's, the command line's) suggests the columns it
finds there.  Names are compared without case and surrounding spaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "user": ("user", "user_id", "userid", "uid", "participant", "id"),
    "time": ("time", "timestamp", "datetime", "date", "ts", "t"),
    "state": ("state", "category", "activity", "venue", "label"),
}
GROUP_NAMES = ("group", "country", "age_group", "region", "city")


def _key(name: object) -> str:
    return str(name).strip().lower()


def named_like(role: str, column: str) -> bool:
    """Whether ``column`` is named as the ``role`` (user, time, state or group) usually is."""
    names = GROUP_NAMES if role == "group" else COLUMN_NAMES.get(role, ())
    return _key(column) in names


def guess_columns(columns: Sequence[str]) -> dict[str, int]:
    """The position of the user, time and state columns among ``columns``: a column named like the role (the
    first of :data:`COLUMN_NAMES` found, one column per role), else the first column no other role took
    (0 when there is none: a file with fewer than three columns)."""
    lower = [_key(c) for c in columns]
    found: dict[str, int] = {}
    for role, names in COLUMN_NAMES.items():
        hit = next((lower.index(n) for n in names if n in lower and lower.index(n) not in found.values()), None)
        if hit is not None:
            found[role] = hit
    for role in COLUMN_NAMES:
        if role not in found:
            found[role] = next((i for i in range(len(columns)) if i not in found.values()), 0)
    return found


def guess_group(columns: Sequence[str], taken: Sequence[int] = ()) -> int | None:
    """The position of a column named like a group (:data:`GROUP_NAMES`) that is not in ``taken``; None if none."""
    return next((i for i, c in enumerate(columns) if _key(c) in GROUP_NAMES and i not in taken), None)


def likely_columns(columns: Sequence[str], wanted: Mapping[str, str]) -> dict[str, str]:
    """For each role of ``wanted`` whose column is not among ``columns``: the column :func:`guess_columns` (or
    :func:`guess_group`) would start from, when it is named like the role and no other role uses it."""
    present = [str(c).strip() for c in columns]
    used = {present.index(str(n).strip()) for n in wanted.values() if str(n).strip() in present}
    starts = guess_columns(present)
    guesses: dict[str, int | None] = {**starts, "group": guess_group(present, [*starts.values(), *used])}
    out: dict[str, str] = {}
    for role, name in wanted.items():
        position = guesses.get(role)
        if str(name).strip() in present or position is None or position in used:
            continue
        if named_like(role, present[position]):
            out[role] = present[position]
            used.add(position)
    return out


def likely_hint(columns: Sequence[str], wanted: Mapping[str, str], skip: Sequence[str] = ()) -> str:
    """" By their names, the likely ones are user='participant', time='timestamp'" (a message's clause, with a
    leading space; empty when no column is named like a missing role).  Roles in ``skip`` are left out."""
    found = {role: name for role, name in likely_columns(columns, wanted).items() if role not in skip}
    if not found:
        return ""
    said = ", ".join(f"{role}='{name}'" for role, name in found.items())
    return f" By their names, the likely {'one is' if len(found) == 1 else 'ones are'} {said}."
