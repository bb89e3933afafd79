"""The K-state Markov chain's editor on the Influence curves page: presets, the matrix, its initial distribution.

The matrix is typed in Streamlit's grid in the user's words (states shown 0-based, a row is the
current state, a column the next one).  Nothing typed is clipped or normalised silently: the
checks of :data:`puffer_core.priors.kinds.MATRIX` say what is wrong right under the grid, and
"Normalise rows" says what it changed.  A matrix with many states is laid out so that no grid
scrolls sideways at 1400 px (two grids side by side beyond :data:`ONE_GRID` states).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core import state
from app_ui.core.charts import transition_heatmap
from app_ui.core.state import INITIAL, LABELS, TRANSITIONS
from app_ui.core.tables import join_words, show_problems
from app_ui.data.picker import LoadedData, dataset_picker
from app_ui.prior.current import describe_prior, set_matrix, use_prior
from app_ui.prior.smoothing import fit_smoothing, fitted_chain, preset_smoothing_panel
from puffer_core.data.sequences import MAX_STATES as MAX_FITTED_STATES
from puffer_core.priors.codecs import MAX_STATES, default_labels
from puffer_core.priors.kinds import MATRIX, MATRIX_PRESETS, normalise_matrix
from puffer_core.validation import merge_row_sums

FITTED = "Fitted from data"  # the preset that loads the chain fitted to a dataset
NARROW_EDITOR = 6  # up to this many states the matrix editor sits with the controls; larger ones get the page's width
EDITOR_WIDTH = 900  # pixels a wide editor may take: the main area at 1400 px with the sidebar open is ~940
MIN_COLUMN = 50  # the narrowest column Streamlit's grid draws
INDEX_WIDE = 110  # the index column when state names are long (they are cut with … beyond)
INDEX_NARROW = 70  # the index column when they are short (wide enough for its header "from \\ to")
ROW_HEIGHT = 35  # pixels per row of Streamlit's grid: a wide editor is made tall enough to show every row
ONE_GRID = 16  # more states than this do not fit one grid (MIN_COLUMN each, plus the index): two grids
LARGE = 20  # more states than this: read as a heatmap, edited in one grid that scrolls inside its frame
LARGE_COLUMN = 80  # a large grid's columns: wide enough for 0.0123 and 1e-05
LARGE_ROWS = 15  # rows a large grid shows before it scrolls
NORMALISE_FIX = "correct them, or press “Normalise rows” to divide each row by its sum"  # rows not summing to 1
LOADED = "loaded_preset"  # session key: the preset and knobs last loaded into the editor


def _chosen_preset() -> tuple[Any, ...]:
    """The preset and its knobs as chosen in the panel (compared with the one last loaded)."""
    preset = st.session_state.get("w_preset", "Sticky")
    if preset == FITTED:
        return (preset,)
    knob = st.session_state.get("w_seed", 0) if preset == "Random" else st.session_state.get("w_stay", 0.8)
    return preset, int(st.session_state.get("w_k", 3)), knob


def _load_preset() -> None:
    chosen = _chosen_preset()
    if chosen[0] == FITTED:
        data = st.session_state.get("dataset")
        if isinstance(data, LoadedData):
            tau = fit_smoothing()  # the smoothing control under the preset (app_ui.prior.smoothing)
            use_prior(fitted_chain(data, tau), origin=data, smoothing=tau)  # the T box follows the settings
            st.session_state[LOADED] = chosen
        return
    preset, k, knob = chosen
    if k > MAX_STATES:  # the panel says why and disables the button; a callback never fails silently either
        return
    set_matrix(MATRIX_PRESETS[preset](k, float(knob)), default_labels(k))
    st.session_state[LOADED] = chosen


def _loaded_caption() -> None:
    """What the editor holds, named as the sidebar names it, and whether the panel's choice is loaded."""
    chosen = _chosen_preset()
    if st.session_state.get(LOADED) != chosen:
        st.caption(f"“{chosen[0]}” is chosen but not loaded yet: press “Load into the editor”.")
    st.caption(f"In the editor: {describe_prior()}")


def _normalise() -> None:
    done = normalise_matrix(state.get(TRANSITIONS))
    labels = state.get(LABELS)
    notes = []
    if done.scaled:
        rows = join_words([f"'{labels[i]}'" for i in done.scaled])
        sums = join_words([f"{total:.6g}" for total in done.scaled.values()])
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
    set_matrix(done.matrix, labels, state.get(INITIAL))
    st.session_state["normalise_notes"] = notes


def preset_controls(wide: Any) -> None:
    """Start from a preset (sticky, cyclic, random, or fitted to a dataset) and load it into the editor.

    The data picker of the preset "Fitted from data" is drawn in ``wide``, a container across the page
    (its column mapping needs the room), with its own "Load into the editor" button.
    """
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
            st.caption(
                "The transition counts of the data, row-normalised and smoothed (docs/math.md §6). Choose the"
                " data under the chart, then load its fitted chain."
            )
            with wide, st.container(border=True, key="fitted_picker"):
                st.markdown("**Fitted from data: choose the data**")
                data = dataset_picker("curves")
                st.button(
                    "Load into the editor", on_click=_load_preset, disabled=data is None, key="w_load_preset",
                    type="primary",
                )
                preset_smoothing_panel(data is not None)  # τ of the fit, and what it does to a(1)
            _loaded_caption()
            return
        cols = st.columns(2)
        k = cols[0].number_input(
            "States K", 2, None, 3, key="w_k", persist_state="session", help=f"From 2 to {MAX_STATES} states."
        )
        if preset == "Random":
            cols[1].number_input("Seed", 0, 10_000, 0, key="w_seed", persist_state="session")
        else:
            cols[1].slider("Stay probability", 0.0, 1.0, 0.8, 0.01, key="w_stay", persist_state="session")
        too_many = k > MAX_STATES
        if too_many:
            st.error(
                f"Presets offer up to {MAX_STATES} states; K = {k} is more, so nothing can be loaded. Choose"
                f" K ≤ {MAX_STATES}, or for a larger chain choose the preset “Fitted from data” (a chain fitted"
                f" to a dataset, up to {MAX_FITTED_STATES} states)."
            )
        st.button("Load into the editor", on_click=_load_preset, key="w_load_preset", disabled=too_many)
        _loaded_caption()


def is_wide(labels: tuple[str, ...]) -> bool:
    """Whether the editor needs the page's whole width (more than NARROW_EDITOR states)."""
    return len(labels) > NARROW_EDITOR


@st.cache_resource(show_spinner=False, max_entries=8)
def matrix_heatmap(matrix: tuple[tuple[float, ...], ...], labels: tuple[str, ...]) -> go.Figure:
    """A large matrix as a heatmap with its values on hover (built once per matrix: shared, do not change it)."""
    return transition_heatmap(np.array(matrix, dtype=float), labels)


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
    if len(labels) > LARGE:
        return index, [labels], LARGE_COLUMN
    halves = 1 if len(labels) <= ONE_GRID else 2
    size = math.ceil(len(labels) / halves)
    parts = [labels[i : i + size] for i in range(0, len(labels), size)]
    width = max(MIN_COLUMN, min(120, (EDITOR_WIDTH - index) // size))
    return index, parts, width


def _initial_controls(labels: list[str]) -> None:
    """Stationary start, or an initial distribution typed per state (docs/math.md §1)."""
    initial = state.get(INITIAL)
    options = ["stationary", "given"]
    mode = st.radio(
        "Initial distribution (the states of the first entry)",
        options,
        index=options.index("stationary" if initial is None else "given"),
        format_func={"stationary": "The chain's stationary distribution", "given": "Give one"}.get,
        horizontal=True,
        key=f"w_initial_mode_{state.editor_version(TRANSITIONS)}",
        help="A chain with more than one closed group of states has no unique stationary distribution: give one.",
    )
    if mode == "stationary":
        state.put(INITIAL, None)
        return
    if initial is None or len(initial) != len(labels):
        state.put(INITIAL, tuple(1.0 / len(labels) for _ in labels))
    editor_key, start = state.editor_state(INITIAL)
    frame = pd.DataFrame({"Pr(first entry)": list(start)}, index=labels, dtype=float)
    frame.index.name = "state"
    edited = st.data_editor(  # one row per state: it fits however many states there are
        frame,
        key=editor_key,
        column_config={"Pr(first entry)": st.column_config.NumberColumn("Pr(first entry)", format="%.4g")},
        width="stretch",
    )
    state.put(INITIAL, tuple(float(x) for x in edited["Pr(first entry)"].to_numpy(dtype=float, na_value=np.nan)))


def matrix_editor() -> None:
    """The transition matrix and its initial distribution, checked as typed (messages right under the grid)."""
    editor_key, start = state.editor_state(TRANSITIONS)
    labels = list(state.get(LABELS))
    base = pd.DataFrame(np.array(start, dtype=float), index=labels, columns=labels)
    base.index.name = "from \\ to"
    index_width, parts, width = _grids(labels)
    st.markdown(f"**Transition matrix** ({len(labels)} states: rows are the current state, columns the next)")
    grids = st.container()
    if len(labels) > LARGE:
        figure = matrix_heatmap(tuple(tuple(row) for row in start), tuple(labels))
        st.plotly_chart(figure, key="matrix_heatmap", config={"displaylogo": False})
        st.caption("Hover over a cell for its probability. Edit the matrix cell by cell below.")
        grids = st.expander(f"Edit the {len(labels)} × {len(labels)} matrix cell by cell (the grid scrolls)")
    elif len(parts) > 1:
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
        rows = min(len(labels), LARGE_ROWS) if len(labels) > LARGE else len(labels)
        height = (rows + 1) * ROW_HEIGHT + 3 if width is not None else "auto"
        edited.append(grids.data_editor(base[part], key=key, column_config=config, width="stretch", height=height))
    matrix = pd.concat(edited, axis=1)[labels]
    state.put(TRANSITIONS, tuple(tuple(float(x) for x in row) for row in matrix.to_numpy(dtype=float, na_value=np.nan)))
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
    problems = MATRIX.problems(state.settings())
    with messages:
        show_problems(merge_row_sums(problems, NORMALISE_FIX))
        if state.get(INITIAL) is None and any("no unique stationary distribution" in p for p in problems):
            st.info("Choose **Give one** under *Initial distribution* below to say where the chain starts.")
