"""The releases the tightness ladder attacks, by name: one record per release (docs/math.md §9–§11).

:data:`RELEASES` holds one :class:`ReleaseSpec` per release: its law (:mod:`puffer_core.stream.laws`),
its exact leakage by enumeration (:mod:`puffer_core.audit.stream`, tiny chains), its attack
(:mod:`puffer_core.attacks`, any size) and the work each takes, so that what is out of reach is
refused up front with the reason.  Two kinds: a *stream* (a release at every step, ε per step) and
a single release of one user's *whole sequence* (ε per entry).  A new release is one record here
plus its test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..attacks.attacker import Attack, attack_histogram, attack_stream
from ..audit.stream import StreamAudit, exact_histogram_leakage, exact_stream_leakage
from ..priors.models import Theta
from ..stream.laws import ClampedDiscreteLaplace, RandomizedResponse

# what is enumerated or attacked within about a second or a few (the app's and the scripts' budget)
EXACT_STREAM_SEQUENCES = 5_000  # K^T sequences of a stream (puffer_core.audit.stream's own limit)
EXACT_STREAM_WORK = 30_000_000  # sequences × joint outputs × T × priors
EXACT_HISTOGRAM_CELLS = 5_000_000  # sequences × outputs of the whole-sequence histogram (Laplace)
EXACT_RANKING_WORK = 20_000  # sequences × rankings of the exponential mechanism (a Python loop per sequence)
ATTACK_STREAM_CELLS = 40_000  # T × K of a stream attack (K = 20, T = 2,000: a few seconds)
ATTACK_HISTOGRAM_WORK = 15_000_000  # (T+1)^(K−1)·K² count cells × T of a histogram attack


def power_text(base: int, exponent: int) -> str:
    """base^exponent as text: the number itself when short, else its power of ten (no overflow)."""
    digits = exponent * math.log10(base)
    if digits < 7:
        return f"{base}^{exponent} = {base**exponent:,}"
    return f"{base}^{exponent} ≈ 10^{math.floor(digits)}"


@dataclass(frozen=True)
class ReleaseSpec:
    """One release the ladder attacks (see the module docstring).

    ``stream``: a release at every step, ``step_law(n_states, eps_t)`` its law at a step, with
    ``step_outputs(n_states)`` outputs; otherwise one release of the whole sequence, ``mechanism`` the
    key of :data:`puffer_core.stream.laws.HISTOGRAM_LAWS`.
    """

    name: str
    label: str
    short: str
    stream: bool
    step_law: Callable[[int, float], object] | None = None
    step_outputs: Callable[[int], int] | None = None
    mechanism: str | None = None

    def laws(self, n_states: int, eps: Sequence[float]) -> list[object]:
        """The law of every step of a stream release with schedule ``eps``."""
        if not self.stream or self.step_law is None:
            raise ValueError(f"{self.label} is not a stream: it has no law per step")
        return [self.step_law(n_states, float(e)) for e in eps]

    def exact_refusal(self, n_states: int, length: int, n_priors: int = 1, k: int = 1) -> str | None:
        """Why the exact leakage is not enumerated within the budget (None: it is)."""
        if self.stream:
            outputs = self.step_outputs(n_states)  # type: ignore[misc]
            if length * math.log10(n_states) > math.log10(EXACT_STREAM_SEQUENCES):
                return (
                    f"{n_states} states over T = {length} steps give {power_text(n_states, length)} sequences;"
                    f" at most {EXACT_STREAM_SEQUENCES:,} are enumerated"
                )
            if n_states**length * outputs**length * length * n_priors > EXACT_STREAM_WORK:
                return (
                    f"{n_states**length:,} sequences × {power_text(outputs, length)} joint outputs of the release"
                    " would take well over a second to enumerate"
                )
            return None
        if self.mechanism == "exponential" and k > n_states:
            return f"k = {k} is larger than the number of states ({n_states})"
        too_many = f"{power_text(n_states, length)} sequences are too many to enumerate here"
        if length * math.log10(n_states) > 7:
            return too_many
        sequences = n_states**length * n_priors
        if self.mechanism == "laplace":
            work, limit = sequences * (length + 1) ** n_states, EXACT_HISTOGRAM_CELLS
        else:
            work, limit = sequences * math.perm(n_states, k), EXACT_RANKING_WORK
        return None if work <= limit else too_many

    def attack_refusal(self, n_states: int, length: int, k: int = 1) -> str | None:
        """Why the attack is not run within the budget (None: it is; the library itself has no such limit)."""
        if self.stream:
            if n_states * length > ATTACK_STREAM_CELLS:
                return (
                    f"T × K = {length * n_states:,} is over {ATTACK_STREAM_CELLS:,} for a stream attack here"
                    " (it would take minutes); the downloaded script runs it"
                )
            return None
        if self.mechanism == "exponential" and k > n_states:
            return f"k = {k} is larger than the number of states ({n_states})"
        cells = (length + 1) ** (n_states - 1) * n_states**2
        if cells * length > ATTACK_HISTOGRAM_WORK:
            return (
                f"the histogram attack tracks every count vector: {n_states} states over T = {length} steps give"
                f" (T+1)^(K−1)·K² ≈ 10^{math.floor(math.log10(cells))} cells, too many here"
                " (fewer states or a shorter chain)"
            )
        return None

    def exact_stream(self, priors: Theta, eps: Sequence[float]) -> StreamAudit:
        """The exact leakage of every entry of a stream release with schedule ``eps`` (tiny chains)."""
        return exact_stream_leakage(priors, self.laws(priors.n_states, eps))

    def exact(self, priors: Theta, eps: float, k: int = 1) -> float:
        """The exact leakage with ε per step (a stream) or per entry (the whole sequence), tiny chains."""
        if self.stream:
            return self.exact_stream(priors, [eps] * priors.max_length).eps
        return exact_histogram_leakage(priors, eps, mechanism=self.mechanism, k=k)

    def attack(self, priors: Theta, eps: float, k: int = 1, seed: int = 0, draws: int = 200) -> Attack:
        """The seeded attack's lower bound (docs/math.md §11)."""
        if self.stream:
            law = self.step_law(priors.n_states, eps)  # type: ignore[misc]
            return attack_stream(priors, law, seed=seed, draws=draws)
        return attack_histogram(priors, eps, mechanism=self.mechanism, k=k, seed=seed, draws=draws)


RELEASES: dict[str, ReleaseSpec] = {
    spec.name: spec
    for spec in (
        ReleaseSpec(
            "stream_rr",
            "a stream: randomized response at every step",
            "randomized response",
            stream=True,
            step_law=lambda k, eps: RandomizedResponse(k, eps),
            step_outputs=lambda k: k,
        ),
        ReleaseSpec(
            "stream_histogram",
            "a stream: a noisy histogram at every step",
            "noisy histogram",
            stream=True,
            step_law=lambda k, eps: ClampedDiscreteLaplace(eps, 0, 1),
            step_outputs=lambda k: 2**k,
        ),
        ReleaseSpec(
            "laplace",
            "one histogram of the whole sequence, Laplace noise",
            "histogram (Laplace)",
            stream=False,
            mechanism="laplace",
        ),
        ReleaseSpec(
            "exponential",
            "the top-k states of the whole sequence, exponential mechanism",
            "top-k (exponential)",
            stream=False,
            mechanism="exponential",
        ),
    )
}


def release_spec(name: object) -> ReleaseSpec:
    """The record of release ``name``; ValueError naming the known ones otherwise."""
    if not isinstance(name, str) or name not in RELEASES:
        raise ValueError(f"unknown release {name!r}; choose from {', '.join(RELEASES)}")
    return RELEASES[name]


def stream_releases() -> tuple[str, ...]:
    """The names of the releases made at every step of a stream."""
    return tuple(name for name, spec in RELEASES.items() if spec.stream)


def largest_exact_length(release: str, n_states: int, n_priors: int = 1, k: int = 1) -> int | None:
    """The longest chain whose exact leakage is still enumerated for this many states (None: not even T = 2)."""
    spec = release_spec(release)
    best = None
    for length in range(2, 40):
        if spec.exact_refusal(n_states, length, n_priors, k) is not None:
            break
        best = length
    return best
