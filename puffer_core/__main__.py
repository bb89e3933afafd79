"""Command line: batch what-if runs of the simulator, and fits from event logs of any size (docs/math.md §3–§7).

    python -m puffer_core simulate --data assets/checkins.csv --group country \\
        --eps 0.5,1,2,5 --trials 200 --seed 0 --out results.csv --ledger ledger.csv
    puffer prior --data 'logs/*.parquet' --group country --memory-limit 2GB --out transition.csv
    puffer synth --data 'logs/*.parquet' --group country --eps 1 --out synthetic.parquet

``simulate`` reads the rows (or, with ``--engine duckdb``, only aggregates them); ``prior`` always
aggregates with DuckDB (``puffer_core.data.engines.load_stats``), so its input may be far larger than
memory: paths, folders and globs of Parquet or CSV files.  ``puffer`` is the same command once
the package is installed (``pip install .``).

Bad input (a missing file, a wrong column name, an unknown mechanism, …) prints one
``error: …`` line and exits with status 2; it never shows a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .data.engines import load_stats, print_progress
from .data.readers import load_sequences
from .data.sql import DEFAULT_MEMORY_LIMIT
from .data.stats import SequenceStats
from .mechanisms import MECHANISMS, QUERIES, TOPK_LAPLACE
from .priors.fitting import DEFAULT_SMOOTHING, fit_markov_chain
from .secrets.codec import read_secrets
from .secrets.events import EventSecrets
from .secrets.values import Secrets
from .simulation.metrics import informative_k, trivial_topk
from .simulation.run import DEFAULT_EPS_GRID, RELEASE_MODES, simulate
from .synthesis.cli import add_synth_command, run_synth
from .tightness.cli import add_ladder_command, run_ladder

EXIT_BAD_INPUT = 2
DEFAULT_K = 3


def _number_list(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, e.g. 0.5,1,2; got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number, e.g. 0.5,1,2")
    return values


def _name_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in MECHANISMS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown mechanism(s) {', '.join(unknown) or text!r}; choose from {', '.join(MECHANISMS)}"
        )
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="puffer",
        description="Pufferfish Lab: fit priors from event logs and simulate private releases of per-group queries.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sim = commands.add_parser(
        "simulate",
        help="utility and privacy ledger of mechanisms over a grid of ε_puffer",
        description=(
            "Fit a Markov chain prior on the data (docs/math.md §6), build each mechanism for each ε_puffer"
            " (docs/math.md §3–§5), simulate the releases and write metric means with 95% intervals."
        ),
    )
    _data_arguments(sim, "CSV or Parquet file, one row per entry (with --engine duckdb: also a folder or a glob)")
    sim.add_argument(
        "--engine",
        choices=("rows", "duckdb"),
        default="rows",
        help="read the rows into memory (default), or only aggregate them with DuckDB (any size, same results)",
    )
    query = sim.add_argument_group("query and mechanisms")
    query.add_argument("--query", choices=QUERIES, default="topk", help="top-k states per group, or all counts")
    query.add_argument(
        "--k",
        type=int,
        default=None,
        help=f"how many top states (default: {DEFAULT_K}, lowered below the number of states in the data: with k at"
        " least the number of states every mechanism scores 1)",
    )
    query.add_argument(
        "--mechanisms",
        type=_name_list,
        default=None,
        help=f"comma-separated, from: {', '.join(MECHANISMS)} (default: the papers' four for top-k)",
    )
    query.add_argument(
        "--topk-laplace",
        choices=TOPK_LAPLACE,
        default="split",
        help="Laplace/MQM top-k: split ε over the m counts as the papers do (default), or one histogram",
    )
    query.add_argument(
        "--eps",
        type=_number_list,
        default=list(DEFAULT_EPS_GRID),
        help="ε_puffer grid, comma-separated (default: 0.5,1,2,3,4,5)",
    )
    query.add_argument("--smoothing", type=float, default=DEFAULT_SMOOTHING, help="prior smoothing τ (default: 1e-5)")
    query.add_argument(
        "--secrets", default="", metavar="TEXT",
        help="what is secret, as the app's link writes it, e.g. \"p=sensitive;s=3;r=h0-5.22-23\" (default:"
        " every pair of states at every entry; docs/math.md §16)",
    )
    runs = sim.add_argument_group("releases and trials")
    runs.add_argument("--releases", type=int, default=1, help="how many releases (default: 1)")
    runs.add_argument(
        "--release-mode", choices=RELEASE_MODES, default="repeat", help="same query again, or successive time windows"
    )
    runs.add_argument("--trials", type=int, default=200, help="simulated trials (default: 200)")
    runs.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    out = sim.add_argument_group("output")
    out.add_argument("--out", required=True, metavar="FILE", help="metrics CSV to write")
    out.add_argument("--ledger", default=None, metavar="FILE", help="also write the privacy ledger CSV")
    out.add_argument("--settings", default=None, metavar="FILE", help="also write the settings as JSON")
    out.add_argument("--quiet", action="store_true", help="no progress or summary output")

    fit = commands.add_parser(
        "prior",
        help="fit the Markov chain prior from event logs of any size (DuckDB)",
        description=(
            "Aggregate the data with DuckDB (never more than --memory-limit in memory; the rest spills to a temporary"
            " folder), print what it holds and the fitted chain (docs/math.md §6), and write the transition matrix."
        ),
    )
    _data_arguments(fit, "Parquet or CSV: a file, a folder or a glob such as 'logs/*.parquet' (quote it)")
    fit.add_argument("--smoothing", type=float, default=DEFAULT_SMOOTHING, help="prior smoothing τ (default: 1e-5)")
    fit.add_argument("--out", default=None, metavar="FILE", help="write the fitted transition matrix as CSV")
    fit.add_argument("--stats", default=None, metavar="FILE", help="write every count (SequenceStats) as JSON")
    fit.add_argument("--quiet", action="store_true", help="no progress or summary output")
    add_ladder_command(commands)  # attack ≤ exact ≤ every bound (puffer_core/tightness/cli.py)
    add_synth_command(commands, _data_arguments)  # synthetic sequences (puffer_core/synthesis/cli.py)
    return parser


def _data_arguments(command: argparse.ArgumentParser, what: str) -> None:
    data = command.add_argument_group("data")
    data.add_argument("--data", required=True, metavar="PATH", help=what)
    data.add_argument("--user", default="user", help="user column (default: user)")
    data.add_argument("--time", default="time", help="time column (default: time)")
    data.add_argument("--state", default="state", help="state column (default: state)")
    data.add_argument("--group", default=None, help="group column, e.g. country (default: one group)")
    data.add_argument(
        "--time-format",
        default=None,
        help="how times written as text read: %%d/%%m/%%Y or %%m/%%d/%%Y for the order of numeric dates, or any"
        " strftime format (default: detected once for the whole column; an ambiguous column is refused)",
    )
    data.add_argument("--drop-missing", action="store_true", help="drop rows with an empty cell (and count them)")
    data.add_argument("--drop-duplicates", action="store_true", help="drop rows repeated exactly (and count them)")
    data.add_argument(
        "--memory-limit",
        default=DEFAULT_MEMORY_LIMIT,
        help=f"DuckDB's memory limit, e.g. 2GB (default: {DEFAULT_MEMORY_LIMIT}); what does not fit spills to disk",
    )


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:5.0%}] {message}", file=sys.stderr)


def _query_and_k(args: argparse.Namespace, n_states: int) -> tuple[str, int]:
    """The query and k: never a top-k list that cannot fail by default (docs/math.md §7), and a warning when the
    user chose one: with k ≥ the number of states every state is in the top k and Hit Rate@k is 1 for every
    mechanism.  --k left out: 3, lowered below the number of states (the data has at least 2)."""
    if args.query != "topk":
        return args.query, DEFAULT_K if args.k is None else args.k
    if args.k is None:
        k = informative_k(n_states) or 1
        if k != DEFAULT_K and not args.quiet:
            print(
                f"note: the data has only {n_states} state{'' if n_states == 1 else 's'}, so top-k uses k = {k}"
                f" instead of the default {DEFAULT_K}: with k = {min(DEFAULT_K, n_states)} every state would be in"
                " the top k and every mechanism would score 1 (give --k to choose)",
                file=sys.stderr,
            )
        return args.query, k
    why = trivial_topk(args.k, n_states)
    if why and not args.quiet:
        print(f"warning: {why}", file=sys.stderr)
    return args.query, args.k


def _columns(args: argparse.Namespace) -> dict[str, object]:
    return {
        "user": args.user,
        "time": args.time,
        "state": args.state,
        "group": args.group,
        "time_format": args.time_format,
        "drop_missing": args.drop_missing,
        "drop_duplicates": args.drop_duplicates,
    }


def _entry_secrets(text: str | None) -> Secrets | EventSecrets | None:
    """--secrets for a simulation: value pairs or events of each user's entries (not whole-population pairs)."""
    if not text:
        return None
    secrets = read_secrets(text)
    if not isinstance(secrets, (Secrets, EventSecrets)):
        raise ValueError("simulate protects each user's entries: give --secrets as value pairs, positions or events"
                         " (whole-population pairs are released with the Wasserstein mechanism's own tools)")
    return secrets


def _run_simulate(args: argparse.Namespace) -> int:
    if args.engine == "duckdb":
        windows = (args.releases,) if args.release_mode == "windows" else ()
        progress = None if args.quiet else print_progress
        data = load_stats(
            args.data, **_columns(args), memory_limit=args.memory_limit, windows=windows, progress=progress
        )
    else:
        data = load_sequences(args.data, **_columns(args))
    query, k = _query_and_k(args, data.n_states)
    result = simulate(
        data,
        query=query,
        k=k,
        mechanisms=args.mechanisms,
        eps_grid=args.eps,
        releases=args.releases,
        release_mode=args.release_mode,
        trials=args.trials,
        rng=args.seed,
        progress=None if args.quiet else _progress,
        smoothing=args.smoothing,
        topk_laplace=args.topk_laplace,
        secrets=_entry_secrets(args.secrets),
    )
    outputs = [(Path(args.out), lambda p: result.metrics.to_csv(p, index=False))]
    if args.ledger:
        outputs.append((Path(args.ledger), lambda p: result.ledger.to_csv(p, index=False)))
    if args.settings:
        text = json.dumps(result.settings, indent=2, ensure_ascii=False, allow_nan=False)
        outputs.append((Path(args.settings), lambda p: p.write_text(text + "\n", encoding="utf-8")))
    for path, write in outputs:
        try:
            write(path)
        except OSError as exc:
            raise ValueError(f"cannot write '{path}': {exc.strerror or exc}") from None
    if not args.quiet:
        if args.secrets:
            print(f"protecting {result.settings['protects']}")
        metric = f"HitRate@{k}" if query == "topk" else "L1"
        print(f"{metric} (mean over {args.trials} trials), release 1:")
        print(result.table(metric).round(4).to_string())
        extra = f" and the ledger to {args.ledger}" if args.ledger else ""
        print(f"wrote {len(result.metrics)} rows to {args.out}{extra}")
    return 0


def _run_fit(args: argparse.Namespace) -> int:
    stats = load_stats(
        args.data, **_columns(args), memory_limit=args.memory_limit, progress=None if args.quiet else print_progress
    )
    prior = fit_markov_chain(stats, smoothing=args.smoothing)
    outputs = []
    if args.out:
        frame = pd.DataFrame(prior.transition, index=list(prior.labels), columns=list(prior.labels))
        outputs.append((Path(args.out), lambda p: frame.to_csv(p, index_label="from \\ to")))
    if args.stats:
        text = json.dumps(stats_json(stats), indent=1, ensure_ascii=False)
        outputs.append((Path(args.stats), lambda p: p.write_text(text + "\n", encoding="utf-8")))
    for path, write in outputs:
        try:
            write(path)
        except OSError as exc:
            raise ValueError(f"cannot write '{path}': {exc.strerror or exc}") from None
    if not args.quiet:
        for key, value in stats.summary().items():
            print(f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}")
        if stats.drop_missing or stats.drop_duplicates:
            print(f"rows read: {stats.rows_read:,}; dropped: {stats.missing if stats.drop_missing else 0:,} with an"
                  f" empty cell, {stats.duplicates if stats.drop_duplicates else 0:,} repeated")
        initial = "stationary" if prior.stationary_initial else "first states"
        print(f"fitted chain: {prior.n_states} states, length T = {prior.length}, initial distribution: {initial}")
        print("most frequent transitions: " + ", ".join(_top_transitions(stats)))
        if outputs:
            print("wrote " + " and ".join(str(path) for path, _ in outputs))
    return 0


def _top_transitions(stats: SequenceStats, n: int = 5) -> list[str]:
    flat = stats.transitions.ravel()
    top = np.argsort(flat, kind="stable")[::-1][:n]
    k = stats.n_states
    return [f"{stats.states[i // k]} → {stats.states[i % k]} ({flat[i]:,})" for i in top]


def stats_json(stats: SequenceStats) -> dict[str, object]:
    """Every count of ``stats`` as plain JSON values (labels, matrices as nested lists)."""
    return {
        "summary": stats.summary(),
        "states": list(stats.states),
        "groups": None if stats.groups is None else list(stats.groups),
        "transitions": stats.transitions.tolist(),
        "first_states": stats.first_states.tolist(),
        "lengths": dict(zip(map(str, stats.length_values.tolist()), stats.length_users.tolist())),
        "group_counts": stats.group_counts.tolist(),
        "time_min": stats.time_min,
        "time_max": stats.time_max,
        "time_unit": stats.time_unit,
        "rows_read": stats.rows_read,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "prior":
            return _run_fit(args)
        if args.command == "synth":
            return run_synth(args)
        return run_ladder(args) if args.command == "ladder" else _run_simulate(args)
    except ValueError as exc:  # includes DataError
        print(f"error: {in_cli_words(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT


# the library's keywords in its messages, and the options that set them here
_KEYWORDS = re.compile(r"\b(user|time|state|group|time_format)=(…|'[^']*')")


def in_cli_words(message: str) -> str:
    """A library message in this command's words: ``user=…`` is ``--user …``, ``time_format='%d/%m/%Y'`` is
    ``--time-format '%d/%m/%Y'``."""
    return _KEYWORDS.sub(
        lambda m: f"--{m.group(1).replace('_', '-')}" + ("" if m.group(2) == "…" else f" {m.group(2)}"), message
    ).replace("Pick the right columns,", "Pick the right columns with --user, --time, --state (and --group),")


if __name__ == "__main__":
    sys.exit(main())
