"""Streams: a release at every time step (docs/math.md §10).

The output laws of the releases are :mod:`puffer_core.mechanisms.laws`.

- :mod:`.checks`: the checks every stream module shares (row-stochastic matrices, schedules, the directions);
- :mod:`.fronts`: the leakage function L(α; Q) and its Pareto front;
- :mod:`.tpl`: temporal privacy leakage (BPL, FPL, TPL) and its cost up front;
- :mod:`.supremum`: the supremum of an unbounded stream, where it turns infinite, the largest ε for a target;
- :mod:`.bounds`: [C]'s translation bound and group DP beside TPL, and the stream planner;
- :mod:`.registry`: every stream bound by name (one record each), what the app, the ladder and the scripts loop over;
- :mod:`.schedule`: per-step ε schedules for a TPL target (constant, Cao et al.'s three values, tight).
"""

from .bounds import TranslationBound, group_dp_bound, translation_bound
from .checks import Directions, check_row_stochastic, check_schedule, stream_priors
from .fronts import leakage_function
from .registry import (
    STREAM_BOUNDS,
    BoundValues,
    StreamBounds,
    StreamBoundSpec,
    StreamPlan,
    StreamSetting,
    bound_table,
    plan_stream,
    plan_table,
    stream_bounds,
    stream_setting,
)
from .schedule import StreamSchedule, optimal_schedule
from .supremum import (
    DivergenceThreshold,
    excluded_mass,
    leakage_suprema,
    leakage_supremum,
    max_eps_for_tpl,
    tpl_divergence_threshold,
    tpl_supremum,
)
from .tpl import (
    StreamFronts,
    TemporalLeakage,
    backward_matrix,
    backward_privacy_leakage,
    forward_matrix,
    forward_privacy_leakage,
    stream_fronts,
    temporal_privacy_leakage,
    tpl_refusal,
)

__all__ = [
    "STREAM_BOUNDS",
    "BoundValues",
    "Directions",
    "DivergenceThreshold",
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
    "check_row_stochastic",
    "check_schedule",
    "excluded_mass",
    "forward_matrix",
    "forward_privacy_leakage",
    "group_dp_bound",
    "leakage_function",
    "leakage_suprema",
    "leakage_supremum",
    "max_eps_for_tpl",
    "optimal_schedule",
    "plan_stream",
    "plan_table",
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
