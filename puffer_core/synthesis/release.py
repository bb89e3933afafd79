"""The release: a chain's counts with discrete Laplace noise, and what it publishes (docs/math.md §19.2).

:func:`release_counts` adds independent discrete Laplace noise of one scale to every transition count and every
first-state count of every group, and returns :class:`NoisyCounts`: the noisy counts, the public lengths and
the privacy event.  Everything the synthesizer does afterwards reads this value only (post-processing).

Two ways to draw, as everywhere in the library (docs/math.md §5): ``rng=None`` is a real release, drawn by
OpenDP's ``make_laplace`` on integer vectors (its own secure generator; not reproducible); a
``numpy.random.Generator`` (or a seed) draws the same law with numpy — Z = G₁ − G₂ with G₁, G₂ independent
geometric — reproducibly, for teaching and tests, not for publishing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..accounting.events import CurveEvent
from ..mechanisms.base import opendp_prelude
from .counts import ChainCounts, ChainShape, ColumnNames
from .privacy import ENTRY_L1, expected_abs_noise

MECHANISM = "synthetic_sequences"
MAX_OPENDP_CELLS = 5_000_000  # OpenDP draws ~10⁵ discrete Laplace numbers a second: at most about a minute
MAX_NUMPY_CELLS = 100_000_000


@dataclass(frozen=True)
class SynthesisEvent(CurveEvent):
    """The privacy event of a synthetic-sequence release: a curve event whose window costs less than b·ε_DP.

    ``calibration`` is the curve point (b, a(b)) with ε_puffer = c_b/s + a(b), c_b the L1 sensitivity of the
    window of b entries (docs/math.md §19.3; its ε_DP field is c_b/(b·s), so that [C] Theorem 6.2 composes
    the release exactly: the rule reads ε_puffer − a(b) = c_b/s).  :attr:`eps_dp` is the per-entry DP level of
    the noise itself, 4/s, what group-DP accounting charges T times.  ``scale`` is the discrete Laplace scale on
    every count; ``window_l1`` is c_b.
    """

    scale: float = 1.0
    window_l1: int = ENTRY_L1

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.scale > 0 or not math.isfinite(self.scale):
            raise ValueError(f"the noise scale must be a positive number; got {self.scale!r}")

    @property
    def eps_dp(self) -> float:
        return ENTRY_L1 / self.scale

    def describe(self) -> str:
        how = "group DP over the whole sequence" if self.group_dp else f"curve point b = {self.b}"
        return (
            f"{self.mechanism}: ε_puffer = {self.eps_puffer:.4g} from discrete Laplace noise of scale {self.scale:.4g}"
            f" on every count (per-entry ε_DP = {self.eps_dp:.4g}; {how}, a(b) = {self.a:.4g}; the window of"
            f" {self.b} entries moves the counts by at most {self.window_l1} in L1)"
        )

    def to_dict(self) -> dict[str, object]:
        return super().to_dict() | {"scale": self.scale, "window_l1": self.window_l1}


@dataclass(frozen=True, eq=False)
class NoisyCounts(ChainShape):
    """What a synthetic-sequence release publishes (docs/math.md §19.2): noisy counts and public lengths.

    ``transitions`` ``(G, K, K)`` and ``first_states`` ``(G, K)`` are the true counts plus discrete Laplace noise
    of ``scale`` (integers, possibly negative); ``length_values``/``length_users`` are the lengths, exact
    (public).  ``event`` is the privacy event of the release, composable with any other curve-calibrated
    release (:class:`~puffer_core.accounting.composition.Accountant`); ``guarantee`` names how its noise was set
    (:data:`~puffer_core.synthesis.privacy.GUARANTEES`); ``drawn_by`` is ``"opendp"`` or ``"numpy"``.
    """

    states: tuple[str, ...]
    groups: tuple[str, ...] | None
    transitions: np.ndarray
    first_states: np.ndarray
    length_values: np.ndarray
    length_users: np.ndarray
    columns: Mapping[str, str | None]
    scale: float
    event: SynthesisEvent
    guarantee: str
    drawn_by: str

    def __post_init__(self) -> None:
        for name in ("transitions", "first_states", "length_values", "length_users"):
            array = np.array(getattr(self, name), dtype=np.int64)
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        object.__setattr__(self, "columns", ColumnNames.of(self.columns))

    @property
    def n_counts(self) -> int:
        """How many counts carry noise: K² + K per group."""
        return int(self.transitions.size + self.first_states.size)

    @property
    def eps_puffer(self) -> float:
        return self.event.eps_puffer

    @property
    def entry_eps_dp(self) -> float:
        """The per-entry DP level of the noise alone: 4 / s (one entry moves the counts by 4 in L1)."""
        return ENTRY_L1 / self.scale

    @property
    def expected_abs_noise(self) -> float:
        """E|Z| per count."""
        return expected_abs_noise(self.scale)

    def to_dict(self) -> dict[str, object]:
        """The released numbers as plain values (lists), e.g. to publish beside the synthetic table as JSON."""
        return {
            "states": list(self.states),
            "groups": None if self.groups is None else list(self.groups),
            "transitions": self.transitions.tolist(),
            "first_states": self.first_states.tolist(),
            "lengths": {str(v): self.length_users[:, i].tolist() for i, v in enumerate(self.length_values.tolist())},
            "noise": {"law": "discrete Laplace", "scale": self.scale, "drawn_by": self.drawn_by},
            "event": self.event.to_dict(),
            "guarantee": self.guarantee,
        }


def discrete_laplace(size: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of discrete Laplace noise of ``scale`` with numpy: the difference of two geometric draws."""
    p = -math.expm1(-1.0 / scale)  # 1 − e^(−1/s)
    return rng.geometric(p, size) - rng.geometric(p, size)


def opendp_discrete_laplace(values: np.ndarray, scale: float) -> np.ndarray:
    """``values`` + discrete Laplace noise of ``scale``, drawn by OpenDP's ``make_laplace`` on 64-bit integers.

    The measurement's privacy map at d_in = 4 (one entry's L1 change) is 4/s, checked before drawing.
    """
    dp = opendp_prelude()
    space = dp.vector_domain(dp.atom_domain(T="i64"), size=int(values.size)), dp.l1_distance(T="i64")
    measurement = dp.m.make_laplace(*space, scale=float(scale))
    if measurement.map(ENTRY_L1) > ENTRY_L1 / scale * (1 + 1e-9):
        raise RuntimeError("OpenDP's discrete Laplace does not have the privacy map the accounting assumes")
    return np.array(measurement([int(v) for v in values]), dtype=np.int64)


def release_counts(counts: ChainCounts, scale: float, event: SynthesisEvent, guarantee: str,
                   rng: np.random.Generator | None) -> NoisyCounts:
    """The noisy counts of ``counts`` with discrete Laplace noise of ``scale`` (module docstring).

    The noise is drawn for the transitions of every group, then the first states, in that order (so one seed
    gives one release whatever engine counted the data).
    """
    values = np.concatenate([counts.transitions.ravel(), counts.first_states.ravel()])
    limit = MAX_OPENDP_CELLS if rng is None else MAX_NUMPY_CELLS
    if values.size > limit:
        raise ValueError(
            f"{counts.n_groups:,} group(s) × ({counts.n_states}² + {counts.n_states}) states are {values.size:,} noisy"
            f" counts, over the limit of {limit:,}; merge rare states or groups"
        )
    if rng is None:
        noisy, drawn_by = opendp_discrete_laplace(values, scale), "opendp"
    else:
        noisy, drawn_by = values + discrete_laplace(values.size, scale, rng), "numpy"
    split = counts.transitions.size
    return NoisyCounts(
        counts.states, counts.groups, noisy[:split].reshape(counts.transitions.shape),
        noisy[split:].reshape(counts.first_states.shape), counts.length_values, counts.length_users,
        counts.columns, float(scale), event, guarantee, drawn_by,
    )
