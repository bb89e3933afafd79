"""The attacker's view of repeated releases: posterior traces and runs until a secret falls.

docs/math.md §8 and [C] §4: a mechanism can leak nothing per run yet reveal the secret after a
few runs.  :func:`posterior_trace` runs the mechanism on a true dataset and records the
Bayesian posterior of every secret after each run; :func:`expected_runs_to_reveal` computes
the exact expected number of runs until the posterior of the true secret reaches 1, and
:func:`simulate_runs_to_reveal` estimates it by simulation.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ..validation import check_rng, check_whole
from .model import FiniteModel

TARGETS = ("secret", "dataset")
MAX_STATES = 20_000


def _prior_indices(model: FiniteModel, prior_index: int | Sequence[int] | None) -> list[int]:
    if prior_index is None:
        return list(range(len(model.priors)))
    chosen = [prior_index] if isinstance(prior_index, (int, np.integer)) else list(prior_index)
    for p in chosen:
        if not 0 <= int(p) < len(model.priors):
            raise ValueError(f"prior index {p} is out of range; this model has {len(model.priors)} priors")
    return [int(p) for p in chosen]


def posterior_trace(
    model: FiniteModel,
    true_dataset: Hashable,
    runs: int,
    rng: np.random.Generator,
    prior_index: int | Sequence[int] | None = None,
) -> pd.DataFrame:
    """Run the mechanism ``runs`` times on ``true_dataset``; the attacker's posterior after each run.

    One row per (run, prior, secret pair); run 0 is the prior before any output.  Columns:
    ``run``, ``output`` (the output of that run; None for run 0), ``prior``, ``pair``,
    ``secret_i``, ``secret_j``, ``posterior_i`` = Pr[s_i | ω_1..ω_run, θ], ``posterior_j``,
    ``truth`` ("i", "j" or "neither": which secret holds for the true dataset) and
    ``revealed`` (the true secret's posterior is exactly 1).  Pairs with a zero-probability
    secret under a prior are left out for that prior, as the definition skips them.
    [C] §4, docs/math.md §8.
    """
    check_rng(rng)
    runs = check_whole("runs", runs, minimum=0)
    true_idx = model.index_of(true_dataset)
    priors = _prior_indices(model, prior_index)
    for p in priors:
        if model.priors[p, true_idx] <= 0:
            raise ValueError(
                f"{true_dataset!r} has probability 0 under {model.prior_labels[p]}; that attacker could not"
                " explain its outputs — pick a dataset every prior allows, or choose the priors to show"
            )
    outputs = rng.choice(len(model.outputs), size=runs, p=model.mechanism[true_idx]) if runs else []
    with np.errstate(divide="ignore"):
        log_m = np.log(model.mechanism)
        log_priors = np.log(model.priors)
    loglik = np.zeros(model.n_datasets)
    rows = []
    for run in range(runs + 1):
        if run > 0:
            loglik = loglik + log_m[:, outputs[run - 1]]
        output = None if run == 0 else model.outputs[outputs[run - 1]]
        for p in priors:
            joint = log_priors[p] + loglik
            with np.errstate(divide="ignore"):
                total = logsumexp(joint)
                for k, pair in enumerate(model.secret_pairs):
                    m_i, m_j = model.masks[k, 0], model.masks[k, 1]
                    if model.priors[p][m_i].sum() <= 0 or model.priors[p][m_j].sum() <= 0:
                        continue
                    log_i, log_j = logsumexp(joint[m_i]), logsumexp(joint[m_j])
                    truth = "i" if m_i[true_idx] else ("j" if m_j[true_idx] else "neither")
                    revealed = (truth == "i" and log_j == -np.inf) or (truth == "j" and log_i == -np.inf)
                    rows.append(
                        {
                            "run": run,
                            "output": output,
                            "prior": model.prior_labels[p],
                            "pair": pair.label,
                            "secret_i": pair.first_label,
                            "secret_j": pair.second_label,
                            "posterior_i": float(np.exp(log_i - total)),
                            "posterior_j": float(np.exp(log_j - total)),
                            "truth": truth,
                            "revealed": bool(revealed),
                        }
                    )
    return pd.DataFrame(rows)


def _reveal_sets(model: FiniteModel, true_idx: int, target: str) -> list[np.ndarray]:
    """Boolean masks of datasets that must all be ruled out for the target to count as revealed.

    For "secret": under each prior, the datasets with positive probability on the other side
    of every pair whose two secrets have positive probability and one of which holds for the
    true dataset.  For "dataset": every other dataset with positive probability.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}; got {target!r}")
    sets = []
    for prior in model.priors:
        if prior[true_idx] <= 0:
            continue
        positive = prior > 0
        if target == "dataset":
            rival = positive.copy()
            rival[true_idx] = False
            sets.append(rival)
            continue
        for k in range(len(model.secret_pairs)):
            m_i, m_j = model.masks[k, 0] & positive, model.masks[k, 1] & positive
            if not m_i.any() or not m_j.any():
                continue
            if m_i[true_idx]:
                sets.append(m_j)
            elif m_j[true_idx]:
                sets.append(m_i)
    if not sets:
        raise ValueError(
            "no secret pair involves the true dataset under a prior that allows it; nothing can be revealed"
        )
    return sets


def _revealed(consistent: np.ndarray, rivals: np.ndarray) -> np.ndarray:
    """consistent: (trials, datasets); rivals: (sets, datasets) → revealed per trial."""
    return ~(consistent.astype(np.int64) @ rivals.T.astype(np.int64) > 0).any(axis=1)


def _reaching(targets: np.ndarray, edges: list) -> np.ndarray:
    """States from which some path along ``edges`` reaches a state in ``targets`` (targets included)."""
    reached = np.array(targets, dtype=bool)
    changed = True
    while changed:
        changed = False
        for s in range(reached.size):
            if not reached[s] and any(reached[j] for j in edges[s]):
                reached[s] = True
                changed = True
    return reached


def expected_runs_to_reveal(model: FiniteModel, true_dataset: Hashable, target: str = "secret") -> float:
    """Exact expected number of runs until the target is revealed to every attacker (docs/math.md §8).

    "Revealed" means the posterior of the truth reaches exactly 1: every dataset on the other
    side ("secret": of each secret pair involving the true dataset; "dataset": every other
    dataset) has been ruled out by some output it cannot produce.  The set of datasets still
    consistent with the outputs is a Markov chain; the expectation solves its linear system.
    +inf if with positive probability the target is never revealed.  [C] §4 Examples 1–3.
    """
    true_idx = model.index_of(true_dataset)
    rivals = np.array(_reveal_sets(model, true_idx, target))
    row = model.mechanism[true_idx]
    outs = np.flatnonzero(row > 0)
    probs = row[outs]
    support = model.mechanism[:, outs] > 0
    start = np.ones(model.n_datasets, dtype=bool)
    states: dict[bytes, int] = {}
    masks: list[np.ndarray] = []
    states[start.tobytes()] = 0
    masks.append(start)
    edges: list[dict[int, float]] = []
    head = 0
    while head < len(masks):
        state = masks[head]
        head += 1
        nxt: dict[int, float] = {}
        if not _revealed(state[None, :], rivals)[0]:
            for o in range(len(outs)):
                new = state & support[:, o]
                key = new.tobytes()
                if key not in states:
                    if len(masks) >= MAX_STATES:
                        raise ValueError(
                            "this model has too many belief states to compute the expectation exactly;"
                            " use simulate_runs_to_reveal instead"
                        )
                    states[key] = len(masks)
                    masks.append(new)
                j = states[key]
                nxt[j] = nxt.get(j, 0.0) + float(probs[o])
        edges.append(nxt)
    n = len(masks)
    revealed = _revealed(np.array(masks), rivals)
    # states that can reach a revealed state
    can_reveal = _reaching(revealed, edges)
    # states with positive probability of entering a never-revealing state have infinite expectation
    infinite = _reaching(~can_reveal, edges)
    if infinite[0]:
        return float("inf")
    unknown = [s for s in range(n) if not revealed[s]]
    pos = {s: i for i, s in enumerate(unknown)}
    a = np.eye(len(unknown))
    for s in unknown:
        for j, pr in edges[s].items():
            if j in pos:
                a[pos[s], pos[j]] -= pr
    expect = np.linalg.solve(a, np.ones(len(unknown)))
    return float(expect[pos[0]]) if 0 in pos else 0.0


@dataclass(frozen=True)
class RevealSimulation:
    """Runs until the target was revealed, one entry per trial (inf: not within ``max_runs``)."""

    runs: np.ndarray
    max_runs: int

    @property
    def mean(self) -> float:
        return float(np.mean(self.runs))

    @property
    def standard_error(self) -> float:
        """Standard error of :attr:`mean` (inf if some trial was never revealed)."""
        if not np.all(np.isfinite(self.runs)):
            return float("inf")
        return float(np.std(self.runs, ddof=1) / np.sqrt(self.runs.size)) if self.runs.size > 1 else 0.0


def simulate_runs_to_reveal(
    model: FiniteModel,
    true_dataset: Hashable,
    rng: np.random.Generator,
    trials: int = 10_000,
    target: str = "secret",
    max_runs: int = 1_000,
) -> RevealSimulation:
    """Simulate the attacker ``trials`` times: run until the target is revealed (docs/math.md §8).

    Same notion of "revealed" as :func:`expected_runs_to_reveal`; a trial still unrevealed
    after ``max_runs`` runs is recorded as inf.
    """
    check_rng(rng)
    trials = check_whole("trials", trials)
    max_runs = check_whole("max_runs", max_runs)
    true_idx = model.index_of(true_dataset)
    rivals = np.array(_reveal_sets(model, true_idx, target))
    support = model.mechanism > 0
    row = model.mechanism[true_idx]
    consistent = np.ones((trials, model.n_datasets), dtype=bool)
    result = np.full(trials, np.inf)
    active = np.arange(trials)
    for run in range(1, max_runs + 1):
        draws = rng.choice(len(model.outputs), size=active.size, p=row)
        consistent[active] &= support[:, draws].T
        done = _revealed(consistent[active], rivals)
        result[active[done]] = run
        active = active[~done]
        if active.size == 0:
            break
    return RevealSimulation(result, max_runs)
