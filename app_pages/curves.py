"""Influence curves: choose a prior and watch its a(b) curve (docs/math.md §2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app_ui import state
from app_ui.charts import (
    PALETTE,
    ZOOM_FLOOR,
    ZOOM_NOTE,
    Band,
    Trace,
    csv_download,
    curve_trace,
    fmt,
    line_figure,
    show_figure,
    show_problems,
    show_table,
    traces_frame,
    zoom_limit,
)
from app_ui.data_picker import LoadedData, dataset_picker, fitted_prior
from app_ui.priors import (
    JITTER_NOTE,
    CurrentCurve,
    Uncertainty,
    closed_form_curve,
    current_curve,
    fitted_data,
    kind_curve,
    parameters_of,
    set_matrix,
    uncertainty,
    uncertainty_controls,
    use_prior,
    why_no_uncertainty,
)
from puffer_core.prior_kinds import (
    BINARY,
    GAUSSIAN,
    KERNEL_LABELS,
    MATRIX,
    MATRIX_PRESETS,
    MAX_STATES,
    PRIOR_KINDS,
    PROBABILITY,
    normalise_matrix,
)

MAX_PINNED = 8
FITTED = "Fitted from data"  # the preset that loads the chain fitted to a dataset
FIGURE3_LENGTH_SCALES: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0)  # [C] Figure 3(b)
NARROW_EDITOR = 6  # up to this many states the matrix editor sits with the controls; larger ones get the page's width
EDITOR_WIDTH = 900  # pixels a wide editor may take: the main area at 1400 px with the sidebar open is ~940
MIN_COLUMN = 50  # the narrowest column Streamlit's grid draws
INDEX_WIDE = 110  # the index column when state names are long (they are cut with … beyond)
INDEX_NARROW = 70  # the index column when they are short (wide enough for its header "from \\ to")
ROW_HEIGHT = 35  # pixels per row of Streamlit's grid: a wide editor is made tall enough to show every row
ONE_GRID = 16  # more states than this do not fit one grid (MIN_COLUMN each, plus the index): two grids
BAND = (0.05, 0.95)  # the band drawn around the draws' curves

values = state.settings()

st.title("Influence curves a(b)")
st.markdown(
    "An attacker who sees everything about a user **except** a window H of b entries around one"
    " entry still learns about that entry through its correlations. **a(b)** is the most they can"
    " learn (in nats: posterior odds move by at most a factor e^a(b)) when H is chosen as well as"
    " possible; it falls as b grows and is 0 once H covers the whole sequence ([C] §6.2, docs/math.md §2)."
)

state.show_ignored_link_settings()

controls, view = st.columns([2, 3], gap="large")
below = st.container()  # a matrix with many states is edited here, across the whole page


# --------------------------------------------------------------------------- callbacks


def _load_preset() -> None:
    preset = st.session_state.get("w_preset", "Sticky")
    if preset == FITTED:
        data = st.session_state.get("dataset")
        if isinstance(data, LoadedData):
            use_prior(fitted_prior(data), origin=data)
            st.session_state["w_length"] = values["length"]  # also move the widget the user sees
        return
    k = int(st.session_state.get("w_k", 3))
    knob = st.session_state.get("w_seed", 0) if preset == "Random" else st.session_state.get("w_stay", 0.8)
    set_matrix(MATRIX_PRESETS[preset](k, float(knob)), state.default_labels(k))


def _normalise() -> None:
    done = normalise_matrix(values["matrix"])
    labels = values["labels"]
    notes = []
    if done.scaled:
        rows = _and([f"'{labels[i]}'" for i in done.scaled])
        sums = _and([f"{total:.6g}" for total in done.scaled.values()])
        if len(done.scaled) == 1:
            notes.append(("info", f"Each entry of row {rows} was divided by the row's sum ({sums}), so it sums to 1."))
        else:
            notes.append(
                ("info", f"Each entry of rows {rows} was divided by its row's sum ({sums}), so every row sums to 1.")
            )
    if done.filled:
        cells = ", ".join(f"row '{labels[i]}', column '{labels[j]}'" for i, j in done.filled)
        notes.append(("warning", f"Empty cells were set to 0: {cells}."))
    for i, why in done.skipped.items():
        notes.append(("warning", f"Row '{labels[i]}' was left as it is: {why}. Fill it in first."))
    if not notes:
        notes.append(("info", "Every row already sums to 1: nothing was changed."))
    set_matrix(done.matrix, labels, values["initial"])
    st.session_state["normalise_notes"] = notes


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _pin() -> None:
    try:
        current = current_curve()
    except ValueError:
        return
    pinned = values["pinned"]
    label = current.description
    if any(p["label"] == label for p in pinned):
        return
    pinned.append({"label": label, "b": tuple(current.curve.b.tolist()), "a": tuple(current.curve.a.tolist())})
    del pinned[: max(0, len(pinned) - MAX_PINNED)]


def _clear_pinned() -> None:
    values["pinned"] = []


# --------------------------------------------------------------------------- controls


def _length_input(container: Any) -> None:
    state.number_input(
        container,
        "Sequence length T (entries per user)",
        state.SETTINGS["length"],
        step=1,
        key="w_length",
        help="a(b) = 0 once b ≥ T: the window H then covers the whole sequence (group DP).",
    )


def _probability_slider(label: str, key: str) -> None:
    values[key] = st.slider(label, PROBABILITY.low, PROBABILITY.high, float(values[key]), 0.01, key=f"w_{key}")


def _binary_controls() -> None:
    st.latex(r"P = \begin{pmatrix} p & 1-p \\ 1-q & q \end{pmatrix}")
    _probability_slider("p = Pr(stay in state 0)", "p")
    _probability_slider("q = Pr(stay in state 1)", "q")
    _length_input(st)
    values["closed_form"] = st.checkbox(
        "Overlay the closed form ([C] Ex. 3)",
        value=bool(values["closed_form"]),
        key="w_cf",
        help="Exact when p + q > 1 and T ≥ 2b + 1 (docs/math.md §2.2); drawn for b ≤ (T − 1)/2.",
    )


def _number_columns(labels: list[str], width: int | None = None) -> dict[str, Any]:
    """Editor columns for probabilities: no range (nothing typed is clipped: the checks below say what is
    wrong), ``width`` pixels wide (None: as wide as their content), the full label as the header's tooltip."""
    number = "%.4g" if len(labels) <= 10 else "%.3g"
    return {label: st.column_config.NumberColumn(label, format=number, width=width, help=label) for label in labels}


def _grids(labels: list[str]) -> tuple[int, list[list[str]], int | None]:
    """How the matrix is laid out so that no grid scrolls sideways at 1400 px: the index column's
    width, the columns of each grid (one grid, or two for more than ONE_GRID states), their width."""
    if len(labels) <= NARROW_EDITOR:
        return 0, [labels], None
    index = INDEX_WIDE if max(len(x) for x in labels) > 6 else INDEX_NARROW
    halves = 1 if len(labels) <= ONE_GRID else 2
    size = math.ceil(len(labels) / halves)
    parts = [labels[i : i + size] for i in range(0, len(labels), size)]
    width = max(MIN_COLUMN, min(120, (EDITOR_WIDTH - index) // size))
    return index, parts, width


def _initial_controls(labels: list[str]) -> None:
    """Stationary start, or an initial distribution typed per state (docs/math.md §1)."""
    options = ["stationary", "given"]
    mode = st.radio(
        "Initial distribution (the states of the first entry)",
        options,
        index=options.index("stationary" if values["initial"] is None else "given"),
        format_func={"stationary": "The chain's stationary distribution", "given": "Give one"}.get,
        horizontal=True,
        key=f"w_initial_mode_{values['matrix_version']}",
        help="A chain with more than one closed group of states has no unique stationary distribution: give one.",
    )
    if mode == "stationary":
        values["initial"] = None
        return
    if values["initial"] is None or len(values["initial"]) != len(labels):
        values["initial"] = tuple(1.0 / len(labels) for _ in labels)
    editor_key, start = state.editor_state("initial")
    frame = pd.DataFrame({"Pr(first entry)": list(start)}, index=labels, dtype=float)
    frame.index.name = "state"
    edited = st.data_editor(  # one row per state: it fits however many states there are
        frame,
        key=editor_key,
        column_config={"Pr(first entry)": st.column_config.NumberColumn("Pr(first entry)", format="%.4g")},
        width="stretch",
    )
    values["initial"] = tuple(float(x) for x in edited["Pr(first entry)"].to_numpy(dtype=float, na_value=np.nan))


def _matrix_editor() -> None:
    editor_key, start = state.editor_state("matrix")
    labels = list(values["labels"])
    base = pd.DataFrame(np.array(start, dtype=float), index=labels, columns=labels)
    base.index.name = "from \\ to"
    index_width, parts, width = _grids(labels)
    st.markdown(f"**Transition matrix** ({len(labels)} states: rows are the current state, columns the next)")
    if len(parts) > 1:
        st.caption(
            f"Shown in {len(parts)} parts, so that every column is on screen: the next states"
            f" {' and '.join(f'{part[0]}…{part[-1]}' for part in parts)}. Each row runs across both parts."
        )
    edited = []
    for n, part in enumerate(parts):
        config = _number_columns(part, width)
        if index_width:
            config["_index"] = st.column_config.TextColumn(width=index_width)
        key = editor_key if len(parts) == 1 else f"{editor_key}_part{n}"
        height = (len(labels) + 1) * ROW_HEIGHT + 3 if width is not None else "auto"
        edited.append(st.data_editor(base[part], key=key, column_config=config, width="stretch", height=height))
    matrix = pd.concat(edited, axis=1)[labels]
    values["matrix"] = tuple(tuple(float(x) for x in row) for row in matrix.to_numpy(dtype=float, na_value=np.nan))
    messages = st.container()  # right under the grid: filled once the initial distribution is read too
    st.button(
        "Normalise rows",
        on_click=_normalise,
        key="w_normalise",
        help="Divide every row by its sum so it sums to 1 (you are told what changed).",
    )
    for level, note in st.session_state.pop("normalise_notes", []):
        (st.info if level == "info" else st.warning)(note)
    _initial_controls(labels)
    problems = MATRIX.problems(values)
    with messages:
        show_problems(problems)
        if values["initial"] is None and any("no unique stationary distribution" in p for p in problems):
            st.info("Choose **Give one** under *Initial distribution* below to say where the chain starts.")


def _matrix_controls() -> None:
    with st.container(border=True):
        st.markdown("**Start from a preset**")
        preset = st.selectbox(
            "Preset",
            [*MATRIX_PRESETS, FITTED],
            key="w_preset",
            persist_state="session",
            label_visibility="collapsed",
        )
        if preset == FITTED:
            st.caption("The transition counts of the data, row-normalised and smoothed (docs/math.md §6).")
            data = dataset_picker("curves")
            ready = data is not None
        else:
            cols = st.columns(2)
            cols[0].number_input("States K", 2, MAX_STATES, 3, key="w_k", persist_state="session")
            if preset == "Random":
                cols[1].number_input("Seed", 0, 10_000, 0, key="w_seed", persist_state="session")
            else:
                cols[1].slider("Stay probability", 0.0, 1.0, 0.8, 0.01, key="w_stay", persist_state="session")
            ready = True
        st.button("Load into the editor", on_click=_load_preset, disabled=not ready, key="w_load_preset")

    if len(values["labels"]) <= NARROW_EDITOR:
        _matrix_editor()
    else:
        st.caption(f"The {len(values['labels'])}-state matrix is edited below the chart, across the page.")
        with below:
            _matrix_editor()
    _length_input(st)
    with st.container(border=True):
        st.markdown("**Prior uncertainty** (docs/math.md §12)")
        data = fitted_data()
        if data is None:
            values["uncertainty"] = False
            st.caption(why_no_uncertainty())
        else:
            uncertainty_controls(st, "w_unc", f"Show the spread of the fit to {data.name}")


def _theta_controls() -> None:
    st.caption(
        "Each row is one binary chain P = [[p, 1−p], [1−q, q]] the attacker may believe. Θ's curve takes"
        " the worst prior for every window H (the sup over θ is inside the min over H, docs/math.md §2.1)."
    )
    editor_key, start = state.editor_state("theta")
    base = pd.DataFrame(list(start), columns=["p", "q"], dtype=float)
    edited = st.data_editor(
        base,
        key=editor_key,
        num_rows="dynamic",
        hide_index=True,
        column_config={  # no range: a value out of [0, 1] is reported below, not clipped
            "p": st.column_config.NumberColumn("p", format="%.3g", help="Pr(stay in state 0)"),
            "q": st.column_config.NumberColumn("q", format="%.3g", help="Pr(stay in state 1)"),
        },
        width="stretch",
    )
    _length_input(st)
    pairs = []
    for i, (p, q) in enumerate(edited[["p", "q"]].itertuples(index=False, name=None)):
        try:
            p, q = float(p), float(q)
        except (TypeError, ValueError):
            p = q = math.nan
        if math.isnan(p) or math.isnan(q):
            st.error(f"Row {i + 1}: fill in both p and q.")
            continue
        outside = [f"{name} = {v:g}" for name, v in (("p", p), ("q", q)) if not 0 <= v <= 1]
        if outside:
            st.error(f"Row {i + 1}: {' and '.join(outside)} is not a probability; p and q must be between 0 and 1.")
            continue
        try:
            BINARY.prior({"p": p, "q": q, "length": values["length"]})
        except ValueError as exc:
            st.error(f"Row {i + 1} (p = {p:g}, q = {q:g}): {exc}.")
            continue
        pairs.append((p, q))
    values["theta"] = tuple(pairs)
    if not pairs:
        st.error("Θ is empty: add at least one row with p and q.")


def _gaussian_controls() -> None:
    kernels = list(KERNEL_LABELS)
    values["kernel"] = st.selectbox(
        "Kernel", kernels, index=kernels.index(values["kernel"]), key="w_kernel", format_func=KERNEL_LABELS.get
    )
    state.number_input(st, "Length scale ℓ", state.SETTINGS["length_scale"], step=0.1, key="w_ell", format="%.2f")
    n = state.SETTINGS["n"].codec
    values["n"] = int(st.slider("Coordinates n", n.low, n.high, int(values["n"]), key="w_n"))
    cols = st.columns(2)
    state.number_input(cols[0], "Truncation γ", state.SETTINGS["gamma"], step=0.5, key="w_gamma")
    state.number_input(cols[1], "Secret width δ", state.SETTINGS["delta"], step=0.01, key="w_delta")
    values["overlay"] = tuple(
        st.multiselect(
            "Also draw these length scales",
            list(FIGURE3_LENGTH_SCALES),
            default=[x for x in values["overlay"] if x in FIGURE3_LENGTH_SCALES],
            key="w_overlay",
            format_func=lambda x: f"ℓ = {x:g}",
            help="Pick all five to redraw [C] Figure 3(b) (γ = 5, δ = 0.1).",
        )
    )
    st.caption(JITTER_NOTE)


# the controls of each kind of prior (its parameters are puffer_core.prior_kinds' record)
CONTROLS = {
    "binary": _binary_controls,
    "matrix": _matrix_controls,
    "theta": _theta_controls,
    "gaussian": _gaussian_controls,
}

with controls:
    kinds = list(PRIOR_KINDS)
    values["prior_kind"] = st.radio(
        "Prior (the attacker's belief about one user's sequence)",
        kinds,
        index=kinds.index(values["prior_kind"]),
        format_func=lambda kind: PRIOR_KINDS[kind].label,
        key="w_kind",
    )
    CONTROLS[values["prior_kind"]]()


# --------------------------------------------------------------------------- the curve


def _traces(current: CurrentCurve, spread: Uncertainty | None) -> list[Trace]:
    kind = PRIOR_KINDS[values["prior_kind"]]
    label = "fitted chain" if spread is not None else kind.short_label(values)
    traces = [curve_trace(current.curve, label)]
    if spread is not None:
        traces.append(curve_trace(spread.spread.robust, spread.label, width=3))
    if kind.name == "theta":
        for p, q in values["theta"]:
            member = kind_curve("binary", parameters_of(BINARY, {"p": p, "q": q, "length": values["length"]}))
            traces.append(curve_trace(member, f"θ: p = {p:g}, q = {q:g}", dash="dot", width=1.5))
    if kind.name == "binary" and values["closed_form"]:
        max_b = (values["length"] - 1) // 2
        if max_b >= 1 and values["p"] + values["q"] < 2:
            closed = closed_form_curve(float(values["p"]), float(values["q"]), int(max_b), int(values["length"]))
            traces.append(curve_trace(closed, "closed form [C] Ex. 3", dash="dash", width=2))
    if kind.name == "gaussian":
        for ell in values["overlay"]:
            if ell != values["length_scale"]:
                other = kind_curve("gaussian", parameters_of(GAUSSIAN, {**values, "length_scale": float(ell)}))
                traces.append(curve_trace(other, f"ℓ = {ell:g}", width=1.8))
    for pinned in values["pinned"]:
        b, a = np.array(pinned["b"], float), np.array(pinned["a"], float)
        traces.append(Trace(f"pinned: {pinned['label']}", b, a, "dot", 1.5))
    return traces


def _band(spread: Uncertainty) -> Band:
    low, high = spread.spread.band(*BAND)
    share = f"{BAND[0]:.0%}–{BAND[1]:.0%}"
    b = spread.spread.robust.b.astype(float)
    return Band(f"{share} of the {spread.draws} draws' curves", b, low, high, color=PALETTE[5])


def _chart_controls() -> None:
    log_col, axis_col = st.columns([2, 3])
    values["log_y"] = log_col.toggle("Log scale for a(b)", value=bool(values["log_y"]), key="w_log")
    axes = list(state.B_AXES)
    values["b_axis"] = axis_col.radio(
        "b axis",
        axes,
        index=axes.index(values["b_axis"]),
        format_func=state.B_AXES.get,
        horizontal=True,
        key="w_b_axis",
        help="Zoom: b up to where every curve has faded (below 1% of its largest value and below 0.01 nats)."
        " Log: all b, on a log scale.",
    )
    pin_col, clear_col = st.columns(2)
    pin_col.button(
        "Pin this curve",
        icon=":material/push_pin:",
        on_click=_pin,
        key="w_pin",
        help="Keep this curve on the chart to compare it with the next one you set up.",
    )
    clear_col.button("Clear pinned", on_click=_clear_pinned, key="w_clear", disabled=not values["pinned"])


def _curve_table(traces: list[Trace], band: Band | None) -> pd.DataFrame:
    """One row per b, one column per curve (and the band's edges)."""
    long = traces_frame(traces, "b", "a(b)")
    wide = long.pivot_table(index="b", columns="curve", values="a(b)", sort=False, aggfunc="first")
    wide = wide[[t.label for t in traces if t.label in wide.columns]].reset_index()
    if band is not None:
        edges = pd.DataFrame({"b": band.x, f"draws {BAND[0]:.0%}": band.low, f"draws {BAND[1]:.0%}": band.high})
        wide = wide.merge(edges, on="b", how="left")
    wide["b"] = wide["b"].astype(int)
    return wide


def _table_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """Narrow columns with the full curve name as the header's tooltip, so the table fits its column."""
    width = "small" if frame.shape[1] > 4 else None
    return {
        str(c): st.column_config.TextColumn(str(c), help=str(c), alignment="right", width=width)
        for c in frame.columns
        if c != "b"
    }


def _spread_section(spread: Uncertainty, current: CurrentCurve) -> None:
    robust = spread.spread.robust
    s1, s2, s3 = st.columns(3)
    s1.metric("a(1), robust Θ", fmt(float(robust.a[0])), help="The worst member of Θ for every window H.")
    s2.metric(
        "a(1), fitted chain",
        fmt(float(current.curve.a[0])),
        help="The fit alone, as if the prior were known exactly.",
    )
    s3.metric(
        "Spread of a(1)",
        fmt(float(spread.spread.spread()[0])),
        help="Standard deviation of a(1) over the draws.",
    )
    rows = spread.spread.rows()
    st.markdown(
        f"**The rows that drive the spread** — {spread.description()}. A row seen rarely has a wide"
        f" posterior; *{rows.columns[2]}* is how much a(1) moves when only that row is drawn."
    )
    show_table(rows, key="curve_spread_rows", height=min(38 + 35 * len(rows), 320), width="stretch")


with view:
    spread: Uncertainty | None = None
    try:
        with st.spinner("Computing a(b)…"):
            current = current_curve()
            data = fitted_data() if values["uncertainty"] else None
            if data is not None:
                spread = uncertainty(data)
    except ValueError as exc:
        st.error(f"No curve for this prior: {exc}")
        current = None
    if current is not None:
        curve = current.curve
        traces = _traces(current, spread)
        band = _band(spread) if spread is not None else None
        _chart_controls()
        zoom = zoom_limit(traces) if values["b_axis"] == "zoom" else None
        fig, notes = line_figure(
            traces,
            x_title="b — entries in the high-influence window H",
            y_title="a(b) — leakage through the rest (nats)",
            log_y=bool(values["log_y"]),
            log_x=values["b_axis"] == "log",
            integer_x=True,
            x_max=zoom,
            bands=() if band is None else (band,),
        )
        if zoom is not None:
            notes.append(f"Showing b ≤ {zoom:,.0f} of {int(curve.length):,}: {ZOOM_NOTE.format(floor=ZOOM_FLOOR)}.")
        show_figure(fig, notes, key="curve_chart")
        if values["prior_kind"] == "theta":
            st.caption("Dotted: the members of Θ on their own. Θ's curve is at least as high as each.")
        if spread is not None:
            st.caption(
                f"Shaded: where the middle {BAND[1] - BAND[0]:.0%} of the draws' own curves lie. The robust"
                " curve is at least as high as every member's (the worst member for each window H)."
            )

        below_one = next((int(b) for b, a in zip(curve.b, curve.a) if a <= 1.0), int(curve.length))
        m1, m2, m3 = st.columns(3)
        m1.metric("a(1)", fmt(float(curve.a[0])), help="Leakage when only the entry itself is hidden.")
        m2.metric("Smallest b with a(b) ≤ 1 nat", below_one)
        m3.metric("Sequence length T", int(curve.length), help="a(b) = 0 for b ≥ T (group DP).")

        wide = _curve_table(traces, band)
        st.markdown("**The numbers** (∞: some output possible under one secret is impossible under the other)")
        show_table(wide, key="curve_table", height=280, width="stretch", column_config=_table_columns(wide))
        long = traces_frame(traces, "b", "a(b)")
        csv_download(long, "influence_curves.csv", "Download these curves (CSV)", key="w_download_curves")
        if spread is not None:
            _spread_section(spread, current)
        st.caption(
            "The address bar holds a link to these settings (pinned curves and the prior uncertainty are not"
            " part of it)." + state.link_note()
        )

state.share((*state.prior_parameters(), state.LOG_Y, state.B_AXIS))
