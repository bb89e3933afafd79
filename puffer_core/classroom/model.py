"""Finite Pufferfish models and the exact checker (docs/math.md §1, §9; [C] Definition "Pufferfish").

A :class:`FiniteModel` is everything the Pufferfish definition needs, spelled out in full for
a finite world: the possible datasets, one or more priors θ over them (the set Θ), the
secret pairs to protect, and the mechanism as a table of output probabilities per dataset.
:func:`check` computes the exact ε_puffer of ``k`` independent releases:

    ε_puffer(k) = max over θ ∈ Θ, ordered secret pairs (s_i, s_j) with Pr[s_i|θ], Pr[s_j|θ] > 0,
                  and output tuples ω = (ω_1..ω_k) of
                  log Pr[ω | s_i, θ] − log Pr[ω | s_j, θ],
    Pr[ω | s, θ] = Σ_D Pr[D | s, θ] · Π_l Pr[M(D) = ω_l]          (outputs are independent given D)

An output that is possible under one secret and impossible under the other gives +inf; an
output impossible under both says nothing and is skipped.  k independent runs are
exchangeable, so only the multiset of outputs matters: the checker enumerates multisets that
some dataset can produce, which is exact and far smaller than all k-tuples.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ..audit.exact import all_sequences, mechanism_matrix, sequence_probabilities
from ..priors.models import MarkovChainPrior, as_theta
from ..validation import check_distribution, check_whole

MAX_DATASETS = 200_000
MAX_JOINT_CELLS = 40_000_000
ZERO_EPS = 1e-12


@dataclass(frozen=True)
class SecretPair:
    """A discriminative pair (s_i, s_j) of mutually exclusive statements about the dataset.

    ``first`` and ``second`` are predicates on a dataset; the labels are what a student reads
    ("X_2 = 1", "Bob is in the data").  [C] §2, docs/math.md §1.
    """

    first_label: str
    first: Callable[[Hashable], bool]
    second_label: str
    second: Callable[[Hashable], bool]

    @classmethod
    def complement(cls, label: str, holds: Callable[[Hashable], bool]) -> SecretPair:
        """The pair (s, ¬s): "label" against "not label"."""
        return cls(label, holds, f"not ({label})", lambda d: not holds(d))

    @property
    def label(self) -> str:
        return f"{self.first_label} vs {self.second_label}"


def _prior_vectors(priors: object, index: Mapping[Hashable, int], n: int) -> list[np.ndarray]:
    if isinstance(priors, Mapping):
        priors = [priors]
    if isinstance(priors, np.ndarray):
        arr = np.atleast_2d(priors.astype(float))
        if arr.shape[1] != n:
            raise ValueError(f"each prior needs {n} probabilities (one per dataset); got {arr.shape[1]}")
        return [check_distribution(row.copy(), f"prior {i + 1}") for i, row in enumerate(arr)]
    if not isinstance(priors, Sequence) or len(priors) == 0:
        raise ValueError("give at least one prior: a mapping from dataset to probability")
    if not any(isinstance(p, (Mapping, Sequence, np.ndarray)) for p in priors):
        priors = [priors]  # one flat list of probabilities is one prior
    out = []
    for i, prior in enumerate(priors):
        vec = np.zeros(n)
        if isinstance(prior, Mapping):
            for d, p in prior.items():
                if d not in index:
                    raise ValueError(
                        f"prior {i + 1} gives probability to {d!r}, which is not one of the datasets"
                    )
                vec[index[d]] = float(p)
        else:
            row = np.asarray(prior, dtype=float).reshape(-1)
            if row.size != n:
                raise ValueError(f"prior {i + 1} needs {n} probabilities (one per dataset); got {row.size}")
            vec = row.copy()
        out.append(check_distribution(vec, f"prior {i + 1}"))
    return out


def _mechanism_matrix(
    mechanism: object, datasets: Sequence[Hashable], outputs: Sequence[Hashable] | None
) -> tuple[np.ndarray, tuple[Hashable, ...]]:
    n = len(datasets)
    if isinstance(mechanism, (Mapping, Callable)) and not isinstance(mechanism, np.ndarray):
        rows: list[Mapping[Hashable, float]] = []
        for d in datasets:
            if isinstance(mechanism, Mapping):
                if d not in mechanism:
                    raise ValueError(f"the mechanism gives no output probabilities for dataset {d!r}")
                row = mechanism[d]
            else:
                row = mechanism(d)
            if not isinstance(row, Mapping):
                raise ValueError(
                    f"the mechanism must give a mapping output → probability for each dataset; got {row!r}"
                )
            rows.append(row)
        labels: list[Hashable] = list(outputs) if outputs is not None else []
        pos = {o: i for i, o in enumerate(labels)}
        if len(pos) != len(labels):
            raise ValueError("output labels must be distinct")
        if outputs is None:
            for row in rows:
                for o in row:
                    if o not in pos:
                        pos[o] = len(labels)
                        labels.append(o)
        matrix = np.zeros((n, len(labels)))
        for r, (d, row) in enumerate(zip(datasets, rows)):
            for o, p in row.items():
                if o not in pos:
                    raise ValueError(f"dataset {d!r} has output {o!r}, which is not among the listed outputs")
                matrix[r, pos[o]] += float(p)
        out_labels = tuple(labels)
    else:
        try:
            matrix = np.array(mechanism, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                "the mechanism must be a table (datasets × outputs), a mapping"
                " dataset → {output: probability}, or a function returning such a mapping"
            ) from None
        if matrix.ndim != 2 or matrix.shape[0] != n:
            raise ValueError(
                f"the mechanism table needs one row per dataset ({n} rows); got shape {matrix.shape}"
            )
        out_labels = tuple(outputs) if outputs is not None else tuple(range(matrix.shape[1]))
        if len(out_labels) != matrix.shape[1]:
            raise ValueError(f"{len(out_labels)} output labels for {matrix.shape[1]} output columns")
        if len(set(out_labels)) != len(out_labels):
            raise ValueError("output labels must be distinct")
    for r, d in enumerate(datasets):
        check_distribution(matrix[r], f"the output probabilities of dataset {d!r}")
    return matrix, out_labels


@dataclass(frozen=True, eq=False)
class FiniteModel:
    """A Pufferfish instantiation over finitely many datasets (docs/math.md §1, §9).

    ``datasets``: any hashable objects.  ``priors``: one mapping dataset → probability, a list
    of them (the set Θ), or an array (priors × datasets).  ``secret_pairs``: :class:`SecretPair`
    objects.  ``mechanism``: a table (datasets × outputs), a mapping dataset → {output: prob},
    or a function dataset → {output: prob}.
    """

    datasets: tuple[Hashable, ...]
    priors: np.ndarray
    secret_pairs: tuple[SecretPair, ...]
    mechanism: np.ndarray
    outputs: tuple[Hashable, ...]
    name: str
    prior_labels: tuple[str, ...]
    masks: np.ndarray

    def __init__(
        self,
        datasets: Iterable[Hashable],
        priors: object,
        secret_pairs: Iterable[SecretPair],
        mechanism: object,
        outputs: Sequence[Hashable] | None = None,
        name: str = "",
        prior_labels: Sequence[str] | None = None,
    ) -> None:
        data = tuple(datasets)
        if len(data) < 2:
            raise ValueError("a model needs at least 2 datasets; with one there is nothing to hide")
        if len(data) > MAX_DATASETS:
            raise ValueError(f"{len(data)} datasets is over the limit of {MAX_DATASETS}")
        try:
            index = {d: i for i, d in enumerate(data)}
        except TypeError:
            raise ValueError("datasets must be hashable (use tuples, not lists)") from None
        if len(index) != len(data):
            raise ValueError("the datasets must be distinct")
        prior_vecs = _prior_vectors(priors, index, len(data))
        pairs = tuple(secret_pairs)
        if not pairs:
            raise ValueError("give at least one secret pair to protect")
        masks = np.zeros((len(pairs), 2, len(data)), dtype=bool)
        for k, pair in enumerate(pairs):
            if not isinstance(pair, SecretPair):
                raise ValueError(f"secret pair {k + 1} must be a SecretPair; got {type(pair).__name__}")
            for r, d in enumerate(data):
                a, b = bool(pair.first(d)), bool(pair.second(d))
                if a and b:
                    raise ValueError(
                        f"'{pair.first_label}' and '{pair.second_label}' are both true for dataset {d!r};"
                        " the two secrets of a pair must exclude each other"
                    )
                masks[k, 0, r], masks[k, 1, r] = a, b
        matrix, out_labels = _mechanism_matrix(mechanism, data, outputs)
        labels = (
            tuple(str(x) for x in prior_labels)
            if prior_labels is not None
            else tuple(f"prior {i + 1}" for i in range(len(prior_vecs)))
        )
        if len(labels) != len(prior_vecs):
            raise ValueError(f"{len(labels)} prior labels for {len(prior_vecs)} priors")
        prior_arr = np.vstack(prior_vecs)
        for arr in (prior_arr, matrix, masks):
            arr.setflags(write=False)
        object.__setattr__(self, "datasets", data)
        object.__setattr__(self, "priors", prior_arr)
        object.__setattr__(self, "secret_pairs", pairs)
        object.__setattr__(self, "mechanism", matrix)
        object.__setattr__(self, "outputs", out_labels)
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "prior_labels", labels)
        object.__setattr__(self, "masks", masks)

    @property
    def n_datasets(self) -> int:
        return len(self.datasets)

    def index_of(self, dataset: Hashable) -> int:
        """Position of ``dataset`` in :attr:`datasets` (ValueError if it is not one of them)."""
        try:
            return self.datasets.index(dataset)
        except ValueError:
            raise ValueError(f"{dataset!r} is not one of this model's datasets") from None

    def output_distribution(self, dataset: Hashable) -> dict[Hashable, float]:
        """Pr[M(dataset) = ω] for every output ω with positive probability."""
        row = self.mechanism[self.index_of(dataset)]
        return {o: float(p) for o, p in zip(self.outputs, row) if p > 0}

    def restricted_to(self, pair_indices: Iterable[int]) -> FiniteModel:
        """The same model protecting only the listed secret pairs (0-based indices)."""
        chosen = [self.secret_pairs[int(i)] for i in pair_indices]
        return FiniteModel(
            self.datasets, self.priors, chosen, self.mechanism, self.outputs, self.name, self.prior_labels
        )

    def __repr__(self) -> str:
        return (
            f"FiniteModel({self.name or 'unnamed'}: {self.n_datasets} datasets, {len(self.priors)} priors,"
            f" {len(self.secret_pairs)} secret pairs, {len(self.outputs)} outputs)"
        )


@dataclass(frozen=True)
class LeakageReport:
    """The exact ε_puffer of ``releases`` independent runs and where it is attained.

    ``outputs`` is the worst output tuple (one entry per release; k runs are exchangeable, so
    it is listed in the model's output order).  ``numerator``/``denominator`` name the secret
    whose probability is on top/bottom of the worst ratio, with those two probabilities.
    ``pair`` is None only when no secret pair has positive probability under any prior.
    """

    eps: float
    releases: int
    pair: SecretPair | None
    pair_index: int | None
    numerator: str | None
    denominator: str | None
    prior_index: int | None
    outputs: tuple[Hashable, ...]
    prob_numerator: float
    prob_denominator: float
    prior_label: str | None = None

    @property
    def output(self) -> Hashable:
        """The worst output (a single output for one release, the tuple for several)."""
        return self.outputs[0] if self.releases == 1 and self.outputs else self.outputs

    def explain(self) -> str:
        """One sentence a student can read."""
        if self.pair is None:
            return (
                "No secret pair has positive probability under any prior:"
                " there is nothing to protect (ε = 0)."
            )
        seen = ", ".join(repr(o) for o in self.outputs)
        factor = (
            "infinitely" if math.isinf(self.eps) else f"e^{self.eps:.4g} ≈ {math.exp(self.eps):.4g} times"
        )
        return (
            f"Seeing {seen} multiplies the odds of '{self.numerator}' against '{self.denominator}' "
            f"{factor} for an attacker with {self.prior_label or 'this prior'} "
            f"(Pr[output | {self.numerator}] = {self.prob_numerator:.4g}, "
            f"Pr[output | {self.denominator}] = {self.prob_denominator:.4g})."
        )


def _output_multisets(model: FiniteModel, releases: int) -> np.ndarray:
    """Sorted k-tuples of output indices that at least one dataset can produce (exact support)."""
    support = [tuple(np.flatnonzero(row > 0)) for row in model.mechanism]
    if releases == 1:
        return np.array(sorted(set().union(*support)), dtype=np.int64).reshape(-1, 1)
    estimate = sum(math.comb(len(s) + releases - 1, releases) for s in set(support))
    if estimate * model.n_datasets > MAX_JOINT_CELLS:
        raise ValueError(
            f"{releases} releases of this mechanism have too many joint outcomes to enumerate exactly"
            f" (about {estimate:,} output combinations × {model.n_datasets} datasets); use fewer releases"
            " or a smaller model"
        )
    combos: set[tuple[int, ...]] = set()
    for s in set(support):
        combos.update(itertools.combinations_with_replacement(s, releases))
    return np.array(sorted(combos), dtype=np.int64)


def joint_log_likelihood(model: FiniteModel, releases: int) -> tuple[np.ndarray, np.ndarray]:
    """(tuples, L): every possible output multiset of ``releases`` runs and log Pr[tuple | D].

    ``tuples`` has shape (N, releases) of output indices; ``L`` has shape (N, datasets) with
    L[c, D] = Σ_l log Pr[M(D) = ω_l] (−inf when D cannot produce the tuple).
    """
    check_whole("releases", releases)
    tuples = _output_multisets(model, releases)
    with np.errstate(divide="ignore"):
        log_m = np.log(model.mechanism)
    loglik = np.zeros((tuples.shape[0], model.n_datasets))
    for col in range(releases):
        loglik += log_m[:, tuples[:, col]].T
    return tuples, loglik


def _log_secret_likelihood(loglik: np.ndarray, log_prior: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """log Pr[tuple | s, θ] for every tuple: logsumexp over D ∈ s of log Pr[D | s, θ] + L[·, D]."""
    cols = np.flatnonzero(mask & np.isfinite(log_prior))
    weights = log_prior[cols] - logsumexp(log_prior[cols])
    with np.errstate(divide="ignore"):
        return logsumexp(loglik[:, cols] + weights[None, :], axis=1)


def check(model: FiniteModel, releases: int = 1) -> LeakageReport:
    """Exact ε_puffer of ``releases`` independent runs of the model's mechanism (docs/math.md §1, §9).

    Maximises log Pr[ω | s_i, θ] / Pr[ω | s_j, θ] over priors, both orders of every secret
    pair with positive prior probability, and every output tuple.  +inf when some output is
    possible under one secret and impossible under the other.
    """
    releases = check_whole("releases", releases)
    tuples, loglik = joint_log_likelihood(model, releases)
    with np.errstate(divide="ignore"):
        log_priors = np.log(model.priors)
    best = -math.inf
    found: tuple | None = None
    for p, log_prior in enumerate(log_priors):
        positive = model.priors[p] > 0
        for k in range(len(model.secret_pairs)):
            m_i, m_j = model.masks[k, 0] & positive, model.masks[k, 1] & positive
            if not m_i.any() or not m_j.any():
                continue
            lp = (
                _log_secret_likelihood(loglik, log_prior, m_i),
                _log_secret_likelihood(loglik, log_prior, m_j),
            )
            for top in (0, 1):
                num, den = lp[top], lp[1 - top]
                ratio = np.where(num > -np.inf, num - den, -np.inf)
                c = int(np.argmax(ratio))
                if ratio[c] > best:
                    best = float(ratio[c])
                    found = (p, k, top, c, float(np.exp(num[c])), float(np.exp(den[c])))
    if found is None:
        return LeakageReport(0.0, releases, None, None, None, None, None, (), 0.0, 0.0)
    p, k, top, c, p_num, p_den = found
    pair = model.secret_pairs[k]
    labels = (pair.first_label, pair.second_label)
    eps = 0.0 if best < ZERO_EPS else best
    return LeakageReport(
        eps=eps,
        releases=releases,
        pair=pair,
        pair_index=k,
        numerator=labels[top],
        denominator=labels[1 - top],
        prior_index=p,
        outputs=tuple(model.outputs[i] for i in tuples[c]),
        prob_numerator=p_num,
        prob_denominator=p_den,
        prior_label=model.prior_labels[p],
    )


def leakage_by_runs(model: FiniteModel, max_releases: int) -> list[float]:
    """``check(model, k).eps`` for k = 1..max_releases (docs/math.md §8, §9).

    More runs never leak less (the attacker can ignore a run), so once the leakage is +inf the
    later values are +inf without being enumerated.
    """
    out: list[float] = []
    for k in range(1, check_whole("max_releases", max_releases) + 1):
        out.append(check(model, k).eps)
        if math.isinf(out[-1]):
            return out + [math.inf] * (max_releases - k)
    return out


def model_from_chain(
    priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    mechanism: Callable[[np.ndarray], object],
    outputs: Sequence[Hashable] | None = None,
    name: str = "Markov chain",
) -> FiniteModel:
    """Enumerate a short Markov chain into a :class:`FiniteModel` (docs/math.md §1, §9).

    Datasets are all K^T state sequences (tuples of ints); each prior gives a sequence the
    probability init[x_1]·Π P[x_t, x_t+1].  Secrets are "X_t = x" vs "X_t = x'" for every
    entry t (1-based in the labels) and distinct states x < x' (the checker tries both orders).
    ``mechanism`` maps a sequence (numpy int array of length T) to a probability vector over
    finitely many outputs, as for :func:`puffer_core.audit.exact_leakage`.
    """
    chain_list = as_theta(priors, "model_from_chain", same_length=True)
    k, length = chain_list.n_states, chain_list.max_length
    if k**length > MAX_DATASETS:
        raise ValueError(
            f"{k}^{length} = {k**length:,} sequences is too many to enumerate; use a shorter chain"
            f" (at most {MAX_DATASETS:,} sequences)"
        )
    seqs = all_sequences(k, length)
    prior_rows = []
    for c in chain_list:
        prob = sequence_probabilities(c, seqs)
        prior_rows.append(prob / prob.sum())
    matrix = mechanism_matrix(mechanism, seqs)
    labels = chain_list[0].labels
    pairs = []
    for t in range(length):
        for x in range(k):
            for xp in range(x + 1, k):
                pairs.append(
                    SecretPair(
                        f"X_{t + 1} = {labels[x]}",
                        lambda d, t=t, x=x: d[t] == x,
                        f"X_{t + 1} = {labels[xp]}",
                        lambda d, t=t, xp=xp: d[t] == xp,
                    )
                )
    datasets = [tuple(int(v) for v in s) for s in seqs]
    return FiniteModel(
        datasets,
        np.vstack(prior_rows),
        pairs,
        matrix,
        outputs=outputs,
        name=name,
    )
