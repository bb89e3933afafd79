"""Streams: a release at every time step (docs/math.md §10).

- :mod:`.laws`: the output laws of per-entry releases (randomized response, a noisy histogram);
- :mod:`.tpl`: temporal privacy leakage (BPL, FPL, TPL), its supremum and the largest ε for a target;
- :mod:`.bounds`: [C]'s translation bound and group DP beside TPL, and the stream planner.
"""


from .bounds import (
    StreamBounds,
    StreamPlan,
    TranslationBound,
    group_dp_bound,
    plan_stream,
    stream_bounds,
    translation_bound,
)
from .laws import check_emissions, emission_epsilon, laplace_histogram_emission, randomized_response_emission
from .tpl import (
    DivergenceThreshold,
    TemporalLeakage,
    backward_matrix,
    backward_privacy_leakage,
    check_row_stochastic,
    check_schedule,
    excluded_mass,
    forward_matrix,
    forward_privacy_leakage,
    leakage_function,
    leakage_supremum,
    max_eps_for_tpl,
    stream_priors,
    temporal_privacy_leakage,
    tpl_divergence_threshold,
    tpl_refusal,
    tpl_supremum,
)

__all__ = [
    "DivergenceThreshold",
    "StreamBounds",
    "StreamPlan",
    "TemporalLeakage",
    "TranslationBound",
    "backward_matrix",
    "backward_privacy_leakage",
    "check_emissions",
    "check_row_stochastic",
    "check_schedule",
    "emission_epsilon",
    "excluded_mass",
    "forward_matrix",
    "forward_privacy_leakage",
    "group_dp_bound",
    "laplace_histogram_emission",
    "leakage_function",
    "leakage_supremum",
    "max_eps_for_tpl",
    "plan_stream",
    "randomized_response_emission",
    "stream_bounds",
    "stream_priors",
    "temporal_privacy_leakage",
    "tpl_divergence_threshold",
    "tpl_refusal",
    "tpl_supremum",
    "translation_bound",
]
