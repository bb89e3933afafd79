"""Whole-population secrets: which of two candidate priors generated everybody's data (docs/math.md §16;
attribute and distribution privacy, [AP] Zhang, Ohrimenko & Cummings, arXiv:2009.04013).

A pair is (θ₁, θ₂), two Markov chain priors of the same states: "the population's transition matrix is
P₁" against "it is P₂".  Every user's sequence is drawn from the same θ, so the secret is a property of
the whole data set, not of one entry; the release must not move the odds of θ₁ against θ₂ by more than
e^ε.  The noise comes from the Wasserstein mechanism between the query's laws under θ₁ and θ₂ over all
users' data (:func:`puffer_core.mechanisms.population.population_scale`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..priors.models import MarkovChainPrior, as_theta


@dataclass(frozen=True, eq=False)
class PopulationSecrets:
    """Pairs (θ₁, θ₂) of candidate priors for the whole population (docs/math.md §16).

    ``pairs``: one or more pairs of :class:`MarkovChainPrior` with the same states and length; ``names``:
    how sentences call the two priors of each pair (default "P₁" and "P₂", numbered per pair).
    """

    pairs: tuple[tuple[MarkovChainPrior, MarkovChainPrior], ...]
    names: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.pairs, (str, bytes)) or not isinstance(self.pairs, Iterable):
            raise TypeError(f"pairs must be a list of (θ₁, θ₂) pairs of MarkovChainPrior; got {self.pairs!r}")
        pairs = []
        for pair in self.pairs:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"each pair must be two MarkovChainPrior (θ₁, θ₂); got {pair!r}")
            try:
                first, second = as_theta(list(pair), "a whole-population pair")
            except ValueError as exc:
                if "same number of states" in str(exc):
                    raise ValueError("the two priors of a pair must describe the same states") from None
                raise TypeError(str(exc)) from None
            if first.length != second.length:
                raise ValueError(f"the two priors of a pair have lengths {first.length} and {second.length};"
                                 " give both the users' sequence length")
            pairs.append((first, second))
        if not pairs:
            raise ValueError("whole-population secrets need at least one pair (θ₁, θ₂)")
        k = pairs[0][0].n_states
        if any(p.n_states != k for pair in pairs for p in pair):
            raise ValueError("every prior of the pairs must have the same states")
        object.__setattr__(self, "pairs", tuple(pairs))
        if self.names:
            names = tuple((str(a), str(b)) for a, b in self.names)
            if len(names) != len(pairs):
                raise ValueError(f"{len(names)} pairs of names for {len(pairs)} pairs of priors")
        elif len(pairs) == 1:
            names = (("P₁", "P₂"),)
        else:
            names = tuple((f"P{2 * i + 1}", f"P{2 * i + 2}") for i in range(len(pairs)))
        object.__setattr__(self, "names", names)

    @property
    def n_states(self) -> int:
        return self.pairs[0][0].n_states

    def sentence(self, labels: Sequence[str] | None = None, eps: float | None = None,
                 prior_words: str | None = None) -> str:
        """What is protected, in one plain sentence."""
        from .words import secrets_sentence

        return secrets_sentence(self, labels, eps, prior_words)

    def words(self, labels: Sequence[str] | None = None) -> str:
        from .words import protected_words

        return protected_words(self, labels)

    def to_text(self) -> str:
        from .words import secrets_text

        return secrets_text(self)

    def source(self) -> str:
        from .words import secrets_source

        return secrets_source(self)
