"""The "What is secret" controls' values in plain words (state names, 1-based entries, hours), read into the
library's secrets and back (docs/math.md §16).

:class:`Form` is what the controls show; :func:`build` reads it into a :class:`~puffer_core.secrets.Secrets` or an
:class:`~puffer_core.secrets.EventSecrets` with the prior's state names, refusing what it cannot use with a
message that says what is wrong, what was found and how to fix it (ValueError); :func:`form_of` is the inverse,
for controls opened from a link.  No streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app_ui.secrets.settings import AnyChosen, Grid, check_grid
from puffer_core.secrets import EventSecrets, Secrets, TimeRule
from puffer_core.secrets.rules import WEEKDAYS, hour_runs

PAIRS = {
    "all": "Every state against every other (all pairs)",
    "sensitive": "Sensitive states against every other state",
    "groups": "Only within groups of states",
    "list": "These pairs of states",
    "event": "A visit: in some states at some time of a window, or never",
}
WHERE = {"every": "Every entry", "entries": "These entries", "rule": "Entries chosen by their time"}


@dataclass(frozen=True)
class Form:
    """The controls' values: which pairs (``kind``, a key of :data:`PAIRS`) and where (``where``, of :data:`WHERE`)."""

    kind: str = "all"
    sensitive: tuple[str, ...] = ()
    groups: str = ""
    listed: str = ""
    ordered: bool = False
    where: str = "every"
    entries: str = ""
    hours: str = ""
    weekdays: tuple[str, ...] = ()
    date_from: str = ""
    date_to: str = ""
    grid_start: str = "2024-01-01 00:00"
    grid_step: str = "1h"
    event_states: tuple[str, ...] = ()
    windows: str = ""


def _listing(labels: Sequence[str]) -> str:
    shown = ", ".join(labels[:12])
    return shown + (f", … ({len(labels)} states)" if len(labels) > 12 else "")


def state_index(name: str, labels: Sequence[str]) -> int:
    """The index of the state called ``name`` (exact, else ignoring case and spaces); ValueError naming the states."""
    text = name.strip()
    if text in labels:
        return list(labels).index(text)
    folded = [str(label).strip().casefold() for label in labels]
    if text.casefold() in folded:
        return folded.index(text.casefold())
    raise ValueError(f"there is no state called {text!r}: the prior's states are {_listing(labels)}")


def _states(names: Sequence[str], labels: Sequence[str], what: str) -> tuple[int, ...]:
    found = tuple(state_index(n, labels) for n in names if n.strip())
    if not found:
        raise ValueError(f"{what}: none chosen yet; pick at least one of {_listing(labels)}")
    return found


def _groups(text: str, labels: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    parts = [p for p in text.replace("\n", ";").split(";")]
    if not any(p.strip() for p in parts):
        raise ValueError("the groups are empty: write each group's states separated by commas, groups by"
                         " semicolons (e.g. flu, cold; asthma, diabetes)")
    out = []
    for number, part in enumerate(parts, start=1):
        if not part.strip():
            if number < len(parts):
                raise ValueError(f"group {number} is empty (two semicolons in a row): remove it or name its states")
            continue
        group = tuple(dict.fromkeys(state_index(n, labels) for n in part.split(",") if n.strip()))
        if len(group) < 2:
            raise ValueError(f"group {number} ({part.strip()!r}) names one state: a group needs two or more states,"
                             " since only pairs inside a group are secret")
        out.append(group)
    return tuple(out)


def _pairs(text: str, labels: Sequence[str]) -> tuple[tuple[int, int], ...]:
    out = []
    for part in text.replace("\n", ";").split(";"):
        if not part.strip():
            continue
        names = part.split(">")
        if len(names) != 2:
            raise ValueError(f"cannot read the pair {part.strip()!r}: write it as two states with > between them"
                             " (clinic > home: at the clinic rather than at home)")
        x, y = state_index(names[0], labels), state_index(names[1], labels)
        if x == y:
            raise ValueError(f"the pair {part.strip()!r} names one state twice: a pair needs two different states")
        out.append((x, y))
    if not out:
        raise ValueError("no pairs given: write them as clinic > home, one pair per line or separated by semicolons")
    return tuple(out)


def _runs(text: str, what: str, first: int, last: int | None) -> list[tuple[int, int]]:
    """"1-7; 20" → [(1, 7), (20, 20)] (1-based, inclusive), each within first..last."""
    out = []
    for part in text.replace(",", ";").replace("\n", ";").split(";"):
        if not part.strip():
            continue
        a, dash, b = part.strip().partition("-")
        try:
            lo, hi = int(a), int(b) if dash else int(a)
        except ValueError:
            raise ValueError(f"cannot read {part.strip()!r} in {what}: write whole numbers or ranges such as 1-7")\
                from None
        if lo < first or (last is not None and hi > last) or hi < first:
            span = f"{first}..{last}" if last is not None else f"{first} or more"
            raise ValueError(f"{part.strip()!r} in {what} is outside {span}")
        out.append((lo, hi))
    if not out:
        raise ValueError(f"{what} is empty: write entries such as 1-7; 20")
    return out


def _entries(text: str, length: int, what: str) -> tuple[int, ...]:
    out: set[int] = set()
    for lo, hi in _runs(text, what, 1, length):
        if hi < lo:
            raise ValueError(f"the range {lo}-{hi} in {what} ends before it starts")
        out.update(range(lo - 1, hi))
    return tuple(sorted(out))


def _hours(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for lo, hi in _runs(text, "the hours", 0, 23):
        out += list(range(lo, hi + 1)) if lo <= hi else [*range(lo, 24), *range(0, hi + 1)]
    return tuple(sorted(set(out)))


def _rule(form: Form) -> TimeRule:
    hours = _hours(form.hours) if form.hours.strip() else ()
    weekdays = tuple(WEEKDAYS.index(d) for d in form.weekdays)
    start, end = form.date_from.strip() or None, form.date_to.strip() or None
    if not (hours or weekdays or start or end):
        raise ValueError("the rule on the time column is empty: give hours (e.g. 22-5), weekdays or dates")
    only_hours = not (weekdays or start or end)
    night = only_hours and len(hour_runs(hours)) == 1 and 0 in hours and 23 in hours  # one run through midnight
    weekend = weekdays == (5, 6) and not (hours or start or end)
    return TimeRule(hours=hours, weekdays=weekdays, start=start, end=end,
                    name="night-time" if night else "weekend" if weekend else "")


def build(form: Form, labels: Sequence[str] | None, length: int) -> tuple[AnyChosen, Grid]:
    """The secrets and time grid of ``form`` for a prior with state names ``labels`` (None: a Gaussian process,
    whose secrets are positions only) and sequences of ``length`` entries; ValueError saying what is wrong."""
    grid = check_grid(form.grid_start, form.grid_step)
    if labels is None and form.kind != "all":
        raise ValueError("a Gaussian process has no states: its secrets are intervals of one coordinate"
                         " (docs/math.md §2.3); choose every pair and protect entries instead")
    if form.kind == "event":
        states = _states(form.event_states, labels or (), "the states of the visit")
        windows = []
        for lo, hi in _runs(form.windows, "the windows", 1, length):
            if hi < lo:
                raise ValueError(f"the window {lo}-{hi} ends before it starts")
            windows.append((lo - 1, hi - 1))
        event = EventSecrets(states=states, windows=tuple(windows))
        if labels is not None:
            event.check(len(labels), length)
        return event, grid
    kwargs: dict[str, object] = {"pairs": form.kind}
    if form.kind == "sensitive":
        kwargs["states"] = _states(form.sensitive, labels or (), "the sensitive states")
    elif form.kind == "groups":
        kwargs["groups"] = _groups(form.groups, labels or ())
    elif form.kind == "list":
        kwargs["listed"] = _pairs(form.listed, labels or ())
        kwargs["ordered"] = form.ordered
    if form.where == "entries":
        kwargs["positions"] = _entries(form.entries, length, "the protected entries")
    elif form.where == "rule":
        kwargs["rule"] = _rule(form)
    chosen = Secrets(**kwargs)  # type: ignore[arg-type]
    if labels is not None:
        chosen.check(len(labels))
    if chosen.rule is not None:
        chosen.on_grid(grid[0], grid[1], length)  # a rule matching no entry is refused here
    return chosen, grid


def _names(states: Sequence[int], labels: Sequence[str]) -> tuple[str, ...]:
    return tuple(str(labels[s]) if s < len(labels) else f"state {s}" for s in states)


def _span(a: int, b: int) -> str:
    return f"{a}-{b}" if b > a else f"{a}"


def form_of(value: AnyChosen, grid: Grid, labels: Sequence[str] | None) -> Form:
    """The controls' values that :func:`build` reads back into ``value`` (for controls opened from a link)."""
    names = list(labels or ())
    base = Form(grid_start=grid[0], grid_step=grid[1])
    if isinstance(value, EventSecrets):
        windows = "; ".join(_span(a + 1, b + 1) for a, b in value.windows)
        return Form(**{**base.__dict__, "kind": "event", "event_states": _names(value.states, names),
                       "windows": windows})
    fields: dict[str, object] = {**base.__dict__, "kind": value.pairs, "ordered": value.ordered}
    fields["sensitive"] = _names(value.states, names)
    fields["groups"] = "; ".join(", ".join(_names(g, names)) for g in value.groups)
    fields["listed"] = "; ".join(" > ".join(_names(p, names)) for p in value.listed)
    if value.rule is not None:
        rule = value.rule
        fields["where"] = "rule"
        fields["hours"] = "; ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in hour_runs(rule.hours))
        fields["weekdays"] = tuple(WEEKDAYS[d] for d in rule.weekdays)
        fields["date_from"], fields["date_to"] = rule.start or "", rule.end or ""
    elif value.positions is not None:
        from puffer_core.secrets.rules import runs_text

        fields["where"] = "entries"
        fields["entries"] = "; ".join(_span(int(a) + 1, int(b or a) + 1) for a, _, b in
                                      (p.partition("-") for p in runs_text(value.positions).split(",")))
    return Form(**fields)  # type: ignore[arg-type]
