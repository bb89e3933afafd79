"""Fitting a Markov chain prior from users' sequences, and train/test splits (docs/math.md §6).

The prior θ of docs/math.md §1 is fitted as in [C] §7.1.4 and Appendix D.2: count the
transitions between consecutive entries of each user (in time order), normalise each row,
then smooth with τ: every zero entry of a row becomes τ and the added mass is taken from the
row's non-zero entries in proportion to their size.  Rows of states that are never left
(no outgoing transition observed) become uniform.

Releases are evaluated on data the prior was not fitted on: :func:`split_by_time` keeps the
first part of every user's sequence for training, :func:`split_by_users` holds out whole
users, stratified by group.

Fitting needs only counts: :func:`fit_markov_chain` takes :class:`~puffer_core.data.Sequences`
or the :class:`~puffer_core.data.stats.SequenceStats` of data of any size
(:func:`puffer_core.data.engines.load_stats`); the splits need the entries themselves (Sequences).
"""

from __future__ import annotations

import numpy as np

from ..data.sequences import Sequences
from ..data.stats import SequenceStats
from ..errors import DataError
from ..validation import InvalidParameter, check_number, check_probability, check_whole
from .models import MarkovChainPrior, stationary_distribution

DEFAULT_SMOOTHING = 1e-5
SPLIT_MODES = ("per_user", "global")


def transition_counts(data: Sequences | SequenceStats) -> np.ndarray:
    """K×K matrix: entry (i, j) counts how often a user's entry in state i is followed by j.

    Only consecutive entries of the same user (in time order) are pairs (docs/math.md §6).
    """
    if isinstance(data, SequenceStats):
        return data.transitions
    if not isinstance(data, Sequences):
        raise InvalidParameter(f"transition_counts takes Sequences or SequenceStats; got {type(data).__name__}")
    k = data.n_states
    same = data.same_user_as_next
    source = data.codes[:-1][same]
    target = data.codes[1:][same]
    return np.bincount(source * k + target, minlength=k * k).reshape(k, k)


def normalise_counts(counts: np.ndarray) -> np.ndarray:
    """Row-normalise a K×K count matrix; rows with no counts become uniform (docs/math.md §6)."""
    matrix = np.asarray(counts, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"the count matrix must be square; got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ValueError("counts must be finite and non-negative")
    totals = matrix.sum(axis=1, keepdims=True)
    k = matrix.shape[0]
    safe = np.where(totals > 0, totals, 1.0)
    return np.where(totals > 0, matrix / safe, 1.0 / k)


def smooth_transition(transition: np.ndarray, smoothing: float = DEFAULT_SMOOTHING) -> np.ndarray:
    """Smoothing of docs/math.md §6 / [C] Appendix D.2, row by row.

    With ``z`` zero entries in a row, each zero becomes ``τ`` and each non-zero ``p`` becomes
    ``p · (1 − z·τ)``, so the row still sums to 1.  Needs ``0 ≤ τ`` and ``(K−1)·τ < 1`` so
    every entry stays positive.
    """
    matrix = np.asarray(transition, dtype=float)
    tau = _check_smoothing(smoothing, matrix.shape[0])
    zero = matrix == 0
    n_zero = zero.sum(axis=1, keepdims=True)
    return np.where(zero, tau, matrix * (1.0 - n_zero * tau))


def _check_smoothing(smoothing: float, k: int) -> float:
    tau = check_number("smoothing", smoothing)
    if tau < 0:
        raise ValueError(f"smoothing must be a finite number ≥ 0; got {smoothing}")
    if (k - 1) * tau >= 1:
        raise ValueError(
            f"smoothing {tau:g} is too large for {k} states: a row with {k - 1} zeros would receive"
            f" {(k - 1) * tau:g} ≥ 1 of added mass; use a value below {1 / (k - 1):g}"
        )
    return tau


def first_state_distribution(data: Sequences | SequenceStats) -> np.ndarray:
    """The empirical distribution of users' first states (their earliest entries)."""
    if isinstance(data, SequenceStats):
        return data.first_states / data.n_users
    first = data.codes[data.offsets[:-1]]
    return np.bincount(first, minlength=data.n_states) / data.n_users


def fit_markov_chain(
    data: Sequences | SequenceStats, smoothing: float = DEFAULT_SMOOTHING, length: int | None = None
) -> MarkovChainPrior:
    """Fit the Markov chain prior θ = (initial, P) of docs/math.md §1 as described in §6.

    ``P`` is the smoothed, row-normalised transition count matrix; ``labels`` are the state
    labels; ``length`` defaults to the longest user sequence.  With ``smoothing > 0`` every
    entry of ``P`` is positive, so the stationary distribution is unique and is the initial
    distribution.  With ``smoothing = 0`` the fitted chain may have several closed groups of
    states; the initial distribution is then the empirical distribution of users' first
    states (still a valid prior, docs/math.md §1), and ``stationary_initial`` is False.
    ``data``: Sequences, or their :class:`~puffer_core.data.stats.SequenceStats` (the same prior).
    """
    if not isinstance(data, (Sequences, SequenceStats)):
        raise TypeError(
            f"data must be Sequences (see load_sequences) or SequenceStats (see load_stats); got {type(data).__name__}"
        )
    if length is None:
        length = data.max_length
    else:
        length = check_whole("length", length)
    tau = _check_smoothing(smoothing, data.n_states)
    transition = normalise_counts(transition_counts(data))
    if tau > 0:
        transition = smooth_transition(transition, tau)
    try:
        stationary_distribution(transition)
        initial = None
    except ValueError:
        initial = first_state_distribution(data)
    return MarkovChainPrior(transition, initial, int(length), data.states)


def split_by_time(data: Sequences, train_fraction: float = 0.5, mode: str = "per_user") -> tuple[Sequences, Sequences]:
    """Split entries by time into (train, test), docs/math.md §6.

    ``mode="per_user"`` (default): each user's first ``⌊train_fraction · T_u⌋`` entries (in
    time order) are training data and the rest are test data; a user with
    ``⌊train_fraction · T_u⌋ = 0`` (a very short sequence) is in the test part only.
    ``mode="global"``: one time cut for everybody at ``t_min + train_fraction·(t_max − t_min)``
    over the whole time span (as [C] §7.1.4 does for check-ins: first 400 of 500 days);
    entries strictly before the cut are training data.

    Transitions across the cut are in neither part.  Raises DataError if a part is empty.
    """
    fraction = check_probability("train_fraction", train_fraction, open_interval=True)
    if mode == "per_user":
        position = np.arange(data.n_entries) - data.offsets[:-1][data.user_index]
        n_train = np.floor(fraction * data.lengths).astype(np.int64)
        train = position < n_train[data.user_index]
    elif mode == "global":
        key = data.time_key.astype(float)
        cut = key.min() + fraction * (key.max() - key.min())
        train = key < cut
    else:
        raise ValueError(f"mode must be one of {SPLIT_MODES}; got {mode!r}")
    if not train.any():
        raise DataError(
            f"the training part is empty: with train_fraction={fraction:g} ({mode}) no entry falls before"
            f" the cut (longest sequence: {data.max_length} entries); use a larger fraction"
        )
    if train.all():
        raise DataError(
            f"the test part is empty: with train_fraction={fraction:g} ({mode}) every entry falls before"
            " the cut; use a smaller fraction"
        )
    return data.subset(train), data.subset(~train)


def split_by_users(
    data: Sequences,
    test_fraction: float = 0.2,
    rng: np.random.Generator | int | None = None,
    by_group: bool = True,
    test_users_per_group: int | None = None,
) -> tuple[Sequences, Sequences]:
    """Hold out whole users for testing, stratified by group; returns (train, test), docs/math.md §6.

    Strata are the users' groups (:attr:`Sequences.user_groups`, a user's most frequent
    group) when ``by_group`` and the data have a group column, else all users form one
    stratum.  A stratum of ``n ≥ 2`` users gives ``round(test_fraction · n)`` users to the
    test part, clipped to ``[1, n − 1]``; ``test_users_per_group`` fixes that number instead
    (clipped to ``n − 1``; [C] §7.1.4 holds out 8 participants per age group).  A stratum of
    one user stays in training.  ``rng`` is a ``numpy.random.Generator`` or a seed; None
    draws fresh entropy.  Raises DataError when no user can be held out.
    """
    fraction = check_probability("test_fraction", test_fraction, open_interval=True)
    if test_users_per_group is not None:
        test_users_per_group = check_whole("test_users_per_group", test_users_per_group)
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if by_group and data.user_groups is not None:
        stratum = data.user_groups
        n_strata = len(data.groups or ())
    else:
        stratum = np.zeros(data.n_users, dtype=np.int64)
        n_strata = 1
    sizes = np.bincount(stratum, minlength=n_strata)
    if test_users_per_group is None:
        wanted = np.clip(np.rint(fraction * sizes), 1, None)
    else:
        wanted = np.full(n_strata, test_users_per_group)
    n_test = np.where(sizes >= 2, np.minimum(wanted, sizes - 1), 0).astype(np.int64)
    if n_test.sum() == 0:
        raise DataError(
            f"no user can be held out: every stratum has a single user ({data.n_users} users in all);"
            " split by time instead, or use by_group=False"
        )
    order = np.lexsort((generator.random(data.n_users), stratum))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.empty(data.n_users, dtype=np.int64)
    rank[order] = np.arange(data.n_users) - starts[stratum[order]]
    test_user = rank < n_test[stratum]
    test_entry = test_user[data.user_index]
    return data.subset(~test_entry), data.subset(test_entry)
