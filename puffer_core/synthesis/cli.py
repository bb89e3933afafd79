"""The command line's ``synth``: synthetic sequences from event logs of any size (docs/math.md §19).

    puffer synth --data 'logs/*.parquet' --group country --eps 1 --out synthetic.parquet
    puffer synth --data logs/ --engine spark --alpha 20 --seed 0 --out synthetic.csv --report report.json

The data are counted by :func:`~puffer_core.synthesis.sources.load_chain_counts` (DuckDB with a memory limit, or a
local Spark session with ``--engine spark``); the prior is fitted on them (docs/math.md §6) unless ``--prior``
gives its transition matrix as CSV (as ``puffer prior --out`` writes it).  Without ``--seed`` the noise is a real
release (OpenDP); with it, a reproducible one.  ``--report`` writes the released counts, the privacy event, the
notes and the fidelity scores as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.engines import print_progress
from ..data.sequences import preview_names
from ..priors.fitting import DEFAULT_SMOOTHING
from ..priors.models import MarkovChainPrior
from .counts import ChainCounts
from .fidelity import fidelity
from .model import METHODS
from .privacy import GUARANTEES, CountAccuracy
from .sample import DEFAULT_CHUNK_ROWS
from .sources import load_chain_counts
from .synthesize import fitted_prior, plan_synthesis, run_synthesis


def add_synth_command(commands: Any, data_arguments: Callable[[argparse.ArgumentParser, str], None]) -> None:
    """The ``synth`` subcommand; ``data_arguments`` adds the data options every command shares."""
    synth = commands.add_parser(
        "synth",
        help="synthetic sequences with a Pufferfish guarantee, from event logs of any size",
        description=(
            "Count each group's transitions, first states and lengths (DuckDB or Spark), release the counts with"
            " discrete Laplace noise calibrated through a(b) (docs/math.md §19), turn them into a chain and write"
            " synthetic users' sequences in the input's columns."
        ),
    )
    data_arguments(synth, "Parquet or CSV: a file, a folder or a glob such as 'logs/*.parquet' (quote it)")
    synth.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                       help="count with DuckDB (default) or a local Spark session (the [spark] extra)")
    privacy = synth.add_argument_group("the guarantee (give --eps, or --alpha for a target accuracy)")
    privacy.add_argument("--eps", type=float, default=None, help="the ε_puffer of the release")
    privacy.add_argument("--alpha", type=float, default=None, help="every count within ±alpha (a target accuracy)")
    privacy.add_argument("--beta", type=float, default=0.05, help="… with probability 1 − beta (default 0.05)")
    privacy.add_argument("--guarantee", choices=GUARANTEES, default="pufferfish",
                         help="pufferfish (default), or a DP baseline for comparison: group_dp, user_dp")
    privacy.add_argument("--prior", default=None, metavar="CSV",
                         help="the prior's transition matrix (as `puffer prior --out` writes it); default: fitted")
    privacy.add_argument("--smoothing", type=float, default=DEFAULT_SMOOTHING,
                         help="smoothing τ of the fitted prior (default: 1e-5)")
    privacy.add_argument("--seed", type=int, default=None,
                         help="reproducible noise and sample (numpy); without it a real release (OpenDP)")
    privacy.add_argument("--min-group-users", type=int, default=2, help="refuse smaller groups (default 2)")
    privacy.add_argument("--allow-no-signal", action="store_true",
                         help="write the table even when the noise outweighs some group's counts (said in the notes)")
    out = synth.add_argument_group("output")
    out.add_argument("--out", required=True, metavar="FILE", help="the synthetic table: .parquet, .csv or .csv.gz")
    out.add_argument("--method", choices=METHODS, default="projection", help="noisy counts → chain (default)")
    out.add_argument("--report", default=None, metavar="FILE",
                     help="also write the release, the privacy event, the notes and the fidelity as JSON")
    out.add_argument("--chunk-rows", type=int, default=DEFAULT_CHUNK_ROWS, help="rows drawn at once")
    out.add_argument("--quiet", action="store_true", help="no progress or summary output")


def _prior(path: str | None, counts: ChainCounts, smoothing: float) -> MarkovChainPrior:
    if path is None:
        return fitted_prior(counts, smoothing)
    try:
        frame = pd.read_csv(path, index_col=0)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the prior '{path}': {exc}") from None
    labels = tuple(str(c) for c in frame.columns)
    if labels != counts.states:
        raise ValueError(
            f"the prior '{path}' has the states {preview_names(labels)}, the data {preview_names(counts.states)};"
            " they must be the same, in the same order"
        )
    return MarkovChainPrior(frame.to_numpy(dtype=float), None, counts.max_length, labels)


def _spark() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ValueError("--engine spark needs pyspark and Java (pip install 'pufferfish-lab[spark]')") from None
    return SparkSession.builder.appName("puffer-synth").getOrCreate()


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    return value


def run_synth(args: argparse.Namespace) -> int:
    """``puffer synth``: count, plan, release, write (module docstring); returns the exit status."""
    if (args.eps is None) == (args.alpha is None):
        raise ValueError("give --eps (the guarantee) or --alpha (every count within ±alpha), one of the two")
    progress = None if args.quiet else print_progress
    engine = _spark() if args.engine == "spark" else "duckdb"
    counts = load_chain_counts(
        args.data, user=args.user, time=args.time, state=args.state, group=args.group, engine=engine,
        memory_limit=args.memory_limit, time_format=args.time_format, drop_missing=args.drop_missing,
        drop_duplicates=args.drop_duplicates, progress=progress, detail=args.report is not None,
    )
    prior = _prior(args.prior, counts, args.smoothing)
    accuracy = None if args.alpha is None else CountAccuracy(args.alpha, args.beta)
    plan = plan_synthesis(
        counts, prior, args.eps, accuracy=accuracy, guarantee=args.guarantee, min_group_users=args.min_group_users,
        if_no_signal="allow" if args.allow_no_signal else "refuse",
    )
    if progress is not None:
        progress(0.0, f"releasing the counts and drawing {counts.n_rows:,} synthetic rows to {args.out}")
    result = run_synthesis(plan, args.seed, method=args.method, out=args.out, chunk_rows=args.chunk_rows)
    if args.report is not None:
        report = {
            "release": result.release.to_dict(),
            "notes": [{"code": n.code, "message": n.message, "about_data": n.about_data} for n in plan.notes],
            "fidelity": fidelity(counts, result.synthetic_counts).scores().to_dict(orient="records"),
            "rows": result.synthetic_counts.n_rows,
            "seed": args.seed,
        }
        text = json.dumps(_json_safe(report), indent=1, ensure_ascii=False)
        try:
            Path(args.report).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot write '{args.report}': {exc.strerror or exc}") from None
    if not args.quiet:
        print(result.event.describe())
        for note in plan.notes:
            print(f"note: {note.message}")
        kind = "a real release (OpenDP)" if args.seed is None else f"seed {args.seed}: reproducible, not for publishing"
        extra = f" and the report to {args.report}" if args.report else ""
        print(f"wrote {result.synthetic_counts.n_rows:,} rows of {result.synthetic_counts.n_users:,} synthetic users"
              f" to {args.out} ({kind}){extra}", file=sys.stdout)
    return 0
