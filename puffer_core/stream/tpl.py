"""Temporal privacy leakage of a stream: BPL, FPL and TPL (docs/math.md §10, [TPL]).

A *stream* releases r_t at every time t = 1..T from the entries at time t only (say a noisy
count of users in each state at t); each release M_t is ε_t-DP with respect to one entry.  A
user's entries are a Markov chain, so what r_s says about X_s also says something about X_t.

 **TPL** ([TPL], Cao, Yoshikawa, Xiao and Xiong).  With the backward matrix
``P^B_t[i, j] = Pr(X_{t−1}=j | X_t=i) = p_{t−1}[j]·P[j, i] / p_t[i]`` and the forward matrix
``P^F = P``::

    BPL_1 = ε_1,   BPL_t = L(BPL_{t−1}; P^B_t) + ε_t         (backward privacy leakage)
    FPL_T = ε_T,   FPL_t = L(FPL_{t+1}; P^F)  + ε_t          (forward privacy leakage)
    TPL_t = BPL_t + FPL_t − ε_t,        the stream leaks at most max_t TPL_t.

Why: given X_t the past outputs r_1..r_{t−1}, r_t and the future outputs r_{t+1}..r_T are
independent (Markov property), so ``log Pr[r | X_t=x] / Pr[r | X_t=x']`` splits into a past,
a present (≤ ε_t) and a future term.  The past term is
``log Σ_j P^B_t[x, j]·f(j) / Σ_j P^B_t[x', j]·f(j)`` with ``f(j) = Pr[r_1..r_{t−1} | X_{t−1}=j]``,
and any two values of f are within a factor e^{BPL_{t−1}} of each other; the largest such
ratio over all such f is :func:`leakage_function` (the maximum of a linear-fractional function
over a box is at a vertex: f takes two values, on a set S and off it).  The future term is the
same with P.

The leakage function and its front are :mod:`puffer_core.stream.fronts`; the supremum of an unbounded
stream and where it turns infinite, :mod:`puffer_core.stream.supremum`.  The
other bound, [C]'s translation, is :mod:`puffer_core.stream.bounds`; the output laws of the
releases are :mod:`puffer_core.mechanisms.laws`.

"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior, Theta
from ..secrets.values import ALL_SECRETS, Secrets, as_secrets
from ..validation import WORK_LIMIT_SECONDS, check_whole
from ..work import SECONDS_PER_UNIT, WorkCounter, WorkEstimate
from .checks import Directions, check_directions, check_row_stochastic, check_schedule, stream_priors
from .fronts import CHUNK_CELLS, LeakageFront, add_up, build_front

# what one front costs is counted in puffer_core.work's "front" units (K(K−1)/2·K per front), plus:
_FRONT_OVERHEAD_US = 5_000  # microseconds of interpreter work per front (what dominates small K)
_STEP_OVERHEAD_US = 150  # per step of a prior: both recursions' leakage calls (measured ~100 µs at K = 20)
_FRONT_BYTES = 12 * 8 * CHUNK_CELLS  # the arrays of one chunk of pairs (rows, ratios, order, prefix sums, masks)
_CONVERGED = 1e-12  # relative distance to π below which a non-stationary step uses the stationary front




# --------------------------------------------------------------------------------------------
# backward and forward matrices of a prior


def check_stream_prior(prior: object) -> MarkovChainPrior:
    if not isinstance(prior, MarkovChainPrior):
        raise ValueError(f"expected a MarkovChainPrior; got {type(prior).__name__}")
    return prior


def backward_from(previous: np.ndarray, current: np.ndarray, transition: np.ndarray) -> np.ndarray:
    """P^B[i, j] = previous[j]·P[j, i] / current[i]; rows of states with no mass at t become ``previous``."""
    joint = previous[None, :] * transition.T  # joint[i, j] = Pr(X_{t−1}=j, X_t=i)
    out = np.empty_like(joint)
    possible = current > 0
    out[possible] = joint[possible] / current[possible, None]
    out[~possible] = previous
    return out


def backward_matrix(prior: MarkovChainPrior, t: int | None = None) -> np.ndarray:
    """The backward matrix P^B_t[i, j] = Pr(X_{t−1}=j | X_t=i) of a prior (docs/math.md §10).

    ``P^B_t[i, j] = p_{t−1}[j]·P[j, i] / p_t[i]`` with p_t the marginal of X_t.  For a prior
    with the stationary initial distribution π it is the same at every step (``t`` may be
    omitted); otherwise it depends on t = 2..T.  A state with p_t[i] = 0 is no secret at t; its
    row is set to p_{t−1} so the matrix stays row-stochastic (the stream functions skip it).
    """
    prior = check_stream_prior(prior)
    if t is None:
        if not prior.stationary_initial:
            raise ValueError("this prior's initial distribution is not stationary: give the time step t = 2..T")
        pi = np.asarray(prior.initial)
        return backward_from(pi, pi, prior.transition)
    t = check_whole("t", t, minimum=2)
    if t > prior.length:
        raise ValueError(f"t = {t} is beyond the chain's length T = {prior.length}")
    marginals = prior.marginals(t)
    return backward_from(marginals[t - 2], marginals[t - 1], prior.transition)


def forward_matrix(prior: MarkovChainPrior) -> np.ndarray:
    """The forward matrix P^F[i, j] = Pr(X_{t+1}=j | X_t=i): the transition matrix P (docs/math.md §10)."""
    return np.array(check_stream_prior(prior).transition)


# --------------------------------------------------------------------------------------------
# BPL, FPL, TPL


def _recurse(fronts: Sequence[LeakageFront], slack: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """α_1 = ε_1, α_s = L_s(α_{s−1}) + slack_s + ε_s along the schedule (columns: steps; rows: schedules).

    Returns (α, gain) with gain_s = L_s(α_{s−1}) + slack_s (gain_1 = 0): what the neighbours add to
    step s, so that TPL = BPL + (the forward gain) needs no subtraction.  Every sum is rounded up.
    ``fronts[s − 1]`` and ``slack[s − 1]`` serve step s = 1..T−1 (0-based).  Once the front,
    the slack and ε stay the same for the rest and a step repeats its input exactly, every
    later step repeats it too (the map is deterministic), so the rest is filled at once.
    """
    n, steps = eps.shape
    out = np.empty((n, steps))
    gain = np.zeros((n, steps))
    out[:, 0] = eps[:, 0]
    same = np.zeros(steps, dtype=bool)  # same[s]: steps s..T−1 use one front, zero slack and one ε
    for s in range(steps - 2, 0, -1):
        same[s] = (
            fronts[s] is fronts[s - 1]
            and slack[s] == 0
            and slack[s - 1] == 0
            and np.array_equal(eps[:, s + 1], eps[:, s])
            and (s == steps - 2 or same[s + 1])
        )
    for s in range(1, steps):
        gain[:, s] = add_up(fronts[s - 1].leakage(out[:, s - 1]), slack[s - 1])
        out[:, s] = add_up(gain[:, s], eps[:, s])
        if s < steps - 1 and same[s] and np.array_equal(out[:, s], out[:, s - 1]):
            out[:, s + 1 :] = out[:, s : s + 1]
            gain[:, s + 1 :] = gain[:, s : s + 1]
            break
    return out, gain


@dataclass(frozen=True, eq=False)
class PriorFronts:
    """The fronts one prior needs for a stream of its length: backward per step, forward per step.

    ``secret_backward``, ``secret_forward``: the same fronts over the secret pairs only (docs/math.md §16),
    or None when every pair is a secret.
    """

    backward: list[LeakageFront]
    backward_slack: np.ndarray
    forward: list[LeakageFront]
    shortcut_steps: int
    secret_backward: list[LeakageFront] | None = None
    secret_forward: list[LeakageFront] | None = None


@dataclass(frozen=True, eq=False)
class _FrontPlan:
    """Which steps of a non-stationary prior need a backward front of their own (the marginals have not
    settled), decided before any front is built so that the work can be estimated and refused up front."""

    marginals: np.ndarray | None  # None: stationary start, one backward front serves every step
    pi: np.ndarray | None
    rhos: list[float | None]  # step t = 2..T: ρ_t when close enough to π for the stationary front, else None
    given_backward: bool = False  # a backward matrix was given: one front per support, as forward

    def fronts(self) -> int:
        """How many fronts :func:`prior_fronts` builds (an upper bound: forward fronts shared by support)."""
        if self.marginals is None:
            return 2
        supports = len({row.tobytes() for row in (self.marginals[:-1] > 0)}) if len(self.rhos) else 0
        if self.given_backward:
            return 2 * supports
        own = sum(rho is None for rho in self.rhos)
        return own + (own < len(self.rhos)) + supports


def _plan_fronts(prior: MarkovChainPrior, directions: Directions = Directions()) -> _FrontPlan:
    T = prior.length
    if prior.stationary_initial or T == 1:
        return _FrontPlan(None, None, [])
    marginals = prior.marginals()
    if directions.backward is not None:
        return _FrontPlan(marginals, None, [1.0] * (T - 1), given_backward=True)
    pi = prior.stationary_or_none
    if pi is None:
        return _FrontPlan(marginals, pi, [None] * (T - 1))
    # ρ_t = max(r_{t−1}/s_t, r_t/s_{t−1}), r and s the max and min of p_t/π, for the steps where p_{t−1}
    # and p_t have π's support (else no ρ: the step needs its own front)
    support = pi > 0
    same = np.all((marginals > 0) == support, axis=1)
    ratio = marginals[:, support] / pi[support]
    high, low = ratio.max(axis=1), ratio.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.maximum(high[:-1] / low[1:], high[1:] / low[:-1])
    settled = same[:-1] & same[1:] & (rho - 1.0 <= _CONVERGED)
    return _FrontPlan(marginals, pi, [float(r) if ok else None for r, ok in zip(rho, settled)])


def _front_seconds(k: int) -> float:
    """Estimated seconds of one leakage front over K states (its units times their rates)."""
    return _front_units(k) * SECONDS_PER_UNIT["front"] + _FRONT_OVERHEAD_US * SECONDS_PER_UNIT["overhead"]


def _front_units(k: int) -> float:
    """Front units of one front over K states: every unordered pair of rows, each sorted over its K elements."""
    return k * (k - 1) / 2 * k


def _front_estimate(priors: Sequence[MarkovChainPrior], plans: Sequence[_FrontPlan], restricted: bool = False
                    ) -> WorkEstimate:
    """The work of building these priors' fronts and running both recursions once (see :func:`tpl_estimate`);
    ``restricted``: the secret-pair fronts too (at most as many again)."""
    k = priors[0].n_states
    count = sum(plan.fronts() for plan in plans) * (2 if restricted else 1)
    steps = sum(max(p.length - 1, 0) for p in priors)
    units = {
        "front": count * _front_units(k),
        "overhead": count * _FRONT_OVERHEAD_US + steps * _STEP_OVERHEAD_US,
    }
    nbytes = _FRONT_BYTES + 3 * 8 * sum(p.length for p in priors) * k  # a chunk of pairs; marginals, ρ, the arrays
    each = _front_seconds(k)
    unsettled = max(sum(rho is None for rho in plan.rhos) for plan in plans)
    why = (
        f"; the chain's marginals are still away from its stationary distribution at {unsettled} steps, and each"
        " of those steps needs a front of its own"
        if unsettled
        else ""
    )
    priors_text = f", {len(priors)} priors" if len(priors) > 1 else ""
    dominant = f"{count} leakage fronts over K = {k} states{priors_text}, about {each:.2g} s each{why}"
    if unsettled:
        affordable = max(1, int(WORK_LIMIT_SECONDS / each) // max(1, len(priors)) - 3)
        largest = {"T": affordable + 1}
        advice = (
            f"start the chain from its stationary distribution, shorten the stream to about {affordable + 1} steps,"
            " or merge rarely used states"
        )
    else:
        per_prior = max(1, count // max(1, len(priors)))
        fits = 2
        while fits < k and len(priors) * per_prior * _front_seconds(fits + 1) <= WORK_LIMIT_SECONDS:
            fits += 1
        largest = {"K": fits}
        advice = f"use fewer priors in Θ, or merge rarely used states (K ≤ {fits} fits)"
    return WorkEstimate("this stream", units, nbytes, dominant, advice, largest, limit=WORK_LIMIT_SECONDS)


def tpl_estimate(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None,
    secrets: Secrets | None = None,
) -> WorkEstimate:
    """The work of the TPL of a stream over the prior's length (docs/math.md §10; cost: §2.1), before any work.

    Cheap (O(T·K), no front is built).  Counts "front" units, one per element of every pair of rows
    sorted while a leakage front is built (K(K−1)/2·K per front: every pair of states, each row of K
    elements), one front per distinct matrix (:class:`_FrontPlan`: two for a stationary start, one
    more per step until a non-stationary prior's marginals settle near π), plus the interpreter's
    share per front and per step of the two recursions.  ``largest`` is the longest stream ("T")
    when unsettled steps dominate, else the most states ("K") that fit.  The schedule searches
    (:func:`max_eps_for_tpl`, ``plan_stream``) build the same fronts and then run the recursions
    many times: this counts the fronts and one run.
    """
    priors = stream_priors(prior_or_priors)
    directions = check_directions(backward, forward, priors.n_states)
    restricted = _secret_pairs(as_secrets(secrets), priors.n_states) is not None
    return _front_estimate(priors, [_plan_fronts(p, directions) for p in priors], restricted)


def tpl_refusal(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None
) -> str | None:
    """Why TPL over the prior's length would be refused as out of reach (with the estimate), or None.

    Cheap (O(T·K), no front is built): :func:`temporal_privacy_leakage`, :func:`max_eps_for_tpl` and
    :func:`plan_stream` raise ValueError with this message (:func:`tpl_estimate`'s ``message``).  A
    stationary start needs two fronts; a non-stationary one also needs a front per step until its
    marginals settle near π.
    """
    estimate = tpl_estimate(prior_or_priors, backward, forward)
    return None if estimate.fits else estimate.message


def prepare_fronts(
    priors: Sequence[MarkovChainPrior], directions: Directions = Directions(), work: WorkCounter | None = None,
    secrets: Secrets = ALL_SECRETS,
) -> list[PriorFronts]:
    """Every prior's fronts (and their secret-pair versions), after checking that building them is within reach."""
    plans = [_plan_fronts(p, directions) for p in priors]
    pairs = _secret_pairs(secrets, priors[0].n_states)
    _front_estimate(priors, plans, pairs is not None).check()
    return [prior_fronts(p, plan, directions, work, pairs) for p, plan in zip(priors, plans)]


def _secret_pairs(secrets: Secrets, n_states: int) -> np.ndarray | None:
    """The secret pairs as a K×K matrix, or None when every pair is a secret (the fronts as they are)."""
    pairs = secrets.pair_matrix(n_states)
    return None if pairs[~np.eye(n_states, dtype=bool)].all() else pairs


def prior_fronts(
    prior: MarkovChainPrior,
    plan: _FrontPlan | None = None,
    directions: Directions = Directions(),
    work: WorkCounter | None = None,
    pairs: np.ndarray | None = None,
) -> PriorFronts:
    """The fronts of one prior; with ``pairs`` (a K×K matrix of secret pairs) their secret-pair versions too."""
    plan = _plan_fronts(prior, directions) if plan is None else plan
    every = _fronts_of(prior, plan, directions, work, None)
    if pairs is None:
        return every
    chosen = _fronts_of(prior, plan, directions, work, pairs)
    return PriorFronts(every.backward, every.backward_slack, every.forward, every.shortcut_steps,
                       chosen.backward, chosen.forward)


def _fronts_of(
    prior: MarkovChainPrior, plan: _FrontPlan, directions: Directions, work: WorkCounter | None,
    pairs: np.ndarray | None,
) -> PriorFronts:
    T = prior.length
    if T == 1:
        return PriorFronts([], np.zeros(0), [], 0)
    P = prior.transition if directions.forward is None else directions.forward
    cache: dict[tuple[str, bytes], LeakageFront] = {}

    def front(direction: str, matrix: np.ndarray, support: np.ndarray) -> LeakageFront:
        key = (direction, support.tobytes())
        if key not in cache:
            cache[key] = build_front(matrix, support, work, pairs)
        return cache[key]

    if plan.marginals is None:
        pi = np.asarray(prior.initial)
        support = pi > 0
        own = backward_from(pi, pi, prior.transition) if directions.backward is None else directions.backward
        back = front("backward", own, support)
        fwd = front("forward", P, support)
        return PriorFronts([back] * (T - 1), np.zeros(T - 1), [fwd] * (T - 1), 0)
    marginals, pi = plan.marginals, plan.pi
    support = marginals > 0
    forward = [front("forward", P, support[t - 1]) for t in range(1, T)]  # FPL_t uses the pairs possible at t
    if directions.backward is not None:
        backward = [front("backward", directions.backward, support[t - 1]) for t in range(2, T + 1)]
        return PriorFronts(backward, np.zeros(T - 1), forward, 0)
    stationary_front: LeakageFront | None = None
    backward = []
    slack = np.zeros(T - 1)
    shortcut = 0
    for t, rho in zip(range(2, T + 1), plan.rhos):
        previous, current = marginals[t - 2], marginals[t - 1]
        if rho is not None:
            # P^B_t = P^B_π entrywise times p_{t−1}[j]/π[j] · π[i]/p_t[i] ∈ [1/ρ, ρ], so every
            # ratio (1 + c·Q_t[i,S]) / (1 + c·Q_t[i',S]) is at most ρ² times the stationary one
            if stationary_front is None:
                stationary_front = build_front(backward_from(pi, pi, prior.transition), pi > 0, work, pairs)
            backward.append(stationary_front)
            slack[t - 2] = 2.0 * math.log(max(rho, 1.0)) + 1e-15  # rounding in ρ itself: a few ulps more
            shortcut += 1
        else:
            backward.append(build_front(backward_from(previous, current, prior.transition), support[t - 1], work,
                                        pairs))
    return PriorFronts(backward, slack, forward, shortcut)


@dataclass(frozen=True, eq=False)
class TemporalLeakage:
    """BPL, FPL and TPL of a stream at every time step (docs/math.md §10, [TPL]); arrays of length T.

    For one prior ``tpl[t] = bpl[t] + fpl[t] − eps[t]``.  For a set Θ each array is the maximum
    over the priors, taken separately, so ``tpl`` (the max of each prior's TPL) can be below
    ``bpl + fpl − eps``.  The stream leaks at most :attr:`max_tpl` about any entry.
    ``shortcut_steps`` counts the steps of a non-stationary prior that has reached its
    stationary distribution to within 1e-12 and uses the stationary backward matrix plus the
    proven slack 2·log ρ_t (≤ 2e-12, plus 1e-15 for rounding) instead of its own (0 for stationary priors; the largest
    count over Θ).  With chosen ``secrets`` (docs/math.md §16) ``bpl`` and ``fpl`` stay the recursions over
    every pair (what the attacker carries from step to step, protected or not), and ``tpl[t]`` is the
    leakage about the secret pairs of a protected entry t — ε_t plus what the past and the future add to
    those pairs only — and 0 at an entry that is not protected.
    """

    eps: np.ndarray
    bpl: np.ndarray
    fpl: np.ndarray
    tpl: np.ndarray
    shortcut_steps: int = 0
    secrets: Secrets = ALL_SECRETS

    def __post_init__(self) -> None:
        for name in ("eps", "bpl", "fpl", "tpl"):
            value = np.array(getattr(self, name), dtype=float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def max_tpl(self) -> float:
        return float(self.tpl.max())

    @property
    def worst_entry(self) -> int:
        """The (0-based) time step with the largest TPL."""
        return int(np.argmax(self.tpl))


def backward_privacy_leakage(backward: object, eps: Sequence[float]) -> np.ndarray:
    """BPL_1..BPL_T for the schedule ``eps`` with one backward matrix at every step (docs/math.md §10).

    ``BPL_1 = ε_1`` and ``BPL_t = L(BPL_{t−1}; backward) + ε_t`` (:func:`leakage_function`);
    ``backward`` is K×K row-stochastic, every pair of its rows counts as a secret.
    """
    front = build_front(check_row_stochastic("the backward matrix", backward))
    schedule = check_schedule(eps)
    return _recurse([front] * (schedule.size - 1), np.zeros(schedule.size - 1), schedule[None, :])[0][0]


def forward_privacy_leakage(forward: object, eps: Sequence[float]) -> np.ndarray:
    """FPL_1..FPL_T for the schedule ``eps``: ``FPL_T = ε_T``, ``FPL_t = L(FPL_{t+1}; forward) + ε_t``."""
    front = build_front(check_row_stochastic("the forward matrix", forward))
    schedule = check_schedule(eps)
    return _recurse([front] * (schedule.size - 1), np.zeros(schedule.size - 1), schedule[None, ::-1])[0][0][::-1]


def leakages(
    priors: list[MarkovChainPrior], schedules: np.ndarray, prepared: list[PriorFronts],
    protected: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(BPL, FPL, TPL) of a batch of schedules (n, T), each the max over Θ per step.

    Chosen secrets (docs/math.md §16): BPL and FPL run over every pair; TPL at a protected step t is
    ε_t + L_E(BPL_{t−1}; P^B_t) + L_E(FPL_{t+1}; P^F) with L_E over the secret pairs (the fronts'
    ``secret_*`` versions), and 0 where ``protected`` (a boolean per step) is False.
    """
    bpl = np.zeros(schedules.shape)
    fpl = np.zeros(schedules.shape)
    tpl = np.zeros(schedules.shape)
    for fronts in prepared:
        backward, back_gain = _recurse(fronts.backward, fronts.backward_slack, schedules)
        forward, forward_gain = _recurse(fronts.forward[::-1], np.zeros(len(fronts.forward)), schedules[:, ::-1])
        forward, forward_gain = forward[:, ::-1], forward_gain[:, ::-1]
        bpl = np.maximum(bpl, backward)
        fpl = np.maximum(fpl, forward)
        if fronts.secret_backward is None and protected is None:
            tpl = np.maximum(tpl, add_up(backward, forward_gain))  # BPL + FPL − ε, with FPL − ε kept exactly
            continue
        if fronts.secret_backward is not None and fronts.secret_forward is not None:
            back_gain = np.zeros(schedules.shape)
            back_gain[:, 1:] = add_up(_batch_gains(fronts.secret_backward, backward[:, :-1]), fronts.backward_slack)
            forward_gain = np.zeros(schedules.shape)
            forward_gain[:, :-1] = _batch_gains(fronts.secret_forward, forward[:, 1:])
        value = add_up(add_up(back_gain, schedules), forward_gain)
        if protected is not None:
            value[:, ~protected] = 0.0
        tpl = np.maximum(tpl, value)
    return bpl, fpl, tpl


def _batch_gains(fronts: Sequence[LeakageFront], alphas: np.ndarray) -> np.ndarray:
    """fronts[s].leakage(alphas[:, s]) for every column s of a batch (n, S), one call per distinct front."""
    out = np.empty(alphas.shape)
    groups: dict[int, list[int]] = {}
    for s, front in enumerate(fronts):
        groups.setdefault(id(front), []).append(s)
    for members in groups.values():
        out[:, members] = fronts[members[0]].leakage(alphas[:, members].reshape(-1)).reshape(alphas.shape[0], -1)
    return out


def temporal_privacy_leakage(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: object,
    backward: object = None,
    forward: object = None,
    work: WorkCounter | None = None,
    secrets: Secrets | None = None,
) -> TemporalLeakage:
    """BPL, FPL and TPL of a stream over a prior's chain (docs/math.md §10, [TPL]).

    ``eps`` is one number (the same ε at every step) or one ε_t ≥ 0 per time step
    t = 1..T (T = the prior's length).  The backward matrix follows the prior
    (:func:`backward_matrix`: time-varying when the initial distribution is not stationary),
    the forward matrix is the transition matrix; ``backward`` and ``forward`` replace them by
    matrices of the user's (:class:`Directions`: an attacker who knows only one direction).  A pair
    (x, x') counts at step t when both have positive probability p_t.  For a set Θ of priors (same
    length) every value is the maximum over the priors.  Every sum is rounded up, so no value is
    below the exact recursion.  Cost: one O(K³ log K) front per distinct matrix, then
    O(T × front size); a stream whose fronts would take longer than ``WORK_LIMIT_SECONDS`` is
    refused up front with the estimate (:func:`tpl_estimate`).  Given ``work``, the front units
    performed are added to it (never more than the estimate's).  ``secrets``: TPL about the chosen
    pairs at the protected steps (docs/math.md §16; see :class:`TemporalLeakage`).
    """
    priors = stream_priors(prior_or_priors)
    directions = check_directions(backward, forward, priors.n_states)
    schedule = check_schedule(eps, priors[0].length)
    chosen = as_secrets(secrets).check(priors.n_states)
    prepared = prepare_fronts(priors, directions, work, chosen)
    protected = None if chosen.positions is None and chosen.rule is None else chosen.position_mask(priors[0].length)
    bpl, fpl, tpl = leakages(priors, schedule[None, :], prepared, protected)
    shortcut = max(f.shortcut_steps for f in prepared)
    return TemporalLeakage(schedule, bpl[0], fpl[0], tpl[0], shortcut, chosen)


@dataclass(frozen=True, eq=False)
class StreamFronts:
    """A stream's leakage fronts, built once for its priors and :class:`Directions` (see :func:`stream_fronts`).

    Evaluates BPL, FPL and TPL of many schedules at once, and one step of either recursion — what
    a schedule search (:mod:`puffer_core.stream.schedule`) needs.
    """

    priors: Theta
    directions: Directions
    prepared: tuple[PriorFronts, ...]
    secrets: Secrets = ALL_SECRETS

    @property
    def length(self) -> int:
        return self.priors[0].length

    @property
    def protected(self) -> np.ndarray | None:
        """The protected steps (None: every step)."""
        if self.secrets.positions is None and self.secrets.rule is None:
            return None
        return self.secrets.position_mask(self.length)

    def leakages(self, schedules: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(BPL, FPL, TPL) of a batch of schedules (n, T), each the max over Θ per step (rounded up)."""
        batch = np.atleast_2d(np.asarray(schedules, dtype=float))
        if batch.ndim != 2 or batch.shape[1] != self.length:
            raise ValueError(f"give schedules of T = {self.length} steps as an (n, T) array")
        return leakages(list(self.priors), batch, list(self.prepared), self.protected)

    def max_tpl(self, schedules: object) -> np.ndarray:
        """max_t TPL_t of each schedule of a batch (n, T)."""
        return self.leakages(schedules)[2].max(axis=1)

    def backward_gains(self, index: int, alphas: object) -> np.ndarray:
        """What BPL_{t−1} = α_t adds to BPL_t under prior ``index``, for t = 2..T: L(α_t; P^B_t) + slack_t.

        ``alphas`` holds T − 1 values (one per step t = 2..T); steps sharing a front are evaluated together.
        """
        fronts = self.prepared[index]
        gains = front_gains(fronts.backward, np.asarray(alphas, dtype=float))
        return add_up(gains, fronts.backward_slack)

    def forward_gains(self, index: int, alphas: object) -> np.ndarray:
        """What FPL_{t+1} = α_t adds to FPL_t under prior ``index``, for t = 1..T−1: L(α_t; P^F)."""
        return front_gains(self.prepared[index].forward, np.asarray(alphas, dtype=float))


def front_gains(fronts: Sequence[LeakageFront], alphas: np.ndarray) -> np.ndarray:
    """fronts[i].leakage(alphas[i]) for every i, one call per distinct front."""
    if alphas.shape != (len(fronts),):
        raise ValueError(f"give one value per step ({len(fronts)}); got shape {alphas.shape}")
    out = np.empty(len(fronts))
    groups: dict[int, list[int]] = {}
    for i, front in enumerate(fronts):
        groups.setdefault(id(front), []).append(i)
    for members in groups.values():
        out[members] = fronts[members[0]].leakage(alphas[members])
    return out


def stream_fronts(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None,
    secrets: Secrets | None = None,
) -> StreamFronts:
    """The fronts of a finite stream over the priors' length (refused up front when out of reach, as TPL is);
    ``secrets``: TPL about the chosen pairs at the protected steps (docs/math.md §16)."""
    priors = stream_priors(prior_or_priors)
    directions = check_directions(backward, forward, priors.n_states)
    chosen = as_secrets(secrets).check(priors.n_states)
    return StreamFronts(priors, directions, tuple(prepare_fronts(priors, directions, None, chosen)), chosen)

