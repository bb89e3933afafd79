"""The command line's ``ladder``: attack ≤ exact ≤ every bound for a chain, one line per release (docs/math.md §11).

    python -m puffer_core ladder --matrix "0.9,0.1;0.2,0.8" --length 6 --eps 0.5

The chain is given as a matrix (rows separated by ``;``) with its length, or fitted from a data file
(the columns as for ``simulate``).  Each line: the release, the attack's lower bound, the exact
leakage (or ``-`` when out of reach), every registered stream bound that applies, and whether the
order holds.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from ..data.readers import load_sequences
from ..priors.fitting import DEFAULT_SMOOTHING, fit_markov_chain
from ..priors.models import MarkovChainPrior
from ..secrets.codec import read_secrets
from ..secrets.values import Secrets
from ..stream.registry import STREAM_BOUNDS
from .ladder import ladder_row
from .releases import RELEASES


def add_ladder_command(commands: Any) -> None:
    """The ``ladder`` subcommand and its options."""
    ladder = commands.add_parser(
        "ladder",
        help="attack ≤ exact leakage ≤ every reported bound, for a chain and each release",
        description="How tight is each bound? A seeded attack and, for tiny chains, the exact leakage"
        " (docs/math.md §11).",
    )
    chain = ladder.add_argument_group("the chain (a matrix and a length, or data to fit)")
    chain.add_argument(
        "--matrix", default=None, help='transition matrix, rows separated by ";", e.g. "0.9,0.1;0.2,0.8"'
    )
    chain.add_argument("--length", type=int, default=None, help="entries per user T (with --matrix)")
    chain.add_argument("--data", default=None, metavar="FILE", help="CSV or Parquet file to fit the chain on")
    chain.add_argument("--user", default="user", help="user column (default: user)")
    chain.add_argument("--time", default="time", help="time column (default: time)")
    chain.add_argument("--state", default="state", help="state column (default: state)")
    release = ladder.add_argument_group("the release")
    release.add_argument("--release", choices=list(RELEASES), action="append", help="(repeatable; default: all)")
    release.add_argument("--eps", type=float, default=0.5, help="ε per step (a stream) or per entry (default 0.5)")
    release.add_argument("--k", type=int, default=1, help="top-k of the exponential release (default 1)")
    release.add_argument("--seed", type=int, default=0, help="the attack's seed (default 0)")
    release.add_argument("--draws", type=int, default=200, help="outputs drawn before the climb (default 200)")
    release.add_argument("--secrets", default="", metavar="TEXT",
                         help="what is secret, as the app's link writes it, e.g. \"p=sensitive;s=2;t=0-3\""
                              " (default: every pair of states at every entry; docs/math.md §16)")


def _chain(args: argparse.Namespace) -> MarkovChainPrior:
    if (args.matrix is None) == (args.data is None):
        raise ValueError("give the chain as --matrix with --length, or as --data to fit it on (one of the two)")
    if args.data is not None:
        data = load_sequences(args.data, user=args.user, time=args.time, state=args.state)
        return fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING)
    if args.length is None:
        raise ValueError("--matrix needs --length (the entries per user)")
    try:
        rows = [[float(x) for x in row.split(",")] for row in args.matrix.split(";")]
    except ValueError:
        raise ValueError(f'--matrix must be numbers, rows separated by ";"; got {args.matrix!r}') from None
    if len({len(row) for row in rows}) != 1 or len(rows) != len(rows[0]):
        raise ValueError(f"--matrix must be square (K rows of K numbers); got rows of {[len(r) for r in rows]}")
    return MarkovChainPrior(np.array(rows), None, args.length)


def _show(value: float | None) -> str:
    return "-" if value is None else ("inf" if math.isinf(value) else f"{value:.6g}")


def run_ladder(args: argparse.Namespace) -> int:
    prior = _chain(args)
    secrets = read_secrets(args.secrets)
    if not isinstance(secrets, Secrets):
        raise ValueError("the ladder attacks value pairs of entries: give --secrets as pairs and positions")
    names = list(args.release or RELEASES)
    if not secrets.is_all:
        print(f"# secrets: {secrets.words(None if prior.labels is None else list(prior.labels))}")
    header = ["release", "attack", "exact", *(STREAM_BOUNDS[n].short for n in STREAM_BOUNDS), "in order"]
    print("\t".join(header))
    for name in names:
        row = ladder_row(prior, name, args.eps, k=args.k, seed=args.seed, draws=args.draws, secrets=secrets)
        cells = [name, _show(row.lower), _show(row.exact), *(_show(v) for _, v in row.bounds), str(row.in_order)]
        print("\t".join(cells))
        for note in (row.attack_note, row.exact_note):
            if note:
                print(f"  note: {note}")
    return 0
