"""puffer_core: Pufferfish privacy for correlated data (see ../shared/spec/MATH.md).

data → prior → a(b) curve → calibration → mechanism → releases → metrics/ledger.
"""

from .calibration import Calibration, calibrate, certify, group_dp
from .closed_form import binary_chain_curve
from .composition import compose, cumulative, naive_sum, plan
from .errors import DataError
from .influence import InfluenceCurve, influence_curve
from .priors import GaussianProcessPrior, MarkovChainPrior, stationary_distribution

__all__ = [
    "Calibration",
    "DataError",
    "GaussianProcessPrior",
    "InfluenceCurve",
    "MarkovChainPrior",
    "binary_chain_curve",
    "calibrate",
    "certify",
    "compose",
    "cumulative",
    "group_dp",
    "influence_curve",
    "naive_sum",
    "plan",
    "stationary_distribution",
]
