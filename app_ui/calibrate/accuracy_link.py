"""Calibrate's accuracy-first target in the page's link, the tab a link or the guided path opens, and the ε_puffer
an accuracy target needs carried back exactly.

The target's controls (:func:`app_ui.accuracy.views.target_controls`) keep their values in their widgets; the
:class:`AccuracyTargetChoice` record holds them as optional settings (None: never set), so that the Calibrate
page's link carries the target — what must be accurate, ±α or the lead, the probability, m, k and how the
probability holds — and a link's target is written into the widgets once (:func:`open_link`).

:func:`carry_back` offers each mechanism's exact ε_puffer (not the table's rounded digits) as the page's target,
the one the guided path's later steps use.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app_ui import page_path
from app_ui.accuracy.views import JOINT_CHOICES, KIND_WORDS, PlanView
from app_ui.core import state
from app_ui.core.records import SettingsRecord, setting
from app_ui.core.state import EPS_PUFFER, ParameterGroup
from puffer_core.display import fmt
from puffer_core.priors.codecs import Choice, Number, Parameter

ACCURACY_TAB = "Accuracy → ε"  # the label of Calibrate's accuracy-first tab
TAB = "calibrate_tab"  # the tab Calibrate opens on (set by the guided path or a link)
FROM_GUIDE = "calibrate_from_guide"
LARGE = 1e12


def _optional(key: str, url: str, codec: object) -> Parameter:
    return Parameter(f"acc_{key}", None, url, codec, label=f"Accuracy target: {key}")


ACC_KIND = _optional("kind", "acckind", Choice(tuple(KIND_WORDS)))
ACC_ALPHA = _optional("alpha", "accalpha", Number(0.0, LARGE))
ACC_CONFIDENCE = _optional("confidence", "accconf", Number(0.0, 1.0))
ACC_M = _optional("m", "accm", Number(1, 100_000, whole=True))
ACC_JOINT = _optional("joint", "accjoint", Choice(JOINT_CHOICES))
ACC_K = _optional("k", "acck", Number(1, 10_000, whole=True))
ACC_HIT = _optional("hit", "acchit", Number(0.0, 1.0))
ACC_GAP = _optional("gap", "accgap", Number(0.0, LARGE))
ACC_STATES = _optional("states", "accstates", Number(2, 10_000, whole=True))
# each setting and the widget of target_controls("w_acc", …) that shows it
WIDGETS = (
    (ACC_KIND, "w_acc_kind"), (ACC_ALPHA, "w_acc_alpha"), (ACC_CONFIDENCE, "w_acc_confidence"), (ACC_M, "w_acc_m"),
    (ACC_JOINT, "w_acc_joint"), (ACC_K, "w_acc_k"), (ACC_HIT, "w_acc_hit"), (ACC_GAP, "w_acc_gap"),
    (ACC_STATES, "w_acc_states"),
)  # fmt: skip
ACCURACY_GROUP = ParameterGroup("accuracy", tuple(parameter for parameter, _ in WIDGETS))
OPENED = "acc_link_opened"


@dataclass(frozen=True)
class AccuracyTargetChoice(SettingsRecord):
    """The accuracy-first target as its controls left it (each None until the tab is drawn or a link sets it)."""

    kind: str | None = setting(ACC_KIND)
    alpha: float | None = setting(ACC_ALPHA)
    confidence: float | None = setting(ACC_CONFIDENCE)
    m: int | None = setting(ACC_M)
    joint: str | None = setting(ACC_JOINT)
    k: int | None = setting(ACC_K)
    hit: float | None = setting(ACC_HIT)
    gap: float | None = setting(ACC_GAP)
    states: int | None = setting(ACC_STATES)

    def link(self) -> tuple[Parameter, ...]:
        """The settings of the target's kind only (the counts' ±α and m, or the top-k's k, h, gap and m)."""
        counts = (ACC_KIND, ACC_ALPHA, ACC_CONFIDENCE, ACC_M, ACC_JOINT)
        topk = (ACC_KIND, ACC_K, ACC_HIT, ACC_GAP, ACC_STATES)
        if self.kind is None:
            return ()
        return counts if self.kind == "counts" else topk


def opened_tab() -> str | None:
    """The tab Calibrate opens on: the accuracy-first one when a link holds a target or the guided path sent the
    user there (None: the first)."""
    return st.session_state.get(TAB)


def open_link() -> None:
    """Once per session, before the tab is drawn: a link's target becomes the controls' values."""
    if st.session_state.get(OPENED):
        return
    st.session_state[OPENED] = True
    if state.get(ACC_KIND) is not None:  # a link with a target: its tab first
        st.session_state[TAB] = ACCURACY_TAB
    for parameter, key in WIDGETS:
        value = state.get(parameter)
        if value is not None:
            st.session_state[key] = value


def remember() -> None:
    """The target as its controls now show it: what the page's link carries."""
    for parameter, key in WIDGETS:
        if key in st.session_state:
            state.put(parameter, st.session_state[key])


def open_from_guide() -> None:
    """The guided path's "from the accuracy": Calibrate opens on the accuracy-first tab and offers the way back."""
    st.session_state[TAB] = ACCURACY_TAB
    st.session_state[FROM_GUIDE] = True


def _use(eps: float) -> None:
    """Make ``eps`` the target ε_puffer (before the page reruns, so that every tab shows it)."""
    state.put(EPS_PUFFER, eps)
    for key in ("w_eps", "w_guide_eps"):  # the boxes start again from the new target
        st.session_state.pop(key, None)
    st.session_state["acc_carried"] = eps


PREFER = ("pufferfish_exponential", "pufferfish_laplace")  # offered first: the guided trial's mechanisms


def carry_back(view: PlanView | None, prefer: tuple[str, ...] = PREFER) -> None:
    """Each mechanism's exact ε_puffer for the target, offered as the page's target ε_puffer (and the guided path's).

    Rényi levels (a weaker guarantee, docs/math.md §17) and refusals are not offered.
    """
    if view is None:
        return
    costs = [c for c in view.plan.costs if c.renyi_alpha is None and 0 < c.eps_puffer < float("inf")]
    if not costs:
        return
    names = [c.mechanism for c in costs]
    start = next((names.index(name) for name in prefer if name in names), 0)
    with st.container(border=True):
        st.markdown("**Use one of these as your target ε_puffer** (exactly, not the rounded digits above)")
        c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
        chosen = c1.selectbox(
            "Mechanism", range(len(costs)), index=start, key="w_acc_carry",
            format_func=lambda i: f"{costs[i].label}: ε_puffer = {fmt(costs[i].eps_puffer)}",
        )  # fmt: skip
        c2.button("Use this ε_puffer", key="w_acc_use", icon=":material/input:", on_click=_use,
                  args=(costs[chosen].eps_puffer,))  # fmt: skip
        carried = st.session_state.get("acc_carried")
        if carried is not None and carried == state.get(EPS_PUFFER):
            st.success(
                f"The target ε_puffer is now {carried!r} (every page uses it; the first tab shows what it gives)."
            )
        if st.session_state.get(FROM_GUIDE):
            st.page_link(page_path("analyst"), label="Back to the guided path", icon=":material/arrow_back:")
