"""Plan & compose: a ledger of releases and the budget planner (docs/math.md §4, [C] Theorem 6.2)."""

from __future__ import annotations

import streamlit as st

from app_ui.accuracy.views import LEAD_WORDS, chains_of, default_states
from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.docs import show_sources
from app_ui.core.report import offer_exports
from app_ui.core.tables import csv_download, fmt, show_problems
from app_ui.gaussian.ledger import renyi_plan_section
from app_ui.plan.exports import ledger_chart, ledger_view, planner_view, report, script
from app_ui.plan.ledger import (
    LABELS,
    LEDGER,
    LEDGER_K,
    MAX_NAME,
    MAX_RELEASES,
    editor_frame,
    read_ledger_csv,
    rows_from_editor,
)
from app_ui.plan.settings import PlanSettings
from app_ui.prior.current import prior_summary
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.controls import secrets_section
from app_ui.secrets.page import page_curve
from app_ui.secrets.settings import SecretsChoice

UPLOAD_KEY = "w_ledger_upload"
# the results table as shown: the running totals first (what a narrow screen shows), short headers (the CSV
# keeps the long ones)
SHOWN = {
    "release": st.column_config.TextColumn("release"),
    "cumulative (Thm 6.2)": st.column_config.TextColumn(
        "total, Thm 6.2", alignment="right", help="ε_puffer of the releases so far, [C] Theorem 6.2."
    ),
    "cumulative (naive sum)": st.column_config.TextColumn(
        "total, naive", alignment="right", help="The sum of the releases' own ε_puffer."
    ),
    "cumulative (group DP)": st.column_config.TextColumn(
        "total, group DP", alignment="right", help="Group-DP accounting: T·Σ ε_DP."
    ),
    "ε_DP per entry": st.column_config.TextColumn("ε_DP", alignment="right", help="Per-entry ε_DP of the release."),
    "b": st.column_config.NumberColumn("b", help="The curve point's window b."),
    "a(b)": st.column_config.TextColumn("a(b)", alignment="right"),
    "noise": st.column_config.TextColumn("noise"),
    "accuracy (95%)": st.column_config.TextColumn(
        "accuracy (95%)",
        help="What the release's noise buys with 95% probability (docs/math.md §13): ±α, the error of each"
        " count; lead g, how far the k-th count (1st: the largest) must lead the next for the ranking to be right.",
    ),
}
ROW_PX = 35  # the height of a table row
MAX_SHOWN_ROWS = 15  # taller tables scroll


def _height(rows: int, extra: int = 1) -> int:
    """A table's height in pixels: every row up to MAX_SHOWN_ROWS, plus the header (and the editor's + row)."""
    return (min(rows, MAX_SHOWN_ROWS) + extra) * ROW_PX + 3


st.title("Plan & compose")
st.markdown(
    "Releases calibrated through the curve compose better than adding up their guarantees:"
    " k releases with points (a_l, b_l) jointly satisfy **max a_l + Σ (ε_puffer,l − a_l)**"
    " ([C] Theorem 6.2, docs/math.md §4). General Pufferfish mechanisms do not compose at all (see the"
    " Classroom page); these do because each is per-entry differentially private."
)
state.show_ignored_link_settings()
state.share_button()
if carried := st.session_state.pop("plan_carried", None):  # the guided path's plan, opened here
    st.success(f"From the guided path: {carried}. Change them below; the report and the script follow.")
current = prior_summary()


def _load_ledger() -> None:
    """A ledger CSV was uploaded: make it the ledger (and its k), or keep the ledger and say why not."""
    upload = st.session_state.get(UPLOAD_KEY)
    if upload is None:
        return
    try:
        loaded = read_ledger_csv(upload.getvalue(), f"'{upload.name}'")
    except ValueError as exc:
        st.session_state["ledger_upload_message"] = ("error", f"{exc}. The ledger was not changed.", upload.file_id)
        return
    state.restart_editor(LEDGER, loaded.rows)
    k_note = " (the file gives no k: the k for the top-k rankings is unchanged)"
    if loaded.k is not None:
        state.put(LEDGER_K, loaded.k)
        st.session_state.pop("w_ledger_k", None)  # the input starts again from the settings' k
        k_note = f", with k = {loaded.k} for the top-k rankings"
    count = f"{len(loaded.rows)} release{'s' if len(loaded.rows) != 1 else ''}"
    message = f"Loaded {count} from '{upload.name}'{k_note}."
    st.session_state["ledger_upload_message"] = ("success", message, upload.file_id)


if current is not None:
    prior = PriorChoice.from_session()
    secrets_section(prior)  # what is secret (docs/math.md §16)
    inputs.stop_if_invalid()
    curve = page_curve(SecretsChoice.from_session(), prior, current.curve)
    n_states = default_states(prior.kind, prior.params)
    ledger_tab, planner_tab, renyi_tab = st.tabs(
        ["Ledger of planned releases", "Planner: split a total budget", "Gaussian releases (Rényi)"]
    )

    with ledger_tab:
        st.caption(
            "One row per release: the mechanism and the ε_puffer it must guarantee on its own. Each is"
            " calibrated through the curve (group DP ones use ε_DP = ε_puffer / T). Add a row with + at the"
            " bottom of the table; select rows to delete them."
        )
        editor_key, start = state.editor_state(LEDGER)
        edited = st.data_editor(
            editor_frame(start),
            key=editor_key,
            num_rows="dynamic",
            width="stretch",
            height=_height(len(start), extra=2),
            column_order=("release", "ε_puffer", "mechanism"),
            column_config={
                "release": st.column_config.TextColumn(
                    "Release", help="A name: a month, a report…", max_chars=MAX_NAME, width=100
                ),
                "mechanism": st.column_config.SelectboxColumn(
                    "Mechanism",
                    options=list(LABELS.values()),
                    required=True,
                    default=next(iter(LABELS.values())),
                    width="medium",
                ),
                "ε_puffer": st.column_config.NumberColumn(
                    "ε_puffer", format="%.4g", width=90, help="A positive number, at most 1000."
                ),
            },
        )
        ledger_k = state.number_input(st.columns([1, 2])[0], "k for the top-k rankings", LEDGER_K, key="w_ledger_k")
        inputs.stop_if_invalid()  # a value out of range: no result for another one
        checked = rows_from_editor(edited)
        rows, problems = checked.rows, checked.problems
        state.put(LEDGER, rows)
        show_problems(problems)
        if checked.named:
            st.caption(f"Rows without a name are called by their place in the ledger: {', '.join(checked.named)}.")
        if not rows and not problems:
            st.info("Add a release to the ledger (a row with a mechanism and a positive ε_puffer).")
        log_y = bool(st.session_state.get("w_ledger_log", True))
        if rows:
            ledger = ledger_view(curve, rows, ledger_k, n_states)
            if problems:
                st.caption(
                    f"The numbers below leave out the {len(problems)} row(s) with a problem, and so do the link,"
                    " the downloads and the report."
                )
            st.markdown(ledger.summary)
            log_y = st.toggle("Log scale", value=True, key="w_ledger_log", persist_state="session")
            fig, notes = ledger_chart(curve, rows, ledger_k, log_y)
            show_figure(fig, notes, key="ledger_chart")
            st.dataframe(
                ledger.table.text,
                hide_index=True,
                key="ledger_table",
                column_order=list(SHOWN),
                column_config=SHOWN,
                width="stretch",
                height=_height(len(rows)),
            )
            st.caption(LEAD_WORDS)
            st.caption(
                "The download has the mechanism, ε_puffer and k of every release too; it loads back below."
            )
            csv_download(ledger.table.frame, "ledger.csv", "Download the ledger (CSV)", key="w_download_ledger")
        with st.expander("Load a ledger from a CSV file", icon=":material/upload_file:"):
            upload = st.file_uploader(
                "A ledger CSV (as downloaded above: columns release, mechanism, ε_puffer, and k)",
                type=["csv", "txt"],
                key=UPLOAD_KEY,
                on_change=_load_ledger,
                help=f"At most {MAX_RELEASES} releases. The file replaces the ledger above; it is not stored.",
            )
        # a refused file stays refused while it is in the uploader; a loaded one is announced once
        message = st.session_state.get("ledger_upload_message")
        if message is not None:
            kind, text, file_id = message
            if upload is not None and upload.file_id == file_id:
                (st.error if kind == "error" else st.success)(text)
            if kind == "success" or upload is None or upload.file_id != file_id:
                del st.session_state["ledger_upload_message"]
        st.caption(
            "MQM releases are not in this ledger: they add up ([S] Theorem III.7) and cannot be mixed"
            " with curve-calibrated releases; the Simulate page keeps their ledger separately."
        )

    with planner_tab:
        c1, c2 = st.columns(2)
        total_eps = state.number_input(
            c1, "Total budget ε_puffer for the series", state.PLAN_TOTAL, step=0.5, key="w_plan_total"
        )
        k_rel = state.number_input(c2, "Number of releases", state.PLAN_RELEASES, step=1, key="w_plan_releases")
        inputs.stop_if_invalid()
        planner = planner_view(curve, total_eps, k_rel)
        planned, group_each = planner.planned, planner.group_each
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Per-release ε_DP", fmt(planned.eps_dp))
        m2.metric("Common window b", planned.b)
        m3.metric("a(b)", fmt(planned.a))
        m4.metric(
            "vs group DP",
            f"{planned.eps_dp / group_each.eps_dp:.3g}×",
            help=f"Group DP: ε_DP = E / (k·T) = {fmt(group_each.eps_dp)} per release.",
        )
        st.markdown(planner.summary)
        show_figure(planner.figure, planner.notes, key="planner_chart")
        csv_download(planner.table, "planner.csv", "Download the planner curve (CSV)", key="w_download_plan")

    with renyi_tab:  # Rényi rows, never added to the ε-Pufferfish ledger (app_ui/gaussian/ledger.py)
        renyi_plan_section((prior.kind, prior.params), chains_of(prior.kind, prior.params))

    st.subheader("Take this plan with you")
    settings, description = PlanSettings.from_session(), current.description  # as both tabs left the settings
    offer_exports(
        lambda: report(curve, description, settings, log_y, n_states),
        lambda: script(settings, description),
        stem="plan",
        key="w_plan_export",
    )
    show_sources(["C", "S"])

state.share(PlanSettings.from_session().link())
