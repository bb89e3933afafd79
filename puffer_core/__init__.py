"""puffer_core: Pufferfish privacy for correlated data (see docs/math.md).

data → prior → a(b) curve → calibration → mechanism → releases → metrics/ledger.
"""

from . import mechanisms
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
from .accounting.renyi import RenyiEvent, RenyiLedger, renyi_ledger, renyi_to_approx
from .accounting.risk import attacker_table, max_posterior, pair_table, tradeoff_curve
from .attacks.attacker import Attack, attack_histogram, attack_stream, stream_attack_estimate
from .audit.stream import StreamAudit, exact_histogram_leakage, exact_stream_estimate, exact_stream_leakage
from .data.datasets import DATASETS, Dataset, get_dataset, load_dataset
from .data.engines import load_stats
from .data.readers import Table, load_sequences, read_columns, read_table
from .data.sequences import Sequences
from .data.stats import SequenceStats
from .engine.closed_form import binary_chain_curve
from .engine.curve import InfluenceCurve
from .engine.drivers import InfluenceDrivers, influence_drivers
from .engine.gaussian import gaussian_estimate
from .engine.influence import influence_curve, influence_estimate
from .engine.mqm import mqm_estimate, mqm_noise_scale
from .engine.redaction import RedactionPlan, redaction_plan
from .engine.spread import PriorSpread, prior_spread, row_sensitivity
from .errors import DataError
from .inference.counts import CountSmoothing, count_moments, smooth_count_stream
from .inference.posterior import SmoothingAccuracy, map_states, posterior_states, smoothing_accuracy
from .inference.roc import TestPoints, likelihood_ratio_points
from .mechanisms import *  # noqa: F403  the registry, the constructors and accuracy first (mechanisms.__all__)
from .optimal.compare import FloorComparison, MechanismError, compare_with_floor
from .optimal.lp import OptimalMechanism, optimal_count_mechanism, optimal_histogram_mechanism
from .optimal.repeat import RepeatedLeakage, repeated_leakage
from .priors.fitting import fit_markov_chain, split_by_time, split_by_users, transition_counts
from .priors.models import GaussianProcessPrior, MarkovChainPrior, stationary_distribution
from .priors.robust import fit_prior_set
from .secrets import ALL_SECRETS, EventSecrets, PopulationSecrets, Secrets, TimeRule, read_secrets
from .simulation.explain import Explanation, Finding, Winner, explain_simulation
from .simulation.fitted import dirichlet_alternative, posterior_mean_chain, smoothing_effect
from .simulation.metrics import acc_at_k, hit_rate_at_k, informative_k, l1_count_error, ndcg_at_k, trivial_topk
from .simulation.run import SimulationResult, simulate
from .stream.bounds import TranslationBound, translation_bound
from .stream.fronts import leakage_function
from .stream.registry import StreamBounds, StreamPlan, plan_stream, stream_bounds
from .stream.schedule import StreamSchedule, optimal_schedule
from .stream.supremum import leakage_supremum, max_eps_for_tpl, tpl_supremum
from .stream.tpl import (
    TemporalLeakage,
    backward_privacy_leakage,
    forward_privacy_leakage,
    temporal_privacy_leakage,
    tpl_estimate,
    tpl_refusal,
)
from .synthesis.counts import ChainCounts, chain_counts
from .synthesis.fidelity import Fidelity, fidelity
from .synthesis.privacy import CountAccuracy
from .synthesis.release import SynthesisEvent
from .synthesis.sources import load_chain_counts
from .synthesis.sweep import fidelity_over_eps
from .synthesis.synthesize import Synthesis, SynthesisPlan, plan_synthesis, synthesize
from .work import WorkCounter, WorkEstimate

__all__ = [
    "ALL_SECRETS",
    "Accountant",
    "Attack",
    "Calibration",
    "Composition",
    "ChainCounts",
    "CountAccuracy",
    "CountSmoothing",
    "CurveEvent",
    "DATASETS",
    "DataError",
    "Dataset",
    "Explanation",
    "Fidelity",
    "Finding",
    "FloorComparison",
    "GaussianProcessPrior",
    "InfluenceCurve",
    "InfluenceDrivers",
    "Ledger",
    "MQMEvent",
    "MechanismError",
    "MarkovChainPrior",
    "OptimalMechanism",
    "PriorSpread",
    "RenyiEvent",
    "RenyiLedger",
    "RepeatedLeakage",
    "SequenceStats",
    "Sequences",
    "SimulationResult",
    "SmoothingAccuracy",
    "StreamAudit",
    "StreamBounds",
    "StreamPlan",
    "StreamSchedule",
    "Synthesis",
    "SynthesisEvent",
    "SynthesisPlan",
    "Table",
    "TemporalLeakage",
    "TestPoints",
    "TranslationBound",
    "Winner",
    "WorkCounter",
    "WorkEstimate",
    "acc_at_k",
    "attack_histogram",
    "attack_stream",
    "attacker_table",
    "backward_privacy_leakage",
    "binary_chain_curve",
    "calibrate",
    "calibration_objective",
    "certify",
    "certify_objective",
    "chain_counts",
    "compare_with_floor",
    "compose",
    "count_moments",
    "cumulative",
    "cumulative_eps_puffer",
    "dirichlet_alternative",
    "exact_histogram_leakage",
    "exact_stream_estimate",
    "exact_stream_leakage",
    "fidelity",
    "fidelity_over_eps",
    "explain_simulation",
    "fit_markov_chain",
    "EventSecrets",
    "PopulationSecrets",
    "Secrets",
    "TimeRule",
    "RedactionPlan",
    "redaction_plan",
    "fit_prior_set",
    "read_secrets",
    "forward_privacy_leakage",
    "get_dataset",
    "gaussian_estimate",
    "group_dp",
    "group_dp_cumulative",
    "hit_rate_at_k",
    "influence_curve",
    "influence_drivers",
    "influence_estimate",
    "informative_k",
    "l1_count_error",
    "leakage_function",
    "leakage_supremum",
    "load_chain_counts",
    "likelihood_ratio_points",
    "load_dataset",
    "load_sequences",
    "load_stats",
    "map_states",
    "max_eps_for_tpl",
    "max_posterior",
    "mqm_estimate",
    "mqm_noise_scale",
    "naive_sum",
    "optimal_count_mechanism",
    "optimal_histogram_mechanism",
    "optimal_schedule",
    "ndcg_at_k",
    "pair_table",
    "plan",
    "plan_stream",
    "plan_synthesis",
    "posterior_mean_chain",
    "posterior_states",
    "prior_spread",
    "read_columns",
    "read_table",
    "renyi_ledger",
    "renyi_to_approx",
    "repeated_leakage",
    "row_sensitivity",
    "simulate",
    "smooth_count_stream",
    "smoothing_accuracy",
    "smoothing_effect",
    "split_by_time",
    "split_by_users",
    "stationary_distribution",
    "stream_attack_estimate",
    "stream_bounds",
    "synthesize",
    "temporal_privacy_leakage",
    "tpl_estimate",
    "tpl_refusal",
    "tpl_supremum",
    "tradeoff_curve",
    "transition_counts",
    "translation_bound",
    "trivial_topk",
    *mechanisms.__all__,
]
