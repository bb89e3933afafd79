"""The secrets in words, as text for links and as Python for scripts (docs/math.md §16).

- :func:`secrets_sentence`: the one sentence the product stands behind ("An attacker who believes … cannot
  tell whether a user was at the clinic rather than anywhere else at night-time hours by more than a factor
  e^1");
- :func:`secrets_text`: a compact text form that :func:`puffer_core.secrets.codec.read_secrets` reads back to
  an equal value ("" is every pair at every entry);
- :func:`secrets_source`: the value as a Python expression, for exported scripts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ..priors.codecs import pack_text
from .rules import runs_text

# The three kinds of secrets (values.Secrets, events.EventSecrets, population.PopulationSecrets) are told apart
# by their fields, so that their modules can call these functions without an import cycle.
AnySecrets = Any


def _is_event(secrets: object) -> bool:
    return hasattr(secrets, "windows")


def _is_population(secrets: object) -> bool:
    return hasattr(secrets, "names") and hasattr(secrets, "pairs") and not hasattr(secrets, "listed")


def _name(labels: Sequence[str] | None, state: int) -> str:
    return str(labels[state]) if labels is not None and state < len(labels) else f"state {state}"


def _either(names: list[str], word: str = "or") -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {word} {names[-1]}"


def _positions_words(positions: tuple[int, ...]) -> str:
    spans = []
    for part in runs_text(positions).split(","):
        first, dash, last = part.partition("-")
        spans.append(f"{int(first) + 1}–{int(last) + 1}" if dash else f"{int(first) + 1}")
    noun = "entry" if len(positions) == 1 else "entries"
    return f"at {noun} {_either(spans, 'and')} of each sequence"


def _pairs_words(secrets: Any, labels: Sequence[str] | None) -> str:
    if secrets.pairs == "all":
        return "which state a user was in (any state rather than any other)"
    if secrets.pairs == "sensitive":
        names = [_name(labels, s) for s in secrets.states]
        return f"whether a user was in {_either(names)} rather than in any other state"
    if secrets.pairs == "groups":
        parts = [_either([_name(labels, s) for s in g], "and") for g in secrets.groups if len(set(g)) >= 2]
        also = "".join(f" (likewise among {p})" for p in parts[1:])
        return f"which state a user was in among {parts[0]}{also}, though not whether it was one of them"
    pieces = [f"in {_name(labels, x)} rather than in {_name(labels, y)}" for x, y in secrets.listed]
    way = "" if secrets.ordered else " (either way)"
    return f"whether a user was {_either(pieces)}{way}"


def protected_words(secrets: AnySecrets, labels: Sequence[str] | None = None) -> str:
    """What is protected, without the attacker and the bound: "whether a user was in A rather than … at …"."""
    if _is_population(secrets):
        parts = [f"whether the population's data come from {a} rather than {b}" for a, b in secrets.names]
        return _either(parts) + " (either way)"
    if _is_event(secrets):
        names = _either([_name(labels, s) for s in secrets.states])
        windows = _either([f"{a + 1}–{b + 1}" if b > a else f"{a + 1}" for a, b in secrets.windows])
        return f"whether a user was in {names} at some of entries {windows} rather than at none of them"
    what = _pairs_words(secrets, labels)
    if secrets.rule is not None:
        where = secrets.rule.words()
    elif secrets.positions is not None:
        where = _positions_words(secrets.positions)
    else:
        where = "at any entry"
    return f"{what} {where}"


def secrets_sentence(secrets: AnySecrets, labels: Sequence[str] | None = None, eps: float | None = None,
                     prior_words: str | None = None) -> str:
    """The sentence the product stands behind (docs/math.md §16)."""
    who = f"An attacker who believes {prior_words}" if prior_words else "An attacker"
    if eps is None:
        bound = "e^ε"
    elif math.isinf(eps):
        bound = "any finite factor (ε = ∞: no guarantee)"
    else:
        bound = f"e^{eps:.3g}"
    factor = f"by more than a factor {bound}" if eps is None or math.isfinite(eps) else bound
    verb = "cannot tell" if eps is None or math.isfinite(eps) else "may tell"
    if eps is not None and math.isinf(eps):
        return f"{who} {verb} {protected_words(secrets, labels)}: {bound}."
    return f"{who} {verb} {protected_words(secrets, labels)} {factor}."


# --------------------------------------------------------------------------- text for links


def _clean(text: str) -> str:
    return "".join(" " if c in ";=:" else c for c in text)


def secrets_text(secrets: AnySecrets) -> str:
    """A compact text form (see :func:`read_secrets`); "" for :data:`ALL_SECRETS`."""
    if _is_event(secrets):
        windows = ".".join(f"{a}-{b}" for a, b in secrets.windows)
        return f"e:s={runs_text(secrets.states, '.')};w={windows}"
    if _is_population(secrets):
        return "P:" + pack_text([json.dumps(_population_payload(secrets), separators=(",", ":"))])
    if secrets.is_all:
        return ""
    parts = [f"p={secrets.pairs}"]
    if secrets.states:
        parts.append(f"s={runs_text(secrets.states, '.')}")
    if secrets.groups:
        parts.append("g=" + "/".join(runs_text(g, ".") for g in secrets.groups))
    if secrets.listed:
        parts.append("l=" + ".".join(f"{x}~{y}" for x, y in secrets.listed))
    if secrets.ordered:
        parts.append("o=1")
    if secrets.positions is not None:
        parts.append(f"t={runs_text(secrets.positions, '.')}")
    if secrets.rule is not None:
        parts.append("r=" + _clean(secrets.rule.to_text()))
    return ";".join(parts)


def _population_payload(secrets: Any) -> dict:
    def prior(p: Any) -> dict:
        return {
            "P": [[float(x).hex() for x in row] for row in p.transition],
            "i": None if p.stationary_initial else [float(x).hex() for x in p.initial],
            "T": p.length,
            "L": list(p.labels) if p.labels is not None else None,
        }

    return {"pairs": [[prior(a), prior(b)] for a, b in secrets.pairs], "names": [list(n) for n in secrets.names]}


# --------------------------------------------------------------------------- Python for scripts


def secrets_source(secrets: AnySecrets) -> str:
    """A Python expression that builds these secrets (names from ``puffer_core.secrets``; priors of a
    population pair as :class:`MarkovChainPrior` calls)."""
    if _is_event(secrets):
        return f"EventSecrets(states={secrets.states!r}, windows={secrets.windows!r})"
    if _is_population(secrets):
        pairs = ", ".join(f"({_prior_source(a)}, {_prior_source(b)})" for a, b in secrets.pairs)
        return f"PopulationSecrets(pairs=({pairs},), names={secrets.names!r})"
    if secrets.is_all:
        return "ALL_SECRETS"
    args = []
    if secrets.pairs != "all":
        args.append(f"pairs={secrets.pairs!r}")
    if secrets.states:
        args.append(f"states={secrets.states!r}")
    if secrets.groups:
        args.append(f"groups={secrets.groups!r}")
    if secrets.listed:
        args.append(f"listed={secrets.listed!r}")
    if secrets.ordered:
        args.append("ordered=True")
    if secrets.positions is not None:
        args.append(f"positions={secrets.positions!r}")
    if secrets.rule is not None:
        args.append(f"rule={secrets.rule.source()}")
    return f"Secrets({', '.join(args)})"


def _prior_source(prior: Any) -> str:
    rows = "[" + ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]" for row in prior.transition) + "]"
    initial = "None" if prior.stationary_initial else "[" + ", ".join(repr(float(x)) for x in prior.initial) + "]"
    labels = "" if prior.labels is None else f", labels={list(prior.labels)!r}"
    return f"MarkovChainPrior({rows}, {initial}, {prior.length}{labels})"
