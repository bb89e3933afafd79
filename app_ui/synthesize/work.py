"""The Synthesize page's calls into :mod:`puffer_core.synthesis`: the plan (once per data and settings, for the
session), the release drawn under a progress bar, and fidelity over a grid of ε (docs/math.md §19).

Everything computed from an upload stays in this session's memory (:func:`app_ui.core.memo.session_memo`), never
on disk and never shared with another session.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from app_ui.core.memo import session_memo
from app_ui.data.picker import LoadedData
from app_ui.synthesize.settings import SynthesizeSettings
from app_ui.synthesize.views import SWEEP_RUNS, sweep_grid
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.secrets import Secrets
from puffer_core.synthesis.counts import ChainCounts
from puffer_core.synthesis.fidelity import Fidelity, fidelity
from puffer_core.synthesis.release import NoisyCounts
from puffer_core.synthesis.sample import MAX_FRAME_ROWS
from puffer_core.synthesis.sweep import fidelity_over_eps
from puffer_core.synthesis.synthesize import SynthesisPlan, draw_synthesis, plan_synthesis

# the most rows the app draws into one download (~40 bytes a row as CSV, held in the session until it ends);
# more is refused with the size, and the script or `puffer synth` streams any number to a file
APP_MAX_ROWS = min(2_000_000, MAX_FRAME_ROWS)


def source(loaded: LoadedData) -> Sequences | SequenceStats:
    """What the library reads: each user's sequence when the data hold them (groups, dwell histograms and the
    visits query need them), else the counts (a deployer's large dataset: one chain for everyone)."""
    sequences = loaded.sequences
    return sequences if sequences is not None else loaded.stats


def by_group(loaded: LoadedData, settings: SynthesizeSettings) -> bool | None:
    """What ``by_group`` the library gets: None without a group column (or without the sequences), else the
    page's choice."""
    if loaded.stats.groups is None or not loaded.holds_sequences:
        return None if loaded.stats.groups is None else False
    return settings.by_group


def data_key(loaded: LoadedData) -> Hashable:
    return (loaded.fingerprint, tuple(loaded.columns.items()))


def longest(loaded: LoadedData) -> int:
    """The longest sequence's number of entries (what chosen entries may name)."""
    return int(max(loaded.stats.length_values, default=1))


def secrets(loaded: LoadedData, settings: SynthesizeSettings) -> Secrets | None:
    """What the library's ``secrets`` gets: None for every pair at every entry, else the chosen value secrets
    (the page offers no event secrets, docs/math.md §16)."""
    if settings.secrets.is_all:
        return None
    chosen = settings.secrets.resolved(longest(loaded))
    if not isinstance(chosen, Secrets):
        raise ValueError("Synthesize protects value pairs of entries; event secrets are not offered here")
    return chosen


def plan(loaded: LoadedData, settings: SynthesizeSettings) -> SynthesisPlan:
    """The plan for these data and settings (the a(b) curve of the fitted chain, for the chosen secrets: computed
    once per key)."""
    grouped = by_group(loaded, settings)
    key = (data_key(loaded), settings.eps_puffer, grouped, settings.secrets.link_key)
    return session_memo("synth_plan", key, lambda: plan_synthesis(
        source(loaded), None, settings.eps_puffer, by_group=grouped, columns=loaded.columns,
        secrets=secrets(loaded, settings),
    ), 4)


def release_key(loaded: LoadedData, settings: SynthesizeSettings) -> Hashable:
    """What a drawn release depends on (top-k and the query only change what fidelity compares)."""
    return (data_key(loaded), settings.eps_puffer, by_group(loaded, settings), settings.rng, settings.method,
            settings.secrets.link_key)


@dataclass(frozen=True, eq=False)
class Drawn:
    """A release drawn by the page: what was published, the synthetic table as CSV bytes and its counts."""

    plan: SynthesisPlan
    release: NoisyCounts
    csv: bytes
    counts: ChainCounts

    def fidelity(self, top_k: int, query: str) -> Fidelity:
        """Real against synthetic (for the data's owner: the real side reads the data's counts)."""
        return fidelity(self.plan.counts, self.counts, min(top_k, self.counts.n_states), query)


def draw(chosen: SynthesisPlan, settings: SynthesizeSettings, progress: Callable[[str, float], Any]) -> Drawn:
    """Release the noisy counts, build the chain, draw the table as CSV (refused beyond :data:`APP_MAX_ROWS`)."""
    rows = chosen.counts.n_rows
    if rows > APP_MAX_ROWS:
        raise ValueError(
            f"the synthetic table would have {rows:,} rows (~{rows * 40 / 1e6:,.0f} MB as CSV), more than the"
            f" {APP_MAX_ROWS:,} the app draws into one download: download the script below and run it where the"
            " data are (it streams the table to a file in chunks), or run `python -m puffer_core synth`"
        )
    release, _, sample = draw_synthesis(chosen, settings.rng, method=settings.method)
    csv, counts = sample.to_bytes("csv", progress)
    return Drawn(chosen, release, csv, counts)


def sweep(loaded: LoadedData, settings: SynthesizeSettings, chosen: SynthesisPlan) -> pd.DataFrame:
    """Fidelity over the ε grid (the page's ε in it), Pufferfish and group DP, with the noise and sampling parts
    (numpy noise from the page's seed: a what-if, not a release); once per key in the session."""
    key = (data_key(loaded), by_group(loaded, settings), settings.eps_puffer, settings.seed, settings.method,
           settings.top_k, settings.query, settings.secrets.link_key)
    return session_memo("synth_sweep", key, lambda: fidelity_over_eps(
        chosen.counts, None, sweep_grid(settings.eps_puffer), runs=SWEEP_RUNS, rng=settings.seed,
        top_k=min(settings.top_k, chosen.counts.n_states), query=settings.query, method=settings.method,
        secrets=secrets(loaded, settings),  # the page's secrets (docs/math.md §16)
    ), 2)
