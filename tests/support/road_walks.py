"""A dataset whose fitted chain is large: people walking on a road of K places (the tests of long work in the app)."""

from __future__ import annotations

import numpy as np


def road_walks(places: int = 300, users: int = 300, length: int = 400, seed: int = 18) -> bytes:
    """CSV (user, time, state) of ``users`` walks of ``length`` steps on a ring road of ``places`` places.

    Each step moves at most two places; the walks start at random places.  Fitted with the app's
    smoothing, most transitions were never seen and hold the smoothing: a K-state chain that mixes
    slowly, like the priors users upload (fitted 300-state priors).
    """
    rng = np.random.default_rng(seed)
    state = rng.integers(0, places, users)
    lines = ["user,time,state"]
    for t in range(length):
        lines.extend(f"u{u:04d},{t},p{s:03d}" for u, s in enumerate(state))
        state = (state + rng.integers(-2, 3, users)) % places
    return ("\n".join(lines) + "\n").encode()
