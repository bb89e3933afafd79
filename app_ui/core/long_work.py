"""Work that can take long on a page: the library's estimate first, a progress bar with the stage, and Cancel.

The estimate is the library's own (:func:`puffer_core.engine.influence.influence_estimate`, a
:class:`puffer_core.work.WorkEstimate`): nothing here knows what a unit of work costs.  Work the
estimate puts under :data:`LONG_SECONDS` runs as before (under the page's spinner); longer work
shows the estimate, a progress bar with the library's stage, and a Cancel button.

**Why Cancel really stops the work.**  A click anywhere on the page asks Streamlit for a rerun, and
Streamlit stops the running script at its next ``st.*`` call.  The library calls the progress
callback at least every ~0.2 s of work, and the callback updates the bar — an ``st.*`` call — so the
computation stops there: the exception Streamlit raises unwinds through the library (which keeps
nothing partial) and the rerun starts.  Cancel's own callback records what was cancelled, so the
rerun shows it, with a button to compute it after all, instead of starting it again.  The session
stays usable throughout: every other widget works, and other sessions are served by other threads.

What was computed under the bar is kept for every session of the process (:func:`_finished`), so
the cached functions of the pages (e.g. :func:`app_ui.prior.current.kind_curve`) pick it up instead of
computing it again.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import streamlit as st

from puffer_core import InfluenceCurve
from puffer_core.engine.influence import influence_curve, influence_estimate
from puffer_core.priors.kinds import PRIOR_KINDS
from puffer_core.validation import human_seconds
from puffer_core.work import ProgressCallback, WorkEstimate

T = TypeVar("T")

LONG_SECONDS = 2.0  # work estimated above this shows its estimate, a progress bar and Cancel
KEPT = 24  # results computed under a progress bar, kept for every session (curves are small)
CANCELLED = "long_work_cancelled"  # session state: the keys of the work this session cancelled


class Cancelled(ValueError):
    """The user cancelled the work (a ValueError: the pages show its message where the result would be)."""


class _Finished:
    """Results computed under a progress bar, the most recent :data:`KEPT`, shared by the process's sessions."""

    def __init__(self) -> None:
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > KEPT:
                self._items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _finished() -> _Finished:
    return _Finished()


def _widget_key(key: Hashable) -> str:
    return f"long_work_{hash(key) & 0xFFFFFFFFFFFF:x}"


def _cancel(key: Hashable) -> None:
    st.session_state.setdefault(CANCELLED, set()).add(key)


def _resume(key: Hashable) -> None:
    st.session_state.setdefault(CANCELLED, set()).discard(key)


def is_cancelled(key: Hashable) -> bool:
    """Whether this session cancelled the work ``key`` (and has not asked for it again)."""
    return key in st.session_state.get(CANCELLED, set())


def run_long(key: Hashable, what: str, estimate: WorkEstimate, compute: Callable[[ProgressCallback | None], T]) -> T:
    """``compute(progress)`` with the estimate, a progress bar and Cancel when the estimate is long.

    ``key`` names the work (hashable, the same for the same inputs); ``what`` says it in words
    ("The a(b) curve of this prior").  Returns what ``compute`` returns (kept for every session);
    raises :class:`Cancelled` when this session cancelled it, after showing a button that asks for
    it again; work the estimate refuses or puts under :data:`LONG_SECONDS` is simply computed
    (``compute(None)``; a refusal raises the library's ValueError with the estimate).
    """
    done = _finished().get(key)
    if done is not None:
        return done
    if not estimate.fits or estimate.seconds < LONG_SECONDS:
        return compute(None)
    if is_cancelled(key):
        with st.container(border=True):
            st.markdown(f"**{what} was cancelled.** It needs {estimate.describe()}.")
            st.button("Compute it", key=f"{_widget_key(key)}_resume", on_click=_resume, args=(key,),
                      icon=":material/play_arrow:")
        raise Cancelled(f"{what[:1].lower()}{what[1:]} was cancelled; press “Compute it” to compute it after all")
    box = st.empty()
    with box.container(border=True):
        st.markdown(f"**{what}** needs {estimate.describe()}.")
        bar = st.progress(0.0, text="starting")
        st.button("Cancel", key=f"{_widget_key(key)}_cancel", on_click=_cancel, args=(key,), icon=":material/close:",
                  help="Stops the computation at once; the rest of the page stays as it is.")

    def progress(stage: str, fraction: float) -> None:
        bar.progress(min(1.0, max(0.0, fraction)), text=f"{stage} — {fraction:.0%}")

    start = time.perf_counter()
    value = compute(progress)
    seconds = time.perf_counter() - start
    box.empty()
    _finished().put(key, value)
    st.caption(f"{what} took {human_seconds(seconds)} (estimated: {human_seconds(estimate.seconds)}).")
    return value


def announce(prior_or_priors: object, what: str = "The a(b) curve of this prior") -> WorkEstimate | None:
    """Say the library's estimate of a prior's (or Θ's) curve in a caption when it is long; the estimate, or None.

    For work that runs under a progress bar of its own (e.g. a simulation, whose bar shows the curve's
    stages): every update of that bar is a point where a click (e.g. on a Cancel button) stops it.
    """
    try:
        estimate = influence_estimate(prior_or_priors)
    except ValueError:
        return None  # the work itself says what is wrong
    if estimate.fits and estimate.seconds >= LONG_SECONDS:
        st.caption(f"{what} needs {estimate.describe()}.")
    return estimate


# --------------------------------------------------------------------------- the a(b) curve of a prior kind


def curve_key(kind: str, parameters: Hashable) -> tuple[str, str, Hashable]:
    """The name of the work "the a(b) curve of the prior of ``kind`` with these parameters"."""
    return ("curve", kind, parameters)


@st.cache_data(show_spinner=False, max_entries=256)
def curve_estimate(kind: str, parameters: tuple[tuple[str, Any], ...]) -> WorkEstimate:
    """:func:`influence_estimate` of the prior of ``kind`` with these parameters (once per input)."""
    return influence_estimate(PRIOR_KINDS[kind].prior(dict(parameters)))


def prepare_curve(kind: str, parameters: tuple[tuple[str, Any], ...]) -> None:
    """Compute the curve of this prior under a progress bar with Cancel when it is long (see :func:`run_long`).

    Short curves are left to the caller's cached function; a long one is computed here and handed
    to it through :func:`finished_curve`.  Raises :class:`Cancelled` when this session cancelled it.
    """
    key = curve_key(kind, parameters)
    if _finished().get(key) is not None:
        return
    estimate = curve_estimate(kind, parameters)
    if not estimate.fits or estimate.seconds < LONG_SECONDS:
        return
    run_long(key, "The a(b) curve of this prior", estimate,
             lambda progress: influence_curve(PRIOR_KINDS[kind].prior(dict(parameters)), progress=progress))


def finished_curve(kind: str, parameters: Hashable) -> InfluenceCurve | None:
    """The curve of this prior if it was computed under a progress bar (by any session), else None."""
    return _finished().get(curve_key(kind, parameters))
