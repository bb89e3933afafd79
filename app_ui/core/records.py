"""Typed settings records: what a page reads from the session's settings, as one frozen dataclass.

A page family declares the settings it reads as a frozen dataclass deriving from :class:`SettingsRecord`:
each field is either a setting (``eps_puffer: float = setting(EPS_PUFFER)``, a
:class:`~puffer_core.priors.codecs.Parameter` with its key, default, link name and codec) or a record
shared by several pages (``prior: PriorChoice = holds(PriorChoice)``: the prior in use; the secrets and the
noise to come).  :meth:`SettingsRecord.from_session` builds it in one place from the session's values, each
checked by its codec (:func:`app_ui.core.state.conform`), so that a page reads ``settings.eps_puffer`` — a
typo is an AttributeError that mypy and ruff see — and its exported script and report are filled from the same
record.  :meth:`SettingsRecord.link` lists what the page's link carries: the shared records' settings first,
then its own, in the order of its fields (the link format is the Parameters', unchanged).

Controls still write one setting at a time (:func:`app_ui.core.state.put`, the widgets of
:mod:`app_ui.core.state`); a page builds its record once its controls are drawn, and computes from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, fields
from typing import Any, Self

from app_ui.core import state
from puffer_core.priors.codecs import Parameter

PARAMETER = "parameter"  # a field's metadata: the setting it reads
RECORD = "record"  # a field's metadata: the record it holds


def setting(parameter: Parameter) -> Any:
    """A record's field that reads ``parameter`` from the session (checked by its codec)."""
    return field(metadata={PARAMETER: parameter})


def holds(record: type[SettingsRecord]) -> Any:
    """A record's field that holds another record (settings shared by several pages: the prior, the secrets)."""
    return field(metadata={RECORD: record})


class SettingsRecord:
    """The base of a page's (or a shared) settings record: a frozen dataclass whose fields are :func:`setting`\\ s
    and :func:`holds`; a record whose fields are built otherwise (the prior's parameters) overrides
    :meth:`from_values` and :meth:`link`."""

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        """The record of these settings (a setting missing from ``values`` takes its default)."""
        built: dict[str, Any] = {}
        for item in fields(cls):  # type: ignore[arg-type]  # every record is a dataclass
            if PARAMETER in item.metadata:
                parameter = item.metadata[PARAMETER]
                built[item.name] = state.conform(parameter, values.get(parameter.key, parameter.default))
            elif RECORD in item.metadata:
                built[item.name] = item.metadata[RECORD].from_values(values)
            else:
                raise TypeError(f"{cls.__name__}.{item.name} is neither a setting(...) nor holds(...)")
        return cls(**built)

    @classmethod
    def from_session(cls) -> Self:
        """The record of this session's settings, as the controls drawn so far left them."""
        return cls.from_values(state.settings())

    @classmethod
    def parameters(cls) -> tuple[Parameter, ...]:
        """The settings this record's own fields read (not those of the records it holds)."""
        return tuple(item.metadata[PARAMETER] for item in fields(cls) if PARAMETER in item.metadata)  # type: ignore[arg-type]

    def link(self) -> tuple[Parameter, ...]:
        """What a link to the page carries: the held records' settings, then its own that have a link name."""
        out: list[Parameter] = []
        for item in fields(self):  # type: ignore[arg-type]
            if RECORD in item.metadata:
                out += getattr(self, item.name).link()
            elif PARAMETER in item.metadata and item.metadata[PARAMETER].url is not None:
                out.append(item.metadata[PARAMETER])
        return tuple(out)
