"""Per-step ε schedules that keep a stream within a TPL target (docs/math.md §10).

A constant ε per step wastes budget: the first and last entries have neighbours on one side
only, so they leak less.  Three schedules for a target α, all checked against the TPL recursion:

- **constant** — the largest ε at every step (:func:`puffer_core.stream.tpl.max_eps_for_tpl`);
- **three-value** — Cao et al.'s allocation ([TPL], their code's ``allocEspByQuantify``):
  ε_mid inside, the supremum of BPL at the first step and of FPL at the last (stationary priors);
- **tight** — TPL_t = α at *every* step, for any prior (a fixed point, below).

:func:`optimal_schedule` returns the one with the largest total, so it spends at least as much as
the constant and the three-value schedules as computed (against the exact largest constant ε*, at least
T·(ε* − Δ − 1e-12·α), Δ the bound on the recursion's padding: see :func:`optimal_schedule`).  An
unbounded stream (no last step) gets (ε_1, ε_mid, ε_mid, …).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior
from ..secrets.values import Secrets, as_secrets
from ..validation import check_eps, check_whole
from .checks import stream_priors
from .fronts import add_up
from .supremum import leakage_suprema, max_eps_for_tpl, tpl_supremum
from .tpl import StreamFronts, stream_fronts

MAX_TIGHT_ROUNDS = 5_000  # rounds of the fixed-point iteration of the tight schedule
_TIGHT_TOLERANCE = 1e-13  # relative change below which the iteration has settled


@dataclass(frozen=True, eq=False)
class StreamSchedule:
    """A per-step ε schedule within a TPL target, and what it was compared with (docs/math.md §10).

    Finite stream: ``eps`` = ε_1..ε_T.  Unbounded stream: ``eps`` = (ε_1, ε_mid), and every step after
    the first has ε_mid (:meth:`steps` writes it out).  ``max_tpl`` is max_t TPL_t (sup over an unbounded
    stream) of this schedule, never above ``target``.  ``method`` names the schedule that won:
    ``"tight"``, ``"three-value"`` or ``"constant"``.  ``constant_eps`` is the largest constant ε for
    the target; ``three_value`` is Cao et al.'s (ε_1, ε_mid, ε_T) after it was checked against the
    recursion (``None`` when it is not defined: a non-stationary prior, or ε_mid = 0; an unbounded stream has no
    last step, so its third value is ε_mid).
    """

    eps: np.ndarray
    target: float
    max_tpl: float
    unbounded: bool
    method: str
    constant_eps: float
    three_value: tuple[float, float, float] | None

    def __post_init__(self) -> None:
        value = np.array(self.eps, dtype=float)
        value.setflags(write=False)
        object.__setattr__(self, "eps", value)

    @property
    def length(self) -> int | None:
        """T, or None for an unbounded stream."""
        return None if self.unbounded else int(self.eps.size)

    @property
    def total(self) -> float:
        """Σ_t ε_t (an unbounded stream with ε_mid > 0: ∞)."""
        if self.unbounded:
            return math.inf if self.eps[1] > 0 else float(self.eps[0])
        return float(self.eps.sum())

    @property
    def constant_total(self) -> float:
        return math.inf if self.unbounded else self.constant_eps * self.eps.size

    @property
    def three_value_total(self) -> float | None:
        """Σ_t ε_t of the three-value schedule (None when it is not defined)."""
        if self.three_value is None:
            return None
        first, mid, last = self.three_value
        if self.unbounded:
            return math.inf if mid > 0 else first
        size = self.eps.size
        return first if size == 1 else first + last + (size - 2) * mid

    def steps(self, length: int) -> np.ndarray:
        """ε_1..ε_length (an unbounded schedule cut after ``length`` steps: still within the target)."""
        length = check_whole("length", length)
        if not self.unbounded:
            if length != self.eps.size:
                raise ValueError(f"this schedule has T = {self.eps.size} steps; got length = {length}")
            return np.array(self.eps)
        return np.concatenate([[self.eps[0]], np.full(length - 1, self.eps[1])])


def _fit(fronts: StreamFronts, shape: np.ndarray, target: float) -> tuple[np.ndarray, float]:
    """The largest λ·shape (λ in [0, 1]; with chosen secrets also above 1) whose computed max_t TPL_t is
    ≤ target, and that value.

    TPL is non-decreasing in every ε_t, so in λ; grid refinement to 1e-12 relative, keeping the
    largest λ whose value was checked.  With chosen secrets (docs/math.md §16) a shape built for every
    pair may leave room: λ is first doubled while the target still holds.
    """
    top = float(fronts.max_tpl(shape[None, :])[0])
    lo, hi, best = 0.0, 1.0, 0.0
    if top <= target:
        if fronts.secrets.is_all or not np.any(shape > 0):
            return shape, top
        lo, best = 1.0, top
        while hi < 2.0**40:
            hi *= 2.0
            value = float(fronts.max_tpl(hi * shape[None, :])[0])
            if value > target:
                break
            lo, best = hi, value
        else:
            return lo * shape, best
    while hi - lo > 1e-12:
        grid = np.linspace(lo, hi, 34)[1:-1]
        values = fronts.max_tpl(grid[:, None] * shape[None, :])
        ok = np.flatnonzero(values <= target)
        if ok.size:
            lo, best = float(grid[ok[-1]]), float(values[ok[-1]])
        bad = np.flatnonzero(values > target)
        hi = float(grid[bad[0]]) if bad.size else hi
    return lo * shape, best


def _tight_one(fronts: StreamFronts, index: int, target: float) -> np.ndarray:
    """The schedule with TPL_t = target at every step for prior ``index`` (see :func:`optimal_schedule`)."""
    T = fronts.length
    f = np.zeros(T + 1)  # f[t − 1] = FPL_t for t = 1..T, f[T] = 0 (no step T + 1)
    b = np.full(T, target)
    for _ in range(MAX_TIGHT_ROUNDS):
        b_new = np.full(T, target)
        b_new[:-1] = target - fronts.forward_gains(index, f[1:T])  # b_t = α − G_F,t(f_{t+1}), t < T
        f_new = np.zeros(T + 1)
        f_new[0] = target
        f_new[1:T] = target - fronts.backward_gains(index, b_new[:-1])  # f_t = α − G_B,t(b_{t−1}), t ≥ 2
        change = max(float(np.abs(b_new - b).max()), float(np.abs(f_new - f).max()))
        b, f = b_new, f_new
        if change <= _TIGHT_TOLERANCE * target:
            break
    eps = np.empty(T)
    eps[0] = b[0]
    eps[1:] = b[1:] - fronts.backward_gains(index, b[:-1])
    return np.maximum(eps, 0.0)


def _three_value(
    priors: Sequence[MarkovChainPrior], target: float, backward: object, forward: object
) -> tuple[float, float, float] | None:
    """Cao et al.'s (ε_1, ε_mid, ε_T) for stationary priors (None otherwise, or when ε_mid = 0)."""
    if not all(p.stationary_initial for p in priors):
        return None
    mid = max_eps_for_tpl(priors, target, unbounded=True, backward=backward, forward=forward)
    if mid <= 0:
        return None
    suprema = leakage_suprema(priors, mid, backward, forward)
    return float(suprema[:, 0].min()), mid, float(suprema[:, 1].min())


def optimal_schedule(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    target: float,
    length: int | None = None,
    backward: object = None,
    forward: object = None,
    secrets: Secrets | None = None,
) -> StreamSchedule:
    """Per-step ε_1..ε_T with max_t TPL_t ≤ ``target``, spending as much in total as found (docs/math.md §10).

    ``length``: the stream's T (the priors are taken over that many steps); ``None``: an unbounded
    stream (stationary priors), answered as (ε_1, ε_mid) with ε_mid at every later step.
    ``backward``, ``forward``: the matrices an attacker knows (:class:`puffer_core.stream.tpl.Directions`).

    Notation: G_B,t(α) = L(α; P^B_t) and G_F,t(α) = L(α; P^F) are what a leakage α at t ∓ 1 adds at t,
    so BPL_t = G_B,t(BPL_{t−1}) + ε_t, FPL_t = G_F,t(FPL_{t+1}) + ε_t and TPL_t = BPL_t + G_F,t(FPL_{t+1}).

    **The schedule meets the target (proof).**  (i) L(α; Q) never decreases in α, so by induction
    every BPL_t and FPL_t, hence every TPL_t, never decreases when any ε_s grows; so for a fixed
    shape s ≥ 0 the largest TPL of λ·s never decreases in λ.  (ii) The recursion is computed with
    every evaluation and every sum rounded up (:func:`puffer_core.stream.tpl.temporal_privacy_leakage`),
    so a computed TPL is never below the exact one.  (iii) Each candidate below is scaled by the
    largest λ ∈ [0, 1] whose *computed* max TPL is ≤ target (by (i) a bisection over λ is valid), so
    each candidate, and the one returned, meets the target; ``max_tpl`` is that computed value.
    Since the constant and the three-value schedules are candidates, the total returned is at least
    theirs, as computed.  (iv) Against the *exact* largest constant ε*: a computed max TPL exceeds the
    exact one by at most Δ ≤ 2T·(1e-14·max(α, 1) + 1e-300) + Σ_t s_t (per leakage evaluation and sum,
    the pads for the rounding of its logs and the 1e-300 pad below the normal range; s_t ≤ 2e-12, the
    far-node slacks of a non-stationary prior).  Every BPL_t and FPL_t carries +ε, so the exact TPL
    grows at least as fast as a constant ε: at ε* − Δ it is ≤ α − Δ and the computed one ≤ α, so the
    constant found is ≥ ε* − Δ − 1e-12·α and the total ≥ T·(ε* − Δ − 1e-12·α).  Only tiny targets
    feel it: at α = 1e-300 (P = [[.9, .1], [.2, .8]], T = 5) the pads exceed the target and the
    schedule is (1e-300, 0, 0, 0, 0), where the exact constant schedule totals 1.48e-300.

    **The candidates.**
    - *Constant*: :func:`puffer_core.stream.tpl.max_eps_for_tpl` over T steps.
    - *Three-value* (stationary priors): ε_mid = the largest constant ε with sup_t TPL_t ≤ α over an
      unbounded stream; α_B, α_F = sup BPL, sup FPL at ε_mid (least fixed points α = G(α) + ε_mid);
      ε_1 = α_B, ε_T = α_F, ε_t = ε_mid inside.  Then BPL_t = α_B for t < T (ε_1 starts the backward
      recursion at its fixed point) and FPL_t = α_F for t > 1, so TPL_1 = α_B + G_F(α_F) =
      α_B + α_F − ε_mid = sup TPL(ε_mid) ≤ α, and the same at every step: the schedule is tight
      everywhere when ε_mid meets the target exactly.  With Θ, ε_1 = min_θ α_B,θ and ε_T = min_θ α_F,θ
      (each prior's BPL then stays at most its α_B,θ).
    - *Tight*, for any prior (non-stationary ones too): the b_t = BPL_t and f_t = FPL_t with TPL_t = α
      at every t solve b_t = α − G_F,t(f_{t+1}) (b_T = α) and f_t = α − G_B,t(b_{t−1}) (f_1 = α); then
      ε_t = b_t − G_B,t(b_{t−1}) (ε_1 = b_1) reproduces them: by induction BPL_t = b_t, FPL_t = f_t
      (as ε_t = f_t − G_F,t(f_{t+1}) too), so TPL_t = b_t + G_F,t(f_{t+1}) = α at every t.  b ↦ f and
      f ↦ b are non-increasing maps, so iterating from f = 0 moves f up and b down monotonically to a
      fixed point (stopped after ``MAX_TIGHT_ROUNDS`` or when it settles; an unsettled iterate is only
      scaled down more by (iii)).  For a stationary prior the three-value schedule is such a fixed point.
      With Θ: the smallest ε_t over the priors' tight schedules (each prior's TPL stays ≤ α by (i)).
      A tight schedule cannot raise any single ε_t without breaking the target; no claim is made that
      no other schedule has a larger total.

    **Unbounded stream** (stationary priors): ε_mid as above and ε_1 = min_θ (α − G_F,θ(α_F,θ)) ≥ α_B
    (= α_B for one prior).  BPL_t ≤ max(ε_1, α_B) for every t (above the fixed point the recursion
    falls, as α − G_B(α) ≥ ε_mid there) and FPL_{t+1} = α_F (infinitely many future steps), so
    TPL_t ≤ max(ε_1, α_B,θ) + G_F,θ(α_F,θ) ≤ α for every θ.

    **Chosen secrets** (``secrets``, docs/math.md §16): the target is on TPL about the secret pairs at the
    protected steps.  The candidates are built as above (over every pair: the recursion carries every
    pair from step to step) and each is scaled by the largest λ — now possibly above 1 — whose computed
    restricted TPL meets the target, by the same monotonicity; the constant candidate is the largest
    constant ε for the restricted target.  An unbounded stream gets that constant at every step.
    """
    target = check_eps("target", target)
    if length is None:
        return _unbounded(prior_or_priors, target, backward, forward, secrets)
    length = check_whole("length", length)
    priors = stream_priors(prior_or_priors, finite=False)
    priors = stream_priors([p.with_length(length) for p in priors])
    fronts = stream_fronts(priors, backward, forward, secrets)
    if length == 1:
        one, value = _fit(fronts, np.array([target]), target)
        return StreamSchedule(one, target, value, False, "tight", float(one[0]), (float(one[0]),) * 3)
    constant = max_eps_for_tpl(priors, target, backward=backward, forward=forward, secrets=secrets)
    candidates: dict[str, tuple[np.ndarray, float]] = {}
    shape = np.min([_tight_one(fronts, i, target) for i in range(len(priors))], axis=0)
    candidates["tight"] = _fit(fronts, shape, target)
    cao = _three_value(priors, target, backward, forward)
    three = None
    if cao is not None:
        first, mid, last = cao
        schedule, value = _fit(fronts, np.concatenate([[first], np.full(length - 2, mid), [last]]), target)
        candidates["three-value"] = (schedule, value)
        three = (float(schedule[0]), float(schedule[1]) if length > 2 else mid, float(schedule[-1]))
    flat = np.full(length, constant)
    candidates["constant"] = (flat, float(fronts.max_tpl(flat[None, :])[0]))
    method = max(candidates, key=lambda name: candidates[name][0].sum())  # ties: the first (tight)
    schedule, value = candidates[method]
    return StreamSchedule(schedule, target, value, False, method, constant, three)


def _unbounded(prior_or_priors: object, target: float, backward: object, forward: object,
               secrets: Secrets | None = None) -> StreamSchedule:
    priors = stream_priors(prior_or_priors, finite=False)
    if not all(p.stationary_initial for p in priors):
        raise ValueError(
            "an unbounded stream needs priors with the stationary initial distribution (initial=None);"
            " give the stream's length for a non-stationary prior"
        )
    if secrets is not None and not as_secrets(secrets).is_all:
        mid = max_eps_for_tpl(priors, target, unbounded=True, backward=backward, forward=forward, secrets=secrets)
        value = tpl_supremum(priors, mid, backward, forward, secrets) if mid > 0 else 0.0
        return StreamSchedule(np.array([mid, mid]), target, value, True, "constant", mid, None)
    mid = max_eps_for_tpl(priors, target, unbounded=True, backward=backward, forward=forward)
    if mid <= 0:  # no constant ε keeps an endless stream finite: one release of ε = target, then nothing
        return StreamSchedule(np.array([target, 0.0]), target, target, True, "tight", 0.0, None)
    suprema = leakage_suprema(priors, mid, backward, forward)  # (sup BPL, sup FPL, G_F(sup FPL)) per prior
    first = float(np.min(target - suprema[:, 2]))
    while True:  # the subtraction may round up: step down until the bound below holds as computed
        bound = float(np.max(add_up(np.maximum(first, suprema[:, 0]), suprema[:, 2])))
        if bound <= target or first <= 0:
            break
        first = float(np.nextafter(first, -np.inf))
    three = (float(suprema[:, 0].min()), mid, mid)  # no last step: every step after the first has ε_mid
    return StreamSchedule(np.array([max(first, 0.0), mid]), target, bound, True, "tight", mid, three)
