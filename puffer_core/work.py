"""What an exact computation will cost, counted before it runs; what it did cost; how far along it is.

Every engine that can run long (the a(b) curve of docs/math.md §2, the Gaussian-process curve of
§2.3, MQM's σ_max of §5) offers a public estimate function that returns a :class:`WorkEstimate`
*before* any heavy work, and refuses (ValueError carrying :attr:`WorkEstimate.message`) what
would exceed ``validation.WORK_LIMIT_SECONDS`` or ``MEMORY_LIMIT_BYTES``.

**Work units.**  An estimate counts deterministic units of work by kind (:data:`UNIT_KINDS`),
not seconds: the same input always gives the same count, on any machine.  Seconds are the
units times :data:`SECONDS_PER_UNIT`, measured on one shared core with margin
(``benchmarks/bench_estimates.py`` prints estimate against measured CPU time per family).  An
engine given a :class:`WorkCounter` adds the units it actually performs (all but "overhead",
the interpreter's share, which is only estimated), so tests can check ``estimated units ≥
performed units`` without timing anything.  Where the work depends on how well a pruning bound
works (the split phase of a(b), MQM's quilt search), the estimate is an upper model calibrated
on every family of chains, not a worst case.

**Progress and cancel.**  An engine given ``progress`` calls ``progress(stage, fraction)``
(see :class:`Progress`) at least every ~0.2 s of work on long computations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from .validation import WORK_LIMIT_SECONDS, human_seconds

# The kinds of work counted, and the index of each in WorkCounter.units / the kernels' work arrays.
UNIT_KINDS = ("max-plus", "product", "split", "marginal", "gaussian", "overhead", "front", "forward-backward",
              "enumeration")
MAX_PLUS, PRODUCT, SPLIT, MARGINAL, GAUSSIAN, OVERHEAD, FRONT, FORWARD_BACKWARD, ENUMERATION = range(len(UNIT_KINDS))

# Seconds per unit of CPU time (user + sys) on one core of a busy shared 2-core machine (load 6–9), with
# margin: python benchmarks/bench_estimates.py prints the estimate against the measured time per family.
SECONDS_PER_UNIT: Mapping[str, float] = {
    "max-plus": 1 / 3e9,  # one step max(out, a − d) of the pairwise max log-ratio kernel, memory included
    "product": 1 / 6e9,  # one multiply-add of a matrix product or factorisation (BLAS, one thread)
    "split": 1 / 1e8,  # one prior's term at one split of one pair and node, or one pair's bound (tables read
    # at scattered rows: about a memory access each once they outgrow the caches)
    "marginal": 1 / 2e8,  # one multiply-add of a marginal pass p_{t+1} = p_t·P, or one quilt-array element
    "gaussian": 1 / 2.5e9,  # one floating-point operation of the Gaussian-process array passes and r bounds
    "overhead": 1e-6,  # one microsecond of interpreter work (calls, small arrays): what dominates tiny inputs
    "front": 1 / 1e7,  # one element of one pair's sorted prefix sums while a TPL leakage front is built
    "forward-backward": 1 / 1.5e8,  # one (state, state) log-sum-exp cell of one step of an attacker's pass
    "enumeration": 1 / 5e7,  # one (sequence, joint output, step) cell of an exact enumeration (the likelihood's
    # gathers and products on arrays of ~16 MB, one BLAS thread)
}
MEMORY_LIMIT_BYTES = 1_500_000_000  # work whose arrays would exceed this is refused up front


@dataclass(frozen=True)
class WorkEstimate:
    """The cost of one computation, estimated before it runs (an upper estimate: never below half the real time).

    ``units`` maps kinds of :data:`UNIT_KINDS` to counts; ``nbytes`` is the peak memory of the
    largest arrays; ``dominant`` says in words what dominates; ``advice`` what to change when it
    does not fit (e.g. the largest ``max_b`` that does, see ``largest``); ``largest`` names that
    limit as a value (``{"max_b": 180}``) when there is one.  ``limit`` is the time budget in seconds
    (``validation.WORK_LIMIT_SECONDS`` unless a caller has a smaller one, e.g. the tightness ladder's).
    """

    task: str
    units: Mapping[str, float]
    nbytes: float
    dominant: str
    advice: str = ""
    largest: Mapping[str, int] = field(default_factory=dict)
    limit: float = WORK_LIMIT_SECONDS

    @property
    def seconds(self) -> float:
        return unit_seconds(self.units)

    @property
    def total_units(self) -> float:
        return float(sum(self.units.values()))

    @property
    def fits(self) -> bool:
        return self.seconds <= self.limit and self.nbytes <= MEMORY_LIMIT_BYTES

    def describe(self) -> str:
        """"about 3 s and 0.6 GB (…what dominates…)"."""
        return f"about {_duration(self.seconds)} and {_gigabytes(self.nbytes)} ({self.dominant})"

    @property
    def message(self) -> str:
        """Why it is refused and what to change (the text of the ValueError)."""
        text = (
            f"{self.task} is out of reach: it needs {self.describe()}; the limits are"
            f" {self.limit:g} s and {MEMORY_LIMIT_BYTES / 2**30:.1f} GB"
        )
        return f"{text} — {self.advice}" if self.advice else text

    def check(self) -> None:
        """Raise ValueError with :attr:`message` when the work does not fit."""
        if not self.fits:
            raise ValueError(self.message)


def unit_seconds(units: Mapping[str, float]) -> float:
    """The estimated seconds of ``units`` (counts by kind of :data:`UNIT_KINDS`)."""
    return float(sum(count * SECONDS_PER_UNIT[kind] for kind, count in units.items()))


def _duration(seconds: float) -> str:
    year = 365.25 * 86400
    return human_seconds(seconds) if seconds < year else f"{seconds / year:.2g} years"


def _gigabytes(nbytes: float) -> str:
    if nbytes < 0.05 * 2**30:
        return f"{max(1.0, nbytes / 2**20):.0f} MB"
    return f"{nbytes / 2**30:.1f} GB" if nbytes < 1e3 * 2**30 else f"{nbytes / 2**30:.2g} GB"


def combine(task: str, estimates: list[WorkEstimate], dominant: str, advice: str = "",
            largest: Mapping[str, int] | None = None) -> WorkEstimate:
    """One estimate for several pieces of work done one after the other (units add, peak memory is the max)."""
    units: dict[str, float] = {}
    for e in estimates:
        for kind, count in e.units.items():
            units[kind] = units.get(kind, 0.0) + count
    nbytes = max((e.nbytes for e in estimates), default=0.0)
    return WorkEstimate(task, units, nbytes, dominant, advice, dict(largest or {}))


class WorkCounter:
    """The units an engine actually performed, by kind; pass one as an engine's ``work=`` argument.

    ``units`` is a float array indexed like :data:`UNIT_KINDS` (the compiled kernels add to
    it in place); :meth:`as_dict` names them.
    """

    def __init__(self) -> None:
        self.units = np.zeros(len(UNIT_KINDS))

    def add(self, kind: int, count: float) -> None:
        self.units[kind] += count

    def as_dict(self) -> dict[str, float]:
        return {kind: float(self.units[i]) for i, kind in enumerate(UNIT_KINDS)}

    @property
    def total(self) -> float:
        return float(self.units.sum())


ProgressCallback = Callable[[str, float], object]


class Progress:
    """Forwards an engine's progress to ``callback(stage, fraction)``, at most every ``interval`` seconds.

    The contract every engine keeps with its ``progress`` argument:

    - ``stage`` is a short text saying what is being done (e.g. "left and right terms, distance
      120 of 399"); ``fraction`` in [0, 1] is the share of the estimated work done so far,
      non-decreasing over the whole computation; the last call has fraction 1.
    - On a computation estimated above ~0.2 s the callback is called at least every ~0.2 s of
      work (the compiled loops run in chunks for this), and never more often than every
      ``interval`` (0.1 s) except for the first and the last call.
    - The callback may raise any exception to stop the work: the engine stops at its next
      check (within ~0.2 s), frees what it allocated and lets the exception propagate to its
      caller; nothing partial is returned or cached.

    The engine reports units done against ``total`` units (its own estimate).
    """

    def __init__(self, callback: ProgressCallback | None, total: float, interval: float = 0.1) -> None:
        self.callback = callback
        self.total = max(float(total), 1.0)
        self.interval = interval
        self._last = -math.inf
        self._fraction = 0.0
        self.done = 0.0

    @property
    def active(self) -> bool:
        return self.callback is not None

    def advance(self, stage: str, units: float) -> None:
        """``units`` more work done (in the estimate's units); report if the interval has passed."""
        self.done += units
        self.report(stage)

    def report(self, stage: str, force: bool = False) -> None:
        if self.callback is None:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self._fraction = max(self._fraction, min(0.99, self.done / self.total))
        self.callback(stage, self._fraction)

    def finish(self, stage: str = "done") -> None:
        if self.callback is not None:
            self._fraction = 1.0
            self.callback(stage, 1.0)


def chunk_size(seconds_per_item: float, target: float = 0.05, most: int = 1 << 30) -> int:
    """How many items of ``seconds_per_item`` each fit in one chunk of ``target`` seconds (at least 1)."""
    if seconds_per_item <= 0:
        return most
    return int(max(1, min(most, target / seconds_per_item)))


_CONTROLLER: list = []


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the enclosed matrix products on one BLAS thread.

    The engines do long sequences of small and middle-sized products; OpenBLAS's thread pool
    makes them up to 100× slower on a busy machine (threads spinning against other processes),
    and the compiled kernels already keep a core busy.
    """
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield
