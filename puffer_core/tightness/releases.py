"""The releases the tightness ladder attacks, by name: one record per release (docs/math.md §9–§11).

:data:`RELEASES` holds one :class:`ReleaseSpec` per release: its law (:mod:`puffer_core.mechanisms.laws`),
its exact leakage by enumeration (:mod:`puffer_core.audit.stream`, tiny chains), its attack
(:mod:`puffer_core.attacks`, any size) and the work each takes, so that what is out of reach is
refused up front with the reason.  Two kinds: a *stream* (a release at every step, ε per step) and
a single release of one user's *whole sequence* (ε per entry).  A new release is one record here
plus its test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..attacks.attacker import Attack, attack_histogram, attack_stream, stream_attack_estimate
from ..audit.exact import exact_leakage_estimate
from ..audit.stream import StreamAudit, exact_histogram_leakage, exact_stream_estimate, exact_stream_leakage
from ..mechanisms.laws import ClampedDiscreteLaplace, RandomizedResponse
from ..priors.models import Theta
from ..secrets.values import Secrets
from ..work import WorkEstimate

# what is enumerated or attacked within a few seconds (the app's and the scripts' budget), by the work estimates
EXACT_STREAM_SEQUENCES = 5_000  # K^T sequences of a stream (puffer_core.audit.stream's own limit)
EXACT_BUDGET_SECONDS = 1.0  # the estimated seconds of an exact enumeration (docs/math.md §2.1, the cost)
ATTACK_BUDGET_SECONDS = 10.0  # the estimated seconds of a stream attack (K = 20, T = 2,000 with 200 draws fits)
_RANKING_CALL_US = 200.0  # microseconds of one call of the exponential mechanism's ranking law, plus per ranking:
_RANKING_OUTPUT_US = 25.0  # (a Python loop over the rankings; measured at K = 3–5, k = 1–2)
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
    key of :data:`puffer_core.mechanisms.laws.HISTOGRAM_LAWS`.
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

    def exact_estimate(self, n_states: int, length: int, n_priors: int = 1, k: int = 1) -> WorkEstimate:
        """The work of the exact leakage by enumeration, against the budget :data:`EXACT_BUDGET_SECONDS`."""
        if self.stream:
            outputs = self.step_outputs(n_states)  # type: ignore[misc]
            return exact_stream_estimate(n_states, length, outputs, n_priors, limit=EXACT_BUDGET_SECONDS)
        if self.mechanism == "laplace":
            return exact_leakage_estimate(n_states, length, lambda t: float(t + 1) ** n_states, n_priors,
                                          limit=EXACT_BUDGET_SECONDS)
        rankings = math.perm(n_states, min(k, n_states))
        return exact_leakage_estimate(n_states, length, rankings, n_priors, call_us=_RANKING_CALL_US
                                      + _RANKING_OUTPUT_US * rankings, limit=EXACT_BUDGET_SECONDS)

    def exact_refusal(self, n_states: int, length: int, n_priors: int = 1, k: int = 1) -> str | None:
        """Why the exact leakage is not enumerated within the budget (None: it is), from :meth:`exact_estimate`."""
        if self.stream:
            if length * math.log10(n_states) > math.log10(EXACT_STREAM_SEQUENCES):
                return (
                    f"{n_states} states over T = {length} steps give {power_text(n_states, length)} sequences;"
                    f" at most {EXACT_STREAM_SEQUENCES:,} are enumerated"
                )
            estimate = self.exact_estimate(n_states, length, n_priors)
            if estimate.fits:
                return None
            return (
                f"enumerating {n_states**length:,} sequences × {power_text(self.step_outputs(n_states), length)}"  # type: ignore[misc]
                f" joint outputs of the release would take {estimate.describe()}, over the {EXACT_BUDGET_SECONDS:g} s"
                f" budget here (T ≤ {estimate.largest['T']} fits)"
            )
        if self.mechanism == "exponential" and k > n_states:
            return f"k = {k} is larger than the number of states ({n_states})"
        estimate = self.exact_estimate(n_states, length, n_priors, k)
        if estimate.fits:
            return None
        return (
            f"{power_text(n_states, length)} sequences are too many to enumerate here: it would take"
            f" {estimate.describe()}, over the {EXACT_BUDGET_SECONDS:g} s budget (T ≤ {estimate.largest['T']} fits)"
        )

    def attack_estimate(self, n_states: int, length: int, n_priors: int = 1, draws: int = 200) -> WorkEstimate:
        """The work of a stream release's attack (:func:`puffer_core.attacks.attacker.stream_attack_estimate`)."""
        if not self.stream:
            raise ValueError(f"{self.label} is not a stream: its attack is the histogram attack")
        outputs = self.step_outputs(n_states)  # type: ignore[misc]
        estimate = stream_attack_estimate(n_states, length, n_priors, draws, outputs=outputs)
        return replace(estimate, limit=ATTACK_BUDGET_SECONDS)

    def attack_refusal(self, n_states: int, length: int, k: int = 1) -> str | None:
        """Why the attack is not run within the budget (None: it is; the library itself allows up to its work limit)."""
        if self.stream:
            estimate = self.attack_estimate(n_states, length)
            if estimate.fits:
                return None
            return (
                f"the stream attack would take {estimate.describe()}, over the {ATTACK_BUDGET_SECONDS:g} s budget"
                f" here (T ≤ {_largest_attack_length(self, n_states, length)} fits); the downloaded script runs it"
            )
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

    def exact_stream(self, priors: Theta, eps: Sequence[float], secrets: Secrets | None = None) -> StreamAudit:
        """The exact leakage of every entry of a stream release with schedule ``eps`` (tiny chains); ``secrets``:
        about the chosen pairs at the protected entries (docs/math.md §16)."""
        return exact_stream_leakage(priors, self.laws(priors.n_states, eps), secrets=secrets)

    def exact(self, priors: Theta, eps: float, k: int = 1, secrets: Secrets | None = None) -> float:
        """The exact leakage with ε per step (a stream) or per entry (the whole sequence), tiny chains."""
        if self.stream:
            return self.exact_stream(priors, [eps] * priors.max_length, secrets).eps
        return exact_histogram_leakage(priors, eps, mechanism=self.mechanism, k=k, secrets=secrets)

    def attack(self, priors: Theta, eps: float, k: int = 1, seed: int = 0, draws: int = 200,
               secrets: Secrets | None = None) -> Attack:
        """The seeded attack's lower bound (docs/math.md §11), on the chosen secrets when given (§16)."""
        if self.stream:
            law = self.step_law(priors.n_states, eps)  # type: ignore[misc]
            return attack_stream(priors, law, seed=seed, draws=draws, secrets=secrets)
        return attack_histogram(priors, eps, mechanism=self.mechanism, k=k, seed=seed, draws=draws, secrets=secrets)


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


def _largest_attack_length(spec: ReleaseSpec, n_states: int, length: int) -> int:
    """The longest stream (≤ length) whose attack fits the budget, by bisection (the work grows with T)."""
    low, high = 1, length
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if spec.attack_estimate(n_states, middle).fits else (low, middle)
    return low


def largest_exact_length(release: str, n_states: int, n_priors: int = 1, k: int = 1) -> int | None:
    """The longest chain whose exact leakage is still enumerated for this many states (None: not even T = 2)."""
    spec = release_spec(release)
    best = None
    for length in range(2, 40):
        if spec.exact_refusal(n_states, length, n_priors, k) is not None:
            break
        best = length
    return best
