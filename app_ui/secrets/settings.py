"""What is secret, as a shared settings record (:class:`SecretsChoice`) every page that computes a curve holds.

Two settings: the secrets themselves (:data:`SECRETS`: a :class:`~puffer_core.secrets.Secrets` or an
:class:`~puffer_core.secrets.EventSecrets`, written in a link as the library's own text,
:meth:`~puffer_core.secrets.Secrets.to_text`, read back by :func:`~puffer_core.secrets.read_secrets`) and, for a
rule on the time column, the time grid a prior's entries stand on (:data:`GRID`: the first entry's date and time
and the step between entries), since a prior has positions 1..T but no clock (docs/math.md §16).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

import pandas as pd

from app_ui.core.records import SettingsRecord, setting
from app_ui.core.state import ParameterGroup
from puffer_core.priors.codecs import Number, Parameter
from puffer_core.secrets import ALL_SECRETS, EventSecrets, Secrets, read_secrets

AnyChosen = Secrets | EventSecrets
Grid = tuple[str, str]  # (the first entry's date and time, the step between entries)
Names = tuple[tuple[int, str], ...]  # (index, name) of every state the secrets name, as the page that chose them
MAX_NAMES = 300  # states named in a link
DEFAULT_GRID: Grid = ("2024-01-01 00:00", "1h")


@dataclass(frozen=True)
class SecretsText:
    """The secrets as the library writes them ("" for every pair at every entry); population secrets are not
    offered by the app (a link naming them is refused, said on the page)."""

    def parse(self, text: str) -> AnyChosen:
        value = read_secrets(text)
        if not isinstance(value, (Secrets, EventSecrets)):
            raise ValueError("whole-population secrets are set in Calibrate's own \"Whole population\" view, not here")
        return value

    def encode(self, value: AnyChosen) -> str:
        return value.to_text()


@dataclass(frozen=True)
class GridText:
    """A time grid written ``<first entry>|<step>`` (``2024-01-01 00:00|1h``)."""

    def parse(self, text: str) -> Grid:
        start, bar, step = text.partition("|")
        if not bar:
            raise ValueError("<first entry's date and time>|<step>, e.g. 2024-01-01 00:00|1h")
        return check_grid(start, step)

    def encode(self, value: Grid) -> str:
        return "|".join(value)


@dataclass(frozen=True)
class NamesText:
    """The names of the states the secrets name, written ``<index>:<name>|…`` (each name percent-encoded, so that
    any character may be in it): ``2:clinic|5:Gym``."""

    def parse(self, text: str) -> Names:
        out = []
        for part in text.split("|"):
            index, colon, name = part.partition(":")
            if not colon or not index.isdigit() or not name:
                raise ValueError("<state number>:<state name> parts joined by |, e.g. 2:clinic|5:Gym")
            out.append((int(index), unquote(name)))
        if len(out) > MAX_NAMES or len({i for i, _ in out}) != len(out):
            raise ValueError(f"at most {MAX_NAMES} states, each number once")
        return tuple(out)

    def encode(self, value: Names) -> str:
        return "|".join(f"{i}:{quote(name, safe='')}" for i, name in value)


def named_states(value: AnyChosen) -> tuple[int, ...]:
    """The states (indices) the secrets name: sensitive or visited states, the states of groups and listed pairs."""
    if isinstance(value, EventSecrets):
        return tuple(sorted(set(value.states)))
    named = set(value.states) | {s for g in value.groups for s in g} | {s for p in value.listed for s in p}
    return tuple(sorted(named))


def names_of(value: AnyChosen, labels: Sequence[str] | None) -> Names | None:
    """The names of the states ``value`` names, on a page whose states are ``labels`` (None: no names to keep)."""
    if labels is None:
        return None
    states = named_states(value)
    if not states or max(states) >= len(labels):
        return None
    return tuple((s, str(labels[s])) for s in states)


def check_grid(start: str, step: str) -> Grid:
    """(start, step) checked: a date and time, and a positive duration (ValueError saying which is wrong)."""
    try:
        pd.Timestamp(start.strip())
    except (TypeError, ValueError):
        raise ValueError(f"the first entry's time must be a date and time such as 2024-01-01 00:00; got {start!r}")\
            from None
    try:
        delta = pd.Timedelta(step.strip())
    except (TypeError, ValueError):
        delta = None
    if delta is None or delta <= pd.Timedelta(0):
        raise ValueError(f"the step between entries must be a duration such as 1h, 30min or 1D; got {step!r}")
    return start.strip(), step.strip()


SECRETS = Parameter("secrets", ALL_SECRETS, "sec", SecretsText(), label="What is secret")
GRID = Parameter("secret_grid", DEFAULT_GRID, "sgrid", GridText(), label="The entries' time grid")
NAMES = Parameter("secret_names", None, "snames", NamesText(), label="The states the secrets name")
MAX_ENTRY = 10**7  # the redaction planner's protected entry, in a link (the box takes 1..T)
REDACT_NODE = Parameter("redaction_node", None, "rnode", Number(1, MAX_ENTRY, whole=True),
                        label="Redaction planner: the protected entry")  # None: the middle entry
REDACT_EPS = Parameter("redaction_eps", None, "reps", Number(0.0, 1000.0),
                       label="Redaction planner: the target ε")  # None: the page's ε_puffer
SECRETS_GROUP = ParameterGroup("secrets", (SECRETS, GRID, NAMES, REDACT_NODE, REDACT_EPS))  # registered by
# streamlit_app.py


@dataclass(frozen=True)
class SecretsChoice(SettingsRecord):
    """What the pages protect: the chosen secrets and the time grid a rule on the time column applies to."""

    secrets: AnyChosen = setting(SECRETS)
    grid: Grid = setting(GRID)
    state_names: Names | None = setting(NAMES)  # the states' names (a link from before they were kept: indices)

    def labels_for(self, labels: Sequence[str] | None) -> list[str] | None:
        """The state names the secrets' indices stand for on a page whose states are ``labels``: the names kept
        when they were chosen (so that a page with other states reads the same states, or says which is missing),
        else ``labels`` (an old link, by index)."""
        if not self.state_names:
            return None if labels is None else list(labels)
        kept = dict(self.state_names)
        size = max([len(labels or ()), *(i + 1 for i in kept)])
        return [kept.get(i, str(labels[i]) if labels is not None and i < len(labels) else f"state {i}")
                for i in range(size)]

    @property
    def is_all(self) -> bool:
        """Every pair of distinct states at every entry: today's curve, nothing to add to a page."""
        return isinstance(self.secrets, Secrets) and self.secrets.is_all

    @property
    def link_key(self) -> tuple[str, ...]:
        """What to add to a cache key of results computed from the curve: the secrets, unless every pair."""
        return () if self.is_all else (self.secrets.to_text(), *self.grid)

    def resolved(self, length: int) -> AnyChosen:
        """The library's value for sequences of ``length`` entries: a rule applied to the time grid
        (:meth:`~puffer_core.secrets.Secrets.on_grid`); ValueError when it matches no entry."""
        value = self.secrets
        if isinstance(value, Secrets) and not value.resolved:
            return value.on_grid(self.grid[0], self.grid[1], length)
        return value

    def source(self, length: int) -> str:
        """These secrets as Python for an exported script (a rule applied to the same grid)."""
        value = self.secrets
        if isinstance(value, Secrets) and not value.resolved:
            return f"{value.source()}.on_grid({self.grid[0]!r}, {self.grid[1]!r}, {int(length)})"
        return value.source()

    def names(self) -> list[str]:
        """The names a script building these secrets imports from puffer_core."""
        value = self.secrets
        if isinstance(value, EventSecrets):
            return ["EventSecrets"]
        if value.is_all:
            return ["ALL_SECRETS"]
        return ["Secrets", "TimeRule"] if value.rule is not None else ["Secrets"]

    def link(self) -> tuple[Parameter, ...]:
        """In a link only when chosen; the grid only with a rule on the time column."""
        if self.is_all:
            return ()
        rule = isinstance(self.secrets, Secrets) and self.secrets.rule is not None
        return (SECRETS, *((GRID,) if rule else ()), *((NAMES,) if self.state_names else ()))


@dataclass(frozen=True)
class RedactionChoice(SettingsRecord):
    """The redaction planner's inputs (docs/math.md §16): the protected entry (1-based) and the target ε, each None
    until set in its box (then the middle entry and the page's ε_puffer); in a link once set."""

    node: int | None = setting(REDACT_NODE)
    eps: float | None = setting(REDACT_EPS)

    def link(self) -> tuple[Parameter, ...]:
        return (*((REDACT_NODE,) if self.node is not None else ()), *((REDACT_EPS,) if self.eps is not None else ()))
