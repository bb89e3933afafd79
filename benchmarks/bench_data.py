"""Data at any size: CPU seconds, peak memory and spill of fitting and simulating from event logs (docs/math.md §6, §7).

First generate the data (never committed; 100M rows take about 1.1 GB of Parquet):

    python benchmarks/make_events.py /tmp/events --users 1000000 --rows 100000000 --states 50

then run: python benchmarks/bench_data.py /tmp/events [--spark] [--sizes 10m,100m] — prints markdown tables.

**load_stats beside a hand-written query.**  For each size, the same rows are counted by each query in one run, each in
its own process: by :data:`HAND_SQL` (a LAG + GROUP BY in DuckDB, written for this data: transitions, first
states and sequence lengths and nothing else — no checks, no groups, no per-step counts) and by ``load_stats``
(the fit's counts with every check), once without a group column (the same counts as the hand-written query) and
once per country (the groups' counts too); the table shows each and its ratio to the hand-written one (goal ≤ 1.2).
``--sizes`` chooses 10m (the first two files), 100m (twenty files) and all (every file of the folder, e.g. 1B rows);
``--library-only`` runs load_stats per country alone (the 1B-row run); ``--no-statistics-too`` adds load_stats
with DuckDB's statistics propagation off (its cost);
``--compare-only`` stops there.

Each case runs in its own process under ``/usr/bin/time -v`` (CPU = user + system seconds, peak
RSS of that process), with DuckDB's temporary folder polled for its largest size.  Other cases: the fit
from 10M rows (the first two files) with ``memory_limit='600MB'``; the
simulator's aggregations on 100M rows (the same scan with 10 time windows, then ``simulate``);
the reading path of the rows (``load_sequences``) on 10M rows for comparison; and whether the
counts are identical from numpy, DuckDB and (with ``--spark``, local mode on every core) Spark.
The machine may be shared: CPU seconds and peak memory are the figures to compare, wall time is
shown for information only.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the hand-written baseline: what an analyst would write for a chain's counts on this data, nothing more
HAND_SQL = """
WITH ordered AS (
  SELECT state,
    LAG(state) OVER w AS prev,
    CASE WHEN LEAD(time) OVER w IS NULL THEN ROW_NUMBER() OVER w END AS length
  FROM read_parquet({files})
  WINDOW w AS (PARTITION BY "user" ORDER BY time)
)
SELECT prev, state, length, count(*) AS n FROM ordered GROUP BY GROUPING SETS ((prev, state), (length))
"""
SIZES = {"10m": 2, "100m": 20, "all": None}
GOALS = {
    "fit-10m": "≤ 10 CPU-s, ≤ 1 GB",
    "simulate-100m": "≤ 30 CPU-s more than the fit",
    "rows-10m": "— (the reading path of the rows, for comparison)",
}


def _case(args: argparse.Namespace) -> None:
    """One measured case, in this process (run by the driver under /usr/bin/time -v)."""
    start = time.perf_counter()
    cpu = time.process_time()  # every thread of the process: DuckDB's too
    if args.case == "hand":
        import duckdb

        con = duckdb.connect(config={"memory_limit": args.memory_limit, "temp_directory": args.temp,
                                     "preserve_insertion_order": False})
        listed = "[" + ", ".join(f"'{f}'" for f in args.files) + "]"
        table = con.sql(HAND_SQL.format(files=listed)).to_arrow_table()
        lengths = table.filter(pa.compute.is_valid(table.column("length")))
        firsts = table.filter(pa.compute.and_(pa.compute.is_null(table.column("prev")),
                                              pa.compute.is_valid(table.column("state"))))
        users = int(pa.compute.sum(lengths.column("n")).as_py())
        entries = int(pa.compute.sum(pa.compute.multiply(lengths.column("length"), lengths.column("n"))).as_py())
        assert int(pa.compute.sum(firsts.column("n")).as_py()) == users
        print(json.dumps({"entries": entries, "users": users, "seconds": time.perf_counter() - start,
                          "query_cpu": time.process_time() - cpu}))
        return
    from puffer_core.data.engines import load_stats
    from puffer_core.data.readers import load_sequences
    from puffer_core.priors.fitting import fit_markov_chain
    from puffer_core.simulation.run import simulate

    start = time.perf_counter()
    cpu = time.process_time()
    if args.case == "rows":
        import pyarrow.parquet as pq

        frame = pq.read_table(args.files).to_pandas()
        data = load_sequences(frame, group="country", max_rows=len(frame) + 1)
        prior = fit_markov_chain(data)
    else:
        windows = (10,) if args.case == "simulate" else ()
        engine: object = "duckdb"
        if args.no_statistics:  # the cost of DuckDB's statistics propagation off (as for float columns)
            from puffer_core.data.duckdb_engine import DuckDBEngine

            engine = DuckDBEngine(args.memory_limit, args.temp)
            engine.con.execute("SET disabled_optimizers = 'statistics_propagation'")
        data = load_stats(args.files, group=None if args.no_group else "country", memory_limit=args.memory_limit,
                          windows=windows,
                          temp_directory=args.temp, engine=engine)
        query_cpu = time.process_time() - cpu
        prior = fit_markov_chain(data)
        if args.case == "simulate":
            simulate(data, prior=prior, eps_grid=(1.0,), releases=10, release_mode="windows", trials=100, rng=0)
    print(json.dumps({"entries": data.n_entries, "users": data.n_users, "states": prior.n_states,
                      "seconds": time.perf_counter() - start, "query_cpu": locals().get("query_cpu"),
                      "spilled": getattr(data, "spilled_bytes", None),
                      "peak": getattr(data, "peak_memory_bytes", None)}))


def _counts(args: argparse.Namespace) -> None:
    """Whether numpy, DuckDB (and Spark) give identical counts on the given files."""
    import pyarrow.parquet as pq

    from puffer_core.data.engines import load_stats
    from puffer_core.data.readers import load_sequences

    frame = pq.read_table(args.files).to_pandas()
    reference = load_sequences(frame, group="country", max_rows=len(frame) + 1).stats(windows=(10,))
    del frame
    results = {"numpy": True}
    results["duckdb"] = load_stats(args.files, group="country", windows=(10,)).same_counts(reference)
    if args.spark:
        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false")
                 .config("spark.driver.memory", "4g").getOrCreate())
        spark.sparkContext.setLogLevel("OFF")
        start = time.perf_counter()
        got = load_stats(str(Path(args.files[0]).parent / "part-00[01].parquet"), engine=spark, group="country",
                         windows=(10,))
        results["spark"] = got.same_counts(reference)
        results["spark seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(results))


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def _measure(extra: list[str], temp: Path | None = None) -> dict[str, float]:
    """Run this script with ``extra`` under /usr/bin/time -v; CPU seconds, peak RSS and the largest spill."""
    peak_temp = 0
    done = threading.Event()

    def poll() -> None:
        nonlocal peak_temp
        while not done.wait(0.5):
            if temp is not None:
                peak_temp = max(peak_temp, _du(temp))

    threading.Thread(target=poll, daemon=True).start()
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-v", sys.executable, __file__, *extra], capture_output=True, text=True)
    done.set()
    if run.returncode != 0:
        raise SystemExit(f"case {extra} failed:\n{run.stderr[-3000:]}")

    def field(name: str) -> float:
        return float(re.search(rf"{name}: ([0-9.]+)", run.stderr).group(1))

    out = json.loads(run.stdout.strip().splitlines()[-1])
    out.update(
        cpu=field("User time \\(seconds\\)") + field("System time \\(seconds\\)"),
        rss_gb=field("Maximum resident set size \\(kbytes\\)") / 1e6,
        wall=time.perf_counter() - start,
        temp_gb=peak_temp / 1e9,
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--spark", action="store_true", help="also check Spark (local) on the 10M rows")
    parser.add_argument("--sizes", default="10m,100m", help="comma-separated: 10m, 100m, all (default 10m,100m)")
    parser.add_argument("--compare-only", action="store_true",
                        help="only load_stats beside the hand-written query (no simulate, rows or counts cases)")
    parser.add_argument("--library-only", action="store_true",
                        help="only load_stats per country, no hand-written query (1B rows: each spills ~33 GB)")
    parser.add_argument("--no-statistics-too", action="store_true",
                        help="also load_stats with DuckDB's statistics propagation off (its cost)")
    parser.add_argument("--side-by-side", action="store_true",
                        help="run the queries of one size at the same time (less wall time on a busy machine; their"
                             " CPU seconds grow a little, all alike)")
    parser.add_argument("--case", choices=("fit", "simulate", "rows", "hand"), help=argparse.SUPPRESS)
    parser.add_argument("--no-statistics", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-group", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--counts", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--memory-limit", default="2GB", help=argparse.SUPPRESS)
    parser.add_argument("--temp", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        return _case(args)
    if args.counts:
        return _counts(args)
    files = sorted(str(p) for p in args.folder.glob("part-*.parquet"))
    temp = Path(tempfile.mkdtemp(prefix="puffer_bench_", dir=args.temp))
    print(f"load average at the start: {_load()}\n")
    print(f"The queries of one size run {'at the same time' if args.side_by_side else 'one after the other'}, each in"
          " its own process; 'query CPU' is the load_stats call or the hand-written query alone, 'process CPU' adds"
          " starting Python and importing the library (about 2.5 s for puffer_core, 0.4 s for duckdb).\n")
    print("| rows | query | query CPU s | process CPU s | peak RSS | peak temp (polled) | spilled / peak engine"
          " memory (stats) | wall s | ratio to hand-written (query CPU) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes.split(","):
        chosen = files[: SIZES[size]] if SIZES[size] else files
        variants = [("hand-written LAG + GROUP BY (DuckDB)", ["--case", "hand"]),
                    ("load_stats, no group column: the same counts as the hand-written query",
                     ["--case", "fit", "--no-group"]),
                    ("load_stats + fit, per country (DuckDB)", ["--case", "fit"])]
        if args.library_only:  # e.g. 1B rows: load_stats per country alone (each variant spills tens of GB there)
            variants = variants[-1:]
        if args.no_statistics_too:
            variants.append(("load_stats + fit, statistics propagation off", ["--case", "fit", "--no-statistics"]))
        folders = [temp / f"{size}-{i}" for i in range(len(variants))]
        with ThreadPoolExecutor(len(variants) if args.side_by_side else 1) as pool:
            futures = [pool.submit(_measure, [*extra, "--memory-limit", args.memory_limit, "--temp", str(folder),
                                              "--files", *chosen], folder)
                       for (_, extra), folder in zip(variants, folders)]
            results = [future.result() for future in futures]
        hand = results[0] if not args.library_only else None
        for (name, _), got in zip(variants, results):
            ratio = f"{got['query_cpu'] / hand['query_cpu']:.2f}" if hand else "—"
            engine = (f"{got['spilled'] / 1e9:.2f} GB / {got['peak'] / 1e9:.2f} GB" if got.get("spilled") is not None
                      else "—")
            print(f"| {got['entries']:,} | {name} | {got['query_cpu']:.1f} | {got['cpu']:.1f} | {got['rss_gb']:.2f} GB"
                  f" | {got['temp_gb']:.2f} GB | {engine} | {got['wall']:.0f} |"
                  f" {ratio} |", flush=True)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nload average at the end: {_load()}")
    if args.compare_only:
        shutil.rmtree(temp, ignore_errors=True)
        return
    small = files[:2]
    cases = [
        ("fit-10m", "fit from 10M rows (DuckDB, memory_limit='600MB')",
         ["--case", "fit", "--memory-limit", "600MB", "--temp", str(temp), "--files", *small]),
        ("simulate-100m", "fit + 10 time windows + simulate, 100M rows (2GB)",
         ["--case", "simulate", "--memory-limit", "2GB", "--temp", str(temp), "--files", *files[:20]]),
        ("rows-10m", "load_sequences + fit from 10M rows (pandas, numpy)", ["--case", "rows", "--files", *small]),
    ]
    print("\n| case | entries | CPU s (user+sys) | peak RSS | peak temp | wall s (shared machine) | goal |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for key, name, extra in cases:
        got = _measure(extra, temp)
        print(f"| {name} | {got['entries']:,} | {got['cpu']:.1f} | {got['rss_gb']:.2f} GB | {got['temp_gb']:.2f} GB"
              f" | {got['wall']:.0f} | {GOALS[key]} |", flush=True)
    shutil.rmtree(temp, ignore_errors=True)
    counts = _measure(["--counts", "--files", *small, *(["--spark"] if args.spark else [])])
    engines = ", ".join(f"{k}: {'identical' if v is True else v}" for k, v in counts.items()
                        if k not in ("cpu", "rss_gb", "wall", "temp_gb"))
    print(f"\nCounts on 10M rows (10 time windows), compared with numpy: {engines}")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
