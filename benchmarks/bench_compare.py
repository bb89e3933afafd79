"""The cases of bench_goals.py in this checkout against another checkout of the project (e.g. an older commit).

Run: python benchmarks/bench_compare.py --base /path/to/other/checkout [case ...]

Make the other checkout with ``git worktree add /tmp/base <commit>``.  Every case runs in a
fresh child process, alternately in the other checkout and in this one (``--rounds`` times
each, so both see the same load on a shared machine), with one BLAS thread; a child times a
first call and then warm calls for up to ``--budget`` seconds and reports the median CPU time
(user + sys of the process) of the warm calls and its peak resident memory.  The table gives
the smaller median over the rounds of each checkout and their ratio: "no slower than before"
means ratio ≤ 1 (up to the machine's noise, about ±20 % on a busy machine).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the rows of the table before the work estimates (their names are the same in both checkouts)
EXISTING = [
    "k78-sticky", "k78-dense", "k78-sparse", "k78-near-periodic",
    "k500-dense", "k500-sticky", "k500-sparse", "k500-near-periodic",
    "nonstationary-k5", "stationary-k20-1e6", "gp-200", "gp-1000",
    "mqm-k500", "mqm-k78-50000", "theta10", "theta10-slow",
]


def _child(root: Path, name: str, budget: float) -> dict:
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(root / "benchmarks"))
    goals = importlib.import_module("bench_goals")
    built = goals.CASES[name][3]()
    fn = built[0]
    clock = time.process_time()
    fn()
    first = time.process_time() - clock
    cpus = []
    spent = 0.0
    while len(cpus) < 5 and spent < budget:
        wall, clock = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - clock)
        spent += time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"first": first, "cpu": statistics.median(cpus), "peak_mb": peak}


def _run(root: Path, name: str, budget: float, timeout: float) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if root != ROOT:  # compiled kernels of the other checkout are cached apart, not in its tree
        env["NUMBA_CACHE_DIR"] = f"/tmp/numba-cache-{abs(hash(str(root)))}"
    command = [sys.executable, __file__, "--child", name, "--root", str(root), "--budget", str(budget)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=root, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:g} s"}
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:80]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=EXISTING)
    parser.add_argument("--base", required=False, help="the other checkout's root directory")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=8.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(Path(args.root), args.child, args.budget)))
        return
    if not args.base:
        parser.error("--base is required (the checkout to compare with)")
    base = Path(args.base).resolve()
    print(f"load before: {os.getloadavg()[0]:.1f} (1-min average, {os.cpu_count()} CPUs)")
    print("| case | before: warm CPU s | now: warm CPU s | now / before | before: peak MB | now: peak MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.cases:
        results: dict[str, list[dict]] = {"before": [], "now": []}
        for _ in range(args.rounds):
            results["before"].append(_run(base, name, args.budget, args.timeout))
            results["now"].append(_run(ROOT, name, args.budget, args.timeout))
        cells = []
        for side in ("before", "now"):
            ok = [r for r in results[side] if "error" in r] == []
            cells.append(min(r["cpu"] for r in results[side]) if ok else None)
        errors = {s: next((r["error"] for r in rs if "error" in r), "") for s, rs in results.items()}
        text = [f"{c:.3f}" if c is not None else errors[s] for c, s in zip(cells, ("before", "now"))]
        ratio = f"{cells[1] / cells[0]:.2f}" if None not in cells and cells[0] > 0 else "—"
        peaks = [max((r.get("peak_mb", 0) for r in results[s]), default=0) for s in ("before", "now")]
        print(f"| {name} | {text[0]} | {text[1]} | {ratio} | {peaks[0]:.0f} | {peaks[1]:.0f} |")
        sys.stdout.flush()
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
