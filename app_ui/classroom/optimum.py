"""The classroom's step "optimal once, broken twice" (docs/math.md §18, [C] §4): the error-optimal ε-Pufferfish
mechanism for a count on a tiny sticky chain is exactly ε-private once, and run twice on the same data it may
leak far more than 2ε — the sharpest picture of why composition needs care.  The numbers are the best-possible
page's (:mod:`app_ui.optimal.views`)."""

from __future__ import annotations

import streamlit as st

from app_ui import page_path
from app_ui.core.charts import show_figure
from app_ui.core.tables import fmt, static_table
from app_ui.optimal.views import leakage_figure, odds, yardstick
from puffer_core import MarkovChainPrior

STAY = (0.9, 0.8)  # each state's chance to stay: a sticky chain, where neighbours say much about each other
LENGTH = 6  # entries per user
STATE = 1  # the count released
RUNS = 3
EPS_CHOICES = (0.5, 1.0, 2.0)


def lesson_chain() -> MarkovChainPrior:
    """The lesson's chain (stationary start)."""
    p, q = STAY
    return MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=LENGTH)


def optimum_step() -> None:
    """The step: pick ε, see one run (exactly ε) and two or three runs (the collapse)."""
    st.markdown(
        f"Each user has {LENGTH} entries of a sticky two-state chain (state 0 stays with probability {STAY[0]}, state"
        f" 1 with {STAY[1]}); the release is"
        f" how many entries are in state {STATE}. Among **all** ε-Pufferfish mechanisms for that count, a linear"
        " programme finds the one with the least expected error. Run it once: it is exactly ε-private — the best"
        " one can do. Run it again on the same data, independently: how much does it leak now?"
    )
    eps = st.segmented_control("ε of one run", EPS_CHOICES, default=1.0, key="w_cls_opt_eps",
                               format_func=lambda e: f"{e:g}")
    eps = 1.0 if eps is None else float(eps)
    chain = lesson_chain()
    stick = yardstick(("classroom", STAY, LENGTH), (chain,), eps, STATE, 2.0, RUNS)
    once, twice = stick.runs[0], stick.runs[1]
    m1, m2, m3 = st.columns(3)
    m1.metric("Best possible error", fmt(stick.comparison.floor))
    m2.metric("Leakage of one run", fmt(once.leakage), help="Exactly ε: the optimum spends all of it.")
    again = st.toggle("Run it a second time (and a third) on the same data", key="w_cls_opt_again",
                      persist_state="session")
    if not again:
        st.caption("One run: the best error any ε-Pufferfish mechanism can have, at exactly ε. Now run it again.")
    else:
        m3.metric("Leakage of two runs", fmt(twice.leakage), delta=f"{fmt(twice.leakage - 2 * eps, 3)} over 2ε",
                  delta_color="inverse")
        broken = stick.collapse()
        if broken is not None:
            st.warning(
                f"Run {broken.k} times it leaks {fmt(broken.leakage)}, not {fmt(broken.k_eps)}: at {broken.pair}, the"
                f" outputs {', '.join(str(y) for y in broken.outputs)} together are {odds(broken.leakage)} likelier"
                " under one secret than the other. One output is ambiguous by design; two outputs of a mechanism"
                " that spends its whole budget at the edge pin the count down. Composition is not free: Laplace via"
                " a(b) pays more error once, and [C] Theorem 6.2 bounds its k runs."
            )
        else:
            st.success(f"At ε = {eps:g} the optimum returned stays within k·ε for up to {RUNS} runs.")
        fig, notes = leakage_figure(stick)
        show_figure(fig, notes, key="cls_optimum_chart")
        static_table(stick.leakage())
        st.caption("Optimal mechanisms are not unique: this is the leakage of the one the programme returned.")
    st.page_link(page_path("optimal"), label="Try it on your own prior: the best possible mechanism",
                 icon=":material/military_tech:")
