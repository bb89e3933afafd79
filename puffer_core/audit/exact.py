"""Exact leakage by enumeration, the ground truth for small chains (docs/math.md §9).

For a chain short enough to enumerate all K^T sequences and a mechanism with finitely many
outputs, the true leakage is the max over entries t, value pairs (x, x'), priors θ and
outputs ω of log Pr[ω | X_t = x, θ] / Pr[ω | X_t = x', θ]; k releases use the joint output
distribution of k independent runs.  Every ε the project reports must be ≥ this value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta, check_no_underflow
from ..secrets.events import EventSecrets
from ..secrets.indicators import secret_masks
from ..secrets.values import Secrets
from ..validation import WORK_LIMIT_SECONDS, check_distribution, check_whole
from ..work import ENUMERATION, MEMORY_LIMIT_BYTES, PRODUCT, WorkCounter, WorkEstimate, one_blas_thread, unit_seconds

MAX_SEQUENCES = 200_000
MAX_CELLS = 20_000_000
_CALL_US = 50.0  # microseconds of interpreter work per sequence: one call of the mechanism
_PAIR_US = 15.0  # per prior, entry and pair of states
_SETUP_US = 10_000.0  # per call: the sequences, the checks, switching to one BLAS thread


@dataclass(frozen=True)
class LeakageReport:
    """The exact leakage and where it is attained (0-based entry, states, prior, joint output); ``secret``
    names the secret pair in words when chosen secrets were audited (docs/math.md §16)."""

    eps: float
    entry: int | None = None
    pair: tuple[int, int] | None = None
    prior_index: int | None = None
    output: tuple[int, ...] | None = None
    secret: str = ""


def power(base: int, exponent: int) -> float:
    """base^exponent as a float, capped at 1e300 (counts of sequences and outputs that are never formed)."""
    if base <= 1:
        return float(max(base, 0) ** exponent)
    return 10.0 ** min(300.0, exponent * math.log10(base))


def count_text(value: float) -> str:
    """A count as people read it: "4,096", or "≈ 10^42" when it has more than 7 digits."""
    if value < 1e7:
        return f"{value:,.0f}"
    return f"≈ 10^{math.floor(math.log10(value))}"


def all_sequences(n_states: int, length: int) -> np.ndarray:
    """Every state sequence, shape (K^T, T)."""
    return np.array(list(itertools.product(range(n_states), repeat=length)), dtype=int).reshape(-1, length)


def sequence_probabilities(prior: MarkovChainPrior, sequences: np.ndarray) -> np.ndarray:
    """Pr[sequence | θ] for every row of ``sequences``.

    Raises ValueError when a sequence that is possible in exact arithmetic underflows to a
    probability double precision cannot hold: dropping it could make a reported ε too small.
    """
    first = np.asarray(prior.initial)[sequences[:, 0]]
    steps = prior.transition[sequences[:, :-1], sequences[:, 1:]]
    p = first.copy()
    for j in range(steps.shape[1]):
        p *= steps[:, j]
    check_no_underflow(p, (first > 0) & np.all(steps > 0, axis=1), "a sequence")
    return p


def mechanism_matrix(mechanism: Callable[[np.ndarray], object], sequences: np.ndarray) -> np.ndarray:
    """The mechanism's output probabilities for every row of ``sequences``: shape (sequences, outputs).

    ``mechanism`` maps a state sequence (numpy int array) to a probability vector; every
    vector must have the same length, be finite and non-negative, and sum to 1.
    """
    rows = []
    for seq in sequences:
        try:
            probs = np.asarray(mechanism(seq.copy()), dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the mechanism must return a probability vector; got an error: {exc}") from None
        rows.append(probs)
    sizes = {r.size for r in rows}
    if len(sizes) != 1:
        raise ValueError(f"the mechanism returned probability vectors of different lengths {sorted(sizes)}")
    m = np.vstack(rows)
    if not np.all(np.isfinite(m)) or np.any(m < 0):
        raise ValueError("the mechanism returned negative or non-finite probabilities")
    worst = int(np.argmax(np.abs(m.sum(axis=1) - 1)))  # the row furthest from 1, checked by the shared rule
    try:
        check_distribution(m[worst], "the mechanism's output probabilities")
    except ValueError:
        raise ValueError(
            f"the mechanism's output probabilities for sequence {sequences[worst].tolist()} sum to"
            f" {m[worst].sum():.6g}; they must sum to 1"
        ) from None
    return m


def _joint(matrix: np.ndarray, releases: int) -> np.ndarray:
    out = matrix
    for _ in range(releases - 1):
        out = (out[:, :, None] * matrix[:, None, :]).reshape(matrix.shape[0], -1)
    return out


def _tables(
    k: int, length: int, mechanism: Callable[[np.ndarray], object], releases: int, n_priors: int,
    work: WorkCounter | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every sequence of ``length``, the mechanism's output probabilities for each, and their joint over releases."""
    n_seq = k**length
    if n_seq > MAX_SEQUENCES:
        raise ValueError(
            f"a chain with {k} states and length {length} has {n_seq:,} sequences; exact"
            f" enumeration is limited to {MAX_SEQUENCES:,} (shorten the chain or use fewer states)"
        )
    seqs = all_sequences(k, length)
    matrix = mechanism_matrix(mechanism, seqs)
    exact_leakage_estimate(k, length, matrix.shape[1], n_priors, releases).check()
    n_out = matrix.shape[1] ** releases
    if n_seq * n_out > MAX_CELLS:
        raise ValueError(
            f"{releases} releases with {matrix.shape[1]} outputs each over {n_seq:,} sequences is too large"
            f" to enumerate exactly (limit {MAX_CELLS:,} cells); use fewer releases or a shorter chain"
        )
    joint = _joint(matrix, releases)
    if work is not None:
        work.add(ENUMERATION, float(n_seq) * (3 * matrix.shape[1] + n_out))
    # a joint output that is possible but rounds to 0 would be skipped as impossible
    check_no_underflow(joint, _joint((matrix > 0).astype(float), releases) > 0, "a joint output of the releases")
    return seqs, matrix, joint


def exact_leakage_estimate(
    n_states: int, length: int, outputs: int | Callable[[int], float], n_priors: int = 1, releases: int = 1,
    call_us: float = _CALL_US, limit: float = WORK_LIMIT_SECONDS,
) -> WorkEstimate:
    """The work of :func:`exact_leakage` (docs/math.md §9; cost: §2.1), before any of it.

    ``outputs`` is the number of outputs of one run of the mechanism (or a function of the length T,
    for ``largest``).  With N = K^T sequences and R = outputs^releases joint outputs: 3·N·outputs
    "enumeration" units for the mechanism's table (plus one call of it per sequence, ``call_us``
    microseconds each: a mechanism written as a Python loop over its outputs takes longer), N·R for
    the joint table, and per prior and entry K·N·R "product" units (Pr[ω, X_t = x], one matrix
    product) and R·K(K−1) enumeration units (every pair's ratios).  ``largest`` holds the longest
    chain ("T") that fits within ``limit`` seconds with the same states and outputs.
    """
    k, length, n_priors, releases = int(n_states), int(length), int(n_priors), int(releases)
    count = outputs if callable(outputs) else (lambda _: float(outputs))

    def units(T: int) -> dict[str, float]:
        n_seq, n_out = power(k, T), min(1e300, count(T) ** releases)
        return {
            "enumeration": min(1e300, 3 * n_seq * count(T) + n_seq * n_out + n_priors * T * k * (k - 1) * n_out),
            "product": min(1e300, n_priors * T * k * n_seq * n_out),
            "overhead": _SETUP_US + n_seq * call_us + n_priors * T * k * (k - 1) * _PAIR_US,
        }

    def nbytes(T: int) -> float:
        n_seq, n_out = power(k, T), min(1e300, count(T) ** releases)
        return 8.0 * (min(n_seq, 1e15) * (T + 2 * n_out + count(T)) + 2 * k * n_out)

    shorter = 0  # the longest chain that fits in time and in memory
    while (
        shorter < length
        and unit_seconds(units(shorter + 1)) <= limit
        and nbytes(shorter + 1) <= MEMORY_LIMIT_BYTES
    ):
        shorter += 1
    n_seq, n_out = power(k, length), count(length) ** releases
    priors_text = f", {n_priors} priors" if n_priors > 1 else ""
    return WorkEstimate(
        "the exact leakage",
        units(length),
        nbytes(length),
        f"{k} states over T = {length} steps give {count_text(n_seq)} sequences × {count_text(n_out)} joint outputs"
        f"{priors_text},"
        " every pair of states at every entry",
        f"use a shorter chain (T ≤ {shorter} fits), fewer states or fewer releases",
        {"T": shorter},
        limit,
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> tuple[float, int]:
    """max over outputs of log num/den (+inf where num > 0 = den) and where; (−inf, 0) when num is 0 everywhere."""
    pos = num > 0
    if np.any(pos & (den <= 0)):
        return math.inf, int(np.flatnonzero(pos & (den <= 0))[0])
    if not np.any(pos):
        return -math.inf, 0
    ratios = np.full(num.shape, -np.inf)
    ratios[pos] = np.log(num[pos]) - np.log(den[pos])
    w = int(np.argmax(ratios))
    return float(ratios[w]), w


def _chosen_report(priors: list[MarkovChainPrior], secrets: Secrets | EventSecrets, tables: dict, mechanism: Callable,
                   releases: int, work: WorkCounter | None) -> LeakageReport:
    """The exact leakage over the chosen secret pairs (docs/math.md §16), each a pair of sets of sequences."""
    k = priors[0].n_states
    best = LeakageReport(0.0)
    for index, prior in enumerate(priors):
        if prior.length not in tables:
            tables[prior.length] = _tables(k, prior.length, mechanism, releases, len(priors), work)
        seqs, matrix, joint = tables[prior.length]
        probs = sequence_probabilities(prior, seqs)
        for label, entry, pair, first, second in secret_masks(secrets, seqs, k):
            mass_i, mass_j = float(probs[first].sum()), float(probs[second].sum())
            if mass_i <= 0 or mass_j <= 0:
                continue
            if work is not None:
                work.add(PRODUCT, 2.0 * seqs.shape[0] * joint.shape[1])
            num = (probs * first) @ joint / mass_i
            den = (probs * second) @ joint / mass_j
            value, w = _ratio(num, den)
            if value > best.eps:
                output = tuple(int(v) for v in np.unravel_index(w, (matrix.shape[1],) * releases))
                best = LeakageReport(value, entry, pair, index, output, label)
    return best


def leakage_report(
    prior_or_priors: MarkovChainPrior | list[MarkovChainPrior],
    mechanism: Callable[[np.ndarray], object],
    releases: int = 1,
    work: WorkCounter | None = None,
    secrets: Secrets | EventSecrets | None = None,
) -> LeakageReport:
    """The exact leakage with the worst (entry, pair, prior, output); see :func:`exact_leakage`.

    Given ``work``, the enumeration units performed are added to it (:func:`exact_leakage_estimate`).
    ``secrets``: the chosen value pairs and entries, or event secrets (docs/math.md §16); None is every
    pair at every entry.
    """
    priors = as_theta(prior_or_priors, "exact_leakage")
    releases = check_whole("releases", releases)
    k = priors[0].n_states
    if secrets is not None and not (isinstance(secrets, Secrets) and secrets.is_all):
        if isinstance(secrets, Secrets):
            secrets.check(k)
        elif isinstance(secrets, EventSecrets):
            secrets.state_mask(k)
        else:
            raise TypeError(f"secrets must be Secrets or EventSecrets; got {type(secrets).__name__}")
        with one_blas_thread():
            return _chosen_report(list(priors), secrets, {}, mechanism, releases, work)
    best = LeakageReport(0.0)
    tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # per length: sequences, outputs, joint
    with one_blas_thread():  # the products are many and small: one BLAS thread is fastest on a busy machine
        for index, prior in enumerate(priors):
            if prior.length not in tables:
                tables[prior.length] = _tables(k, prior.length, mechanism, releases, len(priors), work)
            seqs, matrix, joint = tables[prior.length]
            probs = sequence_probabilities(prior, seqs)
            for t in range(prior.length):
                onehot = (seqs[:, t][None, :] == np.arange(k)[:, None]) * probs[None, :]  # (K, N)
                mass = onehot.sum(axis=1)
                cond = onehot @ joint  # (K, outputs): Pr[ω, X_t = x]
                if work is not None:
                    work.add(PRODUCT, float(k) * seqs.shape[0] * joint.shape[1])
                for x in range(k):
                    for xp in range(k):
                        if x == xp or mass[x] <= 0 or mass[xp] <= 0:
                            continue
                        if work is not None:
                            work.add(ENUMERATION, joint.shape[1])
                        num = cond[x] / mass[x]
                        den = cond[xp] / mass[xp]
                        pos = num > 0
                        if np.any(pos & (den <= 0)):
                            w = int(np.flatnonzero(pos & (den <= 0))[0])
                            value = math.inf
                        else:
                            ratios = np.full(num.shape, -np.inf)
                            ratios[pos] = np.log(num[pos]) - np.log(den[pos])
                            w = int(np.argmax(ratios))
                            value = float(ratios[w])
                        if value > best.eps:
                            output = tuple(int(v) for v in np.unravel_index(w, (matrix.shape[1],) * releases))
                            best = LeakageReport(value, t, (x, xp), index, output)
    return best


def exact_leakage(
    prior_or_priors: MarkovChainPrior | list[MarkovChainPrior],
    mechanism: Callable[[np.ndarray], object],
    releases: int = 1,
    work: WorkCounter | None = None,
    secrets: Secrets | EventSecrets | None = None,
) -> float:
    """The exact Pufferfish leakage of ``releases`` independent runs of ``mechanism`` (docs/math.md §9).

    ``mechanism`` maps a state sequence (numpy int array) to a probability vector over
    finitely many outputs.  Refuses chains with more than 200,000 sequences, and (once the
    mechanism's table is built) what :func:`exact_leakage_estimate` puts past the work limit.
    ``secrets``: the leakage about the chosen secrets only (docs/math.md §16).
    """
    return leakage_report(prior_or_priors, mechanism, releases, work, secrets).eps
