"""How tight is a bound? Attack (lower bound) ≤ exact truth ≤ reported bound (docs/math.md §9–§11).

- :mod:`.releases`: the releases by name (law, exact enumeration, attack, their budgets);
- :mod:`.ladder`: one prior's ladder of lower bound, truth and every stream bound.
"""

from .ladder import LadderRow, ladder_order, ladder_row
from .releases import RELEASES, ReleaseSpec, release_spec, stream_releases

__all__ = ["LadderRow", "RELEASES", "ReleaseSpec", "ladder_order", "ladder_row", "release_spec", "stream_releases"]
