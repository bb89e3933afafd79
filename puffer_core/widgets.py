"""Jupyter widgets: the live a(b) exploration and the composition planner (optional extra).

:class:`InfluenceExplorer` builds a prior from controls (a binary chain's p and q, a K-state
transition matrix typed as CSV, or a Gaussian process), draws its exact a(b)-influence curve
(docs/math.md §2) with the optimal b of the calibration for a target ε_puffer marked (§3), and
reports the resulting per-entry ε_DP.  :class:`CompositionPlanner` spends a total ε_puffer
budget over k releases (§4 planner) and compares the cumulative ε_puffer of those releases by
[C] Theorem 6.2, by the naive sum and by group-DP accounting.

Both hold their current results as attributes (``.prior``, ``.curve``, ``.calibration``,
``.plan``, ``.table``) so the next notebook cell can use them; every control is an attribute
too, and setting its ``.value`` recomputes synchronously.  Nothing here computes a formula:
every number comes from :mod:`puffer_core`.

Each figure is a plain plotly ``Figure`` (``.figure``, updated in place) shown in an
ipywidgets ``Output`` (``.plot``) as plotly's JSON mimetype, which JupyterLab and Notebook 7
draw with the renderer that comes with plotly.  A plotly ``FigureWidget`` would carry its own
copy of plotly.js (about 5 MB) in every widget's saved state: an executed tour with two of
them weighed 10 MB.

This module needs the optional extra: ``pip install -r requirements-widgets.txt``
(ipywidgets; plotly comes with the app's requirements), and Jupyter itself:
``pip install -r requirements-notebook.txt``.  The rest of ``puffer_core`` never imports it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

try:
    import ipywidgets as widgets
    import plotly.graph_objects as go
    import plotly.io as pio
except ImportError as exc:
    raise ImportError(
        "puffer_core.widgets needs the optional Jupyter extra (ipywidgets, plotly); install it with"
        " `pip install -r requirements-widgets.txt`"
    ) from exc

from .accounting.calibration import Calibration, calibrate, group_dp
from .accounting.composition import cumulative, group_dp_cumulative, naive_sum, plan
from .engine.curve import InfluenceCurve
from .engine.influence import influence_curve
from .priors.codecs import Choice, DistributionText, MatrixText, Number, Parameter
from .priors.kinds import MATRIX, PRIOR_KINDS, kind_of
from .priors.models import GaussianProcessPrior, MarkovChainPrior

__all__ = ["CompositionPlanner", "InfluenceExplorer", "format_matrix", "parse_initial", "parse_matrix"]

# the kinds of prior the explorer offers: every registered kind whose prior is one prior (not a set Θ)
KINDS = tuple(name for name, record in PRIOR_KINDS.items() if not isinstance(record.prior(record.defaults), list))
# where the notebook starts a kind away from the app's defaults (a Gaussian curve is recomputed on every change)
STARTS: dict[str, Any] = {"n": 40, "length_scale": 2.0}
MAX_RELEASES = 200
INF_HEADROOM = 1.15  # +inf values are drawn this factor above the largest finite value shown

DEFAULT_MATRIX = "0.8, 0.2, 0\n0.1, 0.8, 0.1\n0, 0.3, 0.7"
_WIDE = {"description_width": "initial"}
_ERROR_STYLE = "color:#b00020"
MATRIX_CODEC = MatrixText()
INITIAL_CODEC = DistributionText()

# Control indices of the a(b) figure's traces.
_CURVE, _INFINITE, _LINE, _OPTIMUM = range(4)


def parse_matrix(text: str) -> np.ndarray:
    """A transition matrix typed as text: one row per line (or rows separated by ;), entries separated by
    commas or spaces, each a decimal or a fraction such as 1/4 (the K-state prior's own codec reads it).

    Raises ValueError with a message naming the offending row and entry.  The probabilities
    themselves (non-negative, rows summing to 1) are checked by :class:`MarkovChainPrior`.
    """
    return np.array(MATRIX_CODEC.parse(text), dtype=float)


def parse_initial(text: str) -> np.ndarray | None:
    """An initial distribution typed as one line of numbers; blank means the stationary one."""
    values = INITIAL_CODEC.parse(text)
    return None if values is None else np.array(values, dtype=float)


def format_matrix(matrix: np.ndarray) -> str:
    """The text :func:`parse_matrix` reads back to exactly ``matrix``."""
    return "\n".join(", ".join(repr(float(v)) for v in row) for row in np.asarray(matrix))


def _initial_text(initial: object) -> str:
    return "" if initial is None else ", ".join(repr(float(v)) for v in np.asarray(initial))


# text controls: codec type → (text → value, value → text)
_TEXT: dict[type, tuple[Callable[[str], Any], Callable[[Any], str]]] = {
    MatrixText: (parse_matrix, lambda matrix: format_matrix(np.asarray(matrix))),
    DistributionText: (parse_initial, _initial_text),
}


def _control(parameter: Parameter) -> widgets.Widget | None:
    """The control a parameter's codec calls for, within the codec's range (None: the notebook has none)."""
    codec = parameter.codec
    label = parameter.label or parameter.key
    start = STARTS.get(parameter.key, parameter.default)
    if isinstance(codec, Number):
        whole = codec.whole
        if parameter.slider:
            kind = widgets.IntSlider if whole else widgets.FloatSlider
            options = {} if whole else {"readout_format": ".3f"}
            step = parameter.step or (1 if whole else 0.01)
            return kind(
                value=start, min=codec.low, max=codec.high, step=step, description=label, style=_WIDE, **options
            )
        kind = widgets.BoundedIntText if whole else widgets.BoundedFloatText
        step = parameter.step or (1 if whole else 0.1)
        return kind(value=start, min=codec.low, max=codec.high, step=step, description=label, style=_WIDE)
    if isinstance(codec, Choice):
        options = [(codec.label(option), option) for option in codec.options]
        return widgets.Dropdown(options=options, value=start, description=label, style=_WIDE)
    if isinstance(codec, MatrixText):
        return widgets.Textarea(
            value=DEFAULT_MATRIX,
            description=f"{label.lower()} (one row per line)",
            continuous_update=False,
            layout=widgets.Layout(width="480px", height="120px"),
            style=_WIDE,
        )
    if isinstance(codec, DistributionText):
        return widgets.Text(
            value="", placeholder="blank = stationary", description=label.lower(), continuous_update=False, style=_WIDE
        )
    return None


def _fmt(value: float) -> str:
    return "+∞" if value == np.inf else f"{value:.4g}"


def _error_html(text: str) -> str:
    return f'<div style="{_ERROR_STYLE}">⚠ {html.escape(text)}</div>'


def _show_figure(plot: widgets.Output, figure: go.Figure) -> None:
    """Show ``figure`` in ``plot`` as plotly's JSON mimetype (no copy of plotly.js in the notebook)."""
    title = figure.layout.title.text or "plotly figure"
    bundle = {
        "application/vnd.plotly.v1+json": json.loads(pio.to_json(figure, validate=False)),
        "text/plain": f"{title} (a plotly figure: open the notebook in JupyterLab or Notebook 7 to see it)",
    }
    plot.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)


def _style(figure: go.Figure, x_title: str, y_title: str, height: int) -> None:
    """The look both widgets' figures share."""
    figure.update_layout(
        xaxis_title=x_title,
        yaxis_title=y_title,
        template="plotly_white",
        height=height,
        margin={"l": 60, "r": 20, "t": 60, "b": 50},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )


EPS = Number(0.01, 100.0)


def _eps_box(value: float, description: str) -> widgets.BoundedFloatText:
    """An ε_puffer control from 0.01 to 100 that keeps the value typed exactly (a log slider turned 2 into 1.995)."""
    return widgets.BoundedFloatText(
        value=value, min=EPS.low, max=EPS.high, step=0.1, description=description, style=_WIDE
    )


class InfluenceExplorer:
    """Live a(b)-influence curve of a prior with the calibration for a target ε_puffer (docs/math.md §2–§3).

    Controls (set ``.value`` to change them; the curve and calibration update at once):
    ``kind`` ("binary", "matrix" or "gaussian"); ``p``, ``q`` (binary chain
    P = [[p, 1−p], [1−q, q]]); ``matrix`` (K-state transition matrix as CSV text) and
    ``initial`` (blank = stationary); ``length`` (chain length T); ``n``, ``length_scale``,
    ``kernel``, ``gamma``, ``delta`` (Gaussian process); ``eps_puffer`` (target).

    Results: ``prior``, ``curve`` (exact values, +inf kept), ``calibration``
    (``calibrate(curve, eps_puffer)``), ``optimal_b``; ``error`` holds the message when the
    current input is invalid, in which case the last valid results stay.  ``figure`` is the
    plotly ``Figure`` drawn, ``plot`` the ``Output`` that shows it, ``widget`` the whole
    ipywidgets container.
    """

    def __init__(self, prior: MarkovChainPrior | GaussianProcessPrior | None = None) -> None:
        if prior is not None and not isinstance(prior, (MarkovChainPrior, GaussianProcessPrior)):
            raise ValueError(
                "InfluenceExplorer takes one MarkovChainPrior or GaussianProcessPrior (or nothing);"
                f" got {type(prior).__name__}"
            )
        self.kind = widgets.ToggleButtons(
            options=[(PRIOR_KINDS[kind].label, kind) for kind in KINDS], value="binary", description="Prior"
        )
        # each kind's controls under the names of its parameters, built from their codecs (puffer_core.priors.kinds);
        # a parameter two kinds share (the length T) is one control; each is also an attribute (.p, .matrix, …)
        shared: dict[str, widgets.Widget] = {}
        self._controls: dict[str, dict[str, Any]] = {}
        for name in KINDS:
            self._controls[name] = {}
            for parameter in PRIOR_KINDS[name].parameters:
                if parameter.key not in shared:
                    control = _control(parameter)
                    if control is None:
                        continue
                    shared[parameter.key] = control
                    setattr(self, parameter.key, control)
                self._controls[name][parameter.key] = shared[parameter.key]
        self.eps_puffer = _eps_box(1.0, "target ε_puffer")
        self.message = widgets.HTML()
        self.result = widgets.HTML()
        self.figure = go.Figure()
        self.plot = widgets.Output()
        self._callbacks: list[Callable[[InfluenceExplorer], None]] = []
        self.error: str | None = None
        self._set_up_figure()

        if prior is not None:
            self._show_prior(prior)
        self._panels = {
            kind: widgets.VBox(
                [
                    *controls.values(),
                    *([widgets.HTML(f"<small>{PRIOR_KINDS[kind].note}</small>")] * bool(PRIOR_KINDS[kind].note)),
                ]
            )
            for kind, controls in self._controls.items()
        }
        self._show_panel()
        self.widget = widgets.VBox(
            [self.kind, *self._panels.values(), self.eps_puffer, self.message, self.result, self.plot]
        )

        self.prior: MarkovChainPrior | GaussianProcessPrior
        self.curve: InfluenceCurve
        self.calibration: Calibration
        if prior is None:
            self.prior = self._build_prior()
        else:
            self.prior = prior
        self.curve = influence_curve(self.prior)
        self._recalibrate()

        self.kind.observe(self._on_kind, names="value")
        for control in {c for group in self._controls.values() for c in group.values()}:
            control.observe(self._on_prior_control, names="value")
        self.eps_puffer.observe(self._on_eps, names="value")

    @property
    def optimal_b(self) -> int:
        """b* of the current calibration: the curve point the per-entry ε_DP is calibrated at."""
        return self.calibration.b

    def on_change(self, callback: Callable[[InfluenceExplorer], None]) -> None:
        """Call ``callback(explorer)`` after every successful update of the curve or calibration."""
        self._callbacks.append(callback)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"InfluenceExplorer({self.prior!r}, eps_puffer={self.eps_puffer.value:g}, b*={self.optimal_b})"

    def _show_prior(self, prior: MarkovChainPrior | GaussianProcessPrior) -> None:
        """Set the controls to describe ``prior`` (before observers are attached)."""
        kind, params = kind_of(prior, KINDS)
        if isinstance(prior, MarkovChainPrior):  # a binary chain is a K-state chain too: fill both panels
            self._set_controls("matrix", MATRIX.read(prior) or {})
        self._set_controls(kind.name, params)
        self.kind.value = kind.name

    def _set_controls(self, kind: str, params: dict[str, Any]) -> None:
        codecs = {p.key: type(p.codec) for p in PRIOR_KINDS[kind].parameters}
        for key, control in self._controls[kind].items():
            value = params[key]
            if codecs[key] in _TEXT:
                control.value = _TEXT[codecs[key]][1](value)
                continue
            if hasattr(control, "max") and not isinstance(value, str):
                control.max = max(control.max, value)  # widen the bounds so the given prior is not clipped
                control.min = min(control.min, value)
            control.value = value

    def _build_prior(self) -> MarkovChainPrior | GaussianProcessPrior:
        kind = self.kind.value
        codecs = {p.key: type(p.codec) for p in PRIOR_KINDS[kind].parameters}
        params = {
            key: _TEXT[codecs[key]][0](control.value) if codecs[key] in _TEXT else control.value
            for key, control in self._controls[kind].items()
        }
        return PRIOR_KINDS[kind].prior(params)

    def _show_panel(self) -> None:
        for kind, panel in self._panels.items():
            panel.layout.display = None if kind == self.kind.value else "none"

    def _on_kind(self, change: dict) -> None:
        self._show_panel()
        self._recompute()

    def _on_prior_control(self, change: dict) -> None:
        if change["owner"] in self._controls[self.kind.value].values():
            self._recompute()

    def _on_eps(self, change: dict) -> None:
        self._recalibrate()

    def _recompute(self) -> None:
        try:
            prior = self._build_prior()
            curve = influence_curve(prior)
        except ValueError as exc:
            self.error = str(exc)
            self.message.value = (
                _error_html(self.error) + "<small>The plot and results still show the last valid prior.</small>"
            )
            return
        self.error = None
        self.message.value = ""
        self.prior = prior
        self.curve = curve
        self._recalibrate()

    def _recalibrate(self) -> None:
        """Calibrate the current curve for the target, redraw, and tell the followers."""
        self.calibration = calibrate(self.curve, self.eps_puffer.value)
        self._draw()
        for callback in self._callbacks:
            callback(self)

    def _set_up_figure(self) -> None:
        fig = self.figure
        fig.add_scatter(
            name="a(b)",
            mode="lines+markers",
            hovertemplate="b = %{x}<br>a(b) = %{y:.6g} nats<extra></extra>",
        )
        fig.add_scatter(
            name="a(b) = +∞ (drawn at the top)",
            mode="markers",
            marker={"symbol": "triangle-up", "size": 10, "color": "#b00020"},
            hovertemplate="b = %{x}<br>a(b) = +∞<extra></extra>",
        )
        fig.add_scatter(
            name="ε_puffer − b·ε_DP",
            mode="lines",
            line={"dash": "dash", "color": "grey"},
            hovertemplate="ε_puffer − b·ε_DP<br>b = %{x:.4g}: %{y:.4g} nats<extra></extra>",
        )
        fig.add_scatter(
            name="optimal b*",
            mode="markers",
            marker={"symbol": "star", "size": 16, "color": "#ff7f0e", "line": {"width": 1, "color": "black"}},
        )
        _style(fig, "b (size of the high-influence set)", "a(b) (nats)", 420)

    def _draw(self) -> None:
        curve, cal = self.curve, self.calibration
        eps = cal.eps_puffer
        infinite = np.isinf(curve.a)
        shown = np.where(infinite, np.nan, curve.a)
        finite_top = float(curve.a[~infinite].max()) if (~infinite).any() else 0.0
        top = INF_HEADROOM * max(finite_top, eps)
        zero_at = eps / cal.eps_dp
        with self.figure.batch_update():
            traces = self.figure.data
            traces[_CURVE].x = curve.b
            traces[_CURVE].y = shown
            traces[_INFINITE].x = curve.b[infinite]
            traces[_INFINITE].y = np.full(int(infinite.sum()), top)
            traces[_LINE].x = np.array([0.0, zero_at])
            traces[_LINE].y = np.array([eps, 0.0])
            traces[_OPTIMUM].x = np.array([cal.b])
            traces[_OPTIMUM].y = np.array([cal.a])
            traces[
                _OPTIMUM
            ].hovertemplate = (
                f"optimal b* = {cal.b}<br>a(b*) = {cal.a:.6g} nats<br>ε_DP = {cal.eps_dp:.6g}<extra></extra>"
            )
            self.figure.layout.title = f"a(b)-influence curve: {curve.label}"
            if infinite.any():
                note = (
                    f"a(b) = +∞ for {int(infinite.sum())} value(s) of b, drawn at {top:.4g} (plotly cannot draw"
                    " +∞); .curve keeps the exact values"
                )
                self.figure.layout.annotations = [
                    {
                        "text": note,
                        "xref": "paper",
                        "yref": "paper",
                        "x": 1,
                        "y": 1,
                        "showarrow": False,
                        "xanchor": "right",
                        "yanchor": "top",
                        "font": {"size": 11, "color": "#b00020"},
                    }
                ]
            else:
                self.figure.layout.annotations = []
        _show_figure(self.plot, self.figure)
        self.result.value = self._result_html()

    def _result_html(self) -> str:
        curve, cal = self.curve, self.calibration
        baseline = group_dp(curve, cal.eps_puffer)
        if cal.group_dp:
            how = (
                f"no curve point below b = {curve.length} has a(b) &lt; ε_puffer, so the calibration falls back to"
                f" group DP over the whole sequence: <b>optimal b* = {cal.b}</b>"
            )
        else:
            gain = cal.eps_dp / baseline.eps_dp
            how = (
                f"<b>optimal b* = {cal.b}</b> with a(b*) = {_fmt(cal.a)} nats; group DP over all"
                f" {curve.length} entries would allow only ε_DP = {baseline.eps_dp:.4g} (the curve gives ×{gain:.3g})"
            )
        return (
            f"<div>Target ε_puffer = {cal.eps_puffer:.4g}: a per-entry <b>ε_DP = {cal.eps_dp:.6g}</b>"
            f" mechanism suffices; {how}.<br><small>{html.escape(curve.label)} · "
            f"ε_DP* = max<sub>b</sub> (ε_puffer − a(b)) / b over points with a(b) &lt; ε_puffer"
            f" (docs/math.md §3); the dashed line touches the curve at b*.</small></div>"
        )


class CompositionPlanner:
    """Spend a total ε_puffer budget over k releases of one curve (docs/math.md §4, [C] Theorem 6.2).

    Controls: ``releases`` (k) and ``budget`` (total ε_puffer E).  Results: ``plan`` (the
    per-release :class:`Calibration` from :func:`puffer_core.accounting.composition.plan`; also
    ``calibration``) and ``table``, the cumulative ε_puffer after each release of those k
    releases by Theorem 6.2 (:func:`cumulative`), by the naive sum Σ ε_puffer_l and by group-DP
    accounting (each release is T·ε_DP-DP for a whole sequence: the point (T, 0)).  Assign
    ``curve`` to plan for another curve; ``follow(explorer)`` does so on every change.
    ``figure`` is the plotly ``Figure`` of the cumulative totals, ``plot`` the ``Output`` that
    shows it, ``widget`` the whole ipywidgets container.
    """

    def __init__(self, curve: InfluenceCurve, releases: int = 10, budget: float = 1.0) -> None:
        if not isinstance(curve, InfluenceCurve):
            raise ValueError(f"CompositionPlanner needs an InfluenceCurve; got {type(curve).__name__}")
        self.releases = widgets.IntSlider(
            value=releases, min=1, max=MAX_RELEASES, description="releases k", style=_WIDE
        )
        self.budget = _eps_box(budget, "total ε_puffer E")
        self.summary = widgets.HTML()
        self.table_view = widgets.HTML(layout=widgets.Layout(max_height="240px", overflow="auto"))
        self.figure = go.Figure()
        self.plot = widgets.Output()
        for name, dash in (("Theorem 6.2", "solid"), ("naive sum", "dot"), ("group DP", "dash")):
            self.figure.add_scatter(
                name=name,
                mode="lines+markers",
                line={"dash": dash},
                hovertemplate=f"{name}<br>after %{{x}} releases: %{{y:.6g}}<extra></extra>",
            )
        self.figure.add_scatter(
            name="budget E",
            mode="lines",
            line={"color": "grey", "dash": "longdash"},
            hovertemplate="budget E = %{y:.6g}<extra></extra>",
        )
        _style(self.figure, "releases", "cumulative ε_puffer (nats)", 380)
        self.widget = widgets.VBox([self.releases, self.budget, self.summary, self.plot, self.table_view])
        self.plan: Calibration
        self.table: pd.DataFrame
        self._curve = curve
        self._update()
        self.releases.observe(self._on_control, names="value")
        self.budget.observe(self._on_control, names="value")

    @property
    def curve(self) -> InfluenceCurve:
        """The a(b) curve being planned for; assigning a new one re-plans."""
        return self._curve

    @curve.setter
    def curve(self, curve: InfluenceCurve) -> None:
        if not isinstance(curve, InfluenceCurve):
            raise ValueError(f"CompositionPlanner needs an InfluenceCurve; got {type(curve).__name__}")
        self._curve = curve
        self._update()

    @property
    def calibration(self) -> Calibration:
        """The per-release calibration of the plan (the same object as ``plan``)."""
        return self.plan

    def follow(self, explorer: InfluenceExplorer) -> None:
        """Plan for ``explorer.curve`` now and after every change of the explorer."""
        self.curve = explorer.curve
        explorer.on_change(lambda ex: setattr(self, "curve", ex.curve))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"CompositionPlanner(releases={self.releases.value}, budget={self.budget.value:g}, plan={self.plan})"

    def _on_control(self, change: dict) -> None:
        self._update()

    def _update(self) -> None:
        k = self.releases.value
        budget = self.budget.value
        per_release = plan(self._curve, budget, k)
        releases = [per_release] * k
        steps = np.arange(1, k + 1)
        self.plan = per_release
        self.table = pd.DataFrame(
            {
                "Theorem 6.2": cumulative(releases),
                "naive sum": np.array([naive_sum(releases[:i]) for i in steps]),
                "group DP": group_dp_cumulative(self._curve.length, [per_release.eps_dp] * k),
            },
            index=pd.Index(steps, name="release"),
        )
        with self.figure.batch_update():
            for trace, column in zip(self.figure.data, self.table.columns):
                trace.x = steps
                trace.y = self.table[column].to_numpy()
            self.figure.data[3].x = np.array([1, k])
            self.figure.data[3].y = np.array([budget, budget])
            self.figure.layout.title = f"{k} releases within ε_puffer = {budget:.4g} ({self._curve.label})"
        _show_figure(self.plot, self.figure)
        self.table_view.value = self.table.to_html(float_format=lambda v: f"{v:.6g}")
        self.summary.value = self._summary_html()

    def _summary_html(self) -> str:
        cal, k, budget = self.plan, self.releases.value, self.budget.value
        baseline = group_dp(self._curve, budget).eps_dp / k
        where = "group DP over the whole sequence" if cal.group_dp else f"curve point b = {cal.b}, a(b) = {_fmt(cal.a)}"
        return (
            f"<div>Each of the {k} releases uses a per-entry <b>ε_DP = {cal.eps_dp:.6g}</b> ({where}), i.e."
            f" ε_puffer = {cal.eps_puffer:.4g} per release; by Theorem 6.2 the k releases together cost"
            f" a + k·b·ε_DP = {self.table['Theorem 6.2'].iloc[-1]:.6g} ≤ E.  Splitting E by group DP would give"
            f" each release only ε_DP = E / (k·T) = {baseline:.4g}.<br><small>Naive sum Σ ε_puffer_l counts a(b)"
            " once per release; group DP charges T·ε_DP per release.  Both are valid bounds too; the plan spends"
            " E exactly by Theorem 6.2.</small></div>"
        )
