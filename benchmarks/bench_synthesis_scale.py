"""Synthetic sequences at scale: CPU seconds and peak memory, event logs to synthetic Parquet (docs/math.md §19).

First generate the data (never committed; 100M rows take about 1.1 GB of Parquet):

    python benchmarks/make_events.py /tmp/events --users 1000000 --rows 100000000 --states 50

then run: nice -n 10 python benchmarks/bench_synthesis_scale.py /tmp/events — prints a markdown table, and deletes
the synthetic files it wrote.

Each case runs in its own process under ``/usr/bin/time -v`` (CPU = user + system seconds, peak RSS of that
process): ``load_chain_counts`` (DuckDB) of the first two files (10M rows) or all twenty (100M rows), one chain per
country or one for everyone, then ``synthesize`` at ε_puffer = 1 with the prior fitted on the counts, writing as
many synthetic rows as were read.  With a group column the counts take two scans of the data (``load_stats``, then
the per-group query), without one a single scan.  The machine may be shared: CPU seconds and peak memory are the
figures to compare, wall time is shown for information only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOALS = {"10m": "≤ 30 CPU-s, ≤ 1.5 GB", "100m": "≤ 300 CPU-s, ≤ 2.5 GB"}


def _case(args: argparse.Namespace) -> None:
    """One measured case, in this process (run by the driver under /usr/bin/time -v)."""
    from puffer_core.synthesis.sources import load_chain_counts
    from puffer_core.synthesis.synthesize import synthesize

    start = time.process_time()
    counts = load_chain_counts(args.files, group=args.group, memory_limit=args.memory_limit,
                               temp_directory=args.temp)
    counted = time.process_time()
    result = synthesize(counts, None, 1.0, rng=0, out=args.out, min_group_users=1)
    print(json.dumps({"rows": counts.n_rows, "synthetic": result.synthetic_counts.n_rows,
                      "count_cpu": counted - start, "synth_cpu": time.process_time() - counted,
                      "eps": result.eps_puffer}))


def _measure(extra: list[str]) -> dict[str, float]:
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-v", sys.executable, __file__, *extra], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"case {extra} failed:\n{run.stderr[-3000:]}")

    def field(name: str) -> float:
        return float(re.search(rf"{name}: ([0-9.]+)", run.stderr).group(1))

    out = json.loads(run.stdout.strip().splitlines()[-1])
    out.update(cpu=field("User time \\(seconds\\)") + field("System time \\(seconds\\)"),
               rss_gb=field("Maximum resident set size \\(kbytes\\)") / 1e6, wall=time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--memory-limit", default="1.5GB", help="DuckDB's memory limit (default 1.5GB)")
    parser.add_argument("--case", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--group", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--temp", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        return _case(args)
    files = sorted(str(p) for p in args.folder.glob("part-*.parquet"))
    work = Path(tempfile.mkdtemp(prefix="puffer_synth_bench_"))
    print("| case | rows in → out | CPU s (user+sys) | of which counting | peak RSS | wall s (shared machine) | goal |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for size, chosen in (("10m", files[:2]), ("100m", files)):
        for group in ("country", None):
            out = work / "synthetic.parquet"
            extra = ["--case", "--memory-limit", args.memory_limit, "--temp", str(work / "spill"), "--out", str(out),
                     "--files", *chosen, *(["--group", group] if group else [])]
            got = _measure(extra)
            how = f"one chain per {group}" if group else "one chain"
            print(f"| {size.upper()}, {how} | {got['rows']:,} → {got['synthetic']:,} | {got['cpu']:.1f}"
                  f" | {got['count_cpu']:.1f} | {got['rss_gb']:.2f} GB | {got['wall']:.0f} | {GOALS[size]} |",
                  flush=True)
            out.unlink(missing_ok=True)
    for path in sorted(work.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    work.rmdir()


if __name__ == "__main__":
    main()
