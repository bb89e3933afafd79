"""Seeded attacks: empirical lower bounds on the true leakage at realistic sizes (docs/math.md §11).

- :mod:`.attacker`: the attacker's log-odds on a stream (forward–backward) or a histogram, and a search over outputs.
"""

from .attacker import Attack, attack_histogram, attack_stream, stream_log_likelihoods

__all__ = [
    "Attack",
    "attack_histogram",
    "attack_stream",
    "stream_log_likelihoods",
]
