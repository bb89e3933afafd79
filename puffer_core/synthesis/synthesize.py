"""Synthetic sequences with a Pufferfish guarantee: plan, release, model, sample (docs/math.md §19).

:func:`plan_synthesis` decides everything that costs no privacy and draws nothing: the a(b) curve of the prior
for the chosen secrets, the noise scale (from a target ε_puffer or a target accuracy), the privacy event, and
what is wrong with the data for this release (refusals with what to do; notes said beside the result).
:func:`synthesize` then releases the noisy counts (:mod:`.release`), turns them into a chain
(:mod:`.model`, post-processing) and draws the synthetic table (:mod:`.sample`, post-processing): its privacy
cost is the release's, one :class:`~puffer_core.accounting.events.CurveEvent` that composes with every other
curve-calibrated release in a ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..accounting.calibration import Calibration
from ..data.sequences import Sequences, preview_names
from ..data.stats import SequenceStats
from ..engine.curve import InfluenceCurve
from ..engine.influence import influence_curve
from ..errors import DataError
from ..priors.fitting import DEFAULT_SMOOTHING, normalise_counts, smooth_transition
from ..priors.models import MarkovChainPrior, Theta, as_theta, stationary_distribution
from ..secrets.values import Secrets, as_secrets
from ..validation import InvalidParameter, check_choice, check_flag, check_whole, is_whole
from ..work import ProgressCallback
from .counts import ChainCounts, chain_counts
from .fidelity import Fidelity, fidelity
from .model import METHODS, SyntheticChain, fit_synthetic_chain
from .privacy import (
    GUARANTEES,
    CountAccuracy,
    baseline_scale,
    block_l1,
    calibrate_scale,
    certify_scale,
    expected_abs_noise,
    scale_for_abs_noise,
)
from .release import MECHANISM, NoisyCounts, SynthesisEvent, release_counts
from .sample import DEFAULT_CHUNK_ROWS, SyntheticSample

NO_SIGNAL = ("refuse", "allow")


@dataclass(frozen=True)
class Note:
    """Something said beside a synthetic release: ``code`` (typed), ``message`` (words).

    ``about_data`` marks notes computed from the real data (a state seen once, a group of one user): they are for
    the data's owner, not for publication beside the synthetic table.
    """

    code: str
    message: str
    about_data: bool = False


@dataclass(frozen=True, eq=False)
class SynthesisPlan:
    """What a synthetic release will cost and add, decided before any noise is drawn (module docstring).

    ``counts``: the data's counts (never published); ``curve``: the a(b) curve used (the prior at the data's
    longest length, for ``secrets``); ``calibration`` and ``scale``: the curve point and the discrete Laplace scale
    on every count; ``event``: the privacy event; ``signal``: per group, the expected noise mass of one row of
    transition counts, K·E|Z|, over the group's transitions (≥ 1: no signal, refused; ≥ 1/K: a weak one, said);
    ``notes``: what is said beside the result.
    """

    counts: ChainCounts
    prior: Theta
    curve: InfluenceCurve
    secrets: Secrets
    guarantee: str
    calibration: Calibration
    scale: float
    signal: np.ndarray
    notes: tuple[Note, ...]

    @property
    def event(self) -> SynthesisEvent:
        window = block_l1(self.calibration.b, self.curve.length)
        return SynthesisEvent(MECHANISM, self.calibration, scale=self.scale, window_l1=window)

    @property
    def eps_puffer(self) -> float:
        return self.calibration.eps_puffer

    @property
    def expected_abs_noise(self) -> float:
        return expected_abs_noise(self.scale)

    def describe(self) -> str:
        return (
            f"discrete Laplace noise of scale {self.scale:.4g} (E|noise| = {self.expected_abs_noise:.3g}) on each of"
            f" {self.counts.n_groups * (self.counts.n_states ** 2 + self.counts.n_states):,} counts:"
            f" {self.event.describe()}"
        )


@dataclass(frozen=True, eq=False)
class Synthesis:
    """A synthetic release (module docstring): what was published, the chain, the table and its counts.

    ``release``: the noisy counts and public lengths (the only thing computed from the data); ``chain``: the
    synthetic chain (from ``release`` only); ``sample``: the recipe that draws the table again, chunk by chunk;
    ``table``: the table in memory (None when it was written to ``path``); ``synthetic_counts``: the counts of the
    synthetic table (fidelity compares them with the data's, :func:`puffer_core.synthesis.fidelity.fidelity`).
    """

    plan: SynthesisPlan
    release: NoisyCounts
    chain: SyntheticChain
    sample: SyntheticSample
    table: pd.DataFrame | None
    path: Path | None
    synthetic_counts: ChainCounts

    @property
    def event(self) -> SynthesisEvent:
        return self.release.event

    @property
    def eps_puffer(self) -> float:
        return self.release.eps_puffer

    @property
    def notes(self) -> tuple[Note, ...]:
        return self.plan.notes

    def fidelity(self, top_k: int = 3, query: str = "visits") -> Fidelity:
        """Real against synthetic (docs/math.md §19.5): the data's counts against the synthetic table's.

        For the data's owner: the real side reads the data's counts, which are never published.
        """
        return fidelity(self.plan.counts, self.synthetic_counts, top_k, query)


def _counts(data: object, by_group: bool | None, columns: Mapping[str, str | None] | None) -> ChainCounts:
    if isinstance(data, ChainCounts):
        if by_group is False and data.groups is not None:
            return data.pooled()
        return data
    if isinstance(data, (Sequences, SequenceStats)):
        return chain_counts(data, by_group, columns)
    raise TypeError(
        "synthesize takes Sequences (load_sequences), SequenceStats (load_stats) or ChainCounts"
        f" (load_chain_counts); got {type(data).__name__}"
    )


def fitted_prior(counts: ChainCounts, smoothing: float = DEFAULT_SMOOTHING) -> MarkovChainPrior:
    """The chain of docs/math.md §6 fitted on all groups' counts together, at the data's longest length."""
    transition = smooth_transition(normalise_counts(counts.transitions.sum(axis=0)), smoothing)
    try:
        stationary_distribution(transition)
        initial = None
    except ValueError:
        initial = counts.first_states.sum(axis=0) / counts.n_users
    return MarkovChainPrior(transition, initial, counts.max_length, counts.states)


def _prior(prior: object, counts: ChainCounts) -> tuple[Theta, list[Note]]:
    notes: list[Note] = []
    if prior is None:
        return as_theta(fitted_prior(counts), "synthesize"), notes
    theta = as_theta(prior, "synthesize")
    if theta.n_states != counts.n_states:
        raise ValueError(
            f"the prior has {theta.n_states} states but the data have {counts.n_states}"
            f" ({preview_names(counts.states)}); fit the prior on these data or give one over the same states"
        )
    default = tuple(str(i) for i in range(counts.n_states))
    for member in theta:
        if member.labels not in (counts.states, default):
            raise ValueError(
                f"the prior's states {preview_names(member.labels)} are not the data's {preview_names(counts.states)}"
                " (in the same order); fit the prior on these data or label it with their states"
            )
    if any(member.labels == default for member in theta) and counts.states != default:
        notes.append(Note("prior_unlabelled", "the prior's states are numbered, not named: state number k is taken"
                                              f" to be the data's k-th state ({preview_names(counts.states)})"))
    longest = counts.max_length
    return as_theta([member.with_length(longest) for member in theta], "synthesize"), notes


def secret_curve(prior: Theta, secrets: Secrets) -> InfluenceCurve:
    """The a(b) curve a synthetic release is calibrated on, for the chosen ``secrets``: the one call of the engine
    (docs/math.md §16, §19.3)."""
    return influence_curve(prior, secrets=secrets)


def _scale(curve: InfluenceCurve, counts: ChainCounts, guarantee: str, eps_puffer: float | None,
           accuracy: CountAccuracy | None) -> tuple[Calibration, float]:
    if (eps_puffer is None) == (accuracy is None):
        raise ValueError("give either eps_puffer (the guarantee) or accuracy (a CountAccuracy target), not both")
    if accuracy is not None:
        if not isinstance(accuracy, CountAccuracy):
            raise ValueError(f"accuracy must be a CountAccuracy(alpha, beta); got {type(accuracy).__name__}")
        scale = accuracy.scale(counts.n_groups * (counts.n_states**2 + counts.n_states))
        if guarantee == "pufferfish":
            return certify_scale(curve, scale), scale
        eps = (4.0 * curve.length if guarantee == "group_dp" else 2.0 * curve.length) / scale
        return baseline_scale(guarantee, eps, curve.length)[0], scale
    if eps_puffer is None:
        raise ValueError("give either eps_puffer (the guarantee) or accuracy (a CountAccuracy target)")
    if guarantee == "pufferfish":
        return calibrate_scale(curve, eps_puffer)
    return baseline_scale(guarantee, eps_puffer, curve.length)


def _eps_for_scale(curve: InfluenceCurve, guarantee: str, scale: float) -> float:
    if guarantee == "pufferfish":
        return certify_scale(curve, scale).eps_puffer
    return (4.0 if guarantee == "group_dp" else 2.0) * curve.length / scale


def _check_groups(counts: ChainCounts, min_group_users: int) -> None:
    users = counts.users_per_group
    empty = np.flatnonzero(users == 0)
    if empty.size:
        raise DataError(
            f"group(s) {counts.group_names(empty)} have no users: there is nothing to synthesize for them and no count"
            " to release; remove them from the counts"
        )
    small = np.flatnonzero(users < min_group_users)
    if small.size:
        raise DataError(
            f"group(s) {counts.group_names(small)} have fewer than {min_group_users} users (the smallest has"
            f" {users[small].min()}); a group's lengths are released as they are, and its chain would come from so"
            " few people's sequences: merge small groups, synthesize without a group column, or allow it with"
            " min_group_users=1"
        )


def _signal(counts: ChainCounts, scale: float) -> np.ndarray:
    """Per group: the expected noise mass of one row of transition counts, K·E|Z|, over the group's transitions.

    ≥ 1: even a row holding every transition of the group would be below its noise — no chain can be read from
    the release whatever the data (refused).  ≥ 1/K: the average row is below its noise (a weak signal, said).
    """
    noise = counts.n_states * expected_abs_noise(scale)
    moves = counts.transitions_per_group.astype(float)
    return np.where(moves > 0, noise / np.where(moves > 0, moves, 1.0), 0.0)


def _no_signal(counts: ChainCounts, curve: InfluenceCurve, guarantee: str, scale: float,
               signal: np.ndarray, eps: float) -> str:
    worst = int(np.argmax(signal))
    moves = int(counts.transitions_per_group[worst])
    k = counts.n_states
    needed = _eps_for_scale(curve, guarantee, scale_for_abs_noise(moves / k) * (1 - 1e-9))
    row_noise = k * expected_abs_noise(scale)
    return (
        f"ε_puffer = {eps:.4g} adds discrete Laplace noise of scale {scale:.4g} to every count, {row_noise:,.0f} in"
        f" expectation to each row of {k} transition counts; group(s) {counts.group_names(np.flatnonzero(signal >= 1))}"
        f" have fewer transitions in all than that (group {counts.group_names(worst)}: {moves:,}), so not even one"
        " row of their chain can stand above the noise: the synthetic chain would be noise, not data. The"
        f" release carries a signal from ε_puffer ≈ {needed:.3g}; or merge groups or states, or synthesize"
        " anyway with if_no_signal='allow'"
    )


def _notes(counts: ChainCounts, scale: float, signal: np.ndarray, secrets: Secrets) -> list[Note]:
    notes = []
    entries = counts.entries().sum(axis=0)
    once = [counts.states[i] for i in np.flatnonzero(entries <= 1)]
    if once:
        notes.append(Note(
            "rare_states",
            f"state(s) {preview_names(once)} appear in one entry of the data: their synthetic frequency is set by the"
            " noise, not by the data; merge them into similar states if they matter", True,
        ))
    one_user = np.flatnonzero(counts.users_per_group == 1)
    if one_user.size:
        notes.append(Note(
            "one_user_group",
            f"group(s) {counts.group_names(one_user)} have one user: the synthetic user of such a group has that"
            " person's length (lengths are public) and a chain released from that one sequence", True,
        ))
    first_noise = counts.n_states * expected_abs_noise(scale)
    weak = np.flatnonzero(counts.users_per_group <= first_noise)
    if weak.size:
        notes.append(Note(
            "weak_first_states",
            f"the noise on the first-state counts ({first_noise:,.0f} in all, expected) is as large as the number of"
            f" users of group(s) {counts.group_names(weak)}: their synthetic first states follow mostly the group's"
            " share of each state in all entries",
        ))
    if np.any(signal >= 1):
        notes.append(Note(
            "no_signal",
            "the noise outweighs all the transition counts of group(s)"
            f" {counts.group_names(np.flatnonzero(signal >= 1))} (even one row holding them all would be below its"
            " noise): their synthetic chain is noise",
        ))
    elif np.any(signal * counts.n_states >= 1):
        weak = np.flatnonzero(signal * counts.n_states >= 1)
        notes.append(Note(
            "weak_signal",
            f"in group(s) {counts.group_names(weak)} the average row of transition counts is below its noise: only the"
            " busiest states' transitions carry the data's signal, the others follow the pooled chain",
        ))
    return notes


def plan_synthesis(
    data: Sequences | SequenceStats | ChainCounts,
    prior: object = None,
    eps_puffer: float | None = None,
    *,
    accuracy: CountAccuracy | None = None,
    secrets: Secrets | None = None,
    guarantee: str = "pufferfish",
    by_group: bool | None = None,
    columns: Mapping[str, str | None] | None = None,
    min_group_users: int = 2,
    if_no_signal: str = "refuse",
) -> SynthesisPlan:
    """The cost and the noise of a synthetic release, before anything is drawn (docs/math.md §19.3).

    ``data``: Sequences, SequenceStats (one chain for everyone) or :class:`ChainCounts` (e.g. from
    :func:`~puffer_core.synthesis.sources.load_chain_counts`).  ``prior``: the attacker's belief, a
    :class:`MarkovChainPrior` or a list of them (Θ), over the data's states; None fits it on the data's counts
    (docs/math.md §6).  Its length is set to the data's longest sequence.  Give ``eps_puffer`` (the guarantee)
    or ``accuracy`` (a :class:`~puffer_core.synthesis.privacy.CountAccuracy`: every count within ±α).
    ``secrets``: what is protected (:class:`~puffer_core.secrets.Secrets`, default every entry and pair).
    ``guarantee``: ``"pufferfish"``, or a DP baseline for comparison (``"group_dp"``, ``"user_dp"``,
    :data:`~puffer_core.synthesis.privacy.GUARANTEES`).  ``by_group``: one chain per group (default when the data
    have groups).  Refused: a group with no users or fewer than ``min_group_users``; noise that outweighs some
    group's transitions, unless ``if_no_signal="allow"`` (then said in the notes).
    """
    check_choice("guarantee", guarantee, GUARANTEES)
    check_choice("if_no_signal", if_no_signal, NO_SIGNAL)
    min_group_users = check_whole("min_group_users", min_group_users)
    if by_group is not None:
        by_group = check_flag("by_group", by_group)
    secrets = as_secrets(secrets)
    counts = _counts(data, by_group, columns)
    _check_groups(counts, int(min_group_users))
    theta, notes = _prior(prior, counts)
    curve = secret_curve(theta, secrets)
    calibration, scale = _scale(curve, counts, guarantee, eps_puffer, accuracy)
    signal = _signal(counts, scale)
    if if_no_signal == "refuse" and np.any(signal >= 1):
        raise DataError(_no_signal(counts, curve, guarantee, scale, signal, calibration.eps_puffer))
    notes += _notes(counts, scale, signal, secrets)
    return SynthesisPlan(counts, theta, curve, secrets, guarantee, calibration, scale, signal, tuple(notes))


def _generator(rng: object) -> np.random.Generator | None:
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    if is_whole(rng) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise (ValueError if is_whole(rng) else InvalidParameter)(
        "rng must be None (a real release: OpenDP's noise), a whole-number seed or a numpy random Generator"
        f" (reproducible, for teaching and tests); got {rng!r}"
    )


def draw_synthesis(plan: SynthesisPlan, rng: object = None, *, method: str = "projection",
                   chunk_rows: int = DEFAULT_CHUNK_ROWS) -> tuple[NoisyCounts, SyntheticChain, SyntheticSample]:
    """The release of a :class:`SynthesisPlan`, its chain and the recipe of its table (nothing drawn yet but the noise).

    ``rng``: None for a real release (OpenDP draws the noise; the sample's seed comes from the operating system),
    or a seed / Generator for a reproducible one.
    """
    check_choice("method", method, METHODS)
    check_whole("chunk_rows", chunk_rows)
    generator = _generator(rng)
    release = release_counts(plan.counts, plan.scale, plan.event, plan.guarantee, generator)
    chain = fit_synthetic_chain(release, method)
    seed = int((generator or np.random.default_rng()).integers(2**63))
    sample = SyntheticSample(chain, release.length_values, release.length_users, release.columns, seed, chunk_rows)
    return release, chain, sample


def run_synthesis(plan: SynthesisPlan, rng: object = None, *, method: str = "projection",
                  out: str | Path | None = None, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                  progress: ProgressCallback | None = None) -> Synthesis:
    """Release, model and draw the synthetic table of a :class:`SynthesisPlan` (module docstring).

    ``rng`` as in :func:`draw_synthesis`.  ``out``: a .parquet, .pq, .csv or .csv.gz path to stream the table
    to; None keeps it in memory (at most :data:`~puffer_core.synthesis.sample.MAX_FRAME_ROWS` rows).
    ``progress(stage, fraction)`` follows the drawing (:class:`puffer_core.work.Progress`; it may raise to stop).
    """
    release, chain, sample = draw_synthesis(plan, rng, method=method, chunk_rows=chunk_rows)
    if out is None:
        table, counts = sample.to_frame(progress)
        return Synthesis(plan, release, chain, sample, table, None, counts)
    path = Path(out)
    return Synthesis(plan, release, chain, sample, None, path, sample.write(path, progress))


def synthesize(
    data: Sequences | SequenceStats | ChainCounts,
    prior: object = None,
    eps_puffer: float | None = None,
    *,
    accuracy: CountAccuracy | None = None,
    secrets: Secrets | None = None,
    rng: object = None,
    guarantee: str = "pufferfish",
    by_group: bool | None = None,
    columns: Mapping[str, str | None] | None = None,
    method: str = "projection",
    out: str | Path | None = None,
    min_group_users: int = 2,
    if_no_signal: str = "refuse",
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: ProgressCallback | None = None,
) -> Synthesis:
    """Synthetic sequences of ``data`` with an ε_puffer-Pufferfish guarantee (docs/math.md §19).

    :func:`plan_synthesis` (the arguments up to ``if_no_signal``), then :func:`run_synthesis` (``rng``,
    ``method``, ``out``, ``chunk_rows``, ``progress``).  Returns a :class:`Synthesis`: ``.table`` (or the file at
    ``.path``), ``.event`` (the privacy event, for a ledger), ``.release`` (what was published),
    ``.synthetic_counts``.
    """
    plan = plan_synthesis(
        data, prior, eps_puffer, accuracy=accuracy, secrets=secrets, guarantee=guarantee, by_group=by_group,
        columns=columns, min_group_users=min_group_users, if_no_signal=if_no_signal,
    )
    return run_synthesis(plan, rng, method=method, out=out, chunk_rows=chunk_rows, progress=progress)
