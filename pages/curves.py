"""Influence curves: choose a prior and watch its a(b) curve (docs/math.md §2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from pages import common
from puffer_core import MarkovChainPrior

common.enter_page("curves")

values = common.settings()

st.title("Influence curves a(b)")
st.markdown(
    "An attacker who sees everything about a user **except** a window H of b entries around one"
    " entry still learns about that entry through its correlations. **a(b)** is the most they can"
    " learn (in nats: posterior odds move by at most a factor e^a(b)) when H is chosen as well as"
    " possible; it falls as b grows and is 0 once H covers the whole sequence ([C] §6.2, docs/math.md §2)."
)

common.show_ignored_link_settings()

controls, view = st.columns([2, 3], gap="large")


# --------------------------------------------------------------------------- callbacks


def _load_preset() -> None:
    preset = st.session_state.get("w_preset", "Sticky")
    if preset == "Fitted from data":
        data = st.session_state.get("dataset")
        if isinstance(data, common.LoadedData):
            common.use_fitted_prior(data)
            st.session_state["w_length"] = values["length"]  # also move the widget the user sees
        return
    k = int(st.session_state.get("w_k", 3))
    stay = float(st.session_state.get("w_stay", 0.8))
    if preset == "Sticky":
        matrix = common.sticky_matrix(k, stay)
    elif preset == "Cyclic":
        matrix = common.cyclic_matrix(k, stay)
    else:
        matrix = common.random_matrix(k, int(st.session_state.get("w_seed", 0)))
    common.set_matrix(matrix, tuple(str(i) for i in range(k)))


def _normalise() -> None:
    matrix, skipped = common.normalise_rows(values["matrix"])
    common.set_matrix(matrix, values["labels"])
    st.session_state["normalise_skipped"] = skipped


def _pin() -> None:
    try:
        current = common.current_curve()
    except ValueError:
        return
    pinned = values["pinned"]
    label = current.description
    if any(p["label"] == label for p in pinned):
        return
    pinned.append({"label": label, "b": tuple(current.curve.b.tolist()), "a": tuple(current.curve.a.tolist())})
    del pinned[: max(0, len(pinned) - common.MAX_PINNED)]


def _clear_pinned() -> None:
    values["pinned"] = []


# --------------------------------------------------------------------------- controls


def _length_input(container: Any) -> None:
    values["length"] = int(
        container.number_input(
            "Sequence length T (entries per user)",
            min_value=min(2, int(values["length"])),  # a chain fitted to one-entry sequences has T = 1
            max_value=max(common.MAX_MARKOV_LENGTH, int(values["length"])),
            value=int(values["length"]),
            step=1,
            key="w_length",
            help="a(b) = 0 once b ≥ T: the window H then covers the whole sequence (group DP).",
        )
    )


def _binary_controls() -> None:
    st.latex(r"P = \begin{pmatrix} p & 1-p \\ 1-q & q \end{pmatrix}")
    values["p"] = st.slider("p = Pr(stay in state 0)", 0.0, 1.0, float(values["p"]), 0.01, key="w_p")
    values["q"] = st.slider("q = Pr(stay in state 1)", 0.0, 1.0, float(values["q"]), 0.01, key="w_q")
    _length_input(st)
    values["closed_form"] = st.checkbox(
        "Overlay the closed form ([C] Ex. 3)",
        value=bool(values["closed_form"]),
        key="w_cf",
        help="Exact when p + q > 1 and T ≥ 2b + 1 (docs/math.md §2.2); drawn for b ≤ (T − 1)/2.",
    )


def _matrix_controls() -> None:
    with st.container(border=True):
        st.markdown("**Start from a preset**")
        preset = st.selectbox(
            "Preset",
            ["Sticky", "Cyclic", "Random", "Fitted from data"],
            key="w_preset",
            persist_state="session",
            label_visibility="collapsed",
        )
        if preset == "Fitted from data":
            st.caption("The transition counts of the data, row-normalised and smoothed (docs/math.md §6).")
            data = common.dataset_picker("curves")
            ready = data is not None
        else:
            cols = st.columns(2)
            cols[0].number_input("States K", 2, common.MAX_STATES, 3, key="w_k", persist_state="session")
            if preset == "Random":
                cols[1].number_input("Seed", 0, 10_000, 0, key="w_seed", persist_state="session")
            else:
                cols[1].slider("Stay probability", 0.0, 1.0, 0.8, 0.01, key="w_stay", persist_state="session")
            ready = True
        st.button("Load into the editor", on_click=_load_preset, disabled=not ready, key="w_load_preset")

    editor_key, start = common.editor_state("matrix")
    labels = list(values["labels"])
    base = pd.DataFrame(np.array(start, dtype=float), index=labels, columns=labels)
    base.index.name = "from \\ to"
    edited = st.data_editor(
        base,
        key=editor_key,
        column_config={
            label: st.column_config.NumberColumn(label, min_value=0.0, max_value=1.0, format="%.4g") for label in labels
        },
        width="stretch",
    )
    values["matrix"] = tuple(tuple(float(x) for x in row) for row in edited.to_numpy(dtype=float, na_value=np.nan))
    st.button(
        "Normalise rows", on_click=_normalise, key="w_normalise", help="Divide every row by its sum so it sums to 1."
    )
    skipped = st.session_state.pop("normalise_skipped", [])
    if skipped:
        st.warning(
            f"Rows {', '.join(map(str, skipped))} could not be normalised (they sum to 0 or hold"
            " negative numbers); fill them in first."
        )
    common.show_problems(common.matrix_problems(values["matrix"], values["labels"]))
    _length_input(st)


def _theta_controls() -> None:
    st.caption(
        "Each row is one binary chain P = [[p, 1−p], [1−q, q]] the attacker may believe. Θ's curve takes"
        " the worst prior for every window H (the sup over θ is inside the min over H, docs/math.md §2.1)."
    )
    editor_key, start = common.editor_state("theta")
    base = pd.DataFrame(list(start), columns=["p", "q"], dtype=float)
    edited = st.data_editor(
        base,
        key=editor_key,
        num_rows="dynamic",
        column_config={
            "p": st.column_config.NumberColumn("p", min_value=0.0, max_value=1.0, format="%.3g"),
            "q": st.column_config.NumberColumn("q", min_value=0.0, max_value=1.0, format="%.3g"),
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
        try:
            MarkovChainPrior(common.binary_transition(p, q), length=int(values["length"]))
        except ValueError as exc:
            st.error(f"Row {i + 1} (p = {p:g}, q = {q:g}): {exc}.")
            continue
        pairs.append((p, q))
    values["theta"] = tuple(pairs)
    if not pairs:
        st.error("Θ is empty: add at least one row with p and q.")


def _gaussian_controls() -> None:
    kernels = list(common.KERNEL_NAMES)
    values["gp_kernel"] = st.selectbox(
        "Kernel",
        kernels,
        index=kernels.index(values["gp_kernel"]),
        key="w_kernel",
        format_func=common.KERNEL_NAMES.__getitem__,
    )
    values["gp_ell"] = float(
        st.number_input("Length scale ℓ", 0.1, 20.0, float(values["gp_ell"]), 0.1, key="w_ell", format="%.2f")
    )
    values["gp_n"] = int(st.slider("Coordinates n", 3, common.MAX_GP_N, int(values["gp_n"]), key="w_n"))
    cols = st.columns(2)
    values["gp_gamma"] = float(
        cols[0].number_input("Truncation γ", 0.5, 20.0, float(values["gp_gamma"]), 0.5, key="w_gamma")
    )
    values["gp_delta"] = float(
        cols[1].number_input("Secret width δ", 0.01, 5.0, float(values["gp_delta"]), 0.01, key="w_delta")
    )
    values["gp_overlay"] = tuple(
        st.multiselect(
            "Also draw these length scales",
            list(common.FIGURE3_LENGTH_SCALES),
            default=[x for x in values["gp_overlay"] if x in common.FIGURE3_LENGTH_SCALES],
            key="w_overlay",
            format_func=lambda x: f"ℓ = {x:g}",
            help="Pick all five to redraw [C] Figure 3(b) (γ = 5, δ = 0.1).",
        )
    )
    st.caption(common.JITTER_NOTE)


with controls:
    kinds = list(common.PRIOR_KINDS)
    values["prior_kind"] = st.radio(
        "Prior (the attacker's belief about one user's sequence)",
        kinds,
        index=kinds.index(values["prior_kind"]),
        format_func=common.PRIOR_KINDS.__getitem__,
        key="w_kind",
    )
    {
        "binary": _binary_controls,
        "matrix": _matrix_controls,
        "theta": _theta_controls,
        "gaussian": _gaussian_controls,
    }[values["prior_kind"]]()


# --------------------------------------------------------------------------- the curve


def _traces(current: common.CurrentCurve) -> list[common.Trace]:
    kind = values["prior_kind"]
    main = current.curve
    if kind == "binary":
        label = f"p = {values['p']:g}, q = {values['q']:g}"
    elif kind == "theta":
        label = "Θ (worst prior for each H)"
    elif kind == "gaussian":
        label = f"ℓ = {values['gp_ell']:g}"
    else:
        label = f"{len(values['matrix'])}-state chain"
    traces = [common.curve_trace(main, label)]
    if kind == "theta":
        for (p, q), member in zip(values["theta"], current.members):
            traces.append(common.curve_trace(member, f"θ: p = {p:g}, q = {q:g}", dash="dot", width=1.5))
    if kind == "binary" and values["closed_form"]:
        max_b = (values["length"] - 1) // 2
        if max_b >= 1 and values["p"] + values["q"] < 2:
            closed = common.closed_form_curve(float(values["p"]), float(values["q"]), int(max_b), int(values["length"]))
            traces.append(common.curve_trace(closed, "closed form [C] Ex. 3", dash="dash", width=2))
    if kind == "gaussian":
        for ell in values["gp_overlay"]:
            if ell == values["gp_ell"]:
                continue
            other = common.gaussian_curve(
                values["gp_n"], float(ell), values["gp_kernel"], values["gp_gamma"], values["gp_delta"]
            )
            traces.append(common.curve_trace(other, f"ℓ = {ell:g}", width=1.8))
    for pinned in values["pinned"]:
        b, a = np.array(pinned["b"], float), np.array(pinned["a"], float)
        traces.append(common.Trace(f"pinned: {pinned['label']}", b, a, "dot", 1.5))
    return traces


with view:
    try:
        with st.spinner("Computing a(b)…"):
            current = common.current_curve()
            traces = _traces(current)
    except ValueError as exc:
        st.error(f"No curve for this prior: {exc}")
        current = None
    if current is not None:
        curve = current.curve
        log_col, pin_col, clear_col = st.columns([3, 2, 2])
        values["log_y"] = log_col.toggle("Log scale for a(b)", value=bool(values["log_y"]), key="w_log")
        pin_col.button(
            "Pin this curve",
            icon=":material/push_pin:",
            on_click=_pin,
            key="w_pin",
            help="Keep this curve on the chart to compare it with the next one you set up.",
        )
        clear_col.button("Clear pinned", on_click=_clear_pinned, key="w_clear", disabled=not values["pinned"])
        fig, notes = common.line_figure(
            traces,
            x_title="b — entries in the high-influence window H",
            y_title="a(b) — leakage through the rest (nats)",
            log_y=bool(values["log_y"]),
        )
        common.show_figure(fig, notes, key="curve_chart")
        if values["prior_kind"] == "theta":
            st.caption("Dotted: the members of Θ on their own. Θ's curve is at least as high as each.")

        below_one = next((int(b) for b, a in zip(curve.b, curve.a) if a <= 1.0), int(curve.length))
        m1, m2, m3 = st.columns(3)
        m1.metric("a(1)", common.fmt(float(curve.a[0])), help="Leakage when only the entry itself is hidden.")
        m2.metric("Smallest b with a(b) ≤ 1 nat", below_one)
        m3.metric("Sequence length T", int(curve.length), help="a(b) = 0 for b ≥ T (group DP).")

        long = common.traces_frame(traces, "b", "a(b)")
        wide = long.pivot_table(index="b", columns="curve", values="a(b)", sort=False, aggfunc="first")
        wide = wide[[t.label for t in traces if t.label in wide.columns]].reset_index()
        wide["b"] = wide["b"].astype(int)
        st.markdown("**The numbers** (∞: some output possible under one secret is impossible under the other)")
        common.show_table(wide, key="curve_table", height=280, width="stretch")
        common.csv_download(long, "influence_curves.csv", "Download these curves (CSV)", key="w_download_curves")
        st.caption(
            "The address bar holds a link to these settings (pinned curves are not part of it)." + common.link_note()
        )

common.share_settings((*common.prior_url_keys(), "log"))
