"""Exact leakage by enumeration: the ground truth every reported ε must stay above (docs/math.md §9).

- :mod:`.exact`: one mechanism with finitely many outputs over every sequence of a small chain;
- :mod:`.stream`: a stream of per-entry releases, or one user's histogram, on tiny chains.
"""

from .exact import LeakageReport, all_sequences, exact_leakage, leakage_report, mechanism_matrix, sequence_probabilities
from .stream import StreamAudit, exact_histogram_leakage, exact_stream_leakage

__all__ = [
    "LeakageReport",
    "StreamAudit",
    "all_sequences",
    "exact_histogram_leakage",
    "exact_leakage",
    "exact_stream_leakage",
    "leakage_report",
    "mechanism_matrix",
    "sequence_probabilities",
]
