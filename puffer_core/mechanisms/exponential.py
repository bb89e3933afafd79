"""Exponential top-k ([C] §6.4.2, §7.1.3, Algorithm 2; docs/math.md §5).

k rounds without replacement, each with ε_DP/k; round picks r with Pr ∝ exp(ε_round·u(r)/(2Δu)),
u = count, Δu = 1 (one entry moves one unit between two counts, so each count changes by at
most 1).  Because every round uses the same weights, the k rounds are exactly "add
Gumbel(2Δu/ε_round) noise to every count and keep the k largest, in order".

The **Pufferfish** version calibrates ε_DP from the a(b) curve (docs/math.md §3); the **group
DP** baseline uses ε_DP = ε_puffer/T_max.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..accounting.calibration import calibrate, group_dp
from ..accounting.events import CurveEvent
from ..validation import check_eps, check_probability, check_rng, check_whole
from .base import MAX_OUTPUT_CELLS, MAX_OUTPUTS, as_curve, check_counts, check_trials, opendp_prelude, top_k_indices
from .laws import ExponentialRanking
from .noise import GUMBEL

K_NAME = "k (how many top states to release)"


@dataclass(frozen=True)
class ExponentialTopK:
    """Top-k by k rounds of the exponential mechanism without replacement (docs/math.md §5).

    Round j picks a not-yet-picked state r with Pr ∝ exp(ε_round · count(r) / 2), ε_round =
    ε_DP/k; the output is the k picks in order (a ranking).  The whole release is per-entry
    ε_DP-DP; ``accounting`` says what ε_puffer that buys.
    """

    accounting: CurveEvent
    k: int
    noise: ClassVar[str] = GUMBEL.name

    def __post_init__(self) -> None:
        check_whole(K_NAME, self.k)
        check_eps("eps_dp", self.accounting.eps_dp)

    @property
    def name(self) -> str:
        return self.accounting.mechanism

    @property
    def eps_round(self) -> float:
        """ε_DP spent by each of the k rounds."""
        return self.accounting.eps_dp / self.k

    @property
    def gumbel_scale(self) -> float:
        """Scale 2Δu/ε_round of the Gumbel noise whose top k equals the k rounds (Δu = 1)."""
        return 2.0 / self.eps_round

    @property
    def noise_scale(self) -> float:
        return self.gumbel_scale

    @property
    def variance(self) -> float:
        """Variance π²λ²/6 of the Gumbel noise on each count (the counts themselves are never released)."""
        return math.pi**2 * self.gumbel_scale**2 / 6.0

    def expected_l1_error(self, n_counts: int) -> float:
        """A ranking releases no counts: there is no count error to expect (ValueError)."""
        raise ValueError(f"{self.name} releases a ranking, not counts: it has no count error")

    def _counts(self, counts: object) -> np.ndarray:
        values = check_counts(counts)
        if values.shape[-1] < self.k:
            raise ValueError(f"cannot pick the top {self.k} of only {values.shape[-1]} states; lower k")
        return values

    def _n_states(self, n_states: object) -> int:
        return check_whole("n_states", n_states, minimum=self.k)

    def release(self, counts: object, rng: np.random.Generator | None = None) -> np.ndarray:
        """One release: the top-k ranking of each row of counts (shape ``(..., k)``).

        With ``rng=None`` (a real release) the noise is drawn by OpenDP's
        ``make_noisy_top_k`` with Gumbel noise of scale 2k/ε_DP — OpenDP's own secure
        generator; the Gumbel peel is exactly the k exponential-mechanism rounds.  (OpenDP
        labels that sampler with zero-concentrated DP; its pure ε_DP is the exponential
        mechanism's, ε_round per round.)  A Generator draws with numpy instead, for teaching.
        """
        values = self._counts(counts)
        if rng is not None:
            return self.simulate(values, 1, check_rng(rng))[0]
        rows = values.reshape(-1, values.shape[-1])
        measurement = self.opendp_measurement(rows.shape[1])
        out = np.array([measurement([float(v) for v in row]) for row in rows], dtype=np.int64)
        return out.reshape(values.shape[:-1] + (self.k,))

    def opendp_measurement(self, n_states: int) -> Any:
        """OpenDP's ``make_noisy_top_k`` (Gumbel, scale 2k/ε_DP) on ``n_states`` counts.

        OpenDP's privacy map is in zero-concentrated DP: ρ = ε_DP²/(8k) at d_in = 1, which is
        the k rounds of the ε_round-exponential mechanism expressed as zCDP.
        """
        n_states = self._n_states(n_states)
        dp = opendp_prelude()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n_states), dp.linf_distance(T=float)
        return dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=self.k, scale=self.gumbel_scale)

    def simulate(self, counts: object, trials: int, rng: np.random.Generator) -> np.ndarray:
        """``trials`` independent rankings, shape ``(trials, ..., k)`` (vectorised numpy)."""
        values = self._counts(counts)
        trials = check_trials(trials, values)
        rng = check_rng(rng)
        noisy = values[None, ...] + GUMBEL.sample(rng, self.gumbel_scale, (trials,) + values.shape)
        return top_k_indices(noisy, self.k)

    def ranking(self, draws: np.ndarray, k: int) -> np.ndarray:
        """The first k picks of rankings drawn by :meth:`simulate` or :meth:`release` (k ≤ self.k)."""
        k = check_whole("k", k, maximum=self.k)
        return np.asarray(draws)[..., :k]

    def outputs(self, n_states: int) -> np.ndarray:
        """Every possible ranking (ordered k-tuples of distinct states), in the order of :meth:`probabilities`."""
        n_states = self._n_states(n_states)
        n_out = math.perm(n_states, self.k)
        if n_out > MAX_OUTPUTS:
            raise ValueError(
                f"{n_states} states and k = {self.k} give {n_out:,} rankings; exact probabilities are limited"
                f" to {MAX_OUTPUTS:,} outputs"
            )
        return np.array(list(itertools.permutations(range(n_states), self.k)), dtype=np.int64).reshape(
            n_out, self.k
        )

    def probabilities(self, counts: object) -> np.ndarray:
        """Exact Pr[ranking] for every ranking of :meth:`outputs` (one row of counts).

        :class:`puffer_core.mechanisms.laws.ExponentialRanking`: in log space round by round, relative to
        the largest count, so that huge counts or ε give a valid distribution (probabilities too small
        for a float are 0), never NaN.
        """
        values = self._counts(counts)
        if values.ndim != 1:
            raise ValueError("probabilities takes one row of counts (1-D)")
        outs = self.outputs(values.size)
        if outs.shape[0] * values.size > MAX_OUTPUT_CELLS:
            raise ValueError(f"{outs.shape[0]:,} rankings of {values.size} states are too many to enumerate exactly")
        law = ExponentialRanking(self.accounting.eps_dp, self.k)  # the one home of the ranking law
        return np.exp(law.log_probabilities(outs, values[None, :])[:, 0])

    def selection_probabilities(self, counts: object) -> np.ndarray:
        """Pr[state is picked first] for every state (the softmax of the first round)."""
        values = self._counts(counts)
        with np.errstate(over="ignore"):
            scores = 0.5 * self.eps_round * (values - values.max(axis=-1, keepdims=True))
        w = np.exp(scores)
        return w / w.sum(axis=-1, keepdims=True)

    def count_gap_bound(self, n_states: int, beta: float = 0.05) -> float:
        """With probability ≥ 1 − β, a round's pick has a count within this many of the best left.

        The exponential mechanism's utility bound: (2Δu/ε_round)·(ln m + ln(1/β)), m = n_states.
        """
        beta = check_probability("beta", beta, open_interval=True)
        n_states = check_whole("n_states", n_states)
        return self.gumbel_scale * (math.log(n_states) + math.log(1.0 / beta))


def pufferfish_exponential(curve_or_prior: object, eps_puffer: float, k: int = 3) -> ExponentialTopK:
    """Exponential top-k calibrated on the a(b) curve to ``eps_puffer`` (docs/math.md §3, §5; [C] Algorithm 2)."""
    cal = calibrate(as_curve(curve_or_prior), eps_puffer)
    return ExponentialTopK(CurveEvent("pufferfish_exponential", cal), check_whole(K_NAME, k))


def group_dp_exponential(curve_or_prior: object, eps_puffer: float, k: int = 3) -> ExponentialTopK:
    """Exponential top-k with ε_DP = ε_puffer / T_max, the group-DP baseline (docs/math.md §3, §5)."""
    cal = group_dp(as_curve(curve_or_prior), eps_puffer)
    return ExponentialTopK(CurveEvent("group_dp_exponential", cal), check_whole(K_NAME, k))
