"""puffer_core.widgets: controls drive exactly what puffer_core computes for the new settings."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest

pytest.importorskip("ipywidgets")

from puffer_core.accounting.calibration import calibrate  # noqa: E402
from puffer_core.accounting.composition import cumulative, naive_sum, plan  # noqa: E402
from puffer_core.engine.curve import InfluenceCurve  # noqa: E402
from puffer_core.engine.influence import influence_curve  # noqa: E402
from puffer_core.priors.models import GaussianProcessPrior, MarkovChainPrior  # noqa: E402
from puffer_core.widgets import KINDS, CompositionPlanner, InfluenceExplorer, format_matrix, parse_matrix  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
THREE_STATES = [[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.3, 0.7]]


def assert_explorer_shows(explorer: InfluenceExplorer, expected: InfluenceCurve, eps_puffer: float) -> None:
    """The explorer's curve, calibration and figure equal what puffer_core computes."""
    np.testing.assert_array_equal(explorer.curve.b, expected.b)
    np.testing.assert_array_equal(explorer.curve.a, expected.a)  # +inf compared exactly
    assert explorer.curve.length == expected.length
    cal = calibrate(expected, eps_puffer)
    assert explorer.calibration == cal
    assert explorer.optimal_b == cal.b
    assert explorer.error is None
    assert explorer.message.value == ""

    curve_trace, inf_trace, line_trace, optimum_trace = explorer.figure.data
    finite = np.isfinite(expected.a)
    np.testing.assert_array_equal(np.asarray(curve_trace.x), expected.b)
    drawn = np.asarray(curve_trace.y, dtype=float)
    np.testing.assert_array_equal(drawn[finite], expected.a[finite])
    assert np.all(np.isnan(drawn[~finite]))
    np.testing.assert_array_equal(np.asarray(inf_trace.x, dtype=int), expected.b[~finite])
    if (~finite).any():
        top = np.asarray(inf_trace.y, dtype=float)
        assert np.all(top > max([eps_puffer, *expected.a[finite]]))
    np.testing.assert_array_equal(np.asarray(optimum_trace.x), [cal.b])
    np.testing.assert_array_equal(np.asarray(optimum_trace.y), [cal.a])
    # the calibration line y = ε_puffer − b·ε_DP starts at (0, ε_puffer) and passes through (b*, a(b*))
    x0, x1 = np.asarray(line_trace.x, dtype=float)
    y0, y1 = np.asarray(line_trace.y, dtype=float)
    assert (x0, y0, y1) == (0.0, eps_puffer, 0.0)
    assert y0 + (y1 - y0) * cal.b / x1 == pytest.approx(cal.a, abs=1e-12)
    assert f"optimal b* = {cal.b}" in explorer.result.value
    assert f"{cal.eps_dp:.6g}" in explorer.result.value


def test_default_explorer_shows_a_binary_chain() -> None:
    explorer = InfluenceExplorer()
    assert explorer.kind.value == "binary"
    expected = influence_curve(MarkovChainPrior([[0.9, 1 - 0.9], [1 - 0.8, 0.8]], length=100))
    assert_explorer_shows(explorer, expected, 1.0)
    layout = explorer.figure.layout
    assert layout.xaxis.title.text == "b (size of the high-influence set)"
    assert layout.yaxis.title.text == "a(b) (nats)"


def test_binary_controls_recompute_curve_and_optimal_b() -> None:
    explorer = InfluenceExplorer()
    explorer.p.value = 0.7
    explorer.q.value = 0.95
    explorer.length.value = 60
    explorer.eps_puffer.value = 0.5
    expected = influence_curve(MarkovChainPrior([[0.7, 1 - 0.7], [1 - 0.95, 0.95]], length=60))
    assert_explorer_shows(explorer, expected, 0.5)
    np.testing.assert_array_equal(explorer.prior.transition, [[0.7, 1 - 0.7], [1 - 0.95, 0.95]])


def test_eps_puffer_recalibrates_without_recomputing_the_curve() -> None:
    explorer = InfluenceExplorer()
    curve = explorer.curve
    explorer.eps_puffer.value = 2.0
    assert explorer.eps_puffer.value == 2.0 and explorer.calibration.eps_puffer == 2.0  # a log slider made it 1.995
    explorer.eps_puffer.value = 3.0
    assert explorer.curve is curve
    assert_explorer_shows(explorer, curve, 3.0)
    assert explorer.calibration.b < calibrate(curve, 1.0).b  # a looser target allows a smaller H


def test_matrix_with_zero_transitions_keeps_inf_and_clips_it_for_display() -> None:
    explorer = InfluenceExplorer()
    explorer.length.value = 40
    explorer.kind.value = "matrix"
    explorer.matrix.value = "0.8, 0.2, 0\n0.1, 0.8, 0.1\n0, 0.3, 0.7"
    expected = influence_curve(MarkovChainPrior(THREE_STATES, length=40))
    assert np.isinf(expected.a[:2]).all() and np.isfinite(expected.a[2:]).all()
    assert_explorer_shows(explorer, expected, 1.0)
    assert "+∞" in explorer.figure.layout.annotations[0].text
    explorer.matrix.value = "1/2, 1/2, 0\n1/4, 1/2, 1/4\n0, 1/2, 1/2"
    expected = influence_curve(MarkovChainPrior([[0.5, 0.5, 0], [0.25, 0.5, 0.25], [0, 0.5, 0.5]], length=40))
    assert_explorer_shows(explorer, expected, 1.0)


def test_tight_target_falls_back_to_group_dp() -> None:
    explorer = InfluenceExplorer()
    explorer.kind.value = "matrix"
    explorer.length.value = 20
    explorer.eps_puffer.value = 0.01
    expected = influence_curve(MarkovChainPrior(THREE_STATES, length=20))
    assert_explorer_shows(explorer, expected, 0.01)
    assert explorer.calibration.group_dp and explorer.optimal_b == 20
    assert "group DP" in explorer.result.value


def test_initial_distribution_is_used() -> None:
    explorer = InfluenceExplorer()
    explorer.kind.value = "matrix"
    explorer.length.value = 30
    explorer.initial.value = "1, 0, 0"
    expected = influence_curve(MarkovChainPrior(THREE_STATES, initial=[1.0, 0.0, 0.0], length=30))
    assert_explorer_shows(explorer, expected, 1.0)
    assert not explorer.prior.stationary_initial


@pytest.mark.parametrize(
    ("control", "text", "fragment"),
    [
        ("matrix", "0.5, 0.6\n0.5, 0.5", "row 1 sums to 1.1"),
        ("matrix", "0.5, x\n0.5, 0.5", "row 1, entry 2: 'x' is not a number"),
        ("matrix", "0.5, 0.5\n1", "same number of entries"),
        ("matrix", "0.5, 0.5, 0\n0.5, 0.5, 0", "must be square"),
        ("matrix", "  \n", "empty"),
        ("matrix", "1, 0\n0, 1", "no unique stationary distribution"),
        ("matrix", "1.5, -0.5\n0.5, 0.5", "cannot be negative"),
        ("matrix", "1/0, 1\n0.5, 0.5", "not a number"),
        ("initial", "0.5, 0.5", "needs 3 entries"),
        ("initial", "0.5, 0.6, 0", "sums to 1.1"),
    ],
)
def test_invalid_input_shows_a_message_and_keeps_the_last_curve(control: str, text: str, fragment: str) -> None:
    explorer = InfluenceExplorer()
    explorer.length.value = 30
    explorer.kind.value = "matrix"
    curve, cal, prior = explorer.curve, explorer.calibration, explorer.prior
    drawn = np.asarray(explorer.figure.data[0].y, dtype=float).copy()

    getattr(explorer, control).value = text
    assert explorer.error is not None and fragment in explorer.error
    assert fragment.replace("'", "&#x27;") in explorer.message.value
    assert "Traceback" not in explorer.message.value
    assert explorer.curve is curve and explorer.calibration is cal and explorer.prior is prior
    np.testing.assert_array_equal(np.asarray(explorer.figure.data[0].y, dtype=float), drawn)

    explorer.eps_puffer.value = 2.0  # the target still applies to the last valid curve
    assert explorer.calibration == calibrate(curve, 2.0)

    explorer.matrix.value = "0.6, 0.4\n0.3, 0.7"
    explorer.initial.value = ""
    assert_explorer_shows(explorer, influence_curve(MarkovChainPrior([[0.6, 0.4], [0.3, 0.7]], length=30)), 2.0)


def test_binary_chain_that_never_moves_is_reported() -> None:
    explorer = InfluenceExplorer()
    explorer.p.value = 1.0  # state 0 absorbing: valid, state 1 has no stationary mass
    assert_explorer_shows(explorer, influence_curve(MarkovChainPrior([[1.0, 0.0], [1 - 0.8, 0.8]])), 1.0)
    curve = explorer.curve
    explorer.q.value = 1.0
    assert "no unique stationary distribution" in explorer.error
    assert explorer.curve is curve
    explorer.q.value = 0.5
    expected = influence_curve(MarkovChainPrior([[1.0, 0.0], [0.5, 0.5]], length=100))
    assert_explorer_shows(explorer, expected, 1.0)


def test_gaussian_controls() -> None:
    explorer = InfluenceExplorer()
    explorer.kind.value = "gaussian"
    assert_explorer_shows(explorer, influence_curve(GaussianProcessPrior(40, 2.0)), 1.0)
    explorer.n.value = 25
    explorer.length_scale.value = 3.0
    explorer.kernel.value = "exponential"
    explorer.eps_puffer.value = 5.0
    expected = influence_curve(GaussianProcessPrior(25, 3.0, "exponential", 5.0, 0.1))
    assert_explorer_shows(explorer, expected, 5.0)
    explorer.gamma.value = 3.0
    explorer.delta.value = 0.2
    expected = influence_curve(GaussianProcessPrior(25, 3.0, "exponential", 3.0, 0.2))
    assert_explorer_shows(explorer, expected, 5.0)


def test_controls_of_hidden_panels_do_not_recompute() -> None:
    explorer = InfluenceExplorer()
    explorer.kind.value = "gaussian"
    curve = explorer.curve
    explorer.p.value = 0.3
    explorer.matrix.value = "not a matrix"
    assert explorer.curve is curve and explorer.error is None
    displays = {kind: panel.layout.display for kind, panel in explorer._panels.items()}
    assert displays == {kind: None if kind == "gaussian" else "none" for kind in KINDS}
    explorer.kind.value = "binary"
    expected = influence_curve(MarkovChainPrior([[0.3, 1 - 0.3], [1 - 0.8, 0.8]], length=100))
    assert_explorer_shows(explorer, expected, 1.0)


def test_explorer_starts_from_a_given_prior() -> None:
    chain = MarkovChainPrior(THREE_STATES, initial=[0.2, 0.3, 0.5], length=25)
    explorer = InfluenceExplorer(chain)
    assert explorer.prior is chain and explorer.kind.value == "matrix"
    assert_explorer_shows(explorer, influence_curve(chain), 1.0)
    np.testing.assert_array_equal(parse_matrix(explorer.matrix.value), chain.transition)
    explorer.length.value = 26  # the controls rebuild the same prior
    assert_explorer_shows(explorer, influence_curve(chain.with_length(26)), 1.0)

    binary = MarkovChainPrior([[0.6, 0.4], [0.25, 0.75]], length=12)
    explorer = InfluenceExplorer(binary)
    assert (explorer.kind.value, explorer.p.value, explorer.q.value, explorer.length.value) == ("binary", 0.6, 0.75, 12)
    assert_explorer_shows(explorer, influence_curve(binary), 1.0)

    gp = GaussianProcessPrior(20, 1.5, "exponential", gamma=4.0, delta=0.2)
    explorer = InfluenceExplorer(gp)
    assert explorer.kind.value == "gaussian"
    assert (explorer.n.value, explorer.length_scale.value, explorer.gamma.value, explorer.delta.value) == (
        20,
        1.5,
        4,
        0.2,
    )
    assert_explorer_shows(explorer, influence_curve(gp), 1.0)

    tiny = GaussianProcessPrior(10, 0.005, delta=5e-5)  # below the controls' default bounds: not clipped
    explorer = InfluenceExplorer(tiny)
    assert (explorer.length_scale.value, explorer.delta.value) == (0.005, 5e-5)
    assert_explorer_shows(explorer, influence_curve(tiny), 1.0)

    with pytest.raises(ValueError, match="one MarkovChainPrior or GaussianProcessPrior"):
        InfluenceExplorer([binary, binary])


def test_matrix_text_round_trips() -> None:
    matrix = np.array([[1 / 3, 2 / 3], [0.1, 0.9]])
    np.testing.assert_array_equal(parse_matrix(format_matrix(matrix)), matrix)
    np.testing.assert_array_equal(parse_matrix("1/3; 2/3\n0.1 0.9"), matrix)


def shown_figure(shown: InfluenceExplorer | CompositionPlanner) -> dict:
    """The plotly JSON the widget's Output currently displays (exactly one output)."""
    (output,) = shown.plot.outputs
    assert output["output_type"] == "display_data"
    return output["data"]["application/vnd.plotly.v1+json"]


def test_widgets_display_in_a_cell() -> None:
    explorer = InfluenceExplorer()
    planner = CompositionPlanner(explorer.curve)
    planner.follow(explorer)
    for shown in (explorer, planner):
        bundle = shown._repr_mimebundle_()
        assert bundle[WIDGET_MIME]["model_id"] == shown.widget.model_id
        assert shown.plot in shown.widget.children
        assert shown_figure(shown) == json.loads(pio.to_json(shown.figure, validate=False))
    explorer.p.value = 0.6  # the displayed figures follow every change, not only the Python objects
    planner.releases.value = 4
    for shown in (explorer, planner):
        assert shown_figure(shown) == json.loads(pio.to_json(shown.figure, validate=False))
    assert shown_figure(planner)["layout"]["title"]["text"].startswith("4 releases")


def test_widget_state_does_not_carry_plotly_js() -> None:
    """A saved notebook keeps each widget's state: it must hold the figure's data, not plotly.js (~5 MB)."""
    explorer = InfluenceExplorer()
    planner = CompositionPlanner(explorer.curve)
    for shown in (explorer, planner):
        models = [shown.widget]
        state = 0
        while models:
            model = models.pop()
            state += len(json.dumps(model.get_state(), default=str))
            models.extend(getattr(model, "children", ()))
        assert state < 200_000, state


def assert_planner_shows(planner: CompositionPlanner, curve: InfluenceCurve, budget: float, releases: int) -> None:
    """The planner's plan, table and figure equal what puffer_core computes."""
    expected = plan(curve, budget, releases)
    assert planner.plan == expected and planner.calibration == expected
    steps = np.arange(1, releases + 1)
    theorem = cumulative([expected] * releases)
    naive = np.array([naive_sum([expected] * n) for n in steps])
    group = steps * curve.length * expected.eps_dp  # each release is T·ε_DP-DP for a whole sequence
    np.testing.assert_array_equal(planner.table.index.to_numpy(), steps)
    np.testing.assert_array_equal(planner.table["Theorem 6.2"].to_numpy(), theorem)
    np.testing.assert_array_equal(planner.table["naive sum"].to_numpy(), naive)
    np.testing.assert_allclose(planner.table["group DP"].to_numpy(), group, rtol=1e-12)
    assert theorem[-1] == pytest.approx(budget, rel=1e-12)  # the plan spends the budget exactly
    np.testing.assert_allclose(theorem, expected.a + steps * expected.b * expected.eps_dp, rtol=1e-12)
    for trace, column in zip(planner.figure.data[:3], ("Theorem 6.2", "naive sum", "group DP")):
        assert trace.name == column
        np.testing.assert_array_equal(np.asarray(trace.x), steps)
        np.testing.assert_array_equal(np.asarray(trace.y), planner.table[column].to_numpy())
    np.testing.assert_array_equal(np.asarray(planner.figure.data[3].y), [budget, budget])
    assert f"ε_DP = {expected.eps_dp:.6g}" in planner.summary.value
    assert "<table" in planner.table_view.value


def test_planner_controls_replan() -> None:
    curve = influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=50))
    planner = CompositionPlanner(curve)
    assert_planner_shows(planner, curve, 1.0, 10)
    planner.releases.value = 7
    planner.budget.value = 2.5
    assert_planner_shows(planner, curve, 2.5, 7)
    assert not planner.plan.group_dp and planner.plan.b < curve.length
    planner.releases.value = 1
    assert_planner_shows(planner, curve, 2.5, 1)
    assert planner.figure.layout.xaxis.title.text == "releases"


def test_planner_falls_back_to_group_dp_and_takes_new_curves() -> None:
    curve = influence_curve(MarkovChainPrior(THREE_STATES, length=15))
    planner = CompositionPlanner(curve, releases=4, budget=0.05)
    assert_planner_shows(planner, curve, 0.05, 4)
    assert planner.plan.group_dp and planner.plan.b == 15
    other = influence_curve(GaussianProcessPrior(20, 1.0))
    planner.curve = other
    assert_planner_shows(planner, other, 0.05, 4)
    with pytest.raises(ValueError, match="InfluenceCurve"):
        planner.curve = "not a curve"
    with pytest.raises(ValueError, match="InfluenceCurve"):
        CompositionPlanner(MarkovChainPrior(THREE_STATES))


def test_planner_follows_an_explorer() -> None:
    explorer = InfluenceExplorer()
    planner = CompositionPlanner(influence_curve(MarkovChainPrior(THREE_STATES, length=10)), releases=5, budget=2.0)
    planner.follow(explorer)
    assert planner.curve is explorer.curve
    explorer.p.value = 0.6
    assert planner.curve is explorer.curve
    assert_planner_shows(planner, explorer.curve, 2.0, 5)
    seen = []
    explorer.on_change(lambda ex: seen.append(ex.calibration))
    explorer.eps_puffer.value = 0.3
    assert seen == [calibrate(explorer.curve, 0.3)]


def test_missing_ipywidgets_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    monkeypatch.delitem(sys.modules, "puffer_core.widgets")
    with pytest.raises(ImportError, match=r"pip install -r requirements-widgets\.txt"):
        importlib.import_module("puffer_core.widgets")


def test_puffer_core_does_not_import_widgets() -> None:
    code = "import sys, puffer_core; print('ipywidgets' in sys.modules, 'puffer_core.widgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
