"""The output laws of per-entry releases in a stream (docs/math.md §10, §11).

Row x of an *emission* is the law of the release r_t given X_t = x.  The exact audit
(:mod:`puffer_core.audit.stream`) and the attacker (:mod:`puffer_core.attacks`) read these laws;
neither imports the bounds they check.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import check_eps, check_rows, check_whole, is_whole

_EXPM1_LIMIT = 700.0  # expm1 overflows beyond ~709.78



def randomized_response_emission(n_states: int, eps: float) -> np.ndarray:
    """Randomized response on K states: Pr[r = x | X = x] = e^ε / (e^ε + K − 1), else 1 / (e^ε + K − 1).

    Row x is the output law given X_t = x (K outputs); the release is ε-DP per entry.
    """
    k = check_whole("n_states", n_states, minimum=2)
    eps = check_eps("eps", eps, allow_zero=True)
    off = 1.0 / (math.exp(eps) + k - 1) if eps < _EXPM1_LIMIT else 0.0
    out = np.full((k, k), off)
    np.fill_diagonal(out, 1.0 - (k - 1) * off)
    return out


def laplace_histogram_emission(n_states: int, eps: float, low: int = 0, high: int = 1) -> np.ndarray:
    """A noisy histogram of one entry: discretised Laplace noise on each of the K counts.

    One user's entry adds 1 to the count of its state; each count gets two-sided geometric
    noise Pr[Z = z] ∝ e^{−ε|z|/2} (the discretised Laplace of scale 2/ε: the histogram has L1
    sensitivity 2, so the release is ε-DP per entry) and is clamped to ``low..high``
    (post-processing).  Outputs are the (high − low + 1)^K clamped count vectors in C order
    (the first count varies slowest).  With low ≤ 0 and high ≥ 1 the clamping loses nothing an
    attacker could use: for count k, every value v ≤ 0 is e^{ε/2} times less likely when the
    entry is in state k than when it is not, and every v ≥ 1 e^{ε/2} times more likely, so the
    likelihood of x depends on v only through [v ≥ 1] and the leakage equals that of the
    unclamped release (and of continuous Laplace noise, docs/math.md §11).  Counts of the other
    users are known
    to the attacker (the DP neighbour) and left out.
    """
    k = check_whole("n_states", n_states, minimum=2)
    eps = check_eps("eps", eps)
    if not (is_whole(low) and is_whole(high)):
        raise ValueError(f"low and high must be whole numbers; got {low!r} and {high!r}")
    if not low <= 0 < 1 <= high:
        raise ValueError(f"the clamping range must contain 0 and 1 (low ≤ 0, high ≥ 1); got {low}..{high}")
    n_values = high - low + 1
    if n_values**k > 1_000_000:
        raise ValueError(
            f"{n_values} values per count for {k} states give {n_values**k:,} outputs; at most 1,000,000"
            " (narrow the clamping range)"
        )
    r = math.exp(-eps / 2.0)
    values = np.arange(low, high + 1)
    per_count = np.empty((2, n_values))  # per_count[mean, value] for mean 0 and 1
    for mean in (0, 1):
        z = values - mean
        p = (1.0 - r) / (1.0 + r) * r ** np.abs(z)
        p[0] = r ** (mean - low) / (1.0 + r)  # Pr[Z ≤ low − mean], low − mean ≤ 0
        p[-1] = r ** (high - mean) / (1.0 + r)  # Pr[Z ≥ high − mean], high − mean ≥ 0
        per_count[mean] = p
    out = np.empty((k, n_values**k))
    for x in range(k):
        joint = np.ones(1)
        for state in range(k):
            joint = np.outer(joint, per_count[int(state == x)]).reshape(-1)
        out[x] = joint
    return out


def emission_epsilon(emission: object) -> float:
    """The per-entry DP level of a release with output law ``emission[x, r] = Pr[r | X_t = x]``.

    ε = max over outputs r and states x, x' of log emission[x, r] / emission[x', r]
    (+inf when some output is possible from one state and impossible from another).
    """
    matrix = _check_emission(emission)
    positive = matrix > 0
    if np.any(positive.any(axis=0) & ~positive.all(axis=0)):
        return math.inf
    cols = positive.all(axis=0)
    logs = np.log(matrix[:, cols])
    return float((logs.max(axis=0) - logs.min(axis=0)).max(initial=0.0))


def _check_emission(emission: object, n_states: int | None = None) -> np.ndarray:
    """A K×O output law: row x is Pr[output | X_t = x] (:func:`puffer_core.validation.check_rows`)."""
    matrix = check_rows(emission, "the emission", square=False)
    if n_states is not None and matrix.shape[0] != n_states:
        raise ValueError(f"the emission has {matrix.shape[0]} rows but the chain has {n_states} states")
    return matrix


def check_emissions(emissions: object, n_states: int, length: int) -> list[np.ndarray]:
    """One K×O_t output law per time step: a single matrix (used at every step) or a list of T."""
    try:
        array = np.asarray(emissions, dtype=float)
    except (TypeError, ValueError):
        array = None  # matrices of different shapes: one per step
    if array is not None and array.ndim == 2:
        return [_check_emission(array, n_states)] * length
    if not isinstance(emissions, (list, tuple)) and (array is None or array.ndim != 3):
        raise ValueError("emissions must be a K×O matrix or a list of one K×O_t matrix per time step")
    steps = list(emissions)
    if len(steps) != length:
        raise ValueError(f"{len(steps)} emissions for a chain of length T = {length}; give one per time step")
    return [_check_emission(e, n_states) for e in steps]
