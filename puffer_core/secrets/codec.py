"""Reading the secrets' link text back (docs/math.md §16): :func:`read_secrets` is the inverse of
:func:`puffer_core.secrets.words.secrets_text`."""

from __future__ import annotations

import json

from ..priors.codecs import unpack_text
from ..priors.models import MarkovChainPrior
from .events import EventSecrets
from .population import PopulationSecrets
from .rules import TimeRule, parse_runs
from .values import ALL_SECRETS, Secrets


def _read_prior(data: dict) -> MarkovChainPrior:
    matrix = [[float.fromhex(x) for x in row] for row in data["P"]]
    initial = None if data["i"] is None else [float.fromhex(x) for x in data["i"]]
    return MarkovChainPrior(matrix, initial, int(data["T"]), data.get("L"))


def read_secrets(text: str) -> Secrets | EventSecrets | PopulationSecrets:
    """The secrets written by :func:`~puffer_core.secrets.words.secrets_text` ("" and "all" give
    :data:`ALL_SECRETS`).

    A text that cannot be read is refused (ValueError) with what is wrong in it.
    """
    if not isinstance(text, str):
        raise TypeError(f"secrets text must be a string; got {text!r}")
    text = text.strip()
    if text in ("", "all"):
        return ALL_SECRETS
    try:
        if text.startswith("P:"):
            data = json.loads(unpack_text(text[2:])[0])
            pairs = tuple((_read_prior(a), _read_prior(b)) for a, b in data["pairs"])
            return PopulationSecrets(pairs, tuple(tuple(n) for n in data["names"]))
        if text.startswith("e:"):
            fields = _fields(text[2:], "sw")
            windows = tuple(tuple(int(v) for v in w.split("-")) for w in fields["w"].split(".") if w)
            return EventSecrets(tuple(parse_runs(fields["s"], ".")), windows)  # type: ignore[arg-type]
        fields = _fields(text, "psglotr")
        if fields.get("o", "1") not in ("0", "1"):
            raise ValueError(f"the part 'o={fields['o']}' must be o=1 (ordered) or o=0")
        kwargs: dict[str, object] = {"pairs": fields.get("p", "all")}
        if "s" in fields:
            kwargs["states"] = tuple(parse_runs(fields["s"], "."))
        if "g" in fields:
            kwargs["groups"] = tuple(tuple(parse_runs(g, ".")) for g in fields["g"].split("/"))
        if "l" in fields:
            kwargs["listed"] = tuple(tuple(int(v) for v in p.split("~")) for p in fields["l"].split(".") if p)
        if fields.get("o") == "1":
            kwargs["ordered"] = True
        if "t" in fields:
            kwargs["positions"] = tuple(parse_runs(fields["t"], "."))
        if "r" in fields:
            kwargs["rule"] = TimeRule.from_text(fields["r"])
        return Secrets(**kwargs)  # type: ignore[arg-type]
    except (KeyError, IndexError, TypeError, ValueError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the secrets {text[:80]!r}: {exc}") from None


def _fields(text: str, keys: str) -> dict[str, str]:
    """The parts key=value of ``text``; a key not in ``keys`` (a typo would silently change the secrets) or a
    repeated one is refused."""
    out = {}
    for part in text.split(";"):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq:
            raise ValueError(f"the part {part!r} has no '='")
        if len(key) != 1 or key not in keys:
            raise ValueError(f"unknown part {key!r}= (the parts are {', '.join(k + '=' for k in keys)})")
        if key in out:
            raise ValueError(f"the part {key}= is given twice")
        out[key] = value
    return out


