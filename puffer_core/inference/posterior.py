"""The true states behind one user's released outputs, given the Markov prior (docs/math.md §14).

A release r_t at every step t with a known output law E_t[k, o] = Pr[r_t = o | X_t = k]
(randomized response, a noisy histogram of one entry: :mod:`puffer_core.mechanisms.laws`) is
post-processed with the prior the analyst already has.  Post-processing reads released outputs
only, so it costs no privacy.

- :func:`posterior_states`: Pr[X_t = k | r_1..r_T] for every t and k, by the forward–backward
  recursion in log space (the same recursion an attacker runs, docs/math.md §11):

      α_1(k) = log p_1(k) + log E_1[k, r_1];   α_t(k) = logsumexp_j (α_{t−1}(j) + log P[j, k]) + log E_t[k, r_t]
      β_T = 0;   β_t(j) = logsumexp_k (log P[j, k] + log E_{t+1}[k, r_{t+1}] + β_{t+1}(k))
      posterior_t ∝ exp(α_t + β_t)

  with p_1 the prior's initial distribution (stationary or not).
- :func:`map_states`: the single most probable sequence (Viterbi: max in place of logsumexp).
- :func:`smoothing_accuracy`: how often each estimate is right, per step, on data drawn from the
  prior — the release alone (its maximum-likelihood state, exact) against the posterior's most
  probable state (seeded simulation, with an interval).  The posterior's choice maximises the
  expected number of right steps among all estimates computed from the outputs, so on data
  drawn from the prior it is never worse than the release alone; on data from another chain it
  can be (a misspecified prior).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ..mechanisms.laws import check_emissions
from ..priors.models import MarkovChainPrior
from ..validation import InvalidParameter, check_whole

MAX_CELLS = 20_000_000  # draws × T × K log-probabilities held at once
Z_95 = 1.959963984540054


def safe_log(values: np.ndarray) -> np.ndarray:
    """log of probabilities, −inf for 0 (no warning)."""
    with np.errstate(divide="ignore"):
        return np.log(values)


def check_prior(prior: object) -> MarkovChainPrior:
    if not isinstance(prior, MarkovChainPrior):
        raise InvalidParameter(
            f"the prior must be a MarkovChainPrior (the chain the states follow); got {type(prior).__name__}"
        )
    return prior


def check_observations(observations: object, laws: list[np.ndarray] | None = None) -> np.ndarray:
    """Released outputs as whole numbers, one per step (columns of the emissions), shape (T,) or (n, T)."""
    out = np.asarray(observations)
    if out.ndim not in (1, 2) or out.shape[-1] < 1 or not np.issubdtype(out.dtype, np.integer):
        raise (ValueError if np.issubdtype(out.dtype, np.integer) else InvalidParameter)(
            "observations must be whole output indices, one per time step (a column of the emission);"
            f" got {np.asarray(observations).dtype} of shape {out.shape}"
        )
    if laws is not None:
        sizes = np.array([law.shape[1] for law in laws])
        bad = (out < 0) | (out >= sizes)
        if bad.any():
            t = int(np.argwhere(bad)[0][-1])
            raise ValueError(f"output {int(out[..., t].reshape(-1)[0])} at step {t + 1} is not one of the"
                             f" {sizes[t]} outputs of that step's emission (0..{sizes[t] - 1})")
    return out.astype(np.int64)


def _laws(prior: MarkovChainPrior, emission: object, length: int) -> list[np.ndarray]:
    return check_emissions(emission, prior.n_states, length)


def log_emissions(log_laws: list[np.ndarray], outputs: np.ndarray) -> np.ndarray:
    """log E_t[k, r_t] for a batch of outputs (n, T): shape (n, T, K)."""
    return np.stack([log_laws[t][:, outputs[:, t]].T for t in range(outputs.shape[1])], axis=1)


def forward_backward(log_initial: np.ndarray, log_transition: np.ndarray, log_emit: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Log posterior marginals (n, T, K) and log evidence log Pr[r_1..r_T] (n,), for a batch of outputs."""
    n, T, K = log_emit.shape
    fwd = np.empty_like(log_emit)
    fwd[:, 0] = log_initial[None, :] + log_emit[:, 0]
    for t in range(1, T):
        fwd[:, t] = logsumexp(fwd[:, t - 1, :, None] + log_transition[None], axis=1) + log_emit[:, t]
    bwd = np.zeros_like(log_emit)
    for t in range(T - 2, -1, -1):
        bwd[:, t] = logsumexp(log_transition[None] + (log_emit[:, t + 1] + bwd[:, t + 1])[:, None, :], axis=2)
    evidence = logsumexp(fwd[:, -1], axis=1)
    with np.errstate(invalid="ignore"):
        log_post = fwd + bwd - evidence[:, None, None]
    return log_post, evidence


def posterior_states(prior: MarkovChainPrior, emission: object, observations: Sequence[int]) -> np.ndarray:
    """Pr[X_t = k | r_1..r_T] for every step t and state k, shape (T, K) (module docstring).

    ``emission``: one K×O matrix (row k = the output law given state k; e.g.
    :func:`puffer_core.mechanisms.laws.randomized_response_emission`) or a list of one per step;
    ``observations``: the released output (a column index) at each step t = 1..T.  The chain
    starts in the prior's initial distribution; T is the number of observations (the prior's own
    length is not used).  Outputs that the prior and the emission make impossible are refused.
    """
    prior = check_prior(prior)
    out = check_observations(observations)
    if out.ndim != 1:
        raise ValueError("posterior_states takes one user's outputs (one per step); for many, call it per user")
    laws = _laws(prior, emission, out.size)
    out = check_observations(out, laws)
    emit = log_emissions([safe_log(w) for w in laws], out[None])
    log_post, evidence = forward_backward(safe_log(np.asarray(prior.initial)), safe_log(prior.transition), emit)
    if not np.isfinite(evidence[0]):
        raise ValueError(
            "these outputs are impossible under the prior and the emission (probability 0): check that the"
            " emission matches the release and the prior allows the states it reports"
        )
    post = np.exp(log_post[0])
    return post / post.sum(axis=1, keepdims=True)


def map_states(prior: MarkovChainPrior, emission: object, observations: Sequence[int]) -> np.ndarray:
    """The most probable state sequence given the outputs (Viterbi, log space), shape (T,).

    Ties go to the lower state index at every choice, so the path is reproducible.
    """
    prior = check_prior(prior)
    out = check_observations(observations)
    if out.ndim != 1:
        raise ValueError("map_states takes one user's outputs (one per step)")
    laws = _laws(prior, emission, out.size)
    out = check_observations(out, laws)
    log_laws = [safe_log(w) for w in laws]
    path, best = _viterbi(safe_log(np.asarray(prior.initial)), safe_log(prior.transition), log_laws, out)
    if not np.isfinite(best):
        raise ValueError("these outputs are impossible under the prior and the emission (probability 0)")
    return path


def raw_states(emission: object, observations: Sequence[int]) -> np.ndarray:
    """The release alone: at each step the state that makes the output most likely (ties: the lower index).

    ``emission``: one K×O matrix or a list of one per step; ``observations``: shape (T,) or
    (n, T).  For randomized response with ε > 0 this is the reported state itself.
    """
    out = check_observations(observations)
    length = out.shape[-1]
    steps = list(emission) if isinstance(emission, (list, tuple)) else None
    first = np.asarray(steps[0] if steps else emission, dtype=float)
    if first.ndim != 2:
        raise ValueError("an emission is a K×O matrix (one row per state) or a list of one per step")
    laws = check_emissions(emission, first.shape[0], length)
    out = check_observations(out, laws)
    best = [np.argmax(law, axis=0) for law in laws]  # per step: output → the most likely state
    flat = out.reshape(-1, length)
    result = np.stack([best[t][flat[:, t]] for t in range(length)], axis=1)
    return result.reshape(out.shape)


# --------------------------------------------------------------------------------------------
# sampling from the prior, and the accuracy of each estimate


def sample_states(prior: MarkovChainPrior, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` sequences of ``length`` states drawn from the prior, shape (n, length)."""
    states = np.empty((n, length), dtype=np.int64)
    states[:, 0] = draw_indices(np.broadcast_to(np.asarray(prior.initial), (n, prior.n_states)), rng)
    for t in range(1, length):
        states[:, t] = draw_indices(prior.transition[states[:, t - 1]], rng)
    return states


def sample_outputs(laws: list[np.ndarray], states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One output per step for each sequence of states: r_t ~ E_t[X_t, ·], shape like ``states``."""
    return np.stack([draw_indices(laws[t][states[:, t]], rng) for t in range(states.shape[1])], axis=1)


def draw_indices(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of probabilities (inverse CDF)."""
    cdf = np.cumsum(rows, axis=1)
    u = rng.random(rows.shape[0])[:, None] * cdf[:, -1:]
    return np.minimum((cdf <= u).sum(axis=1), rows.shape[1] - 1)


@dataclass(frozen=True)
class SmoothingAccuracy:
    """Per step: how often each estimate names the true state, on data drawn from ``truth`` (docs/math.md §14).

    ``raw``: the release alone (exact).  ``smoothed``: the posterior's most probable state under the
    analyst's prior, estimated over ``draws`` seeded draws; ``smoothed_low``/``smoothed_high`` a 95%
    interval.  ``path_raw``/``path_map``: the share of draws whose whole sequence is right, for
    the release alone and for the most probable sequence (Viterbi).  ``misspecified``: the data
    were drawn from another chain than the one used to smooth.
    """

    raw: np.ndarray
    smoothed: np.ndarray
    smoothed_low: np.ndarray
    smoothed_high: np.ndarray
    raw_simulated: np.ndarray
    path_raw: float
    path_map: float
    draws: int
    seed: int
    misspecified: bool

    @property
    def mean_raw(self) -> float:
        return float(self.raw.mean())

    @property
    def mean_smoothed(self) -> float:
        return float(self.smoothed.mean())


def raw_accuracy(prior: MarkovChainPrior, emission: object, length: int) -> np.ndarray:
    """Pr[the release alone names X_t] per step, exactly: Σ_x p_t(x) Σ_o E_t[x, o]·[raw(o) = x]."""
    prior = check_prior(prior)
    laws = _laws(prior, emission, length)
    marg = prior.marginals(length)
    out = np.empty(length)
    for t, law in enumerate(laws):
        best = np.argmax(law, axis=0)
        right = law[best, np.arange(law.shape[1])]  # E_t[raw(o), o]
        out[t] = float(np.bincount(best, weights=right, minlength=law.shape[0]) @ marg[t])
    return out


def smoothing_accuracy(
    prior: MarkovChainPrior,
    emission: object,
    length: int | None = None,
    draws: int = 2000,
    seed: int = 0,
    truth: MarkovChainPrior | None = None,
) -> SmoothingAccuracy:
    """Per-step accuracy of the release alone and of the posterior under ``prior`` (module docstring).

    Sequences are drawn from ``truth`` (default: ``prior`` itself; another chain shows a
    misspecified prior) and released through ``emission``; ``length`` defaults to the prior's.
    The smoothed accuracy is the mean over draws of max_k Pr[X_t = k | outputs] when the data
    follow the prior (the probability that the posterior's choice is right, given the outputs:
    an unbiased, low-variance estimate), and the share of right choices otherwise.
    """
    prior = check_prior(prior)
    truth = prior if truth is None else check_prior(truth)
    if truth.n_states != prior.n_states:
        raise ValueError(f"the true chain has {truth.n_states} states, the prior {prior.n_states}")
    length = check_whole("length", prior.length if length is None else length)
    draws = check_whole("draws", draws, minimum=2)
    seed = check_whole("seed", seed, minimum=0)
    laws = _laws(prior, emission, length)
    log_laws = [safe_log(w) for w in laws]
    rng = np.random.default_rng(seed)
    batch = max(1, MAX_CELLS // (length * prior.n_states))
    log_init, log_p = safe_log(np.asarray(prior.initial)), safe_log(prior.transition)
    own = truth is prior
    values = np.empty((draws, length))
    raw_right = np.empty((draws, length))
    path_raw = path_map = 0
    for start in range(0, draws, batch):
        n = min(batch, draws - start)
        states = sample_states(truth, n, length, rng)
        outputs = sample_outputs(laws, states, rng)
        emit = log_emissions(log_laws, outputs)
        log_post, _ = forward_backward(log_init, log_p, emit)
        post = np.exp(log_post)
        choice = post.argmax(axis=2)
        values[start : start + n] = post.max(axis=2) if own else (choice == states)
        raw = raw_states(laws, outputs)
        raw_right[start : start + n] = raw == states
        path_raw += int(np.all(raw == states, axis=1).sum())
        path_map += int(np.all(viterbi_batch(log_init, log_p, emit) == states, axis=1).sum())
    mean = values.mean(axis=0)
    half = Z_95 * values.std(axis=0, ddof=1) / math.sqrt(draws)
    return SmoothingAccuracy(
        raw=raw_accuracy(truth, laws, length),
        smoothed=mean,
        smoothed_low=np.maximum(0.0, mean - half),
        smoothed_high=np.minimum(1.0, mean + half),
        raw_simulated=raw_right.mean(axis=0),
        path_raw=path_raw / draws,
        path_map=path_map / draws,
        draws=draws,
        seed=seed,
        misspecified=not own,
    )


def viterbi_batch(log_init: np.ndarray, log_p: np.ndarray, emit: np.ndarray) -> np.ndarray:
    """The most probable path for each row of a batch of log emissions (n, T, K); ties to the lower index."""
    n, T, K = emit.shape
    score = log_init[None, :] + emit[:, 0]
    back = np.zeros((n, T, K), dtype=np.int64)
    for t in range(1, T):
        cand = score[:, :, None] + log_p[None]  # [n, from j, to k]
        back[:, t] = np.argmax(cand, axis=1)
        score = np.take_along_axis(cand, back[:, t][:, None, :], axis=1)[:, 0] + emit[:, t]
    path = np.empty((n, T), dtype=np.int64)
    path[:, -1] = np.argmax(score, axis=1)
    rows = np.arange(n)
    for t in range(T - 1, 0, -1):
        path[:, t - 1] = back[rows, t, path[:, t]]
    return path


def _viterbi(log_init: np.ndarray, log_p: np.ndarray, log_laws: list[np.ndarray], outputs: np.ndarray
             ) -> tuple[np.ndarray, float]:
    """The most probable path and its log probability with the outputs; ties to the lower state index."""
    emit = np.stack([log_laws[t][:, outputs[t]] for t in range(outputs.size)])
    T, K = emit.shape
    score = log_init + emit[0]
    back = np.zeros((T, K), dtype=np.int64)
    for t in range(1, T):
        cand = score[:, None] + log_p  # [from j, to k]
        back[t] = np.argmax(cand, axis=0)  # first maximum: the lowest j
        score = cand[back[t], np.arange(K)] + emit[t]
    path = np.empty(T, dtype=np.int64)
    path[-1] = int(np.argmax(score))
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path, float(score.max())
