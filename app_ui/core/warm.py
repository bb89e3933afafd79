"""Warm the server before its first visitor: imports, compiled kernels and plotly's validators.

A fresh server process has imported nothing of the library yet, and the compiled kernels
(``puffer_core.engine.kernels``, numba) are loaded — or, on a fresh clone, compiled — on their
first call; done during the first page view that cost seconds.  ``app.py`` serves the app with
:func:`lifespan`, which runs :func:`warm` once when the server starts, before it answers any
request (its health check included), so the first visitor waits for nothing of the sort.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

LOG = logging.getLogger("pufferfish.warm")
MODULES = (  # every module a page imports, so that the first run of each page finds them loaded
    "app_ui.prior.current",
    "app_ui.curves.views",
    "app_ui.prior.controls",
    "app_ui.calibrate.views",
    "app_ui.plan.exports",
    "app_ui.simulate.views",
    "app_ui.simulate.words",
    "app_ui.streams.views",
    "app_ui.attack.views",
    "app_ui.classroom.views",
    "app_ui.core.docs",
)


def warm() -> float:
    """Import the app's modules and run each compiled kernel once on a tiny input; the seconds it took.

    Never raises: a failure here is logged and the page that needs the module reports it as usual.
    """
    start = time.perf_counter()
    try:
        for name in MODULES:
            importlib.import_module(name)
        from app_ui.core.charts import Trace, curve_trace, line_figure
        from puffer_core import GaussianProcessPrior, MarkovChainPrior, calibrate, influence_curve

        binary = influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=40))
        influence_curve(MarkovChainPrior([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]], length=20))
        influence_curve([MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], length=20)] * 2)
        influence_curve(GaussianProcessPrior(8, 1.0))
        calibrate(binary, 1.0)
        line_figure([curve_trace(binary, "a(b)"), Trace("x", binary.b.astype(float), binary.a)], "b", "a(b)")
    except Exception:  # noqa: BLE001 - warming is an optimisation: the pages say what fails
        LOG.exception("warming the app failed; the first page view will be slower")
    return time.perf_counter() - start


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Warm the process (:func:`warm`) before the server takes its first request."""
    LOG.info("warmed the app in %.1f s", warm())
    yield
