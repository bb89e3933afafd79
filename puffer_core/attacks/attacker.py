"""An attacker for realistic sizes: lower bounds on the true leakage (docs/math.md §11).

The exact audit (docs/math.md §9) enumerates K^T sequences and stops at toy sizes.  Beyond
them an attack measures how tight a reported bound is: for a Markov chain prior and a
mechanism whose output law given the sequence is known, the attacker's posterior log-odds of
X_t = x against X_t = x' after seeing an output ω moves by

    log Pr[ω | X_t = x] − log Pr[ω | X_t = x']          (the prior odds cancel),

computed exactly here.  The true leakage is the largest such shift over t, pairs, priors and
outputs, so the shift of *any* output is a lower bound on it; a search over outputs (random
draws from the mechanism, then a climb that changes one part of the output at a time while
the log-odds grow) makes the lower bound large.  A user sees
**lower bound (attack) ≤ truth ≤ reported bound**, with the seed that reproduces the attack.

Two kinds of release:

- **Streams** (docs/math.md §10): r_t ~ emission_t[X_t, ·] at every step (the other users'
  data known: the DP neighbour).  Pr[ω | X_t = x] comes from one forward–backward pass over the
  chain in log space, O(T·K²); the climb re-chooses one r_s at a time, each sweep one pass.
- **A histogram of one user's whole sequence**, with discretised Laplace noise on every count
  or the exponential mechanism (top-k).  The output law depends on the sequence only through
  its count vector n, so Pr[ω | X_t = x] = Σ_n Pr[n, X_t = x]·Pr[ω | n] / p_t(x), with
  Pr[n, X_t = x] from a dynamic program over (step, partial counts, state) in log space.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..mechanisms.laws import ClampedDiscreteLaplace, ExponentialRanking, histogram_law, log_emissions
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import WORK_LIMIT_SECONDS, check_eps, check_whole
from ..work import FORWARD_BACKWARD, SECONDS_PER_UNIT, WorkCounter, WorkEstimate

MAX_HISTOGRAM_CELLS = 5_000_000  # (T+1)^(K−1) count cells × K² of the histogram dynamic program
MAX_RANKINGS = 10_000
_IMPROVEMENT = 1e-12  # a climb step must raise the log-odds by more than this
_BATCH_CELLS = 2_000_000  # outputs × T × K log-probabilities per forward–backward batch
MAX_STREAM_CELLS = 20_000_000  # T × K of one stream attack
# the interpreter's share of a stream attack, in microseconds per step: drawing the outputs, one step of a
# batch's forward or backward pass, one step of a climbing sweep (its three loops)
_SAMPLE_US = 20.0
_PASS_STEP_US = 10.0
_SWEEP_STEP_US = 25.0
_OUTPUT_CELLS = 4_000_000  # outputs × count cells × K evaluated at once


@dataclass(frozen=True)
class Attack:
    """The best attack found: a lower bound on the true leakage (docs/math.md §11).

    ``lower`` = log Pr[output | X_entry = pair[0]] − log Pr[output | X_entry = pair[1]] under
    prior ``prior_index``, exact for the ``output`` found (per-step output indices of a stream;
    the noisy counts or the ranking of a histogram release).  ``seed`` reproduces the search.
    The leakage is never negative (some output is at least as likely under x as under x'), so
    ``lower`` starts at 0 with no entry, pair or output — also the answer when no entry has two
    possible states (no secret).
    """

    lower: float
    entry: int | None
    pair: tuple[int, int] | None
    prior_index: int | None
    output: tuple[int, ...]
    seed: int
    draws: int

    def describe(self, truth: float | None = None, bound: float | None = None) -> str:
        """"lower ≤ truth ≤ bound" in words, with the seed."""
        text = f"attack (seed {self.seed}): ε ≥ {self.lower:.4g}"
        if truth is not None:
            text += f" ≤ exact {truth:.4g}"
        if bound is not None:
            text += f" ≤ reported bound {bound:.4g}"
        return text


def _logs(values: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(values)


def _lse(values: np.ndarray, axis: int) -> np.ndarray:
    """log Σ exp along ``axis``; −inf when every term is −inf (no NaN)."""
    top = values.max(axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(values - safe).sum(axis=axis, keepdims=True)) + safe
    return np.squeeze(out, axis=axis)


def _shifts(loglik: np.ndarray, possible: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row (and entry): the largest log-odds shift over ordered pairs of possible states, and the pair.

    ``loglik[..., x]`` = log Pr[ω | X = x]; ``possible[..., x]`` = the state has prior mass.
    The shift is −inf when fewer than two states are possible or the output is impossible
    under every possible state, +inf when it is possible under x and impossible under x'.
    """
    possible = np.broadcast_to(possible, loglik.shape)
    high = np.where(possible, loglik, -np.inf)
    x = high.argmax(axis=-1)
    low = np.where(possible, loglik, np.inf)
    np.put_along_axis(low, x[..., None], np.inf, axis=-1)  # x' ≠ x
    xp = low.argmin(axis=-1)
    top = np.take_along_axis(high, x[..., None], -1)[..., 0]
    bottom = np.take_along_axis(low, xp[..., None], -1)[..., 0]
    with np.errstate(invalid="ignore"):
        shift = top - bottom
    shift = np.where(np.isneginf(top) | np.isposinf(bottom) | np.isnan(shift), -np.inf, shift)
    return shift, x, xp


def _secret_shifts(loglik: np.ndarray, possible: np.ndarray, pairs: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_shifts` over the secret pairs only (a K×K boolean matrix, docs/math.md §16; None: every pair)."""
    if pairs is None:
        return _shifts(loglik, possible)
    possible = np.broadcast_to(possible, loglik.shape)
    xs, xps = np.nonzero(pairs)
    top = np.where(possible[..., xs], loglik[..., xs], -np.inf)
    bottom = np.where(possible[..., xps], loglik[..., xps], np.inf)
    with np.errstate(invalid="ignore"):
        shift = top - bottom
    shift = np.where(np.isneginf(top) | np.isposinf(bottom) | np.isnan(shift), -np.inf, shift)
    best = shift.argmax(axis=-1)
    value = np.take_along_axis(shift, best[..., None], -1)[..., 0]
    return value, xs[best], xps[best]


def _value_pairs(secrets: object, n_states: int) -> tuple[np.ndarray | None, Secrets]:
    """The secret pairs (None: every pair) and the checked secrets; the attacker targets value pairs."""
    chosen = as_secrets(secrets)
    pairs = chosen.pair_matrix(n_states)
    return (None if pairs[~np.eye(n_states, dtype=bool)].all() else pairs), chosen


# --------------------------------------------------------------------------------------------
# streams


def _stream_joint(
    prior: MarkovChainPrior, log_laws: list[np.ndarray], outputs: np.ndarray, work: WorkCounter | None = None
) -> np.ndarray:
    """log Pr[ω, X_t = x] for a batch of outputs (n, T): shape (n, T, K), forward–backward in log space."""
    n, T = outputs.shape
    if work is not None:
        work.add(FORWARD_BACKWARD, 2.0 * n * (T - 1) * prior.n_states**2)
    log_p = _logs(prior.transition)
    emit = np.stack([log_laws[t][:, outputs[:, t]].T for t in range(T)], axis=1)  # (n, T, K)
    fwd = np.empty_like(emit)
    bwd = np.zeros_like(emit)
    fwd[:, 0] = _logs(np.asarray(prior.initial))[None, :] + emit[:, 0]
    for t in range(1, T):
        fwd[:, t] = _lse(fwd[:, t - 1, :, None] + log_p[None], axis=1) + emit[:, t]
    for t in range(T - 2, -1, -1):
        bwd[:, t] = _lse(log_p[None] + (emit[:, t + 1] + bwd[:, t + 1])[:, None, :], axis=2)
    return fwd + bwd


def stream_log_likelihoods(prior: MarkovChainPrior, emissions: object, outputs: Sequence[int]) -> np.ndarray:
    """log Pr[r_1..r_T | X_t = x] for every step t and state x, shape (T, K) (docs/math.md §11).

    ``outputs`` holds one output index per step (columns of the emissions); ``emissions`` is one
    K×O matrix or law (:mod:`puffer_core.mechanisms.laws`) or a list of one per step.  States with no
    prior mass at t are −inf.
    """
    if not isinstance(prior, MarkovChainPrior):
        raise ValueError(f"expected a MarkovChainPrior; got {type(prior).__name__}")
    log_laws = log_emissions(emissions, prior.n_states, prior.length)
    out = _check_stream_outputs(outputs, log_laws)
    marginals = prior.marginals()
    joint = _stream_joint(prior, log_laws, out[None, :])[0]
    return np.where(marginals > 0, joint - _logs(np.where(marginals > 0, marginals, 1.0)), -np.inf)


def _check_stream_outputs(outputs: object, laws: list[np.ndarray]) -> np.ndarray:
    out = np.asarray(outputs)
    if out.shape != (len(laws),) or not np.issubdtype(out.dtype, np.integer):
        raise ValueError(f"give one whole output index per time step ({len(laws)} of them); got {outputs!r}")
    sizes = np.array([law.shape[1] for law in laws])
    if np.any(out < 0) or np.any(out >= sizes):
        t = int(np.flatnonzero((out < 0) | (out >= sizes))[0])
        raise ValueError(f"output {out[t]} at step {t + 1} is not one of the {sizes[t]} outputs of that step")
    return out.astype(np.int64)


def _sample_streams(
    prior: MarkovChainPrior, log_laws: list[np.ndarray], n: int, rng: np.random.Generator
) -> np.ndarray:
    """n output sequences drawn from the stream over sequences drawn from the prior, shape (n, T)."""
    laws = [np.exp(law - law.max(axis=1, keepdims=True)) for law in log_laws]  # rows up to a factor: _draw scales
    T = prior.length
    state = _draw(np.broadcast_to(np.asarray(prior.initial), (n, prior.n_states)), rng)
    outputs = np.empty((n, T), dtype=np.int64)
    for t in range(T):
        if t > 0:
            state = _draw(prior.transition[state], rng)
        outputs[:, t] = _draw(laws[t][state], rng)
    return outputs


def _draw(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of probabilities (inverse CDF)."""
    cdf = np.cumsum(rows, axis=1)
    u = rng.random(rows.shape[0])[:, None] * cdf[:, -1:]
    return np.minimum((cdf <= u).sum(axis=1), rows.shape[1] - 1)


def _climb_stream(
    prior: MarkovChainPrior,
    log_laws: list[np.ndarray],
    outputs: np.ndarray,
    entry: int,
    pair: tuple[int, int],
    max_sweeps: int,
    work: WorkCounter | None = None,
) -> np.ndarray:
    """Coordinate ascent on log Pr[ω, X_entry = x] − log Pr[ω, X_entry = x'] over one r_s at a time.

    Each sweep: backward messages for the current ω (both clamps), then a forward pass that
    picks the best r_s given the already-updated past and the unchanged future.
    """
    T, K = prior.length, prior.n_states
    log_p = _logs(prior.transition)
    clamp = np.full((2, K), -np.inf)
    clamp[0, pair[0]] = 0.0
    clamp[1, pair[1]] = 0.0
    out = outputs.copy()
    per_sweep = 2.0 * sum((2 * K + law.shape[1]) * K for law in log_laws)  # both clamps: backward, scores, forward
    for _ in range(max_sweeps):
        if work is not None:
            work.add(FORWARD_BACKWARD, per_sweep)
        bwd = np.zeros((2, T, K))
        for s in range(T - 2, -1, -1):
            nxt = log_laws[s + 1][:, out[s + 1]][None, :] + bwd[:, s + 1]
            if s + 1 == entry:
                nxt = nxt + clamp
            bwd[:, s] = _lse(log_p[None] + nxt[:, None, :], axis=2)
        fwd = np.broadcast_to(_logs(np.asarray(prior.initial)), (2, K)).copy()
        changed = False
        for s in range(T):
            base = fwd + bwd[:, s] + (clamp if s == entry else 0.0)
            scores = _lse(base[:, :, None] + log_laws[s][None], axis=1)  # (2, O): log Pr[ω with r_s = r, clamp]
            with np.errstate(invalid="ignore"):
                gain = scores[0] - scores[1]
            gain = np.where(np.isnan(gain), -np.inf, gain)
            best = int(np.argmax(gain))
            if gain[best] > gain[out[s]] + _IMPROVEMENT:
                out[s] = best
                changed = True
            if s < T - 1:
                here = fwd + log_laws[s][:, out[s]][None, :] + (clamp if s == entry else 0.0)
                fwd = _lse(here[:, :, None] + log_p[None], axis=1)
        if not changed:
            break
    return out


def attack_stream(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    emissions: object,
    seed: int = 0,
    draws: int = 200,
    restarts: int = 4,
    max_sweeps: int = 20,
    work: WorkCounter | None = None,
    secrets: Secrets | None = None,
) -> Attack:
    """The largest posterior log-odds shift found for a stream (docs/math.md §10, §11); ``secrets``: only the
    chosen value pairs at the protected entries are attacked (docs/math.md §16).

    ``draws`` outputs are drawn from the stream over sequences drawn from each prior; the
    ``restarts`` best (with distinct entry and pair) are climbed, changing one r_s at a time
    while the log-odds of their entry and pair grow.  Every value is exact for its output, so
    the result never exceeds the true leakage.  Refused up front when :func:`stream_attack_estimate`
    does not fit; given ``work``, the forward–backward units performed are added to it.
    """
    priors = as_theta(prior_or_priors, "the attacker", same_length=True)
    seed = check_whole("seed", seed, minimum=0)
    draws = check_whole("draws", draws)
    restarts = check_whole("restarts", restarts)
    max_sweeps = check_whole("max_sweeps", max_sweeps)
    k, T = priors[0].n_states, priors[0].length
    if k * T > MAX_STREAM_CELLS:
        raise ValueError(
            f"a stream of T = {T} steps over {k} states needs T × K = {k * T:.3g} log-probabilities per"
            f" output; the attack is limited to {MAX_STREAM_CELLS:.0e} (shorten the stream)"
        )
    log_laws = log_emissions(emissions, k, T)
    pairs, chosen = _value_pairs(secrets, k)
    protected = chosen.position_mask(T)
    stream_attack_estimate(k, T, len(priors), draws, restarts, max_sweeps,
                           max(law.shape[1] for law in log_laws)).check()
    batch = max(1, _BATCH_CELLS // (k * T))
    rng = np.random.default_rng(seed)
    best = Attack(0.0, None, None, None, (), seed, draws)
    for index, prior in enumerate(priors):
        marginals = prior.marginals()
        possible = marginals > 0
        log_marg = _logs(np.where(possible, marginals, 1.0))
        outputs = _sample_streams(prior, log_laws, draws, rng)
        found: list[tuple[float, int, int, tuple[int, int]]] = []  # (shift, draw, entry, pair)
        for start in range(0, draws, batch):
            chunk = outputs[start : start + batch]
            shift, x, xp = _secret_shifts(_stream_joint(prior, log_laws, chunk, work) - log_marg[None],
                                          possible[None], pairs)
            shift = np.where(protected[None, :], shift, -np.inf)
            t = shift.argmax(axis=1)
            for r, tr in enumerate(t):
                found.append((float(shift[r, tr]), start + r, int(tr), (int(x[r, tr]), int(xp[r, tr]))))
        found.sort(key=lambda f: -f[0])
        seen: set[tuple[int, tuple[int, int]]] = set()
        for value, row, t, pair in found:
            if value == -math.inf or len(seen) == restarts:
                break
            if (t, pair) in seen:
                continue
            seen.add((t, pair))
            climbed = _climb_stream(prior, log_laws, outputs[row], t, pair, max_sweeps, work)
            joint = _stream_joint(prior, log_laws, climbed[None], work)[0]
            value = _pair_shift(joint[t] - log_marg[t], pair)
            if value > best.lower:
                best = Attack(value, t, pair, index, tuple(int(v) for v in climbed), seed, draws)
    return best


def stream_attack_estimate(k: int, length: int, priors: int = 1, draws: int = 200, restarts: int = 4,
                           max_sweeps: int = 20, outputs: int | None = None) -> WorkEstimate:
    """The work of :func:`attack_stream` (docs/math.md §11; cost: §2.1), before any of it: K states, T = ``length``.

    Counts "forward-backward" units, one per (state, state) cell of one step of a pass in log space:
    2·(T−1)·K² per drawn output (forward and backward), the same per climbed output's final pass, and
    per climbing sweep 2·T·(2K² + K·O) (both clamps; O = ``outputs`` per step, K when not given);
    plus the interpreter's share per step of the sampling, of each batch's passes and of each sweep.
    Every climb is counted at ``max_sweeps`` sweeps (it may stop earlier).  ``largest`` holds the
    longest stream ("T") and the most draws ("draws") that fit with the rest unchanged.
    """
    k, length, priors = check_whole("k", k), check_whole("length", length), check_whole("priors", priors)
    draws, restarts = check_whole("draws", draws, minimum=0), check_whole("restarts", restarts)
    max_sweeps = check_whole("max_sweeps", max_sweeps)
    outputs = None if outputs is None else check_whole("outputs", outputs)
    units, overhead = _stream_attack_units(k, length, draws, restarts, max_sweeps, outputs)

    def fits(steps: int, n_draws: int) -> bool:
        return _attack_seconds(*_stream_attack_units(k, steps, n_draws, restarts, max_sweeps, outputs),
                               priors) <= WORK_LIMIT_SECONDS

    steps = _largest_fitting(lambda n: fits(n, draws), length)
    most_draws = _largest_fitting(lambda n: fits(length, n), max(draws, 1 << 20))
    plural = "s" if priors > 1 else ""
    return WorkEstimate(
        "this attack",
        {"forward-backward": priors * units, "overhead": priors * overhead},
        8.0 * (6 * _BATCH_CELLS + 3 * _BATCH_CELLS * k / max(length, 1) + length * (draws + 4 * k)),
        f"{priors} prior{plural} of K = {k} states over T = {length} steps with {draws} draws and {restarts} climbs"
        f" of up to {max_sweeps} sweeps, each draw and sweep a forward–backward pass over T·K² cells",
        f"Shorten the stream to about {steps} steps, use fewer draws (up to {most_draws} fit), or merge rarely"
        " used states",
        {"T": steps, "draws": most_draws},
        limit=WORK_LIMIT_SECONDS,
    )


def _stream_attack_units(k: int, length: int, draws: int, restarts: int, max_sweeps: int,
                         outputs: int | None) -> tuple[float, float]:
    """(forward-backward units, overhead microseconds) of one prior's stream attack."""
    o = k if outputs is None else outputs
    passes = 2.0 * max(length - 1, 0) * k * k * (draws + restarts)
    climbs = restarts * max_sweeps * 2.0 * length * (2 * k + o) * k
    batches = math.ceil(draws / max(1, _BATCH_CELLS // max(1, k * length))) + restarts
    overhead = length * (_SAMPLE_US * (1 + draws / 1000) + 2 * _PASS_STEP_US * batches
                         + restarts * max_sweeps * _SWEEP_STEP_US)
    return passes + climbs, overhead


def _attack_seconds(units: float, overhead: float, priors: int) -> float:
    return priors * (units * SECONDS_PER_UNIT["forward-backward"] + overhead * SECONDS_PER_UNIT["overhead"])


def _largest_fitting(fits: Callable[[int], bool], most: int) -> int:
    """The largest n in 0..most with fits(n) (fits is monotone: more n, more work), by bisection."""
    if fits(most):
        return most
    low, high = 0, most  # fits(low) or low = 0; not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def stream_attack_refusal(k: int, length: int, priors: int = 1, draws: int = 200, restarts: int = 4,
                          max_sweeps: int = 20) -> str | None:
    """Why a stream attack of this size would be refused (the estimate and what to change), or None."""
    estimate = stream_attack_estimate(k, length, priors, draws, restarts, max_sweeps)
    return None if estimate.fits else estimate.message


def _pair_shift(loglik: np.ndarray, pair: tuple[int, int]) -> float:
    top, bottom = loglik[pair[0]], loglik[pair[1]]
    if np.isneginf(top):
        return -math.inf
    if np.isneginf(bottom):
        return math.inf
    return float(top - bottom)


# --------------------------------------------------------------------------------------------
# a histogram of one user's whole sequence


def _count_grid(prior: MarkovChainPrior) -> tuple[int, ...]:
    k, T = prior.n_states, prior.length
    cells = (T + 1) ** (k - 1)
    if cells * k * k > MAX_HISTOGRAM_CELLS:
        raise ValueError(
            f"the histogram attack tracks every count vector: {k} states over T = {T} steps need"
            f" (T+1)^(K−1)·K² = {cells * k * k:.3g} cells, more than {MAX_HISTOGRAM_CELLS:.0e}"
            " (use fewer states or a shorter chain)"
        )
    return (T + 1,) * (k - 1)


def _count_step(log_a: np.ndarray, log_p: np.ndarray, grid_axes: int) -> np.ndarray:
    """One step of the count program: log_a[..., n, y] = log Pr[counts so far = n, X_s = y] → step s+1.

    The last ``grid_axes`` axes before the state axis count the first K−1 states; leading axes
    are a batch.  With every transition positive the sum over y is a matrix product after
    shifting each cell by its largest term (exact to rounding: that term's P[y, z] > 0 keeps
    every sum away from 0); otherwise a full log-sum-exp, so no possible count rounds to 0.
    """
    k = log_p.shape[0]
    if np.all(np.isfinite(log_p)):
        top = log_a.max(axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            moved = np.log(np.exp(log_a - top) @ np.exp(log_p)) + top
    else:
        moved = _lse(log_a[..., :, None] + log_p, axis=-2)  # [..., z] = log Σ_y A[..., y] P[y, z]
    out = np.full_like(moved, -np.inf)
    out[..., k - 1] = moved[..., k - 1]  # the last state's count is implied
    for z in range(k - 1):
        src = [slice(None)] * grid_axes
        dst = [slice(None)] * grid_axes
        src[z] = slice(None, -1)
        dst[z] = slice(1, None)
        out[(Ellipsis, *dst, z)] = moved[(Ellipsis, *src, z)]
    return out


def histogram_count_weights(prior: MarkovChainPrior, entry: int) -> np.ndarray:
    """log Pr[N = n, X_entry = x] over count vectors n (first K−1 counts; the last is T − Σ).

    Shape (K, T+1, …, T+1) with K−1 count axes; ``entry`` is 0-based.  A dynamic program over
    (step, partial counts, state) in log space, O(T·(T+1)^(K−1)·K²).
    """
    if not isinstance(prior, MarkovChainPrior):
        raise ValueError(f"expected a MarkovChainPrior; got {type(prior).__name__}")
    entry = check_whole("entry", entry, minimum=0)
    if entry >= prior.length:
        raise ValueError(f"entry {entry} is beyond the chain (0-based entries 0..{prior.length - 1})")
    k, T = prior.n_states, prior.length
    grid = _count_grid(prior)
    log_p = _logs(prior.transition)
    state = np.full(grid + (k,), -np.inf)
    init = _logs(np.asarray(prior.initial))
    for x in range(k):
        index = [0] * (k - 1)
        if x < k - 1:
            index[x] = 1
        state[(*index, x)] = init[x]
    for _ in range(entry):
        state = _count_step(state, log_p, k - 1)
    tagged = np.full((k,) + state.shape, -np.inf)  # tagged[x] carries X_entry = x
    for x in range(k):
        tagged[x][..., x] = state[..., x]
    for _ in range(T - 1 - entry):
        tagged = _count_step(tagged, log_p, k - 1)
    return _lse(tagged, axis=-1)


def _implied(grid_counts: np.ndarray, T: int) -> np.ndarray:
    return T - grid_counts.sum(axis=-1)


def _all_counts(k: int, T: int) -> np.ndarray:
    """Every cell of the count grid as K counts (the last implied), shape ((T+1)^(K−1), K)."""
    axes = np.meshgrid(*([np.arange(T + 1)] * (k - 1)), indexing="ij")
    first = np.stack([a.reshape(-1) for a in axes], axis=1) if k > 1 else np.zeros((1, 0), dtype=int)
    return np.concatenate([first, _implied(first, T)[:, None]], axis=1)


def _histogram_loglik(weights: np.ndarray, outputs: np.ndarray, loglik, log_marg: np.ndarray) -> np.ndarray:
    """log Pr[ω | X = x] for every output row: (outputs, K), in chunks; ``loglik(chunk)`` → (chunk, cells)."""
    flat = weights.reshape(weights.shape[0], -1)  # (K, cells)
    step = max(1, _OUTPUT_CELLS // (flat.size + 1))
    out = np.empty((outputs.shape[0], flat.shape[0]))
    for start in range(0, outputs.shape[0], step):
        chunk = loglik(outputs[start : start + step])
        out[start : start + step] = _lse(flat[None, :, :] + chunk[:, None, :], axis=2)
    return out - log_marg[None, :]


def attack_histogram(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: float,
    mechanism: str = "laplace",
    k: int = 1,
    seed: int = 0,
    draws: int = 200,
    entries: Sequence[int] | None = None,
    max_sweeps: int = 20,
    secrets: Secrets | None = None,
) -> Attack:
    """The largest posterior log-odds shift found for one user's histogram release (docs/math.md §11).

    ``secrets``: only the chosen value pairs, at the protected entries among the targets (docs/math.md §16).

    ``mechanism="laplace"``: every count of the user's states gets Lap(2/ε) noise (L1
    sensitivity 2, per-entry ε-DP).  The log-odds of a real output are largest at whole
    numbers in 0..T (between two whole numbers the likelihood ratio is monotone, and below 0
    or above T constant), so outputs are searched there: those are also the outputs of the
    discretised Laplace (two-sided geometric) clamped to 0..T, with the same log-odds.  Draws
    come from that mechanism; for each target entry the best draw is climbed one count at a time.
    ``mechanism="exponential"``: the top-``k`` states by count, k rounds of ε/k each
    (docs/math.md §5); every ranking is tried.  ``entries`` (0-based) are the targets; by
    default all of them when T ≤ 10, else the first, the middle, the last and three drawn with
    the seed.
    """
    priors = as_theta(prior_or_priors, "the attacker", same_length=True)
    eps = check_eps("eps", eps)
    seed = check_whole("seed", seed, minimum=0)
    draws = check_whole("draws", draws)
    max_sweeps = check_whole("max_sweeps", max_sweeps)
    n_states, T = priors[0].n_states, priors[0].length
    k = check_whole("k", k)
    law = histogram_law(mechanism, eps, T, k)
    if k > n_states:
        raise ValueError(f"k = {k} is larger than the number of states ({n_states})")
    _count_grid(priors[0])  # refuse up front what would not fit
    rng = np.random.default_rng(seed)
    pairs, chosen = _value_pairs(secrets, n_states)
    pool = np.flatnonzero(chosen.position_mask(T))  # the protected entries (all of them by default)
    if entries is None:
        if pool.size <= 10:
            targets = pool.tolist()
        else:
            drawn = pool[rng.choice(pool.size, size=min(3, pool.size), replace=False)]
            targets = sorted({int(pool[0]), int(pool[pool.size // 2]), int(pool[-1]), *(int(v) for v in drawn)})
    else:
        targets = sorted({check_whole("entry", e, minimum=0) for e in entries})
        if not targets or targets[-1] >= T:
            raise ValueError(f"entries must be 0-based steps 0..{T - 1}; got {list(entries)!r}")
        targets = [t for t in targets if t in set(pool.tolist())]
        if not targets:
            raise ValueError("none of the entries asked for is protected by the secrets")
    counts = _all_counts(n_states, T)
    if isinstance(law, ExponentialRanking):
        candidates = law.rankings(n_states, limit=MAX_RANKINGS)

        def loglik(chunk: np.ndarray) -> np.ndarray:
            return law.log_probabilities(chunk, counts)

    else:

        def loglik(chunk: np.ndarray) -> np.ndarray:
            return law.log_likelihood(chunk, counts)

    best = Attack(0.0, None, None, None, (), seed, draws)
    for index, prior in enumerate(priors):
        marginals = prior.marginals()
        if isinstance(law, ClampedDiscreteLaplace):
            candidates = _sample_histograms(prior, law, draws, rng)
        for entry in targets:
            possible = marginals[entry] > 0
            log_marg = _logs(np.where(possible, marginals[entry], 1.0))
            weights = histogram_count_weights(prior, entry)
            shift, x, xp = _secret_shifts(_histogram_loglik(weights, candidates, loglik, log_marg), possible[None],
                                          pairs)
            row = int(np.argmax(shift))
            pair = (int(x[row]), int(xp[row]))
            output, value = candidates[row], float(shift[row])
            if isinstance(law, ClampedDiscreteLaplace) and value > -math.inf:
                output, value = _climb_histogram(weights, counts, law, log_marg, output, pair, max_sweeps)
            if value > best.lower:
                best = Attack(value, entry, pair, index, tuple(int(v) for v in output), seed, draws)
    return best


def _sample_histograms(
    prior: MarkovChainPrior, law: ClampedDiscreteLaplace, n: int, rng: np.random.Generator
) -> np.ndarray:
    """n noisy count vectors: counts of a sequence drawn from the prior, then the law's noise (clamped to 0..T)."""
    k, T = prior.n_states, prior.length
    state = _draw(np.broadcast_to(np.asarray(prior.initial), (n, k)), rng)
    counts = np.zeros((n, k), dtype=np.int64)
    rows = np.arange(n)
    for t in range(T):
        if t > 0:
            state = _draw(prior.transition[state], rng)
        counts[rows, state] += 1
    return law.sample(counts, rng)


def _climb_histogram(
    weights: np.ndarray,
    counts: np.ndarray,
    law: ClampedDiscreteLaplace,
    log_marg: np.ndarray,
    start: np.ndarray,
    pair: tuple[int, int],
    max_sweeps: int,
) -> tuple[np.ndarray, float]:
    """Coordinate ascent on the noisy counts (each in the law's range) for one pair; returns (output, log-odds).

    The log-likelihood is a sum over counts, so changing count k only changes its own term
    log Pr[c_k | n_k]: all values of c_k are scored at once.
    """
    flat = weights.reshape(weights.shape[0], -1)[list(pair)]  # (2, cells)
    out = np.array(start, dtype=np.int64)
    values = law.values
    table = law.log_law(values)  # table[n − low, c − low] = log Pr[noisy c | count n]
    cells = counts - law.low
    terms = table[cells, out[None, :] - law.low]  # (cells, K): log Pr[c_k | n_k]
    shift = log_marg[pair[1]] - log_marg[pair[0]]

    def gain(loglik: np.ndarray) -> np.ndarray:
        scores = _lse(flat[None, :, :] + loglik[:, None, :], axis=2)  # (candidates, 2)
        with np.errstate(invalid="ignore"):
            g = scores[:, 0] - scores[:, 1] + shift
        return np.where(np.isnan(g), -np.inf, g)

    current = float(gain(terms.sum(axis=1)[None])[0])
    for _ in range(max_sweeps):
        changed = False
        for k in range(out.size):
            rest = terms.sum(axis=1) - terms[:, k]
            column = table[cells[:, k]].T  # (values, cells)
            g = gain(rest[None, :] + column)
            best = int(np.argmax(g))
            if g[best] > current + _IMPROVEMENT:
                out[k] = values[best]
                terms[:, k] = column[best]
                current = float(g[best])
                changed = True
        if not changed:
            break
    return out, current
