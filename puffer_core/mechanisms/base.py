"""What every mechanism shares: the protocol it follows, the count checks, top-k, OpenDP (docs/math.md §5).

A mechanism is a small immutable object that carries its **accounting** — the privacy event of
one release (:mod:`puffer_core.accounting.events`) — apart from its **sampling**, in the spirit of OpenDP's
measurements; like diffprivlib it exposes the error it adds next to the sampler.  The input is
a vector of true counts (one per state) or a table of them (one row per group, e.g. per
country).  A table costs no more than one row: an entry sits in one group, so changing it moves
one unit between two counts of one row — the table as a whole still has L1 sensitivity 2, each
count (and each category's column of counts) changes by at most 1, and per-row top-k selections
touch disjoint entries (parallel composition).

Three ways to draw, the same for every mechanism (:class:`Mechanism`):

- ``release(counts)`` — one real release.  Noise comes from OpenDP's samplers
  (``make_laplace``, ``make_noisy_top_k``), which use OpenDP's own cryptographically secure
  generator; nothing about it is reproducible.  Passing ``rng=`` a ``numpy.random.Generator``
  draws the same distribution with numpy instead: reproducible, for teaching and tests, not
  for publishing.
- ``simulate(counts, trials, rng)`` — many trials at once with vectorised numpy, for the
  what-if simulator (always needs a Generator); ``ranking(draws, k)`` turns what was drawn into
  top-k rankings.
- ``probabilities(...)`` — the exact output distribution where it is finite (exponential
  top-k; binned Laplace counts), for chi-square tests and the exact audit of docs/math.md §9.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..accounting.events import PrivacyEvent
from ..accounting.renyi import RenyiEvent
from ..engine.curve import InfluenceCurve
from ..engine.influence import influence_curve
from ..priors.models import as_theta
from ..validation import InvalidParameter, as_numbers, check_whole

HISTOGRAM_SENSITIVITY = 2.0  # L1 sensitivity of a histogram of all entries to one entry
MAX_OUTPUTS = 2_000_000  # exact output distributions are limited to this many outputs
MAX_OUTPUT_CELLS = 20_000_000  # outputs × states held at once when enumerating


class Refused(ValueError):
    """A mechanism that cannot be built for this prior: ``code`` says why in one word, the message in words.

    ``"no_guarantee"``: its theorem gives no guarantee here (e.g. the influence-matrix translation on a
    sticky chain); ``"out_of_reach"``: computing its noise would take longer than the work limit, said
    with the estimate.  The simulator records the refusal and carries on with the other mechanisms.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Mechanism(Protocol):
    """The vocabulary every mechanism shares (see the module docstring)."""

    @property
    def accounting(self) -> PrivacyEvent | RenyiEvent:
        """The privacy event of one release (:mod:`puffer_core.accounting.events`; a Rényi event for Gaussian
        noise, :mod:`puffer_core.accounting.renyi`)."""
        ...

    @property
    def name(self) -> str:
        """The registry name of the mechanism (a key of :data:`puffer_core.mechanisms.MECHANISMS`)."""
        ...

    @property
    def noise(self) -> str:
        """The code of the noise it adds: a key of :data:`puffer_core.mechanisms.noise.NOISES`."""
        ...

    @property
    def noise_scale(self) -> float:
        """The scale of that noise, per count."""
        ...

    @property
    def variance(self) -> float:
        """The variance of that noise, per count (the post-processing weighs the counts by it)."""
        ...

    def expected_l1_error(self, n_counts: int) -> float:
        """E Σ_j |noisy_j − c_j| over ``n_counts`` released counts (ValueError for a release of no counts)."""
        ...

    def release(self, counts: object, rng: np.random.Generator | None = None) -> np.ndarray: ...

    def simulate(self, counts: object, trials: int, rng: np.random.Generator) -> np.ndarray: ...

    def ranking(self, draws: np.ndarray, k: int) -> np.ndarray:
        """The top-k ranking (best first, along the last axis) of what :meth:`simulate` drew."""
        ...


def check_counts(counts: object, name: str = "counts") -> np.ndarray:
    """True counts: one per state (1-D) or one row per group (2-D), finite and ≥ 0, at least 2 states."""
    values = as_numbers(counts, f"{name} (one count per state)")
    if values.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be one count per state (1-D) or one row of counts per group (2-D); got shape {values.shape}"
        )
    if values.shape[-1] < 2:
        raise ValueError(f"{name} need at least 2 states; got {values.shape[-1]}")
    if values.size and (not np.all(np.isfinite(values)) or np.any(values < 0)):
        raise ValueError(f"{name} must be finite and non-negative")
    return values


def check_trials(trials: object, values: np.ndarray) -> int:
    """How many noisy copies to draw at once: a whole number with trials × counts ≤ ``MAX_OUTPUT_CELLS``."""
    trials = check_whole("trials", trials)
    if trials * max(values.size, 1) > MAX_OUTPUT_CELLS:
        raise ValueError(
            f"{trials:,} trials of {values.size:,} counts are {trials * values.size:,} numbers at once; at most"
            f" {MAX_OUTPUT_CELLS:,} (draw in batches of at most {MAX_OUTPUT_CELLS // max(values.size, 1):,} trials)"
        )
    return trials


def top_k_indices(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values along the last axis, largest first (ties: lower index)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of states ({n}); got {k}")
    if k < n:
        part = np.argpartition(-values, k - 1, axis=-1)[..., :k]
    else:
        part = np.broadcast_to(np.arange(n), values.shape).copy()
    chosen = np.take_along_axis(values, part, axis=-1)
    order = np.lexsort((part, -chosen), axis=-1)
    return np.take_along_axis(part, order, axis=-1)


def opendp_prelude() -> Any:
    """``opendp.prelude`` with the contrib features enabled (imported on first use: it is slow to load)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def as_curve(curve_or_prior: object) -> InfluenceCurve:
    """An InfluenceCurve as given, or the exact curve of a MarkovChainPrior or a set Θ of them."""
    if isinstance(curve_or_prior, InfluenceCurve):
        return curve_or_prior
    try:
        priors = as_theta(curve_or_prior, "a Pufferfish mechanism")
    except ValueError as exc:
        kind = InvalidParameter if isinstance(exc, TypeError) else ValueError
        raise kind(f"give an InfluenceCurve, a MarkovChainPrior or a list of them ({exc})") from None
    return influence_curve(priors)
