"""Utility of a released top-K ranking against the true counts (docs/math.md §7, [C] §7.1.5).

Every metric takes ``predicted``, the ranking a mechanism released (state indices, best
first; only the first ``k`` columns are used), and ``counts``, the true count of every state.
Both may be batched: ``predicted`` of shape (n_trials, ≥k) with ``counts`` of shape
(n_states,) shared by all trials or (n_trials, n_states) one row per trial.  The result has
one value per trial; a 1-D ``predicted`` (a single trial) gives a float.

Tie rule: states with equal true counts are interchangeable.  The reference ranking is the
states by count descending, ties broken by state index (:func:`true_ranking`), but a
prediction is never penalised for choosing among tied states: it is scored against the most
favourable true ranking that the counts allow.  Concretely, with ``c_1 ≥ c_2 ≥ …`` the sorted
true counts and ``c(i)`` the true count of state ``i``:

- Acc@k is 1 when ``c(predicted_k) = c_k`` (the k-th predicted state has the k-th largest
  count), else 0.  Without ties this is "the k-th predicted state is the true k-th state".
- Hit Rate@K counts the predicted states with ``c > c_K`` plus those with ``c = c_K``, the
  latter at most as many as there are slots with count ``c_K`` in the true top K; divided by K.
  E.g. counts (10, 5, 5, 5), K = 2: predicting (2, 3) scores 1/2, predicting (0, 3) scores 1.
- NDCG@K and the L1 count error depend on the predicted states only through their counts, so
  they are tie-aware as defined.  When every count in the true top K is 0, NDCG is 1.
"""

from __future__ import annotations

import numpy as np

from ..validation import as_numbers, check_whole

DEFAULT_TOPK = 3  # the k a top-k query starts from, when the data allow it (:func:`informative_k`)


def informative_k(n_states: int, k: int = DEFAULT_TOPK) -> int | None:
    """The k a top-k query should start from on data with ``n_states`` states: ``k``, lowered below ``n_states``.

    With k ≥ n_states every state is in the true top k and in the released one, so Hit Rate@k is 1 whatever
    the noise: a query that cannot fail compares nothing.  None when no k can fail (one state): ask for the
    histogram instead.
    """
    n_states = check_whole("n_states", n_states, minimum=1)
    return min(check_whole("k", k, minimum=1), n_states - 1) if n_states >= 2 else None


def trivial_topk(k: int, n_states: int) -> str:
    """Why a top-``k`` query on ``n_states`` states cannot fail, in a sentence ("" when it can)."""
    if k < n_states:
        return ""
    return (
        f"with k = {k} and {n_states} state{'' if n_states == 1 else 's'}, every state is in the top {k}: the"
        f" released list always holds the true one, so Hit Rate@{k} is 1 for every mechanism whatever the noise"
        + (f"; choose k below {n_states} to compare the mechanisms" if n_states >= 2 else "; publish the histogram")
    )


def true_ranking(counts: np.ndarray) -> np.ndarray:
    """States by true count descending, ties broken by lower state index first (docs/math.md §7).

    Accepts (n_states,) or (n_trials, n_states); returns indices of the same shape.
    """
    values = _as_counts(counts)
    return np.argsort(-values, axis=-1, kind="stable")


def _as_counts(counts: np.ndarray) -> np.ndarray:
    values = as_numbers(counts, "counts")
    if values.ndim not in (1, 2) or values.shape[-1] < 1:
        raise ValueError(f"counts must be a 1-D or 2-D array with one column per state; got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("counts must be finite and non-negative")
    return values


def _prepare(predicted: np.ndarray, counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(true counts of the predicted top k, the k largest true counts, single-trial flag)."""
    values = _as_counts(counts)
    ranking = as_numbers(predicted, "predicted")
    single = ranking.ndim == 1
    if single:
        ranking = ranking[None, :]
    if ranking.ndim != 2:
        raise ValueError(f"predicted must be a ranking or a 2-D array of rankings; got shape {ranking.shape}")
    if not np.issubdtype(ranking.dtype, np.integer):
        if ranking.size and not np.all(np.mod(ranking, 1) == 0):
            raise ValueError("predicted rankings must hold integer state indices")
        ranking = ranking.astype(np.int64)
    n_states = values.shape[-1]
    k = check_whole("k", k, maximum=n_states)
    if ranking.shape[1] < k:
        raise ValueError(f"predicted rankings have {ranking.shape[1]} items; at least k = {k} are needed")
    top = ranking[:, :k]
    if top.size and (top.min() < 0 or top.max() >= n_states):
        raise ValueError(f"predicted state indices must be between 0 and {n_states - 1}")
    sorted_top = np.sort(top, axis=1)
    repeated = sorted_top[:, 1:] == sorted_top[:, :-1]
    if repeated.any():
        row = int(np.flatnonzero(repeated.any(axis=1))[0])
        raise ValueError(f"ranking {row} names the same state twice in its top {k}: {top[row].tolist()}")
    if values.ndim == 2:
        if values.shape[0] != ranking.shape[0]:
            raise ValueError(
                f"counts has {values.shape[0]} rows but there are {ranking.shape[0]} rankings;"
                " give one row of counts per ranking, or a single row for all"
            )
        table = values
    else:
        table = values[None, :]
    predicted_counts = np.take_along_axis(table, top, axis=1)
    best_counts = -np.sort(-table, axis=1)[:, :k]
    return predicted_counts, best_counts, single


def _result(values: np.ndarray, single: bool) -> np.ndarray | float:
    return float(values[0]) if single else values


def acc_at_k(predicted: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray | float:
    """Acc@k (docs/math.md §7): 1.0 if the k-th predicted state has the k-th largest true count, else 0.0.

    ``k`` is a 1-based position.  Tie-aware as in the module docstring.
    """
    predicted_counts, best_counts, single = _prepare(predicted, counts, k)
    return _result((predicted_counts[:, k - 1] == best_counts[:, k - 1]).astype(float), single)


def hit_rate_at_k(predicted: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray | float:
    """Hit Rate@K (docs/math.md §7): |predicted top K ∩ true top K| / K, tie-aware as in the module docstring."""
    predicted_counts, best_counts, single = _prepare(predicted, counts, k)
    boundary = best_counts[:, k - 1 : k]
    above = (predicted_counts > boundary).sum(axis=1)
    tied_predicted = (predicted_counts == boundary).sum(axis=1)
    tied_slots = (best_counts == boundary).sum(axis=1)
    return _result((above + np.minimum(tied_predicted, tied_slots)) / k, single)


def ndcg_at_k(predicted: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray | float:
    """NDCG@K (docs/math.md §7): Σ_k c(π̂_k)/log2(k+1) divided by the same sum for the true ranking.

    Relevance is the true count.  Equals 1 when the ideal DCG is 0 (all top-K counts are 0).
    """
    predicted_counts, best_counts, single = _prepare(predicted, counts, k)
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = predicted_counts @ discount
    ideal = best_counts @ discount
    safe = np.where(ideal > 0, ideal, 1.0)
    return _result(np.where(ideal > 0, dcg / safe, 1.0), single)


def l1_count_error(predicted: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray | float:
    """L1 count error (docs/math.md §7): Σ_k |c(π̂_k) − c_k| over the first K ranks."""
    predicted_counts, best_counts, single = _prepare(predicted, counts, k)
    return _result(np.abs(predicted_counts - best_counts).sum(axis=1), single)
