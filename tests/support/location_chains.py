"""Location priors: walks on a ring, a road (a line) and a city grid, whose powers P^d have structural zeros.

Shared by the engine's tests (against the unpruned computation) and ``benchmarks/bench_goals.py``.
"""

from __future__ import annotations

import numpy as np


def ring(rng: np.random.Generator, k: int, moves: int = 3) -> np.ndarray:
    """A walk on a ring of k places moving at most ``moves`` places per step (a road): P^d has zeros below ~k/6."""
    m = np.zeros((k, k))
    for i in range(k):
        for s in range(-moves, moves + 1):
            m[i, (i + s) % k] = rng.random() + 0.1
    return m / m.sum(axis=1, keepdims=True)


def banded(rng: np.random.Generator, k: int, width: int = 2) -> np.ndarray:
    """A walk on a line of k places moving at most ``width`` places per step (no wrap-around): P^d has zeros
    below ~k/width, and the two ends mix slowest."""
    m = np.zeros((k, k))
    for i in range(k):
        lo, hi = max(0, i - width), min(k, i + width + 1)
        m[i, lo:hi] = rng.random(hi - lo) + 0.1
    return m / m.sum(axis=1, keepdims=True)


def grid(rng: np.random.Generator, k: int) -> np.ndarray:
    """A random walk on a √k × √k city grid: stay or move to a neighbour (k must be a square)."""
    side = int(round(k**0.5))
    m = np.zeros((k, k))
    for r in range(side):
        for c in range(side):
            i = r * side + c
            m[i, i] = rng.random() + 0.1
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= r + dr < side and 0 <= c + dc < side:
                    m[i, (r + dr) * side + c + dc] = rng.random() + 0.1
    return m / m.sum(axis=1, keepdims=True)
