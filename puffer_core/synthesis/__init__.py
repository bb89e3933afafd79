"""Synthetic sequences with a Pufferfish guarantee: publish a dataset, not only statistics (docs/math.md §19).

- :mod:`.counts`: :class:`ChainCounts`, the sufficient statistics of a first-order chain per group (and the runs
  and visits fidelity shows), from Sequences or SequenceStats;
- :mod:`.sources`: :func:`load_chain_counts`, the same counts from event logs of any size (DuckDB or Spark);
- :mod:`.privacy`: the sensitivity of the counts to one entry and to a window of entries, the calibration through
  a(b), the discrete Laplace law, a target accuracy;
- :mod:`.release`: the noisy counts (OpenDP for a real release, numpy for a reproducible one) and their
  :class:`SynthesisEvent`;
- :mod:`.model`: noisy counts → a valid chain (post-processing);
- :mod:`.sample`: synthetic users drawn in chunks, written as Parquet or CSV;
- :mod:`.fidelity`: real against synthetic, as frames ready to draw; :mod:`.sweep`: over a grid of ε;
- :mod:`.synthesize`: :func:`plan_synthesis`, :func:`synthesize`;
- :mod:`.script`: the synthesis as Python lines for an exported script;
- :mod:`.cli`: ``puffer synth``.
"""

from .counts import ChainCounts, chain_counts
from .fidelity import Fidelity, fidelity, noise_scores, reference_counts
from .model import SyntheticChain, fit_synthetic_chain
from .privacy import ENTRY_L1, ENTRY_L2, CountAccuracy, block_l1, calibrate_scale, certify_scale
from .release import NoisyCounts, SynthesisEvent
from .sample import SyntheticSample
from .script import synthesis_source
from .sources import load_chain_counts
from .sweep import fidelity_over_eps
from .synthesize import Note, Synthesis, SynthesisPlan, draw_synthesis, plan_synthesis, run_synthesis, synthesize

__all__ = [
    "ENTRY_L1",
    "ENTRY_L2",
    "ChainCounts",
    "CountAccuracy",
    "Fidelity",
    "Note",
    "NoisyCounts",
    "Synthesis",
    "SynthesisEvent",
    "SynthesisPlan",
    "SyntheticChain",
    "SyntheticSample",
    "block_l1",
    "calibrate_scale",
    "certify_scale",
    "chain_counts",
    "draw_synthesis",
    "fidelity",
    "fidelity_over_eps",
    "fit_synthetic_chain",
    "load_chain_counts",
    "noise_scores",
    "plan_synthesis",
    "reference_counts",
    "run_synthesis",
    "synthesis_source",
    "synthesize",
]
