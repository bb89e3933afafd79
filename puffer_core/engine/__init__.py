"""The exact engine: a(b)-influence curves of every kind of prior, and MQM's noise scale (docs/math.md §2, §5).

- :mod:`.curve`: :class:`InfluenceCurve`, the value every kind of prior produces;
- :mod:`.kernels`: the compiled inner loops (numba);
- :mod:`.chain_terms`: the left and right terms of a Markov chain, shared by a(b) and MQM;
- :mod:`.influence`: exact a(b) for Markov chains and sets Θ (§2.1), with refusals before out-of-reach work;
- :mod:`.gaussian`: certified a(b) of Gaussian-process priors (§2.3);
- :mod:`.closed_form`: the binary chain's closed form (§2.2), a cross-check;
- :mod:`.mqm`: σ_max of the Markov quilt mechanism (§5);
- :mod:`.spread`: how far a(b) moves because the prior was learned from data (§12);
- :mod:`.events`: a(b) of event secrets, and :mod:`.redaction`: the redaction planner (§16).
"""

from .closed_form import binary_chain_curve
from .curve import InfluenceCurve
from .events import event_curve
from .gaussian import gaussian_estimate, gaussian_influence_curve
from .influence import influence_curve, influence_estimate
from .mqm import MQMScale, mqm_estimate, mqm_noise_scale, mqm_scale
from .redaction import RedactionPlan, redaction_plan
from .spread import PriorSpread, prior_spread, row_sensitivity

__all__ = [
    "InfluenceCurve",
    "MQMScale",
    "PriorSpread",
    "RedactionPlan",
    "binary_chain_curve",
    "event_curve",
    "gaussian_estimate",
    "gaussian_influence_curve",
    "influence_curve",
    "influence_estimate",
    "mqm_estimate",
    "mqm_noise_scale",
    "mqm_scale",
    "prior_spread",
    "redaction_plan",
    "row_sensitivity",
]
