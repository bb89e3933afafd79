"""Gaussian noise on Calibrate and the best-possible page under AppTest, checked by computations that share no
code with the library: W∞ by enumerating every sequence of a tiny chain, σ_GWM by its closed form, the Rényi
divergence at σ* by quadrature, the LP floor at T = 1 by its closed form 1/(1 + e^ε); the links read back; the
scripts print what the pages show."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from puffer_core import MarkovChainPrior, calibrate, influence_curve
from tests.app.conftest import errors, metric, open_page, problems
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
CALIBRATE = "app_pages/calibrate.py"
OPTIMAL = "app_pages/optimal.py"
PLAN = "app_pages/plan.py"
P, Q, T = 0.9, 0.7, 4
TINY = {"prior": "binary", "p": str(P), "q": str(Q), "T": str(T)}


def count_laws_by_enumeration(p: float, q: float, length: int) -> dict[tuple[int, int], np.ndarray]:
    """Pr[count of state 1 = c | X_t = x] for every entry t and state x, from all 2^T sequences (stationary start)."""
    transition = np.array([[p, 1 - p], [1 - q, q]])
    start = np.array([1 - q, 1 - p]) / (2 - p - q)
    laws = {(t, x): np.zeros(length + 1) for t in range(length) for x in (0, 1)}
    for seq in itertools.product((0, 1), repeat=length):
        weight = start[seq[0]] * np.prod([transition[a, b] for a, b in itertools.pairwise(seq)])
        for t in range(length):
            laws[(t, seq[t])][sum(seq)] += weight
    return {key: law / law.sum() for key, law in laws.items()}


def w_infinity(a: np.ndarray, b: np.ndarray) -> int:
    """∞-Wasserstein distance of two laws on 0..T: the largest gap between their quantile functions."""
    fa, fb = np.cumsum(a), np.cumsum(b)
    levels = np.unique(np.concatenate([fa, fb]))
    levels = levels[levels < 1 - 1e-12]
    quantile = lambda f, u: int(np.searchsorted(f, u - 1e-12))  # noqa: E731 - the smallest c with F(c) ≥ u
    return max(abs(quantile(fa, u) - quantile(fb, u)) for u in np.concatenate([[1e-9], levels + 1e-9]))


def renyi_by_quadrature(a: np.ndarray, b: np.ndarray, sigma: float, alpha: float) -> float:
    """D_α of the two Gaussian mixtures Σ_c a_c N(c, σ²) and Σ_c b_c N(c, σ²), by adaptive quadrature."""
    support = np.arange(len(a))

    def integrand(y: float) -> float:
        pa = float(np.dot(a, stats.norm.pdf(y, support, sigma)))
        pb = float(np.dot(b, stats.norm.pdf(y, support, sigma)))
        return 0.0 if pa == 0 else pa**alpha * pb ** (1 - alpha)

    edges = np.linspace(-12 * sigma, len(a) - 1 + 12 * sigma, 41)
    total = sum(integrate.quad(integrand, lo, hi, limit=200, epsabs=1e-14)[0] for lo, hi in itertools.pairwise(edges))
    return math.log(total) / (alpha - 1)


def shown(at, label: str) -> float:
    return float(metric(at, label).replace("%", ""))


def printed(output: str, label: str) -> str:
    return re.search(rf"^{re.escape(label)} = (.*)$", output, re.M).group(1)


# --------------------------------------------------------------------------------------------- Gaussian noise


@pytest.mark.parametrize(("alpha", "eps"), [(2.0, 1.0), (4.0, 0.5)])
def test_calibrate_gaussian_sigmas_are_the_closed_form_and_certified(alpha: float, eps: float) -> None:
    at = open_page(CALIBRATE, {**TINY, "eps": str(eps), "gauss": "1", "galpha": str(alpha), "cstate": "1"})
    assert not problems(at) and not errors(at)
    laws = count_laws_by_enumeration(P, Q, T)
    w = max(w_infinity(laws[(t, 0)], laws[(t, 1)]) for t in range(T))
    assert shown(at, "σ_GWM") == pytest.approx(math.sqrt(alpha * w**2 / (2 * eps)), rel=5e-4)  # 4 digits shown
    sigma = shown(at, "Exact σ*")
    assert sigma <= shown(at, "σ_GWM")
    assert shown(at, "Variance saved") == pytest.approx(100 * (1 - (sigma / shown(at, "σ_GWM")) ** 2), abs=0.2)
    divergences = [renyi_by_quadrature(laws[(t, x)], laws[(t, 1 - x)], sigma * (1 + 5e-4), alpha)
                   for t in range(T) for x in (0, 1)]
    assert max(divergences) <= eps * (1 + 1e-6)  # σ* (rounded up to the digits shown) meets ε for every pair
    below = [renyi_by_quadrature(laws[(t, x)], laws[(t, 1 - x)], 0.98 * sigma, alpha)
             for t in range(T) for x in (0, 1)]
    assert max(below) > eps  # and 2% less noise does not: σ* is the smallest
    # the (ε, δ) conversion of the certified divergence: ε_δ = D + log(1/δ)/(α − 1) with D ≤ ε
    eps_delta = shown(at, "ε_δ (δ = 1e-05)")
    assert eps_delta <= eps + math.log(1e5) / (alpha - 1) + 5e-4 * eps_delta
    assert eps_delta >= max(divergences) - 1e-3 + math.log(1e5) / (alpha - 1) - 5e-4 * eps_delta
    text = " ".join(m.value for m in at.markdown)
    assert "Rényi Pufferfish" in text and "weaker guarantee than ε-Pufferfish" in text
    assert "No plain ε-Pufferfish bound" in text  # the count's laws end at different counts: no pure bound here


def test_calibrate_gaussian_link_round_trip() -> None:
    link = {**TINY, "eps": "0.8", "gauss": "1", "galpha": "3", "gdelta": "1e-06", "cstate": "0"}
    at = open_page(CALIBRATE, link)
    assert not problems(at) and not errors(at)
    for name in ("gauss", "galpha", "gdelta", "cstate"):
        assert at.query_params[name] == link[name]
    assert "ε_δ (δ = 1e-06)" in [m.label for m in at.metric]
    off = open_page(CALIBRATE, TINY)  # off: nothing Gaussian in the link, no numbers computed
    assert "gauss" not in off.query_params and "σ_GWM" not in [m.label for m in off.metric]
    at.toggle(key="w_gauss_on").set_value(False).run()
    assert "galpha" not in at.query_params


def test_calibrate_gaussian_state_out_of_range_and_gaussian_process() -> None:
    at = open_page(CALIBRATE, {**TINY, "gauss": "1", "cstate": "5"})
    assert not problems(at)
    assert any("state 5 does not exist" in e for e in errors(at))
    gp = open_page(CALIBRATE, {"prior": "gaussian", "gauss": "1"})
    assert not problems(gp) and not errors(gp)
    assert any("Gaussian process" in i.value for i in gp.info)


def test_calibrate_script_prints_the_pages_sigma(tmp_path: Path) -> None:
    from tests.support.exported import page_script

    query = {**TINY, "eps": "0.7", "gauss": "1", "galpha": "2.5", "cstate": "1"}
    at = open_page(CALIBRATE, query)
    output = run_script(page_script("calibrate", query), tmp_path, "calibrate.py")
    assert printed(output, "σ_GWM") == metric(at, "σ_GWM")
    assert printed(output, "Exact σ*") == metric(at, "Exact σ*")
    assert printed(output, "Variance saved") == metric(at, "Variance saved")
    assert printed(output, "ε_δ (δ = 1e-05)") == metric(at, "ε_δ (δ = 1e-05)")


# --------------------------------------------------------------------------------------------- the yardstick


@pytest.mark.parametrize(("p", "q", "eps"), [(0.8, 0.8, 0.5), (0.8, 0.8, 2.0), (P, Q, 0.5), (P, Q, 2.0)])
def test_the_floor_at_one_entry_is_the_closed_form(p: float, q: float, eps: float) -> None:
    """T = 1: the mechanism is a 2×2 table (a = q(1 | 0), b = q(0 | 1)); the programme's vertices are randomized
    response a = b = 1/(1 + e^ε) and the two constant outputs, whose errors are π₁ and π₀: the floor is the least."""
    at = open_page(OPTIMAL, {"prior": "binary", "p": str(p), "q": str(q), "T": "5", "oeps": str(eps), "olen": "1",
                             "oruns": "1"})
    assert not problems(at) and not errors(at)
    pi_1 = (1 - p) / (2 - p - q)
    assert shown(at, "Best possible error") == pytest.approx(min(1 / (1 + math.exp(eps)), pi_1, 1 - pi_1), rel=5e-4)
    leak = shown(at, "Leakage of 1 runs")
    assert leak == pytest.approx(eps, rel=5e-4) or (leak == 0 and min(pi_1, 1 - pi_1) < 1 / (1 + math.exp(eps)))


def test_the_yardstick_beside_laplace_and_the_collapse() -> None:
    eps, length = 1.0, 6
    at = open_page(OPTIMAL, {**TINY, "oeps": str(eps), "olen": str(length), "oruns": "2"})
    assert not problems(at) and not errors(at)
    floor = shown(at, "Best possible error")
    # Laplace via a(b) on a count: scale 1/ε_DP with ε_DP from the a(b) curve (docs/math.md §3)
    laplace = 1 / calibrate(influence_curve(MarkovChainPrior([[P, 1 - P], [1 - Q, Q]], length=length)), eps).eps_dp
    assert metric(at, "Laplace via a(b) ÷ floor") == f"{laplace / floor:.3g}×"
    assert laplace >= floor and 0 < floor < length
    leak = shown(at, "Leakage of 2 runs")
    assert leak > 2 * eps  # run twice, the optimum leaks more than adding up would say ([C] §4)
    assert at.warning and "run 2 times" in at.warning[0].value
    assert at.query_params["olen"] == str(length) and at.query_params["oruns"] == "2"
    assert len(at.get("download_button")) >= 4  # two CSVs, the report and the script


def test_the_yardstick_refuses_with_the_estimate() -> None:
    at = open_page(OPTIMAL, {**TINY, "olen": "100", "oruns": "6"})
    assert not problems(at)
    refused = errors(at)
    assert refused and "out of reach" in refused[0] and "about" in refused[0]
    gp = open_page(OPTIMAL, {"prior": "gaussian"})
    assert not problems(gp) and not errors(gp) and gp.info


def test_the_yardstick_script_prints_the_pages_numbers(tmp_path: Path) -> None:
    from tests.support.exported import page_script

    query = {**TINY, "oeps": "0.7", "olen": "5", "oruns": "1", "cstate": "0"}
    at = open_page(OPTIMAL, query)
    output = run_script(page_script("optimal", query), tmp_path, "optimal.py")
    assert printed(output, "Best possible error (floor)") == metric(at, "Best possible error")
    assert printed(output, "error_pufferfish_laplace").endswith(f"({metric(at, 'Laplace via a(b) ÷ floor')} floor)")
    assert printed(output, "leakage_1_runs").startswith(metric(at, "Leakage of 1 runs"))


# --------------------------------------------------------------------------------------------- Plan and Simulate


def test_plan_renyi_rows_are_one_release_at_the_combined_sigma() -> None:
    """k releases of one count with σ each are one release with σ/√k: its σ in closed form, the GWM bound
    α·W∞²/(2σ²) with W∞ by enumeration, and the exact level by quadrature of the two mixtures."""
    alpha, eps, k = 2.0, 0.5, 3
    at = open_page(PLAN, {**TINY, "gauss": "1", "geps": str(eps), "grel": str(k), "galpha": str(alpha)})
    assert not problems(at) and not errors(at)
    rows = at.dataframe[-1].value
    assert list(rows["release"].astype(int)) == [1, 2, 3]
    laws = count_laws_by_enumeration(P, Q, T)
    w = max(w_infinity(laws[(t, 0)], laws[(t, 1)]) for t in range(T))
    each = float(rows["σ of each"].iloc[0])
    for n in range(1, k + 1):
        row = rows.iloc[n - 1]
        combined = float(row["one release equal to all so far: σ"])
        assert combined == pytest.approx(each / math.sqrt(n), rel=1e-3)
        assert float(row["Rényi ε, GWM bound"]) == pytest.approx(alpha * w**2 / (2 * combined**2), rel=2e-3)
        exact = max(renyi_by_quadrature(laws[(t, x)], laws[(t, 1 - x)], each / math.sqrt(n), alpha)
                    for t in range(T) for x in (0, 1))
        assert float(row["Rényi ε, exact"]) == pytest.approx(exact, rel=2e-3, abs=1e-4)
        assert float(row["sum of the releases' ε (not a guarantee)"]) == pytest.approx(n * eps, rel=1e-3)
    text = " ".join(c.value for c in at.caption)
    assert "not composed" in text and at.query_params["grel"] == str(k)
    ledger_text = " ".join(m.value for m in at.markdown)
    assert "kept here, apart from the ledger of ε-Pufferfish releases" in ledger_text


def test_simulate_says_a_gaussian_eps_is_renyi() -> None:
    at = open_page("app_pages/simulate.py")
    at.radio(key="w_sim_query").set_value("histogram").run()
    at.multiselect(key="w_sim_mechanisms_histogram").set_value(["pufferfish_laplace", "gaussian"]).run()
    assert not problems(at)
    caption = next(c.value for c in at.caption if "Rényi" in c.value)
    assert f"ε = 1 → ε_δ = {1 + math.log(1e5):.4g}" in caption  # ε + log(1/δ)/(α − 1) at α = 2, δ = 1e-5


# --------------------------------------------------------------------------------------------- the classroom


def test_classroom_optimum_once_then_twice_by_enumeration() -> None:
    """The lesson's numbers: one run of the optimum leaks exactly ε; two runs leak what enumerating every sequence
    of the chain and every pair of outputs gives for the table the programme returns (far above 2ε)."""
    from app_ui.classroom.optimum import LENGTH, STATE, STAY, lesson_chain
    from puffer_core.optimal.lp import optimal_count_mechanism

    at = open_page("app_pages/classroom.py")
    assert not problems(at) and not errors(at)
    assert shown(at, "Leakage of one run") == pytest.approx(1.0, rel=5e-4)
    assert "Leakage of two runs" not in [m.label for m in at.metric] and not at.warning  # one run first
    at.toggle(key="w_cls_opt_again").set_value(True).run()
    twice = shown(at, "Leakage of two runs")
    assert twice > 2.0 and at.warning and "not 2" in at.warning[-1].value
    table = optimal_count_mechanism(lesson_chain(), [STATE], 1.0).table  # q(y | count), count = 0..T
    laws = count_laws_by_enumeration(*STAY, LENGTH)  # counts of state 1 (STATE)
    joint = {key: np.einsum("c,cy,cz->yz", law, table, table) for key, law in laws.items()}
    worst = 0.0
    for t in range(LENGTH):
        a, b = joint[(t, 0)], joint[(t, 1)]
        for u, v in ((a, b), (b, a)):
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(u > 0, np.log(u) - np.log(v), -np.inf)
            worst = max(worst, float(ratio.max()))
    assert twice == pytest.approx(worst, rel=2e-3)


def test_accuracy_first_lists_gaussian_noise_apart() -> None:
    """Calibrate's accuracy tab: the Rényi mechanism in its own table (its (ε_δ, δ) by the closed form
    ε + log(1/δ)/(α − 1)), never among the ε_puffer bars of the others; listed once Gaussian noise is on."""
    at = open_page(CALIBRATE, {**TINY, "gauss": "1"})
    assert not problems(at) and not errors(at)
    rows = next(d.value for d in at.dataframe if "Rényi ε needed (order α)" in d.value.columns)
    assert list(rows["mechanism"]) == ["Gaussian (Rényi Pufferfish, α = 2)"]
    eps = float(rows["Rényi ε needed (order α)"].iloc[0])
    assert float(rows["ε_δ (δ = 1e-05)"].iloc[0]) == pytest.approx(eps + math.log(1e5), rel=5e-4)
    specs = [chart.proto.spec for chart in at.get("plotly_chart")]
    accuracy_chart = [spec for spec in specs if "the target costs" in spec]
    assert len(accuracy_chart) == 1 and "Rényi" not in accuracy_chart[0]  # no Rényi bar among the ε_puffer ones


def test_plan_script_prints_the_gaussian_tabs_renyi_rows(tmp_path: Path) -> None:
    """The downloaded Plan script prints the Gaussian tab's Rényi rows as the tab shows them, and they are
    renyi_ledger's numbers for k releases of the count calibrated here (σ* at (α, ε))."""
    import csv
    import io

    from puffer_core import gaussian_count, renyi_ledger
    from puffer_core.display import fmt
    from tests.support.exported import page_script

    alpha, eps, k, delta = 2.5, 0.7, 3, 1e-6
    query = {**TINY, "gauss": "1", "geps": str(eps), "grel": str(k), "galpha": str(alpha), "gdelta": str(delta),
             "cstate": "1"}
    at = open_page(PLAN, query)
    assert not problems(at) and not errors(at)
    tab = at.dataframe[-1].value
    output = run_script(page_script("plan", query), tmp_path, "plan.py")
    lines = output.splitlines()
    rows = list(csv.reader(io.StringIO("\n".join(lines[lines.index("# renyi") + 1:]))))
    assert rows[0] == [str(c) for c in tab.columns]
    assert rows[1:] == [[str(v) for v in values] for values in tab.itertuples(index=False)]
    # the numbers: the library called here on the same chain
    mech = gaussian_count(MarkovChainPrior([[P, 1 - P], [1 - Q, Q]], length=T), [1], eps, alpha)
    ledger = renyi_ledger([mech.accounting] * k, delta=delta)
    columns = {name: [row[i] for row in rows[1:]] for i, name in enumerate(rows[0])}
    assert columns["release"] == [str(n) for n in range(1, k + 1)]
    assert columns["σ of each"] == [fmt(mech.sigma)] * k
    for name, values in [("one release equal to all so far: σ", ledger.sigma), ("Rényi ε, exact", ledger.eps),
                         ("Rényi ε, GWM bound", ledger.eps_gwm), ("ε_δ (δ = 1e-06)", ledger.eps_delta),
                         ("pure ε-Pufferfish", ledger.eps_puffer),
                         ("sum of the releases' ε (not a guarantee)", ledger.naive_sum)]:
        assert columns[name] == [fmt(float(v)) for v in values], name


def test_plan_script_without_gaussian_prints_no_renyi_rows(tmp_path: Path) -> None:
    from tests.support.exported import page_script

    output = run_script(page_script("plan", {**TINY, "gauss": "0"}), tmp_path, "plan.py")
    assert "# renyi" not in output and "# planner" in output
