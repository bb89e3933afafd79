"""Streams: a release at every time step (docs/math.md §10).

- :mod:`.laws`: the output laws of per-entry releases (randomized response, a noisy histogram);
- :mod:`.tpl`: temporal privacy leakage (BPL, FPL, TPL), its supremum and the largest ε for a target;
- :mod:`.bounds`: [C]'s translation bound and group DP beside TPL, and the stream planner;
- :mod:`.registry`: every stream bound by name (one record each), what the app, the ladder and the scripts loop over;
- :mod:`.schedule`: per-step ε schedules for a TPL target (constant, Cao et al.'s three values, tight).
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
from .laws import (
    HISTOGRAM_LAWS,
    ClampedDiscreteLaplace,
    ExponentialRanking,
    RandomizedResponse,
    check_emissions,
    emission_epsilon,
    histogram_law,
    laplace_histogram_emission,
    log_emissions,
    randomized_response_emission,
)
from .registry import (
    STREAM_BOUNDS,
    BoundValues,
    StreamBoundSpec,
    StreamSetting,
    bound_table,
    plan_table,
    stream_setting,
)
from .schedule import StreamSchedule, optimal_schedule
from .tpl import (
    Directions,
    DivergenceThreshold,
    StreamFronts,
    TemporalLeakage,
    backward_matrix,
    backward_privacy_leakage,
    check_row_stochastic,
    check_schedule,
    excluded_mass,
    forward_matrix,
    forward_privacy_leakage,
    leakage_function,
    leakage_suprema,
    leakage_supremum,
    max_eps_for_tpl,
    stream_fronts,
    stream_priors,
    temporal_privacy_leakage,
    tpl_divergence_threshold,
    tpl_refusal,
    tpl_supremum,
)

__all__ = [
    "HISTOGRAM_LAWS",
    "STREAM_BOUNDS",
    "BoundValues",
    "ClampedDiscreteLaplace",
    "Directions",
    "DivergenceThreshold",
    "ExponentialRanking",
    "RandomizedResponse",
    "StreamBoundSpec",
    "StreamFronts",
    "StreamSchedule",
    "StreamSetting",
    "StreamBounds",
    "StreamPlan",
    "TemporalLeakage",
    "TranslationBound",
    "backward_matrix",
    "backward_privacy_leakage",
    "bound_table",
    "check_emissions",
    "check_row_stochastic",
    "check_schedule",
    "emission_epsilon",
    "excluded_mass",
    "forward_matrix",
    "forward_privacy_leakage",
    "group_dp_bound",
    "histogram_law",
    "laplace_histogram_emission",
    "leakage_function",
    "leakage_suprema",
    "leakage_supremum",
    "log_emissions",
    "max_eps_for_tpl",
    "optimal_schedule",
    "plan_stream",
    "plan_table",
    "randomized_response_emission",
    "stream_bounds",
    "stream_fronts",
    "stream_priors",
    "stream_setting",
    "temporal_privacy_leakage",
    "tpl_divergence_threshold",
    "tpl_refusal",
    "tpl_supremum",
    "translation_bound",
]
