"""What is secret beyond Curves, Calibrate's ε-Pufferfish tabs and Plan (docs/math.md §16): Calibrate's Gaussian
tab calibrates σ for the chosen value secrets (the page's σ* equals the library's call with those secrets written
here by hand, and differs from every pair's), its script passes them, and event secrets, which Gaussian noise
cannot take, are said on the tab.  Synthesize plans for the chosen value secrets (its noise scale, window and a(b)
equal plan_synthesis with the secrets written here), its link carries them and its script releases with them.
Streams: tests/app/test_app_secrets_streams.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, gaussian_count, load_dataset
from puffer_core.display import fmt
from puffer_core.secrets import Secrets, read_secrets
from puffer_core.synthesis import plan_synthesis
from tests.app.conftest import errors, metric, open_page, problems
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
CALIBRATE = "app_pages/calibrate.py"
SYNTHESIZE = "app_pages/synthesize.py"
P = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]
T = 5
CHAIN = {"prior": "matrix", "P": ";".join(",".join(str(v) for v in row) for row in P),
         "labels": "home|work|clinic", "T": str(T)}
GAUSS = {"gauss": "1", "galpha": "2", "cstate": "2", "eps": "1"}


def _chain() -> MarkovChainPrior:
    a = np.array(P).T - np.eye(3)
    a[-1, :] = 1.0
    start = np.linalg.solve(a, np.array([0.0, 0.0, 1.0]))  # π = π P, solved here
    return MarkovChainPrior(P, start, T, labels=("home", "work", "clinic"))


@pytest.mark.parametrize(("text", "secrets"), [
    ("p=sensitive;s=0", Secrets(pairs="sensitive", states=(0,))),
    ("p=all;t=0.4", Secrets(positions=(0, 4))),
])
def test_the_gaussian_tab_calibrates_for_the_chosen_secrets(text: str, secrets: Secrets, exports: dict[str, object],
                                                            tmp_path: Path) -> None:
    at = open_page(CALIBRATE, {**CHAIN, **GAUSS, "sec": text})
    assert not problems(at) and not errors(at)
    chosen = gaussian_count([_chain()], [2], 1.0, 2.0, secrets=secrets)
    everything = gaussian_count([_chain()], [2], 1.0, 2.0)
    assert metric(at, "Exact σ*") == fmt(chosen.sigma)
    assert metric(at, "σ_GWM") == fmt(gaussian_count([_chain()], [2], 1.0, 2.0, exact=False, secrets=secrets).sigma)
    assert chosen.sigma <= everything.sigma * (1 + 1e-12)  # fewer secrets never need more noise
    script = str(exports["script"])
    assert "secrets=SECRETS" in script
    assert f"Exact σ* = {metric(at, 'Exact σ*')}" in run_script(script, tmp_path)


def test_the_sensitive_state_needs_less_noise_than_every_pair() -> None:
    at = open_page(CALIBRATE, {**CHAIN, **GAUSS, "sec": "p=sensitive;s=0"})
    every = open_page(CALIBRATE, {**CHAIN, **GAUSS})
    assert not errors(at) and not errors(every)
    assert metric(at, "Exact σ*") != metric(every, "Exact σ*")
    assert metric(every, "Exact σ*") == fmt(gaussian_count([_chain()], [2], 1.0, 2.0).sigma)


def test_event_secrets_are_said_on_the_gaussian_tab(exports: dict[str, object]) -> None:
    at = open_page(CALIBRATE, {**CHAIN, **GAUSS, "sec": "e:s=2;w=1-2"})
    assert not problems(at) and not errors(at)
    assert any("protects every pair of values at every entry, not the chosen event secret" in i.value for i in at.info)
    assert metric(at, "Exact σ*") == fmt(gaussian_count([_chain()], [2], 1.0, 2.0).sigma)
    assert "secrets=SECRETS" not in str(exports["script"]).split("GAUSS_ALPHA =")[1]


@pytest.mark.parametrize(("text", "secrets"), [
    ("p=sensitive;s=3", Secrets(pairs="sensitive", states=(3,))),  # Gym against every other place
    ("p=all;t=0.1.2", Secrets(positions=(0, 1, 2))),  # the first three check-ins of every user
])
def test_synthesize_plans_for_the_chosen_secrets(text: str, secrets: Secrets, exports: dict[str, object],
                                                 tmp_path: Path) -> None:
    at = open_page(SYNTHESIZE, {"sec": text})
    assert not problems(at) and not errors(at)
    data = load_dataset("checkins")
    plan = plan_synthesis(data, None, 1.0, secrets=secrets)
    everything = plan_synthesis(data, None, 1.0)
    assert metric(at, "Noise scale s") == fmt(plan.scale)
    assert metric(at, "Window b") == str(plan.calibration.b)
    assert metric(at, "a(b)") == fmt(plan.calibration.a)
    assert plan.scale < everything.scale  # the secrets change the release: less noise for fewer secrets
    assert read_secrets(at.query_params["sec"]) == secrets  # the link carries them
    assert any(c.value.startswith("**What is protected.**") for c in at.caption)
    at.button(key="w_synth_run").click().run()
    assert not problems(at) and not errors(at)
    script = str(exports["script"])
    assert "SECRETS = Secrets(" in script and "secrets=SECRETS" in script
    blocks = dict(part.split("\n", 1) for part in run_script(script, tmp_path).split("## ")[1:])
    assert fmt(float(blocks["plan"].splitlines()[1].split(",")[4])) == fmt(plan.scale)
    assert "What is secret (docs/math.md §16)" in exports["report"]()


def test_synthesize_offers_no_event_secrets_and_says_what_is_missing() -> None:
    at = open_page(SYNTHESIZE)
    assert "event" not in at.radio(key="w_sec_kind").options and "rule" not in at.radio(key="w_sec_where").options
    at.radio(key="w_sec_kind").set_value("sensitive").run()
    assert any("none chosen yet" in e for e in errors(at))
    assert "Noise scale s" not in [m.label for m in at.metric]  # nothing planned meanwhile
