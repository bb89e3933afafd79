"""What released outputs say about the true data, given the prior (docs/math.md §11, §14).

- :mod:`.posterior`: one user's states behind per-step releases — posterior marginals by
  forward–backward, the most probable sequence (Viterbi), and how often each is right;
- :mod:`.counts`: many users' counts behind noisy histograms — the linear MMSE estimate from the
  counts' exact moments under the prior, for one release or a stream of them;
- :mod:`.roc`: an attacker's best test of one secret against another, measured as (FPR, TPR).

Post-processing reads released outputs only, so it costs no privacy.
"""

from .counts import CountSmoothing, count_moments, project_simplex, smooth_count_stream
from .posterior import (
    SmoothingAccuracy,
    map_states,
    posterior_states,
    raw_accuracy,
    raw_states,
    smoothing_accuracy,
)
from .roc import TestPoints, likelihood_ratio_points

__all__ = [
    "CountSmoothing",
    "SmoothingAccuracy",
    "TestPoints",
    "count_moments",
    "likelihood_ratio_points",
    "map_states",
    "posterior_states",
    "project_simplex",
    "raw_accuracy",
    "raw_states",
    "smooth_count_stream",
    "smoothing_accuracy",
]
