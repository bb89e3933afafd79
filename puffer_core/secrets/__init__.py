"""What is secret: Pufferfish's S and Q (docs/math.md §1, §16).

A Pufferfish guarantee is stated for a triple (S, Q, Θ): the secrets, the pairs of secrets that must stay
indistinguishable, and the attacker's beliefs.  :class:`Secrets` is the first two for one user's sequence of
entries: which entries are protected (positions) and which pairs of values of each must stay
indistinguishable.  The default, :data:`ALL_SECRETS`, is every entry and every pair of distinct states — the
most pessimistic choice, and what every result meant before secrets could be chosen.
"""

from .values import ALL_SECRETS, PAIR_KINDS, Secrets, as_secrets

__all__ = ["ALL_SECRETS", "PAIR_KINDS", "Secrets", "as_secrets"]
