"""Real against synthetic: how faithful a synthetic table is, as frames ready to draw (docs/math.md §19.5).

Everything is computed from two :class:`~puffer_core.synthesis.counts.ChainCounts`, the real data's and the
synthetic table's (the sampler counts what it draws), per group and for everyone together (``"all"``):

- **transition error**: the mean over states i, weighted by the real share of transitions out of i, of the
  total variation ½‖P_real[i, ·] − P_synth[i, ·]‖₁ between the row-normalised transition counts;
- **stationary TV**: ½‖π_real − π_synth‖₁, π the stationary distribution of each chain (fitted as in
  docs/math.md §6, smoothing τ = 1e−5, so that it is unique);
- **dwell time**: the mean length of a stay in state i, n_i / (n_i − N[i, i]) (entries in i over runs of i, both
  from the counts); the error is the mean over states, weighted by the real share of entries, of
  |d_real − d_synth|, in entries (steps); the histograms of run lengths need ``runs``;
- **top-k states**: the k states with the most entries, real and synthetic; the hit rate |∩| / k;
- **a downstream query** (:data:`QUERIES`): the share of users who visit each state at least once
  (``"visits"``), the share of entries in each state (``"occupancy"``), or the share of users starting in each
  state (``"first_state"``); the error is the mean absolute difference over states.

:func:`noise_scores` measures the released chain itself against the real counts' chain (what the noise alone
does, before any sampling) and :func:`reference_counts` draws a table from the real data's own chain without
noise (what sampling and a first-order chain alone do; for reference, never a release).
:func:`puffer_core.synthesis.sweep.fidelity_over_eps` puts all three side by side over a grid of ε.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..priors.fitting import DEFAULT_SMOOTHING, normalise_counts, smooth_transition
from ..priors.models import stationary_distribution
from ..validation import check_choice, check_whole
from .counts import RUN_BINS, ChainCounts
from .model import SyntheticChain
from .sample import SyntheticSample

QUERIES = ("visits", "occupancy", "first_state")
QUERY_WORDS = {
    "visits": "share of users who visit the state at least once",
    "occupancy": "share of entries in the state",
    "first_state": "share of users who start in the state",
}
METRICS = ("transition_error", "stationary_tv", "dwell_error", "topk_hit", "query_error")
METRIC_WORDS = {
    "transition_error": "transition matrix error (mean row TV)",
    "stationary_tv": "stationary distribution distance (TV)",
    "dwell_error": "mean dwell-time error (steps)",
    "topk_hit": "top-k states found (hit rate)",
    "query_error": "downstream query error (mean |Δ share|)",
}
ALL = "all"


def _rows(counts: np.ndarray) -> np.ndarray:
    return normalise_counts(counts)


def _stationary(transition: np.ndarray) -> np.ndarray:
    return stationary_distribution(smooth_transition(transition, DEFAULT_SMOOTHING))


def _share(values: np.ndarray) -> np.ndarray:
    total = values.sum()
    return values / total if total > 0 else np.zeros_like(values, dtype=float)


def mean_dwell(transitions: np.ndarray, entries: np.ndarray) -> np.ndarray:
    """Mean run length per state from counts: entries / runs, runs = entries − self-transitions (0 when unseen)."""
    runs = entries - np.diagonal(transitions)
    safe = np.where(runs > 0, runs, 1)
    return np.where(runs > 0, entries / safe, 0.0)


def chain_dwell(transition: np.ndarray) -> np.ndarray:
    """Mean run length per state of a chain: 1 / (1 − P[i, i]) (inf for an absorbing state)."""
    stay = np.diagonal(transition)
    with np.errstate(divide="ignore"):
        return np.where(stay < 1, 1.0 / np.maximum(1.0 - stay, 1e-300), np.inf)


def _query(counts: ChainCounts, g: slice | int, query: str) -> np.ndarray | None:
    users = counts.users_per_group[g].sum()
    if query == "visits":
        return None if counts.visits is None else counts.visits[g].reshape(-1, counts.n_states).sum(axis=0) / users
    if query == "first_state":
        return counts.first_states[g].reshape(-1, counts.n_states).sum(axis=0) / users
    return _share(counts.entries()[g].reshape(-1, counts.n_states).sum(axis=0))


def _top(entries: np.ndarray, k: int) -> np.ndarray:
    return np.lexsort((np.arange(entries.size), -entries))[:k]


@dataclass(frozen=True, eq=False)
class Fidelity:
    """Real against synthetic (module docstring): :meth:`scores` and the frames the app draws.

    ``real`` and ``synthetic`` are the two tables' counts (same states, groups and lengths); ``top_k`` and
    ``query`` are the choices made.
    """

    real: ChainCounts
    synthetic: ChainCounts
    top_k: int
    query: str

    def _parts(self) -> list[tuple[str, slice | int]]:
        parts: list[tuple[str, slice | int]] = [(ALL, slice(None))]
        if self.real.groups is not None:
            parts += [(name, g) for g, name in enumerate(self.real.groups)]
        return parts

    def _pair(self, g: slice | int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        k = self.real.n_states
        real_moves = self.real.transitions[g].reshape(-1, k, k).sum(axis=0)
        synth_moves = self.synthetic.transitions[g].reshape(-1, k, k).sum(axis=0)
        real_entries = self.real.entries()[g].reshape(-1, k).sum(axis=0)
        synth_entries = self.synthetic.entries()[g].reshape(-1, k).sum(axis=0)
        return real_moves, synth_moves, real_entries, synth_entries

    def scores(self) -> pd.DataFrame:
        """One row per group (``"all"`` first): every metric of :data:`METRICS` (module docstring)."""
        rows = []
        for name, g in self._parts():
            real_moves, synth_moves, real_entries, synth_entries = self._pair(g)
            p_real, p_synth = _rows(real_moves), _rows(synth_moves)
            weight = _share(real_moves.sum(axis=1))
            occupancy = _share(real_entries.astype(float))
            d_real = mean_dwell(real_moves, real_entries)
            d_synth = mean_dwell(synth_moves, synth_entries)
            top_real = set(_top(real_entries, self.top_k).tolist())
            top_synth = set(_top(synth_entries, self.top_k).tolist())
            q_real, q_synth = _query(self.real, g, self.query), _query(self.synthetic, g, self.query)
            rows.append({
                "group": name,
                "transition_error": float(weight @ (0.5 * np.abs(p_real - p_synth).sum(axis=1))),
                "stationary_tv": float(0.5 * np.abs(_stationary(p_real) - _stationary(p_synth)).sum()),
                "dwell_error": float(occupancy @ np.abs(d_real - d_synth)),
                "dwell_real": float(occupancy @ d_real),
                "topk_hit": len(top_real & top_synth) / self.top_k,
                "query_error": float(np.abs(q_real - q_synth).mean()) if q_real is not None else np.nan,
            })
        return pd.DataFrame(rows)

    def transition_frame(self) -> pd.DataFrame:
        """Both transition matrices, long: group, from, to, real, synthetic (probabilities) — for heatmaps."""
        k = self.real.n_states
        frames = []
        for name, g in self._parts():
            real_moves, synth_moves, _, _ = self._pair(g)
            frames.append(pd.DataFrame({
                "group": name,
                "from": np.repeat(self.real.states, k),
                "to": np.tile(self.real.states, k),
                "real": _rows(real_moves).ravel(),
                "synthetic": _rows(synth_moves).ravel(),
            }))
        return pd.concat(frames, ignore_index=True)

    def state_frame(self) -> pd.DataFrame:
        """Per group and state: stationary shares, mean dwell times, the query's values, real and synthetic."""
        frames = []
        for name, g in self._parts():
            real_moves, synth_moves, real_entries, synth_entries = self._pair(g)
            q_real, q_synth = _query(self.real, g, self.query), _query(self.synthetic, g, self.query)
            nan = np.full(self.real.n_states, np.nan)
            frames.append(pd.DataFrame({
                "group": name,
                "state": self.real.states,
                "stationary_real": _stationary(_rows(real_moves)),
                "stationary_synthetic": _stationary(_rows(synth_moves)),
                "dwell_real": mean_dwell(real_moves, real_entries),
                "dwell_synthetic": mean_dwell(synth_moves, synth_entries),
                "query_real": nan if q_real is None else q_real,
                "query_synthetic": nan if q_synth is None else q_synth,
            }))
        return pd.concat(frames, ignore_index=True)

    def dwell_frame(self) -> pd.DataFrame:
        """Dwell-time histograms: group, state, dwell (1..RUN_BINS, the last bin "≥ RUN_BINS"), real and synthetic
        shares of each state's runs — for overlaid histograms.  Empty when the real runs were not counted."""
        if self.real.runs is None or self.synthetic.runs is None:
            return pd.DataFrame(columns=["group", "state", "dwell", "real", "synthetic"])
        frames = []
        dwell = np.arange(1, RUN_BINS + 1)
        for name, g in self._parts():
            real = self.real.runs[g].reshape(-1, self.real.n_states, RUN_BINS).sum(axis=0)
            synth = self.synthetic.runs[g].reshape(-1, self.real.n_states, RUN_BINS).sum(axis=0)
            for i, state in enumerate(self.real.states):
                frames.append(pd.DataFrame({
                    "group": name, "state": state, "dwell": dwell, "real": _share(real[i].astype(float)),
                    "synthetic": _share(synth[i].astype(float)),
                }))
        return pd.concat(frames, ignore_index=True)

    def topk_frame(self) -> pd.DataFrame:
        """The top-k states per group: group, rank, real, synthetic."""
        rows = []
        for name, g in self._parts():
            _, _, real_entries, synth_entries = self._pair(g)
            for rank, (r, s) in enumerate(zip(_top(real_entries, self.top_k), _top(synth_entries, self.top_k)), 1):
                rows.append({"group": name, "rank": rank, "real": self.real.states[r],
                             "synthetic": self.real.states[s]})
        return pd.DataFrame(rows)


def fidelity(real: ChainCounts, synthetic: ChainCounts, top_k: int = 3, query: str = "visits") -> Fidelity:
    """Compare a synthetic table's counts with the real data's (module docstring)."""
    if not isinstance(real, ChainCounts) or not isinstance(synthetic, ChainCounts):
        raise TypeError("fidelity compares two ChainCounts: the data's (chain_counts) and the synthetic table's")
    if (real.states, real.groups) != (synthetic.states, synthetic.groups):
        raise ValueError("the real and synthetic counts must have the same states and groups, in the same order")
    check_whole("top_k", top_k, maximum=real.n_states)
    check_choice("query", query, QUERIES)
    return Fidelity(real, synthetic, int(top_k), query)


def noise_scores(real: ChainCounts, chain: SyntheticChain) -> pd.DataFrame:
    """The released chain itself against the real counts' chain, before sampling (what the noise alone does).

    One row per group (``"all"``: the chains weighted by each group's real transitions): transition error and
    stationary TV as in :meth:`Fidelity.scores`, and the dwell error of the chains' own mean stays 1/(1 − P[i, i]).
    """
    rows = []
    weights = real.transitions.sum(axis=2)  # (G, K): transitions out of each state, per group
    parts: list[tuple[str, list[int]]] = [(ALL, list(range(real.n_groups)))]
    if real.groups is not None:
        parts += [(name, [g]) for g, name in enumerate(real.groups)]
    for name, members in parts:
        p_real = _rows(real.transitions[members].sum(axis=0))
        w = weights[members].astype(float)  # mix the groups' released rows by their real weight
        with np.errstate(invalid="ignore", divide="ignore"):
            mix = (w[:, :, None] * chain.transition[members]).sum(axis=0) / np.where(w.sum(axis=0) > 0, w.sum(axis=0),
                                                                                       1.0)[:, None]
        mix = np.where(w.sum(axis=0)[:, None] > 0, mix, chain.transition[members].mean(axis=0))
        occupancy = _share(real.entries()[members].sum(axis=0).astype(float))
        weight = _share(w.sum(axis=0))
        rows.append({
            "group": name,
            "transition_error": float(weight @ (0.5 * np.abs(p_real - mix).sum(axis=1))),
            "stationary_tv": float(0.5 * np.abs(_stationary(p_real) - _stationary(mix)).sum()),
            "dwell_error": float(occupancy @ np.abs(np.minimum(chain_dwell(p_real), 1e12)
                                                    - np.minimum(chain_dwell(mix), 1e12))),
        })
    return pd.DataFrame(rows)


def reference_counts(real: ChainCounts, seed: int = 0) -> ChainCounts:
    """The counts of a table drawn from the real data's own chain, without noise: sampling and a first-order
    model alone (a reference for fidelity, never a release: it reads the real counts directly)."""
    transition = np.stack([_rows(real.transitions[g]) for g in range(real.n_groups)])
    initial = np.stack([_share(real.first_states[g].astype(float)) for g in range(real.n_groups)])
    chain = SyntheticChain(real.states, real.groups, initial, transition, real.transitions, real.first_states,
                           "reference")
    return SyntheticSample(chain, real.length_values, real.length_users, real.columns, seed).summary()
