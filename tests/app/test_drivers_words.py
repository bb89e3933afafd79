""""What drives a(1)" names every part of a(1) (issue 29): the two log-ratio terms and the marginal term
log π(x')/π(x) add up to the headline, and a(1) is checked against the curve (influence_curve, which shares no
code with the explanation)."""

from __future__ import annotations

import numpy as np

from app_ui.prior.smoothing import drivers_sentence
from puffer_core import MarkovChainPrior, influence_curve, influence_drivers
from puffer_core.display import fmt


def test_the_parts_add_up_to_a1() -> None:
    prior = MarkovChainPrior([[0.7, 0.2, 0.1], [0.3, 0.6, 0.1], [0.25, 0.25, 0.5]], length=6)
    drivers = influence_drivers(prior)

    def transition(t) -> dict[str, object]:  # noqa: ANN001 - a Transition, as the explanation's finding writes it
        return {"name": drivers.name(t), "probability": t.probability, "count": t.count}

    n = {
        "a_1": drivers.a1,
        "where": drivers.where,
        "pair": [drivers.labels[i] for i in drivers.pair],
        "terms": [
            {"side": t.side, "numerator": transition(t.numerator), "denominator": transition(t.denominator),
             "value": t.value}
            for t in drivers.terms
        ],
        "marginal": drivers.marginal,
        "unseen": [],
    }  # fmt: skip
    assert n["marginal"] != 0.0  # a non-uniform stationary law: the marginal term matters here
    parts = sum(term["value"] for term in n["terms"]) + n["marginal"]
    a1 = float(influence_curve(prior).a[0])
    assert np.isclose(parts, a1, rtol=1e-12) and np.isclose(n["a_1"], a1, rtol=1e-12)
    sentence = drivers_sentence(n)
    assert "log π(" in sentence and fmt(n["marginal"], 3) in sentence
    assert f"together {fmt(a1, 3)}" in sentence
