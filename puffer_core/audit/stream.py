"""Exact leakage of a stream on tiny chains, by enumeration (docs/math.md §9, §10).

A stream releases r_t ~ emission_t[X_t, ·] at every step t (randomized response, a noisy
histogram, …: :mod:`puffer_core.stream` builds the output laws).  Given a user's whole
sequence the releases are independent, so Pr[r_1..r_T | sequence] = Π_t emission_t[X_t, r_t].
The exact leakage about entry t is the max over pairs (x, x') with positive prior mass, priors
θ and joint outputs r of log Pr[r | X_t = x, θ] / Pr[r | X_t = x', θ], computed here from every
one of the K^T sequences and every one of the Π_t O_t joint outputs — nothing shared with the
TPL recursion or the attacker's forward–backward pass.  It is the truth both bounds of
docs/math.md §10 must stay above.  :func:`exact_histogram_leakage` gives the same truth for one
user's histogram over the whole sequence, the other release the attacker handles (§11).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..mechanisms.laws import check_emissions, histogram_law
from ..priors.models import MAX_LENGTH, MarkovChainPrior, as_theta, check_no_underflow
from ..secrets.events import EventSecrets
from ..secrets.values import Secrets, as_secrets
from ..validation import WORK_LIMIT_SECONDS, InvalidParameter, check_eps, check_positive, check_whole, is_whole
from ..work import ENUMERATION, MEMORY_LIMIT_BYTES, WorkCounter, WorkEstimate, one_blas_thread, unit_seconds
from .exact import all_sequences, count_text, exact_leakage, power, sequence_probabilities

MAX_SEQUENCES = 5_000
MAX_WORK = 400_000_000  # sequences × joint outputs × T
_CHUNK_CELLS = 2_000_000  # sequences × outputs held at once
_PAIR_US = 15.0  # microseconds of interpreter work per pair of states, entry and chunk of joint outputs
_ENTRY_US = 50.0  # per entry and chunk: the likelihood factor and the matrix product's call
_SETUP_US = 10_000.0  # per call: the sequences, the checks, switching to one BLAS thread


@dataclass(frozen=True, eq=False)
class StreamAudit:
    """Exact leakage per entry (``per_entry[t]``, 0-based t) and where the worst is attained.

    ``output`` holds the per-step output indices of the worst joint output.
    """

    eps: float
    per_entry: np.ndarray
    entry: int | None = None
    pair: tuple[int, int] | None = None
    prior_index: int | None = None
    output: tuple[int, ...] | None = None


def _joint_outputs(sizes: Sequence[int], start: int, stop: int) -> np.ndarray:
    """Joint outputs number start..stop−1 (C order over the steps) as per-step indices, (n, T)."""
    flat = np.arange(start, stop)
    out = np.empty((flat.size, len(sizes)), dtype=np.int64)
    for t in range(len(sizes) - 1, -1, -1):
        flat, out[:, t] = np.divmod(flat, sizes[t])
    return out


def exact_stream_estimate(
    n_states: int, length: int, outputs: int | Sequence[int], n_priors: int = 1, limit: float = WORK_LIMIT_SECONDS
) -> WorkEstimate:
    """The work of :func:`exact_stream_leakage` (docs/math.md §9; cost: §2.1), before any of it.

    ``outputs``: the outputs of the release at every step (one number) or per step.  With N = K^T
    sequences and R = Π_t O_t joint outputs, each prior costs N·R·T·(1 + K/8) "enumeration" units
    (the likelihood of every sequence and joint output, one factor per step, then Pr[r, X_t = x] for
    the K states of every entry: measured to cost about an eighth of a likelihood cell per state)
    plus R·T·K(K−1) (every pair's ratio at every entry and joint output), and the interpreter's
    share per call, entry, pair and chunk of outputs.
    ``largest`` holds the longest chain ("T") that fits within ``limit`` seconds with the same states
    and outputs.
    """
    n_states, length = check_whole("n_states", n_states), check_whole("length", length, maximum=MAX_LENGTH)
    n_priors, limit = check_whole("n_priors", n_priors), check_positive("limit", limit)
    if is_whole(outputs):
        sizes = [check_whole("outputs", outputs)] * length
    elif isinstance(outputs, (list, tuple, np.ndarray)) and len(outputs) == length:
        sizes = [check_whole("outputs per step", o) for o in outputs]
    else:
        raise InvalidParameter(f"outputs must be a whole number or one per step ({length}); got {outputs!r}")
    k, T = n_states, len(sizes)
    n_seq, n_out = power(k, T), _product(sizes)
    def nbytes(steps: list[int]) -> float:
        n_steps = power(k, len(steps))
        return 8.0 * (6 * min(n_steps * _product(steps), _CHUNK_CELLS) + 2 * min(n_steps, 1e12) * len(steps))

    shorter = 0  # the longest chain that fits in time and in memory
    while (
        shorter < T
        and unit_seconds(_stream_units(k, sizes[: shorter + 1], n_priors)) <= limit
        and nbytes(sizes[: shorter + 1]) <= MEMORY_LIMIT_BYTES
    ):
        shorter += 1
    priors_text = f", {n_priors} priors" if n_priors > 1 else ""
    return WorkEstimate(
        "the exact leakage of this stream",
        _stream_units(k, sizes, n_priors),
        nbytes(sizes),
        f"{k} states over T = {T} steps give {count_text(n_seq)} sequences × {count_text(n_out)} joint outputs"
        f"{priors_text},"
        " every pair of states at every entry",
        f"use a shorter chain (T ≤ {shorter} fits), fewer states or fewer outputs per step",
        {"T": shorter},
        limit,
    )


def _product(sizes: list[int]) -> float:
    """Π sizes as a float, capped at 1e300 like :func:`power`."""
    return 10.0 ** min(300.0, sum(math.log10(max(o, 1)) for o in sizes))


def _stream_units(k: int, sizes: list[int], n_priors: int) -> dict[str, float]:
    T = len(sizes)
    n_seq, n_out = power(k, T), _product(sizes)
    chunks = math.ceil(n_out / max(1.0, _CHUNK_CELLS // max(1.0, n_seq)))
    return {
        "enumeration": min(1e300, n_priors * n_out * T * (n_seq * (1 + k / 8) + k * (k - 1))),
        "overhead": min(1e300, _SETUP_US + n_priors * chunks * T * (k * (k - 1) * _PAIR_US + _ENTRY_US)),
    }


def exact_stream_leakage(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], emissions: object,
    work: WorkCounter | None = None, secrets: Secrets | None = None,
) -> StreamAudit:
    """The exact leakage of a stream about every entry (docs/math.md §9, §10), for tiny chains.

    ``emissions``: one K×O matrix (the same release at every step) or a list of one K×O_t
    matrix per step, row x = the output law given X_t = x.  Priors in Θ share K and the length
    T.  Refuses more than 5,000 sequences or 4e8 units of work (sequences × joint outputs × T), and
    what :func:`exact_stream_estimate` puts past the work limit; given ``work``, the enumeration and
    product units performed are added to it.  ``secrets``: the leakage about the chosen value pairs at the
    protected entries only (docs/math.md §16; ``per_entry`` is 0 at the others).
    """
    priors = as_theta(prior_or_priors, "exact_stream_leakage", same_length=True)
    k, T = priors.n_states, priors.max_length
    chosen = as_secrets(secrets).check(k)
    protected = chosen.position_mask(T)
    secret_pairs = chosen.pair_matrix(k)
    laws = check_emissions(emissions, k, T)
    n_seq = k**T
    sizes = [law.shape[1] for law in laws]
    n_out = math.prod(sizes)
    if n_seq > MAX_SEQUENCES or n_seq * n_out * T > MAX_WORK:
        raise ValueError(
            f"{k} states over T = {T} steps give {n_seq:,} sequences and {n_out:,} joint outputs; exact"
            f" enumeration is limited to {MAX_SEQUENCES:,} sequences and {MAX_WORK:.0e} units of work"
            " (use a shorter chain, fewer states or fewer outputs per step)"
        )
    exact_stream_estimate(k, T, sizes, len(priors)).check()
    seqs = all_sequences(k, T)
    step = max(1, _CHUNK_CELLS // n_seq)
    per_entry = np.zeros(T)
    best: tuple[float, int | None, tuple[int, int] | None, int | None, tuple[int, ...] | None] = (
        0.0, None, None, None, None
    )
    with one_blas_thread():  # the products are many and small: one BLAS thread is fastest on a busy machine
        for index, prior in enumerate(priors):
            probs = sequence_probabilities(prior, seqs)
            onehot = [(seqs[:, t][None, :] == np.arange(k)[:, None]).astype(float) for t in range(T)]
            mass = [o @ probs for o in onehot]
            for start in range(0, n_out, step):
                outs = _joint_outputs(sizes, start, min(n_out, start + step))
                likelihood = np.ones((n_seq, outs.shape[0]))
                possible = np.ones((n_seq, outs.shape[0]), dtype=bool)
                for t, law in enumerate(laws):
                    factor = law[seqs[:, t]][:, outs[:, t]]
                    likelihood *= factor
                    possible &= factor > 0
                check_no_underflow(likelihood, possible, "a joint output of the stream")
                if work is not None:
                    work.add(ENUMERATION, float(n_seq) * outs.shape[0] * T * (1 + k / 8))
                weighted = probs[:, None] * likelihood
                for t in range(T):
                    if not protected[t]:
                        continue
                    joint = onehot[t] @ weighted  # (K, outputs): Pr[r, X_t = x]
                    for x, xp in itertools.permutations(range(k), 2):
                        if mass[t][x] <= 0 or mass[t][xp] <= 0 or not secret_pairs[x, xp]:
                            continue
                        if work is not None:
                            work.add(ENUMERATION, joint.shape[1])
                        num = joint[x] / mass[t][x]
                        den = joint[xp] / mass[t][xp]
                        pos = num > 0
                        blocked = pos & (den <= 0)
                        if np.any(blocked):
                            w = int(np.flatnonzero(blocked)[0])
                            value = math.inf
                        elif np.any(pos):
                            ratios = np.full(num.shape, -np.inf)
                            ratios[pos] = np.log(num[pos]) - np.log(den[pos])
                            w = int(np.argmax(ratios))
                            value = float(ratios[w])
                        else:
                            continue
                        per_entry[t] = max(per_entry[t], value)
                        if value > best[0]:
                            best = (value, t, (x, xp), index, tuple(int(v) for v in outs[w]))
    per_entry.setflags(write=False)
    return StreamAudit(best[0], per_entry, *best[1:])


def exact_histogram_leakage(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], eps: float, mechanism: str = "laplace", k: int = 1,
    work: WorkCounter | None = None, secrets: Secrets | EventSecrets | None = None,
) -> float:
    """The exact leakage of one user's histogram over the whole sequence (docs/math.md §9, §11), tiny chains.

    ``mechanism="laplace"``: every count of the user's K states plus Lap(2/ε) noise (per-entry
    ε-DP).  Its leakage is a supremum over real outputs; between two whole numbers the
    likelihood ratio of a count is monotone and below 0 or above T constant, so the supremum
    is attained at whole numbers in 0..T, where the continuous Laplace density is proportional
    to the discretised one (two-sided geometric, Pr[Z = z] ∝ e^{−ε|z|/2}).  The release
    enumerated here is that discretised noise clamped to 0..T
    (:class:`puffer_core.mechanisms.laws.ClampedDiscreteLaplace`): (T+1)^K outputs with the same
    leakage.  ``mechanism="exponential"``: the top-``k`` states by count, k rounds of ε/k each
    (:class:`puffer_core.mechanisms.laws.ExponentialRanking`); every ranking is an output.  Uses the
    enumeration of :func:`puffer_core.audit.exact_leakage` and its size limits.
    """
    priors = as_theta(prior_or_priors, "exact_histogram_leakage")
    eps = check_eps("eps", eps)
    n_states, T = priors[0].n_states, max(p.length for p in priors)
    k = check_whole("k", k)
    if k > n_states:
        raise ValueError(f"k = {k} is larger than the number of states ({n_states})")
    law = histogram_law(mechanism, eps, T, k)

    def release(seq: np.ndarray) -> np.ndarray:
        return law.probabilities(np.bincount(seq, minlength=n_states))

    return exact_leakage(priors, release, work=work, secrets=secrets)
