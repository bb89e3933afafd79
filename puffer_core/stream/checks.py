"""Input checks shared by the stream modules: row-stochastic matrices, ε schedules, the priors of a stream and
the backward/forward matrices an attacker may know (docs/math.md §10, §15)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..priors.models import Theta, as_theta
from ..validation import InvalidParameter, check_eps, check_rows

MAX_STATES = 500  # building a leakage front costs ~K³/2 ratio evaluations (K = 500: ~10 s)
MAX_LENGTH = 100_000  # time steps of a stream (the recursions are sequential)
MAX_LENGTH_CELLS = 20_000_000  # T × K marginal probabilities held at once


# --------------------------------------------------------------------------------------------
# input checks


def check_row_stochastic(name: str, matrix: object) -> np.ndarray:
    """A square K×K matrix (2 ≤ K ≤ ``MAX_STATES``) whose rows are probability distributions
    (:func:`puffer_core.validation.check_rows`)."""
    m = check_rows(matrix, name)
    if m.shape[0] > MAX_STATES:
        raise ValueError(
            f"{name} has {m.shape[0]} states; temporal leakage needs about K³/2 = {m.shape[0] ** 3 / 2:.2g} ratio"
            f" evaluations per matrix and is limited to K ≤ {MAX_STATES} states (merge rare states)"
        )
    return m


def check_schedule(eps: object, length: int | None = None) -> np.ndarray:
    """ε_1..ε_T as a float array: a number (repeated ``length`` times) or one value per step."""
    if hasattr(eps, "__len__") and not isinstance(eps, (str, bytes)) and len(eps) > MAX_LENGTH:
        raise ValueError(f"a schedule has at most {MAX_LENGTH:,} time steps; got {len(eps):,}")
    if isinstance(eps, (int, float, np.integer, np.floating)) and not isinstance(eps, bool):
        if length is None:
            raise ValueError(f"give one ε per time step (a list such as [{eps}] * 10); got the single number {eps}")
        return np.full(length, check_eps("eps", eps))
    raw = np.asarray(eps, dtype=object)
    if raw.ndim != 1 or raw.size == 0:
        kind = ValueError if raw.ndim >= 1 else InvalidParameter
        raise kind(f"eps must be a number or a non-empty 1-D sequence of numbers (one per step); got {eps!r}")
    values = [check_eps(f"eps[{t + 1}]", v, allow_zero=True) for t, v in enumerate(raw)]
    if length is not None and len(values) != length:
        raise ValueError(
            f"the schedule has {len(values)} values of ε but the stream has T = {length} time steps;"
            " give one ε per time step"
        )
    return np.array(values, dtype=float)


def stream_priors(prior_or_priors: object, finite: bool = True) -> Theta:
    """The set Θ of a stream (one length for all priors); ``finite``: the length is a stream to walk step by step."""
    priors = as_theta(prior_or_priors, "temporal privacy leakage", same_length=True)
    k, length = priors.n_states, priors.max_length
    if finite and (length > MAX_LENGTH or length * k > MAX_LENGTH_CELLS):
        raise ValueError(
            f"a stream of T = {length} steps over {k} states is too long: at most {MAX_LENGTH:,} steps and"
            f" T × K ≤ {MAX_LENGTH_CELLS:.0e} (shorten the stream; for a long stationary stream use the"
            " unbounded supremum, tpl_supremum)"
        )
    if k > MAX_STATES:
        raise ValueError(
            f"the prior has {k} states; temporal leakage needs about K³/2 = {k**3 / 2:.2g} ratio evaluations"
            f" per matrix and is limited to K ≤ {MAX_STATES} states (merge rare states)"
        )
    return priors


@dataclass(frozen=True, eq=False)
class Directions:
    """The backward and forward matrices an attacker is taken to know (docs/math.md §10).

    ``None`` in a direction: the prior's own matrix (P^B by Bayes' rule from the marginals,
    P^F = P), which is the default.  A K×K matrix: that matrix at every step — an attacker may know
    only one direction (a matrix whose rows are all equal says "no correlation known this way":
    its leakage function is 0).  Such a TPL bounds the leakage for an attacker whose knowledge is
    these matrices; only the default bounds it for the prior itself.
    """

    backward: np.ndarray | None = None
    forward: np.ndarray | None = None

    @property
    def default(self) -> bool:
        return self.backward is None and self.forward is None


def check_directions(backward: object, forward: object, n_states: int) -> Directions:
    """The backward and forward matrices checked against the chain's K states (None: the prior's own)."""
    out = []
    for name, matrix in (("the backward matrix P^B", backward), ("the forward matrix P^F", forward)):
        if matrix is None:
            out.append(None)
            continue
        checked = check_row_stochastic(name, matrix)
        if checked.shape[0] != n_states:
            raise ValueError(f"{name} has {checked.shape[0]} states but the chain has {n_states}")
        checked.setflags(write=False)
        out.append(checked)
    return Directions(*out)
