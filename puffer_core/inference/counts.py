"""Released noisy counts of many users, post-processed with the Markov prior (docs/math.md §14).

Many users, independent, each a Markov chain with the prior (initial p_1, transition P); a
release is the vector of counts of the users' states (one entry per user) plus independent
noise of known variance v on every count (Laplace of scale s: v = 2s²).  Post-processing reads
the released counts only, so it costs no privacy.

**What is computed.**  The exact Bayes posterior of the counts is out of reach (there are
C(n + K − 1, K − 1) count vectors per step), so the estimate is the best *linear* one — the
linear minimum-mean-squared-error estimate of the true counts from all released counts — then
projected onto the counts that are possible.  Its two inputs are exact under the prior:

- the mean and covariance of the true counts.  With p_t the marginal of a user's t-th entry
  and C(t, s) = Cov(e_{X_t}, e_{X_s}) = diag(p_t)·P^(s−t) − p_t p_sᵀ (s ≥ t), a release that
  counts entry t of every user u with t ∈ S_u has mean Σ_t m_t p_t and covariance
  Σ_{t,s} W[t, s] C(t, s), W[t, s] = #users with t and s both in S_u (:func:`count_moments`);
- for a stream of releases (:func:`smooth_count_stream`, the counts x_t of the users' t-th
  entries, users present from step 1 until they stop), the counts follow
  x_{t+1} = F_t x_t + w_t with F_t = (n_{t+1}/n_t)·Pᵀ, where w_t has mean 0, is uncorrelated
  with every earlier x_s and has covariance Q_t = n_{t+1}·C(t+1, t+1) − (n_{t+1}²/n_t)·Pᵀ C(t, t) P
  (positive semi-definite).  These are exactly the first two moments of the counts, so a
  Kalman filter and a fixed-interval smoother on this model give the linear MMSE estimate exactly
  (a linear estimate depends on the first two moments only), and its error covariance.  Every
  covariance here is singular (the counts of a step sum to n_t), so no state covariance is ever
  inverted: the filter works in the eigenbasis of the predicted covariance and the smoother is the
  modified Bryson–Frazier form, which inverts only the positive definite Σ + v·I (docs/math.md §14:
  Rauch–Tung–Striebel with a pseudo-inverse was up to 27 % off on sticky chains).

**What it guarantees.**  Among all estimates that are affine in the released counts — the raw
release itself is one — it has the smallest expected squared error on data drawn from the
prior, and that error (:attr:`CountSmoothing.expected_mse`) is computed exactly beside the raw
one (K·v per step).  The projection onto {x ≥ 0, Σ x = n} (the number of entries released is not
protected under replace-one neighbours, docs/math.md §13) never moves the estimate further from
the truth, which lies in that convex set.  It is not the Bayes posterior mean (the noise is
Laplace and the counts multinomial, not Gaussian), and on data that do not follow the prior
(a misspecified prior) it can be worse than the raw release: measure it (docs/math.md §14).
X. Cao, Y. Cao et al. (arXiv 2306.13293) post-process the same kind of stream by a maximum a
posteriori program solved step by step; this module keeps to what can be computed exactly and
uses every release, past and future, for every step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse

from ..priors.models import MarkovChainPrior
from ..validation import (
    InvalidParameter,
    as_numbers,
    check_flag,
    check_positive,
    check_whole,
    is_number,
    is_whole,
)
from .posterior import check_prior

MAX_STEPS = 20_000  # steps of a count stream
MAX_DENSE = 4_000  # counts estimated together in one dense solve
MAX_USERS = 10**15  # users per step: counts stay exact in double precision (below 2^53)
MIN_VARIANCE = 1e-6  # a noise variance below this is a release without noise for the smoother's arithmetic


def project_simplex(values: np.ndarray, totals: np.ndarray | float) -> np.ndarray:
    """The Euclidean projection of each row onto {x ≥ 0, Σ x = total} (sort-based, exact).

    ``values``: shape (..., K); ``totals``: one total per row (broadcast).  The projection onto a
    closed convex set that contains the truth never increases the distance to it.
    """
    x = np.asarray(values, dtype=float)
    total = np.broadcast_to(np.asarray(totals, dtype=float), x.shape[:-1])
    if np.any(total < 0):
        raise ValueError("totals must be ≥ 0")
    u = -np.sort(-x, axis=-1)
    css = np.cumsum(u, axis=-1) - total[..., None]
    idx = np.arange(1, x.shape[-1] + 1)
    cond = u - css / idx > 0
    rho = x.shape[-1] - 1 - np.argmax(cond[..., ::-1], axis=-1)  # the last index where cond holds
    theta = np.take_along_axis(css, rho[..., None], axis=-1)[..., 0] / (rho + 1)
    return np.maximum(x - theta[..., None], 0.0)


def count_moments(prior: MarkovChainPrior, presence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (K,) and covariance (K, K) of one released count vector, exactly (module docstring).

    ``presence[u, t]`` is 1 when entry t (0-based position in user u's sequence) is counted in
    the release, else 0; shape (users, T) with T ≤ the prior's length; a dense array or a scipy
    sparse matrix (then W = presenceᵀ·presence costs Σ_u |S_u|², not users × T²).
    """
    prior = check_prior(prior)
    if scipy.sparse.issparse(presence):
        mask = scipy.sparse.csr_matrix(presence, dtype=float)
        values = mask.data
    else:
        mask = as_numbers(presence, "presence")
        values = mask
    if mask.ndim != 2 or not np.all((values == 0) | (values == 1)):
        raise ValueError("presence must be a 0/1 matrix: one row per user, one column per position in the sequence")
    T = mask.shape[1]
    if T > prior.length:
        raise ValueError(f"positions up to {T} but the prior describes sequences of {prior.length} entries")
    p = prior.marginals(T)
    w = mask.T @ mask  # W[t, s] = #users counting both t and s
    w = w.toarray() if scipy.sparse.issparse(w) else np.asarray(w)
    m = np.diag(w)
    mean = m @ p
    cov = (m[:, None] * p).sum(axis=0)
    cov = np.diag(cov) - p.T @ w @ p
    power = np.eye(prior.n_states)
    for d in range(1, T):
        power = power @ prior.transition
        weights = np.einsum("t,tk->k", np.diagonal(w, offset=d), p[: T - d])
        if not weights.any():
            continue
        a_d = weights[:, None] * power
        cov += a_d + a_d.T
    return mean, (cov + cov.T) / 2.0


def lmmse(mean: np.ndarray, cov: np.ndarray, noise_variance: float, released: np.ndarray) -> tuple[np.ndarray, float]:
    """The linear MMSE estimate of x from r = x + noise (noise variance v per count) and its expected squared error.

    ``released`` may hold many releases of the same vector, shape (..., K).
    """
    k = mean.size
    gain = scipy.linalg.solve(cov + noise_variance * np.eye(k), cov, assume_a="sym").T  # Σ(Σ + vI)^(-1)
    estimate = mean + (np.asarray(released, dtype=float) - mean) @ gain.T
    error = float(np.trace(cov - gain @ cov))
    return estimate, max(error, 0.0)


@dataclass(frozen=True)
class CountSmoothing:
    """Released counts post-processed with the prior (module docstring).

    ``estimates``: (T, K), projected onto {x ≥ 0, Σ x = n_t} when ``projected``.
    ``expected_mse_raw[t]`` = K·v_t and ``expected_mse[t]`` = the linear estimate's expected
    squared error Σ_k E[(x̂_tk − x_tk)²] on data drawn from the prior (exact; the projection
    only lowers it).  ``users[t]`` = n_t.
    """

    estimates: np.ndarray
    expected_mse_raw: np.ndarray
    expected_mse: np.ndarray
    users: np.ndarray
    projected: bool

    @property
    def gain(self) -> float:
        """How many times smaller the expected squared error is than the raw release's, over all steps."""
        return float(self.expected_mse_raw.sum() / max(self.expected_mse.sum(), 1e-300))


def _users(users: object, length: int) -> np.ndarray:
    if is_whole(users):
        check_whole("users", users, maximum=MAX_USERS)
        return np.full(length, float(users))
    if not isinstance(users, (list, tuple, np.ndarray)) or not all(is_whole(u) for u in np.ravel(users)):
        raise InvalidParameter(f"users must be a whole number ≥ 1, or one per step ({length}); got {_short(users)}")
    n = np.asarray([check_whole("users", u, maximum=MAX_USERS) for u in np.ravel(users)])
    if np.ndim(users) != 1 or n.shape != (length,):
        raise ValueError(f"users must be a whole number ≥ 1, or one per step ({length}); got {_short(users)}")
    if np.any(np.diff(n) > 0):
        raise ValueError(
            "users present at each step may only fall (every user starts at step 1 and stays until they stop);"
            f" got {n.tolist()[:10]}…"
        )
    return n.astype(float)


def _variance(noise_variance: object, length: int) -> np.ndarray:
    if is_number(noise_variance):
        values = [noise_variance]
    elif isinstance(noise_variance, (list, tuple, np.ndarray)) and np.ndim(noise_variance) == 1:
        values = list(noise_variance)
    else:
        raise InvalidParameter(
            f"noise_variance must be a number or one number per step (2·scale² for Laplace noise); got"
            f" {_short(noise_variance)}"
        )
    v = np.array([check_positive("noise_variance", x) for x in values])
    if not is_number(noise_variance) and v.size != length:
        raise ValueError(f"noise_variance must be one number or one per step ({length}); got {v.size} values")
    if np.any(v < MIN_VARIANCE):
        raise ValueError(
            f"noise_variance {v.min():g} is below {MIN_VARIANCE:g}: a release that precise is the counts"
            " themselves (the smoother divides by the variance, and double precision cannot weigh it); use"
            " the released counts as they are"
        )
    return np.broadcast_to(v, (length,)).copy()


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _innovation(cov_pred: np.ndarray, variance: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S⁻¹, the gain Σ S⁻¹, the filtered covariance Σ − Σ S⁻¹ Σ) with S = Σ + v·I, from Σ = U diag(λ) Uᵀ.

    In the eigenbasis every factor is a number: λ/(λ + v) and λ·v/(λ + v), in [0, 1] and [0, min(λ, v)],
    so no cancellation and no inverse of the (singular) Σ: the counts of a step sum to n_t exactly.
    """
    lam, vec = np.linalg.eigh((cov_pred + cov_pred.T) / 2.0)
    lam = np.maximum(lam, 0.0)
    inverse = (vec / (lam + variance)) @ vec.T
    gain = (vec * (lam / (lam + variance))) @ vec.T
    filtered = (vec * (lam * (variance / (lam + variance)))) @ vec.T  # λ·v/(λ + v), no product beyond a double
    return (inverse + inverse.T) / 2.0, gain, (filtered + filtered.T) / 2.0


def smooth_count_stream(
    prior: MarkovChainPrior,
    releases: np.ndarray,
    noise_variance: float | np.ndarray,
    users: int | np.ndarray,
    project: bool = True,
) -> CountSmoothing:
    """The counts x_t behind released r_t = x_t + noise, t = 1..T, smoothed with the prior (module docstring).

    ``releases``: shape (T, K); ``noise_variance``: per count, one number or one per step (the
    ε_t of a schedule); ``users``: n, or n_t per step (non-increasing).
    """
    prior = check_prior(prior)
    r = as_numbers(releases, "releases")
    if r.ndim != 2 or r.shape[1] != prior.n_states or not np.all(np.isfinite(r)):
        raise ValueError(f"releases must be finite numbers, one row of {prior.n_states} counts per step")
    T, K = r.shape
    check_whole("the number of steps", T, maximum=MAX_STEPS)
    if T > prior.length:
        raise ValueError(f"{T} steps of releases but the prior describes sequences of {prior.length} entries")
    n = _users(users, T)
    v = _variance(noise_variance, T)
    project = check_flag("project", project)
    p = prior.marginals(T)
    P = prior.transition

    def c(t: int) -> np.ndarray:
        return np.diag(p[t]) - np.outer(p[t], p[t])

    x_pred = n[0] * p[0]
    cov_pred = n[0] * c(0)
    filt_x, filt_cov, innovations, inverses, gains, moves = [], [], [], [], [], []
    eye = np.eye(K)
    for t in range(T):
        s_inv, gain, cov_f = _innovation(cov_pred, v[t])
        innovation = r[t] - x_pred
        x_f = x_pred + gain @ innovation
        keep = eye - gain
        filt_x.append(x_f)
        filt_cov.append(cov_f)
        innovations.append(innovation)
        inverses.append(s_inv)
        gains.append(keep)
        if t + 1 < T:
            f = (n[t + 1] / n[t]) * P.T
            q = n[t + 1] * c(t + 1) - (n[t + 1] ** 2 / n[t]) * P.T @ c(t) @ P
            x_pred = f @ x_f
            cov_pred = f @ filt_cov[-1] @ f.T + (q + q.T) / 2.0
            moves.append(f)
    # the modified Bryson–Frazier smoother: the information the later releases carry, propagated backwards
    # (λ, Λ), never inverting a state covariance (they are singular: the counts of a step sum to n_t exactly)
    smooth_x = [filt_x[-1]]
    smooth_cov = [filt_cov[-1]]
    lam = np.zeros(K)
    big = np.zeros((K, K))
    for t in range(T - 1, 0, -1):
        lam_t = -inverses[t] @ innovations[t] + gains[t].T @ lam
        big_t = inverses[t] + gains[t].T @ big @ gains[t]
        lam = moves[t - 1].T @ lam_t
        big = moves[t - 1].T @ big_t @ moves[t - 1]
        big = (big + big.T) / 2.0
        x_s = filt_x[t - 1] - filt_cov[t - 1] @ lam
        cov_s = filt_cov[t - 1] - filt_cov[t - 1] @ big @ filt_cov[t - 1]
        smooth_x.insert(0, x_s)
        smooth_cov.insert(0, (cov_s + cov_s.T) / 2.0)
    estimates = np.array(smooth_x)
    if project:
        estimates = project_simplex(estimates, n)
    return CountSmoothing(
        estimates=estimates,
        expected_mse_raw=K * v,
        expected_mse=np.array([min(max(float(np.trace(cv)), 0.0), float(np.trace(cf))) for cv, cf in
                               zip(smooth_cov, filt_cov)]),
        users=n,
        projected=project,
    )


def panel_presence(lengths: np.ndarray, length: int | None = None) -> np.ndarray:
    """Users present at each step of a panel where user u has ``lengths[u]`` entries: n_t = #{u: T_u ≥ t}."""
    lengths = np.asarray(lengths, dtype=np.int64)
    steps = int(lengths.max()) if length is None else length
    return (lengths[:, None] > np.arange(steps)[None, :]).sum(axis=0)
