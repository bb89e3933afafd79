"""What is secret: Pufferfish's S and Q (docs/math.md §1, §16).

A Pufferfish guarantee is stated for a triple (S, Q, Θ): the secrets, the pairs of secrets that must stay
indistinguishable, and the attacker's beliefs.  Three kinds of secrets:

- :class:`Secrets`: value pairs of entries — which entries are protected (positions, or a
  :class:`TimeRule` on the time column) and which pairs of their values must stay indistinguishable.  The
  default, :data:`ALL_SECRETS`, is every entry and every pair of distinct states — the most pessimistic
  choice, and what every result meant before secrets could be chosen;
- :class:`EventSecrets`: "in a state of A at some time in a window" against "never in A during it";
- :class:`PopulationSecrets`: which of two candidate priors generated the whole population's data.

Each says itself in one plain sentence (``.sentence(labels, eps, prior_words)``), as a compact text that
:func:`read_secrets` reads back (``.to_text()``, for links) and as Python (``.source()``, for scripts).
"""

from .codec import read_secrets
from .events import EventSecrets
from .population import PopulationSecrets
from .rules import TimeRule
from .values import ALL_SECRETS, PAIR_KINDS, Secrets, as_secrets
from .words import AnySecrets, protected_words, secrets_sentence

__all__ = [
    "ALL_SECRETS",
    "PAIR_KINDS",
    "AnySecrets",
    "EventSecrets",
    "PopulationSecrets",
    "Secrets",
    "TimeRule",
    "as_secrets",
    "protected_words",
    "read_secrets",
    "secrets_sentence",
]
