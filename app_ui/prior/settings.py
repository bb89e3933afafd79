"""The prior in use, as a record every page that reads it holds (:class:`PriorChoice`).

The prior's settings are the kind (:data:`app_ui.core.state.KIND`), the kind's own parameters and view options
(its record in :data:`puffer_core.priors.kinds.PRIOR_KINDS`), the prior uncertainty's settings of a chain fitted
to data (:class:`UncertaintyChoice`) and where that chain came from (:class:`app_ui.core.state.FittedOrigin`).
The Influence curves page and the matrix editor set them; every other page reads them through this record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from app_ui.core import state
from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import (
    CONCENTRATION,
    DRAW_SEED,
    DRAWS,
    FITTED,
    FITTED_DATA,
    KIND,
    TRANSITIONS,
    UNCERTAINTY,
    UNCERTAINTY_PARAMETERS,
    FittedOrigin,
)
from puffer_core.priors.codecs import Parameter
from puffer_core.priors.kinds import LENGTH, MATRIX, PRIOR_KINDS, Params, PriorKind


@dataclass(frozen=True)
class UncertaintyChoice(SettingsRecord):
    """The prior uncertainty of a fitted chain (docs/math.md §12): on or off, M draws, their seed, α₀ (None: 1/K)
    and the data the chain was fitted to (``("builtin", dataset, user column)`` or ``("upload", file name)``)."""

    on: bool = setting(UNCERTAINTY)
    draws: int = setting(DRAWS)
    seed: int = setting(DRAW_SEED)
    concentration: float | None = setting(CONCENTRATION)
    data: tuple[str, ...] | None = setting(FITTED_DATA)

    def link(self) -> tuple[Parameter, ...]:
        """In a link only with the fitted chain they belong to (:meth:`PriorChoice.link`)."""
        return ()


@dataclass(frozen=True)
class PriorChoice(SettingsRecord):
    """The prior chosen on the Influence curves page: its kind, the kind's parameters and view options (as
    hashable ``(key, value)`` pairs, the cached curve's key), the prior uncertainty's settings and, for a chain
    fitted to data, where it came from."""

    params: Params  # the kind's parameters (built by from_values: which ones depends on the kind)
    options: Params  # the kind's view options
    kind: str = setting(KIND)
    uncertainty: UncertaintyChoice = holds(UncertaintyChoice)
    fitted: FittedOrigin | None = setting(FITTED)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        kind = PRIOR_KINDS[state.conform(KIND, values.get(KIND.key, KIND.default))]
        return cls(
            kind=kind.name,
            params=tuple((p.key, state.conform(p, values.get(p.key, p.default))) for p in kind.parameters),
            options=tuple((p.key, state.conform(p, values.get(p.key, p.default))) for p in kind.options),
            uncertainty=UncertaintyChoice.from_values(values),
            fitted=values.get(FITTED.key),
        )

    @property
    def record(self) -> PriorKind:
        """The kind's record: its builder, checks, description and script."""
        return PRIOR_KINDS[self.kind]

    @property
    def values(self) -> dict[str, Any]:
        """The kind's parameters and view options by key, as the kind's record takes them."""
        return dict(self.params) | dict(self.options)

    def value(self, parameter: Parameter) -> Any:
        """One of the kind's parameters (KeyError when the kind has no such parameter)."""
        return dict(self.params)[parameter.key]

    @property
    def length(self) -> int | None:
        """The sequence length T of a chain prior (None for a Gaussian process, which has n coordinates)."""
        return self.values.get(LENGTH.key)

    @property
    def as_fitted(self) -> bool:
        """Whether the prior is a K-state chain still as it was fitted to data (its uncertainty then applies)."""
        return self.kind == MATRIX.name and self.fitted is not None and self.value(TRANSITIONS) == self.fitted.matrix

    @property
    def description(self) -> str:
        """One line naming the prior, with the data it was fitted to while it is still the fit."""
        text = self.record.description(self.values)
        if self.as_fitted and self.fitted is not None:
            return text.replace("Markov chain", f"Markov chain fitted to {self.fitted.name}", 1)
        return text

    def problems(self) -> list[str]:
        """What makes the parameters unusable, one message each (empty: they build a prior)."""
        return self.record.problems(self.values)

    def link(self) -> tuple[Parameter, ...]:
        """What the link carries about the prior: its kind, its parameters, the curves' view options and, for a
        chain fitted to data, the prior uncertainty's settings and the data's name."""
        own = tuple(p for p in self.record.parameters if p.url is not None)
        return (KIND, *own, *self.record.options, *(UNCERTAINTY_PARAMETERS if self.as_fitted else ()))
