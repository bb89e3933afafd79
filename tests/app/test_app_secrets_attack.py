"""What is secret on "How tight is my bound?" (docs/math.md §16).

With "clinic against every other place" chosen for your prior, every rung of its ladder (the seeded attack, the
exact truth, TPL, the [C] bound) equals the library called here with the secrets written by hand; TPL also equals
the recursion over the chosen pairs written independently (tests/support/brute_stream.py); attack ≤ exact ≤ every
bound still holds, every rung is at most every pair's, the demo priors keep every pair (said on the page), and the
exported script, run in a fresh process, prints the page's ladder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_ui.attack.secrets import APPLIED
from app_ui.attack.views import parse_attack_output
from app_ui.core.tables import fmt
from puffer_core import MarkovChainPrior, certify, influence_curve
from puffer_core.audit.stream import exact_stream_leakage
from puffer_core.mechanisms.laws import randomized_response_emission
from puffer_core.secrets import Secrets, read_secrets
from puffer_core.stream.tpl import temporal_privacy_leakage
from puffer_core.tightness.ladder import ladder_row
from tests.app.conftest import errors, open_page, problems, static_tables
from tests.app.test_app_attack import ATTACK, _script, as_float, run_attack
from tests.app.test_app_secrets_streams import CHAIN, P, T, _chain
from tests.app.test_app_stream import run_script
from tests.support.brute import secret_pairs
from tests.support.brute_stream import tpl_recursion

SECRET = Secrets(pairs="sensitive", states=(2,))
EPS = 0.5  # the page's default ε per step
DRAWS = 60


def _ladder():  # noqa: ANN202 - the page after the run, and its table
    at = open_page(ATTACK, {**CHAIN, "sec": "p=sensitive;s=2"})
    assert not problems(at) and not errors(at)
    run_attack(at, only=("binary6", "user"), draws=DRAWS)
    assert not problems(at) and not errors(at)
    return at, static_tables(at)[0]


def test_your_priors_ladder_is_for_the_chosen_secrets() -> None:
    at, table = _ladder()
    assert list(table["prior"]) == ["binary, T = 6", "your prior"]
    user = table.iloc[1]
    chain, law = _chain(), randomized_response_emission(3, EPS)
    row = ladder_row(chain, "stream_rr", EPS, seed=0, draws=DRAWS, secrets=SECRET)
    assert user["attack"] == fmt(row.lower)
    exact = exact_stream_leakage(chain, law, secrets=SECRET).eps
    assert user["exact"] == fmt(exact)
    tpl = temporal_privacy_leakage(chain, EPS, secrets=SECRET).max_tpl
    _, _, brute = tpl_recursion(P, list(chain.initial), T, [EPS] * T, pairs=secret_pairs(3, "sensitive", states=(2,)))
    assert tpl == pytest.approx(max(brute), rel=1e-12)  # the recursion written independently
    assert user["TPL"] == fmt(tpl)
    assert user["[C]"] == fmt(certify(influence_curve(chain, secrets=SECRET), EPS).eps_puffer)
    lower, truth = as_float(user["attack"]), as_float(user["exact"])
    assert lower is not None and truth is not None
    assert lower <= truth * (1 + 1e-9) <= min(as_float(user[c]) for c in ("TPL", "[C]", "group DP")) * (1 + 1e-9)
    assert tpl <= temporal_privacy_leakage(chain, EPS).max_tpl  # fewer secrets never leak more
    assert exact <= exact_stream_leakage(chain, law).eps
    # the demo prior keeps every pair, and the page says so
    binary = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6)
    assert table.iloc[0]["TPL"] == fmt(temporal_privacy_leakage(binary, EPS).max_tpl)
    assert any(c.value == APPLIED for c in at.caption)
    assert read_secrets(at.query_params["sec"]) == SECRET  # the link carries them


def test_the_script_prints_the_ladder_for_the_secrets(tmp_path: Path) -> None:
    at, table = _ladder()
    script = _script(at)
    assert "Secrets(pairs='sensitive', states=(2,))" in script
    printed = parse_attack_output(run_script(script, tmp_path, "attack"))
    for row, (_, shown) in zip(printed, table.iterrows()):
        assert fmt(row["lower"]) == shown["attack"] and fmt(row["exact"]) == shown["exact"]
        assert fmt(row["tpl"]) == shown["TPL"] and fmt(row["c_bound"]) == shown["[C]"]


def test_event_secrets_leave_every_pair_and_say_so() -> None:
    at = open_page(ATTACK, {**CHAIN, "sec": "e:s=2;w=1-2"})
    assert not problems(at) and not errors(at)
    assert any("not the chosen event secret" in i.value for i in at.info)
