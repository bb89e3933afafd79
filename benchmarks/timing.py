"""Shared timing helpers for the benchmark scripts (not a test: nothing here asserts a time)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable


def median_seconds(fn: Callable[[], object], runs: int = 7) -> float:
    """Median wall time of ``runs`` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def print_budget_table(cases: Iterable[tuple[str, float | None, Callable[[], object]]], runs: int = 7) -> None:
    """A markdown table of (name, budget in ms or None, function) cases, timed by median_seconds."""
    print(f"| case | median of {runs} (ms) | budget (ms) | within |")
    print("|---|---:|---:|---|")
    for name, budget, fn in cases:
        ms = 1000 * median_seconds(fn, runs)
        verdict = "—" if budget is None else ("yes" if ms <= budget else "NO")
        print(f"| {name} | {ms:.1f} | {budget if budget is not None else '—'} | {verdict} |")
