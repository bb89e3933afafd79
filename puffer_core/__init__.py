"""puffer_core: Pufferfish privacy for correlated data (see docs/math.md).

data → prior → a(b) curve → calibration → mechanism → releases → metrics/ledger.
"""

from .accounting.calibration import Calibration, calibrate, calibration_objective, certify, certify_objective, group_dp
from .accounting.composition import (
    Accountant,
    Ledger,
    compose,
    cumulative,
    cumulative_eps_puffer,
    group_dp_cumulative,
    naive_sum,
    plan,
)
from .accounting.events import Composition, CurveEvent, MQMEvent
from .attacks.attacker import Attack, attack_histogram, attack_stream
from .audit.stream import StreamAudit, exact_histogram_leakage, exact_stream_leakage
from .data.datasets import DATASETS, Dataset, get_dataset, load_dataset
from .data.engines import load_stats
from .data.readers import Table, load_sequences, read_columns, read_table
from .data.sequences import Sequences
from .data.stats import SequenceStats
from .engine.closed_form import binary_chain_curve
from .engine.curve import InfluenceCurve
from .engine.gaussian import gaussian_estimate
from .engine.influence import influence_curve, influence_estimate
from .engine.mqm import mqm_estimate, mqm_noise_scale
from .engine.spread import PriorSpread, prior_spread, row_sensitivity
from .errors import DataError
from .mechanisms import (
    MECHANISMS,
    ExponentialTopK,
    LaplaceCounts,
    group_dp_exponential,
    group_dp_laplace,
    make_mechanism,
    mqm_laplace,
    mqm_top_k_counts,
    pufferfish_exponential,
    pufferfish_laplace,
)
from .priors.fitting import fit_markov_chain, split_by_time, split_by_users
from .priors.models import GaussianProcessPrior, MarkovChainPrior, stationary_distribution
from .priors.robust import fit_prior_set
from .simulation.explain import Explanation, Finding, Winner, explain_simulation
from .simulation.metrics import acc_at_k, hit_rate_at_k, l1_count_error, ndcg_at_k
from .simulation.run import SimulationResult, simulate
from .stream.bounds import StreamBounds, StreamPlan, TranslationBound, plan_stream, stream_bounds, translation_bound
from .stream.tpl import (
    TemporalLeakage,
    backward_privacy_leakage,
    forward_privacy_leakage,
    leakage_function,
    leakage_supremum,
    max_eps_for_tpl,
    temporal_privacy_leakage,
    tpl_refusal,
    tpl_supremum,
)
from .work import WorkCounter, WorkEstimate

__all__ = [
    "Accountant",
    "Attack",
    "Calibration",
    "Composition",
    "CurveEvent",
    "DATASETS",
    "DataError",
    "Dataset",
    "Explanation",
    "ExponentialTopK",
    "Finding",
    "GaussianProcessPrior",
    "InfluenceCurve",
    "LaplaceCounts",
    "Ledger",
    "MECHANISMS",
    "MQMEvent",
    "MarkovChainPrior",
    "PriorSpread",
    "SequenceStats",
    "Sequences",
    "SimulationResult",
    "StreamAudit",
    "StreamBounds",
    "StreamPlan",
    "Table",
    "TemporalLeakage",
    "TranslationBound",
    "Winner",
    "WorkCounter",
    "WorkEstimate",
    "acc_at_k",
    "attack_histogram",
    "attack_stream",
    "backward_privacy_leakage",
    "binary_chain_curve",
    "calibrate",
    "calibration_objective",
    "certify",
    "certify_objective",
    "compose",
    "cumulative",
    "cumulative_eps_puffer",
    "exact_histogram_leakage",
    "exact_stream_leakage",
    "explain_simulation",
    "fit_markov_chain",
    "fit_prior_set",
    "forward_privacy_leakage",
    "get_dataset",
    "gaussian_estimate",
    "group_dp",
    "group_dp_cumulative",
    "group_dp_exponential",
    "group_dp_laplace",
    "hit_rate_at_k",
    "influence_curve",
    "influence_estimate",
    "l1_count_error",
    "leakage_function",
    "leakage_supremum",
    "load_dataset",
    "load_sequences",
    "load_stats",
    "make_mechanism",
    "max_eps_for_tpl",
    "mqm_estimate",
    "mqm_laplace",
    "mqm_noise_scale",
    "mqm_top_k_counts",
    "naive_sum",
    "ndcg_at_k",
    "plan",
    "plan_stream",
    "prior_spread",
    "pufferfish_exponential",
    "pufferfish_laplace",
    "read_columns",
    "read_table",
    "row_sensitivity",
    "simulate",
    "split_by_time",
    "split_by_users",
    "stationary_distribution",
    "stream_bounds",
    "temporal_privacy_leakage",
    "tpl_refusal",
    "tpl_supremum",
    "translation_bound",
]
