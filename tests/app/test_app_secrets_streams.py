"""What is secret on the Streams page (docs/math.md §16).

For chosen value pairs and positions every number the page shows (max TPL, the [C] bound, the exact leakage, the
planner) equals the library called here with the secrets written by hand; TPL also equals the recursion over the
chosen pairs written independently in tests/support/brute_stream.py; each is at most every pair's figure and at
least the exact leakage.  The link carries the secrets and the exported script prints the page's numbers.  Event
secrets, which the stream bounds cannot take, leave every number at every pair's, and the page says so.
"""

from __future__ import annotations

import numpy as np
import pytest

from app_ui.core.tables import fmt
from puffer_core import MarkovChainPrior
from puffer_core.audit.stream import exact_stream_leakage
from puffer_core.mechanisms.laws import randomized_response_emission
from puffer_core.secrets import Secrets, read_secrets
from puffer_core.stream.registry import plan_stream, stream_bounds
from tests.app.conftest import capture_exports, errors, metric, open_page, problems
from tests.app.test_app_stream import _script, run_script
from tests.support.brute import secret_pairs
from tests.support.brute_stream import tpl_recursion

STREAM = "app_pages/stream.py"
P = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]
T = 5
EPS = 0.3  # the page's default ε per step
CHAIN = {"prior": "matrix", "P": ";".join(",".join(str(v) for v in row) for row in P),
         "labels": "home|work|clinic", "T": str(T)}


def _chain() -> MarkovChainPrior:
    a = np.array(P).T - np.eye(3)
    a[-1, :] = 1.0
    start = np.linalg.solve(a, np.array([0.0, 0.0, 1.0]))  # π = π P, solved here
    return MarkovChainPrior(P, start, T, labels=("home", "work", "clinic"))


CASES = [
    ("p=sensitive;s=2", Secrets(pairs="sensitive", states=(2,)), secret_pairs(3, "sensitive", states=(2,)), None),
    ("p=all;t=0.4", Secrets(positions=(0, 4)), None, {0, 4}),
    ("p=sensitive;s=2;t=2", Secrets(pairs="sensitive", states=(2,), positions=(2,)),
     secret_pairs(3, "sensitive", states=(2,)), {2}),
]


@pytest.mark.parametrize(("text", "secrets", "pairs", "positions"), CASES)
def test_the_streams_numbers_are_for_the_chosen_secrets(text: str, secrets: Secrets, pairs: set | None,
                                                        positions: set | None) -> None:
    at = open_page(STREAM, {**CHAIN, "sec": text})
    every = open_page(STREAM, CHAIN)
    assert not problems(at) and not errors(at) and not errors(every)
    chain, schedule = _chain(), [EPS] * T
    chosen = stream_bounds(chain, schedule, secrets=secrets)
    everything = stream_bounds(chain, schedule)
    exact = exact_stream_leakage(chain, randomized_response_emission(3, EPS), secrets=secrets)
    assert metric(at, "Max TPL over t") == fmt(chosen.temporal.max_tpl)
    assert metric(at, "[C] bound") == fmt(chosen.translation.eps_puffer)
    assert metric(at, "Exact leakage") == fmt(exact.eps)
    assert metric(every, "Max TPL over t") == fmt(everything.temporal.max_tpl)
    _, _, brute = tpl_recursion(P, list(chain.initial), T, schedule, pairs=pairs, positions=positions)
    assert chosen.temporal.max_tpl == pytest.approx(max(brute), rel=1e-12)  # the recursion written independently
    assert chosen.temporal.max_tpl <= everything.temporal.max_tpl * (1 + 1e-12)  # fewer secrets never leak more
    assert chosen.translation.eps_puffer <= everything.translation.eps_puffer * (1 + 1e-12)
    assert exact.eps <= chosen.temporal.max_tpl * (1 + 1e-9) and exact.eps <= chosen.translation.eps_puffer + 1e-9
    plan = plan_stream(chain, 1.0, secrets=secrets)
    assert metric(at, "ε per step under TPL") == fmt(plan.eps_tpl)
    assert plan.eps_tpl >= plan_stream(chain, 1.0).eps_tpl * (1 - 1e-12)  # fewer secrets allow at least as much
    assert read_secrets(at.query_params["sec"]) == secrets  # the link carries them
    assert any(c.value.startswith("**What is protected.**") for c in at.caption)


def test_the_script_prints_the_pages_numbers_for_the_secrets(tmp_path) -> None:  # noqa: ANN001
    at = open_page(STREAM, {**CHAIN, "sec": "p=sensitive;s=2"})
    assert not errors(at)
    from app_ui.streams.views import parse_script_output

    script = _script(at)
    assert "SECRETS = Secrets(" in script and "secrets=SECRETS" in script
    named, steps = parse_script_output(run_script(script, tmp_path, "stream"))
    assert metric(at, "Max TPL over t") == fmt(float(named["bound_tpl"]))
    assert metric(at, "[C] bound") == fmt(float(named["bound_c_bound"]))
    assert metric(at, "Exact leakage") == fmt(float(named["exact"]))
    assert metric(at, "ε per step under TPL") == fmt(float(named["plan_tpl"]))
    assert metric(at, "sup TPL, unbounded stream") == fmt(float(named["sup_tpl"]))


def test_the_report_says_what_is_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    captured = capture_exports(monkeypatch)
    at = open_page(STREAM, {**CHAIN, "sec": "p=sensitive;s=2"})
    assert not errors(at)
    html = captured[-1].report
    assert "What is secret (docs/math.md §16)" in html and "clinic" in html
    assert fmt(stream_bounds(_chain(), [EPS] * T, secrets=Secrets(pairs="sensitive", states=(2,))).temporal.max_tpl) \
        in html


def test_event_secrets_keep_every_pair_and_say_so() -> None:
    at = open_page(STREAM, {**CHAIN, "sec": "e:s=2;w=1-2"})
    every = open_page(STREAM, CHAIN)
    assert not problems(at) and not errors(at)
    assert any("not the chosen event secret" in i.value for i in at.info)
    for label in ("Max TPL over t", "[C] bound", "Exact leakage"):
        assert metric(at, label) == metric(every, label)
