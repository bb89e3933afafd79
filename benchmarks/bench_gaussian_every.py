"""The Gaussian-process curve over every coordinate against [C]'s centre alone (docs/math.md §2.3, §16).

Run: python benchmarks/bench_gaussian_every.py [--sizes 50,200,724] [--kernels squared_exponential:3]

For each n and kernel it prints the CPU seconds (user + sys of this process) of the centre's curve alone
(``Secrets(positions=(⌈n/2⌉ − 1,))``, what the default computed before every coordinate was protected) and of
the default curve (every coordinate), the default's estimate (``WorkEstimate.seconds``, computed before the
work; the rule: never below half the measured time), how many laws' spreads were evaluated after the pruning
of dominated ones (against every coordinate's and order's), and the largest gap a_every(b) − a_centre(b).
The machine's load (1-minute average) is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import puffer_core.engine.gaussian as gp  # noqa: E402
from puffer_core import GaussianProcessPrior, influence_curve  # noqa: E402
from puffer_core.secrets import Secrets  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,724")
    parser.add_argument("--kernels", default="squared_exponential:3,squared_exponential:20,exponential:3")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    print(f"{'n':>5} {'kernel':>20} {'ℓ':>4} {'centre s':>9} {'every s':>8} {'estimate s':>10} {'laws':>13}"
          f" {'max gap':>9}")
    counted = [0]
    spread = gp._spread_upper

    def counting(mu: np.ndarray, sigma: np.ndarray, prior: GaussianProcessPrior) -> np.ndarray:
        counted[0] += mu.size
        return spread(mu, sigma, prior)

    gp._spread_upper = counting
    for size in (int(s) for s in args.sizes.split(",")):
        for item in args.kernels.split(","):
            kernel, ell = item.split(":")
            prior = GaussianProcessPrior(size, float(ell), kernel=kernel)
            clock = _cpu()
            centre = influence_curve(prior, secrets=Secrets(positions=((size + 1) // 2 - 1,))).a
            centre_s = _cpu() - clock
            estimate = gp.gaussian_estimate(prior)
            if not estimate.fits:
                print(f"{size:>5} {kernel:>20} {float(ell):>4g} {centre_s:>9.2f}  refused up front:"
                      f" {estimate.describe()} (use n ≤ {estimate.largest['n']:,})")
                continue
            counted[0] = 0
            clock = _cpu()
            every = influence_curve(prior).a
            every_s = _cpu() - clock
            coords = (size + 1) // 2
            finite = np.isfinite(every) & np.isfinite(centre)
            gap = float(np.max(every[finite] - centre[finite], initial=0.0))
            print(f"{size:>5} {kernel:>20} {float(ell):>4g} {centre_s:>9.2f} {every_s:>8.2f} {estimate.seconds:>10.1f}"
                  f" {counted[0]:>6}/{int(1.5 * coords * (size - 1)):<6} {gap:>9.3g}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
