"""The redaction planner's speed on every family of chains, K = 300, T = 400 (docs/math.md §16).

Run: python benchmarks/bench_redaction.py [--eps 1.0] [--before REV] [--chart N]

For the middle entry of a stationary chain of each family of benchmarks/bench_goals.py, the smallest window to
withhold so that the rest leaks ≤ ε about it, every pair of states secret; then for one sensitive state. Prints
the window, its leakage and the CPU seconds (the machine is shared: CPU time, with the load before and after).
The goal is 0.5 s.  ``--before REV`` (default 98ca6c2, the planner before its lower bounds) also times the
planner of that git revision on the same input, checks it finds the same window and leakage, and prints the
ratio; ``--before ''`` skips it.  ``--chart N`` times the chart (every size up to N evaluated exactly, as the
app draws it) instead of the planner; ``--stated`` the plan with the chart at the stated sizes of
``chart_sizes(T)`` (no 'before': that revision has no stated sizes).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_goals import FAMILIES  # noqa: E402
from puffer_core import MarkovChainPrior  # noqa: E402
from puffer_core.engine.redaction import chart_sizes, redaction_plan  # noqa: E402
from puffer_core.secrets import Secrets  # noqa: E402

BEFORE = "98ca6c2"


def load_before(rev: str) -> ModuleType | None:
    """puffer_core/engine/redaction.py as it was at git revision ``rev``, imported beside today's engine (its
    relative imports resolve to today's modules, which that version shares); None without git."""
    try:
        source = subprocess.run(["git", "show", f"{rev}:puffer_core/engine/redaction.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"(no 'before' column: cannot read revision {rev}: {error})")
        return None
    path = Path(tempfile.mkdtemp()) / "redaction_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("puffer_core.engine.redaction_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def timed(plan_fn, *args, **kwargs):
    start = time.process_time()
    plan = plan_fn(*args, **kwargs)
    return plan, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--before", default=BEFORE, help="git revision to compare with ('' skips)")
    parser.add_argument("--chart", type=int, default=0, help="time the chart up to this size instead")
    parser.add_argument("--stated", action="store_true", help="time the plan with the chart at chart_sizes(T)")
    args = parser.parse_args()
    before = load_before(args.before) if args.before and not args.stated else None
    extra: dict[str, object] = {"max_size": args.chart} if args.chart else {}
    what = f"the chart (sizes 1..{args.chart})" if args.chart else "the planner"
    if args.stated:
        extra = {"sizes": chart_sizes(400)}
        what = f"the planner with the chart at the {len(chart_sizes(400))} sizes of chart_sizes(400)"
    print(f"{what}; load before: {os.getloadavg()[0]:.1f} (1-minute average on {os.cpu_count()} CPUs);"
          f" ε = {args.eps:g}")
    head = "| family (K = 300, T = 400, entry 200) | secrets | window (before + 1 + after) | leakage | CPU (s)"
    if before is not None:
        head += f" | CPU at {args.before} (s) | speed-up"
    print(head + " | ≤ 0.5 s |")
    print("|---|---|---|---:|---:|" + ("---:|---:|" if before is not None else "") + "---|")
    for kind, build in FAMILIES.items():
        k = 289 if kind == "grid" else 300  # the grid needs a square
        prior = MarkovChainPrior(build(np.random.default_rng(78), k), None, 400)
        redaction_plan(prior, 10, args.eps, max_size=2)  # compile the kernels outside the timing
        for label, secrets in (("every pair", None), ("state 0 vs the rest", Secrets(pairs="sensitive", states=(0,)))):
            plan, seconds = timed(redaction_plan, prior, 199, args.eps, secrets, **extra)
            window = f"{plan.before} + 1 + {plan.after} = {plan.size}"
            name = f"{kind}{' (K = 289)' if k != 300 else ''}"
            row = f"| {name} | {label} | {window} | {plan.leakage:.4g} | {seconds:.2f}"
            if before is not None:
                old, old_seconds = timed(before.redaction_plan, prior, 199, args.eps, secrets, **extra)
                same = (old.size == plan.size and np.isclose(old.leakage, plan.leakage, rtol=0, atol=1e-12)
                        and old.leakages.shape == plan.leakages.shape
                        and np.allclose(old.leakages, plan.leakages, rtol=0, atol=1e-12))
                row += f" | {old_seconds:.2f} | {old_seconds / max(seconds, 1e-9):.1f}×{'' if same else ' (DIFFERS)'}"
            print(f"{row} | {'yes' if seconds <= 0.5 else 'NO'} |")
            sys.stdout.flush()
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
