"""A table-driven fuzz pass over the public API: every bad input is refused clearly or gives a sane value.

Each case calls one public function with one argument replaced by a bad value (NaN, ±inf, negative,
zero, huge, a bool, the wrong type, an empty list, a matrix that is not square or not stochastic, a
wrong length).  The outcome is put in one of four classes:

- CLEAN: a ValueError/TypeError (DataError is a ValueError) whose message names the problem, not an
  internal numpy/python message such as "object is not iterable" or "could not convert";
- ACCEPTED: the call returns and the value is sane: no NaN anywhere, and where an independent check is
  cheap it holds (a(b) ≥ 0, ε_puffer ≥ b·ε_DP + a(b), TPL ≥ ε, 0 ≤ leakage ≤ α, …);
- UNCLEAN: any other exception (AttributeError, KeyError, IndexError, ZeroDivisionError, OverflowError,
  MemoryError, LinAlgError, …), an internal message, or a call that runs for more than a few seconds;
- SILENT WRONG: a return for an input that must be refused (a bool read as a number, NaN as a
  parameter), or a returned value that fails its check.

``python tests/test_fuzz_api.py`` prints the count per class (and every case that is not clean or
accepted); the test asserts that no case is UNCLEAN or SILENT WRONG.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import mpmath
import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import puffer_core as pc  # noqa: E402
from puffer_core.accounting.risk import min_posterior  # noqa: E402
from puffer_core.mechanisms.laws import randomized_response_emission  # noqa: E402
from puffer_core.mechanisms.mqm_approx import mqm_approx_scale  # noqa: E402
from puffer_core.mechanisms.noise import (  # noqa: E402
    laplace_alpha_for,
    laplace_failure,
    laplace_scale_for,
    topk_gap_for,
    topk_hit_at_gap,
)
from puffer_core.mechanisms.wasserstein import wasserstein_laplace  # noqa: E402
from puffer_core.priors.kinds import PRIOR_KINDS  # noqa: E402

CASE_SECONDS = 5  # a case that runs longer is UNCLEAN: anything too big must be refused up front

# --- valid inputs every case starts from -------------------------------------------------------------------

P = [[0.9, 0.1], [0.2, 0.8]]
T = 5
PRIOR = pc.MarkovChainPrior(P, length=T)
PRIOR3 = pc.MarkovChainPrior([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]], length=T)
GP = pc.GaussianProcessPrior(5, 1.0)
CURVE = pc.influence_curve(PRIOR)
CAL = pc.calibrate(CURVE, 2.0)
EMISSION = [[0.7, 0.3], [0.4, 0.6]]
EVENTS = pd.DataFrame(
    {
        "user": ["a", "a", "a", "b", "b", "b", "c", "c"],
        "time": [1, 2, 3, 1, 2, 3, 1, 2],
        "state": ["x", "y", "x", "y", "y", "x", "x", "y"],
    }
)
SEQS = pc.load_sequences(EVENTS)
RNG = np.random.default_rng(0)
EXTREME = pc.MarkovChainPrior([[1 - 1e-300, 1e-300], [0.5, 0.5]], length=3)  # the pair_table NaN
ALTERNATION = pc.MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=4)  # W = 0: every histogram is (2, 2)
SMALL = pc.MarkovChainPrior(P, length=3)  # for the exact enumerations

# --- bad values per kind of argument: (label, value, must_refuse) -------------------------------------------

R, E, TY = True, False, "type"  # R: must be refused; E: refusing or a sane value are both fine;
# TY: a value of the wrong type, which must be refused with a TypeError (puffer_core.validation.InvalidParameter,
# a TypeError and a ValueError at once)
HUGE_INT = 10**400  # a Python integer no double can hold: refused as too large, never an OverflowError
SUBNORMAL = 5e-324  # below the smallest normal double: refused where a division follows

WRONG_TYPES = [("str", "1", TY), ("None", None, TY), ("list", [1.0], TY), ("dict", {}, TY), ("True", True, TY),
               ("False", False, TY), ("complex", 1j, TY), ("0d-array", np.array(2.0), TY)]
# the numbers beyond float range, signed zero and numpy scalars of every width
BEYOND = [("toolarge", HUGE_INT, R), ("-toolarge", -HUGE_INT, R), ("longdouble-huge", np.longdouble("1e400"), R)]
NUMBER = [("nan", math.nan, R), ("-inf", -math.inf, R), ("inf", math.inf, E), *WRONG_TYPES, *BEYOND,
          ("neg-zero", -0.0, E), ("np.float32", np.float32(2.0), E), ("np.float16", np.float16(2.0), E),
          ("np.int64", np.int64(2), E), ("np.uint8", np.uint8(2), E)]
POSITIVE = [*NUMBER, ("neg", -1.0, R), ("zero", 0.0, R), ("huge", 1e308, E), ("tiny", 1e-300, E),
            ("np.nan", np.float64("nan"), R), ("subnormal", SUBNORMAL, R), ("subnormal-big", 1e-310, R)]
POSITIVE = [(lbl, v, R if lbl == "neg-zero" else r) for lbl, v, r in POSITIVE]
EPS_OR_ZERO = [*NUMBER, ("neg", -1.0, R), ("zero", 0.0, E), ("huge", 1e308, E), ("tiny", 1e-300, E),
               ("subnormal", SUBNORMAL, E)]  # a level that may be 0 is never divided by: any value ≥ 0
WHOLE = [("nan", math.nan, TY), ("float", 2.5, TY), ("neg", -1, R), ("zero", 0, R), ("True", True, TY),
         ("False", False, TY), ("str", "3", TY), ("None", None, TY), ("list", [3], TY), ("hugefloat", 1e308, TY),
         ("huge", 10**12, E), ("npint", np.int64(3), E), ("inf", math.inf, TY), ("toolarge", HUGE_INT, E),
         ("np.uint8", np.uint8(3), E), ("float-whole", 3.0, TY)]
PROBABILITY = [("nan", math.nan, R), ("neg", -0.1, R), ("above1", 1.1, R), ("inf", math.inf, R),
               ("True", True, TY), ("False", False, TY), ("str", "0.5", TY), ("None", None, TY), ("zero", 0.0, E),
               ("one", 1.0, E), ("tiny", 1e-300, E), ("nearly1", 1 - 1e-16, E), ("toolarge", HUGE_INT, R),
               ("neg-zero", -0.0, E), ("subnormal", SUBNORMAL, E), ("np.float32", np.float32(0.25), E),
               ("complex", 0.5j, TY)]
FLAG = [("yes", "yes", TY), ("x", "x", TY), ("one", 1, TY), ("zero", 0, TY), ("None", None, TY), ("nan", math.nan, TY),
        ("np.True_", np.True_, E)]
MATRIX = [("nan", [[math.nan, 1.0], [0.5, 0.5]], R), ("inf", [[math.inf, 0.0], [0.5, 0.5]], R),
          ("neg", [[-0.1, 1.1], [0.5, 0.5]], R), ("sum1.2", [[0.6, 0.6], [0.5, 0.5]], R),
          ("array-sum1.2", np.array([[0.6, 0.6], [0.5, 0.5]]), R), ("nonsquare", [[0.5, 0.5]], R),
          ("vector", [0.5, 0.5], R), ("empty", [], R), ("empty-row", [[]], R), ("None", None, TY), ("str", "x", TY),
          ("dict", {}, TY), ("bools", [[True, False], [False, True]], TY), ("1x1", [[1.0]], R),
          ("huge", [[1e308, 1e308], [0.5, 0.5]], R), ("text-cells", [["a", "b"], [0.5, 0.5]], TY),
          ("ragged", [[0.5, 0.5], [0.5]], R), ("3x2", [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], R),
          ("scalar", 0.5, R), ("3d", np.full((2, 2, 2), 0.5), R), ("toolarge-cell", [[HUGE_INT, 0], [0.5, 0.5]], R),
          ("neg-zero", [[1.0, -0.0], [0.5, 0.5]], E), ("float32", np.array(P, dtype=np.float32), E)]
PRIOR_BAD = [("None", None, TY), ("str", "x", TY), ("empty", [], R), ("list-None", [None], TY), ("dict", {}, TY),
             ("int", 3, TY), ("matrix", P, TY), ("mixed-K", [PRIOR, PRIOR3], R)]
CURVE_BAD = [("None", None, TY), ("str", "x", TY), ("dict", {}, TY), ("list", [], R), ("int", 3, TY),
             ("calibration", CAL, TY)]
EPS_SEQ = [("empty", [], R), ("nan", [math.nan] * T, R), ("neg", [-1.0] * T, R), ("bools", [True] * T, TY),
           ("str", "x", TY), ("None", None, TY), ("short", [1.0] * (T - 1), R), ("long", [1.0] * (T + 3), R),
           ("inf-first", [math.inf] + [1.0] * (T - 1), E), ("huge", [1e308] * T, E), ("zeros", [0.0] * T, E),
           ("nested", [[1.0]] * T, R), ("text-cells", ["a"] * T, TY), ("toolarge", [HUGE_INT] * T, R),
           ("neg-zero", [-0.0] * T, E), ("float32", np.full(T, 1.0, dtype=np.float32), E),
           ("subnormal", [SUBNORMAL] * T, E)]
EMISSION_BAD = [(label, value, r or R) for label, value, r in MATRIX
                if label not in ("nonsquare", "3x2", "1x1", "neg-zero", "float32")]
OBSERVATIONS = [("empty", [], R), ("out-of-range", [0, 5], R), ("float", [0.5, 1], TY), ("bools", [True, False], TY),
                ("None", None, TY), ("str", "01", TY), ("negative", [-1, 0], R), ("nan", [math.nan], TY),
                ("longer-than-prior", [0] * (T + 1), E)]  # documented: T is the number of observations
COUNTS = [("nan", [math.nan, 1.0], R), ("empty", [], R), ("str", "x", TY), ("None", None, TY),
          ("bools", [True, 1.0], TY), ("inf", [math.inf, 1.0], R), ("toolarge", [HUGE_INT, 1], R),
          ("negative", [-1.0, 2.0], E),
          ("huge", [1e308, 1.0], E), ("matrix", [[1.0, 2.0]], E)]
# a folder that holds no data files and that no other test writes to (/tmp changed under the scan while Spark
# tests on another worker removed their temporary folders)
NO_DATA_FOLDER = str(Path(__file__).resolve().parent / "support")
RNG_BAD = [("None", None, TY), ("int", 0, TY), ("str", "x", TY), ("legacy", np.random.RandomState(0), TY)]
SOURCE_BAD = [("empty-bytes", b"", R), ("zero-bytes", b"\x00" * 1000, R), ("missing-file", "/nonexistent/x.csv", R),
              ("None", None, TY), ("int", 3, TY), ("no-columns", pd.DataFrame({"a": [1, 2]}), R),
              ("nan-states", EVENTS.assign(state=[math.nan] * 8), R), ("garbage-csv", b"user,time\n1,2,3,4\n\x01", R),
              ("dict", {}, TY), ("empty-frame", EVENTS.iloc[:0], R), ("list", [1, 2], TY),
              ("directory", NO_DATA_FOLDER, R)]
# an endless stream (/dev/zero): tests/test_readers_repair.py, test_cli.py


class Case(NamedTuple):
    name: str
    call: Callable[[], Any]
    must_refuse: bool | str  # R, E or TY
    check: Callable[[Any], str | None] | None  # returns a problem with an accepted value, or None


CASES: list[Case] = []


BASES: dict[str, Callable[[], Any]] = {}  # every fuzzed function with its valid arguments: each must be accepted


def fuzz(name: str, fn: Callable[..., Any], base: dict[str, Any], arg: str, bad: list[tuple[str, Any, bool | str]],
         check: Callable[[Any], str | None] | None = None, skip: tuple[str, ...] = ()) -> None:
    """One case per bad value of ``arg``, every other argument as in ``base``."""
    BASES.setdefault(f"{name}({', '.join(sorted(base))})", lambda kw=dict(base): fn(**kw))
    for label, value, refuse in bad:
        if label in skip:
            continue
        kwargs = {**base, arg: value}
        CASES.append(Case(f"{name}[{arg}={label}]", lambda kw=kwargs: fn(**kw), refuse, check))


def case(name: str, call: Callable[[], Any], refuse: bool, check: Callable[[Any], str | None] | None = None) -> None:
    CASES.append(Case(name, call, refuse, check))


# --- checks on accepted values, independent of the code that made them ------------------------------------

_NOT_APPLICABLE = {False: ("hit", "hit_low", "hit_high"), True: ("alpha", "beta")}
NOT_APPLICABLE_COLUMNS = ["sigma_max"]  # documented: a simulation ledger's σ_max is NaN for rows that are not MQM


def _nans(value: Any, depth: int = 0) -> str | None:
    """Where a NaN (or -inf) hides in a returned value, or None."""
    if depth > 4:
        return None
    if isinstance(value, (float, np.floating)):
        return "NaN" if math.isnan(value) else ("-inf" if value == -math.inf else None)
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return "NaN in array" if np.isnan(value).any() else None
    if isinstance(value, pd.DataFrame):
        numeric = value.select_dtypes("number").drop(columns=NOT_APPLICABLE_COLUMNS, errors="ignore")
        return "NaN in table" if numeric.isna().to_numpy().any() else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if isinstance(value, pc.MechanismAccuracy) and field.name in _NOT_APPLICABLE[math.isnan(value.alpha)]:
                continue  # documented: a count target leaves the top-k fields NaN, and the other way round
            found = _nans(getattr(value, field.name), depth + 1)
            if found:
                return f"{field.name}: {found}"
        return None
    if isinstance(value, (list, tuple)):
        for item in value[:50]:
            found = _nans(item, depth + 1)
            if found:
                return found
    return None


def curve_ok(curve: Any) -> str | None:
    a, b = np.asarray(curve.a, dtype=float), np.asarray(curve.b)
    if np.isnan(a).any() or (a < 0).any():
        return f"a(b) has NaN or negative values: {a}"
    if (b < 1).any():
        return f"b has values below 1: {b}"
    return None


def calibration_ok(cal: Any) -> str | None:
    if not cal.eps_puffer >= cal.b * cal.eps_dp + cal.a - 1e-9 * max(1.0, cal.eps_puffer):
        return f"ε_puffer {cal.eps_puffer} < b·ε_DP + a(b) = {cal.b * cal.eps_dp + cal.a}"
    return None


def certified_ok(eps_dp: float) -> Callable[[Any], str | None]:
    def check(cal: Any) -> str | None:
        if not cal.eps_puffer >= eps_dp * (1 - 1e-12):
            return f"certified ε_puffer {cal.eps_puffer} below ε_DP {eps_dp}"
        return calibration_ok(cal)

    return check


def tpl_ok(leak: Any) -> str | None:
    eps, tpl = np.asarray(leak.eps, dtype=float), np.asarray(leak.tpl, dtype=float)
    if np.isnan(tpl).any() or (tpl < eps * (1 - 1e-12)).any():
        return f"TPL {tpl} below ε {eps}"
    return None


def leakage_ok(alpha: float) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not 0.0 <= value <= alpha * (1 + 1e-12) + 1e-12:
            return f"leakage {value} outside [0, α = {alpha}]"
        return None

    return check


def max_eps_ok(target: float) -> Callable[[Any], str | None]:
    def check(eps: Any) -> str | None:
        if not eps >= 0 or math.isnan(eps):
            return f"ε {eps} is not ≥ 0"
        if 0 < eps < math.inf and target < math.inf:
            tpl = pc.temporal_privacy_leakage(PRIOR, [eps] * T).max_tpl
            if tpl > target * (1 + 1e-9):
                return f"TPL {tpl} at the returned ε {eps} exceeds the target {target}"
        return None

    return check


def schedule_ok(target: float) -> Callable[[Any], str | None]:
    def check(schedule: Any) -> str | None:
        if np.isnan(schedule.eps).any() or (schedule.eps < 0).any():
            return f"schedule ε {schedule.eps}"
        if schedule.max_tpl > target * (1 + 1e-9):
            return f"schedule TPL {schedule.max_tpl} above target {target}"
        return None

    return check


def translation_ok(bound: Any) -> str | None:
    if not bound.eps_puffer >= bound.eps_dp * (1 - 1e-12):
        return f"translation bound {bound.eps_puffer} below ε_DP {bound.eps_dp}"
    return None


def distribution_ok(pi: Any) -> str | None:
    pi = np.asarray(pi, dtype=float)
    if np.isnan(pi).any() or (pi < 0).any() or abs(pi.sum() - 1) > 1e-9:
        return f"not a distribution: {pi}"
    return None


def emission_ok(eps: float) -> Callable[[Any], str | None]:
    def check(matrix: Any) -> str | None:
        m = np.asarray(matrix, dtype=float)
        if np.isnan(m).any() or (m <= 0).any():
            return "an emission with zeros or NaN leaks without bound"
        with np.errstate(divide="ignore"):
            ratio = np.log(m[:, None, :]) - np.log(m[None, :, :])
        if ratio.max() > eps * (1 + 1e-9) + 1e-12:
            return f"emission leaks {ratio.max()} > ε = {eps}"
        return None

    return check


def positive_ok(value: Any) -> str | None:
    return None if value > 0 and not math.isnan(value) else f"{value} is not positive"


def posterior_ok(post: Any) -> str | None:
    post = np.asarray(post, dtype=float)
    if np.isnan(post).any() or (post < -1e-12).any() or np.abs(post.sum(axis=-1) - 1).max() > 1e-9:
        return "posterior rows are not distributions"
    return None


def binary_vs_engine(p: float, q: float, length: int) -> Callable[[Any], str | None]:
    """The closed form never below the engine (two computations that share no code) where the engine is cheap."""

    def check(curve: Any) -> str | None:
        problem = curve_ok(curve)
        if problem or not (isinstance(p, float) and isinstance(q, float) and 0 <= p <= 1 and 0 <= q <= 1):
            return problem
        if not isinstance(length, int) or length > 50:
            return None
        try:
            engine = pc.influence_curve(pc.MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=length))
        except ValueError:
            return None
        for b in curve.b:
            if b <= engine.max_b and curve.at(int(b)) < engine.at(int(b)) * (1 - 1e-9) - 1e-9:
                return f"closed form a({b}) = {curve.at(int(b))} below the engine's {engine.at(int(b))}"
        return None

    return check


def unit_ok(value: Any) -> str | None:
    return None if 0.0 <= value <= 1.0 else f"{value} is not a probability"


def positive_or_zero_ok(value: Any) -> str | None:
    return None if value >= 0 and not math.isnan(value) else f"{value} is not ≥ 0"


def _bayes(p: float, eps: float, upper: bool) -> Any:
    """e^ε·p / (e^ε·p + 1 − p) (upper) or p / (p + e^ε(1 − p)), in 60-digit arithmetic."""
    with mpmath.workdps(60):
        p_, e = mpmath.mpf(float(p)), mpmath.exp(mpmath.mpf(float(eps)))
        return e * p_ / (e * p_ + 1 - p_) if upper else p_ / (p_ + e * (1 - p_))


def posterior_bound_ok(p: Any, eps: float, upper: bool) -> Callable[[Any], str | None]:
    """The largest posterior never below Bayes' value (an understated risk), the smallest never above it."""

    def check(value: Any) -> str | None:
        if not isinstance(p, (float, np.floating)) or not 0 <= p <= 1:
            return None
        truth = _bayes(p, eps, upper)
        if (upper and mpmath.mpf(value) < truth) or (not upper and mpmath.mpf(value) > truth):
            return f"posterior {value!r} is {'below' if upper else 'above'} Bayes' {mpmath.nstr(truth, 17)}"
        size = abs(math.log(p)) + abs(math.log1p(-p)) + float(eps) + 1 if 0 < p < 1 else 1.0
        if abs(mpmath.mpf(value) - truth) > 4e-15 * size * truth + 1e-300:  # the documented outward rounding
            return f"posterior {value!r} is far from Bayes' {mpmath.nstr(truth, 17)}"
        return None

    return check


def attacker_table_ok(prior: Any, eps: Any) -> Callable[[Any], str | None]:
    def check(table: Any) -> str | None:
        worst = np.max(prior.marginals(), axis=0)
        for q, after in zip(worst, table["largest posterior after the release"]):
            if mpmath.mpf(float(after)) < _bayes(float(q), eps, upper=True):
                return f"largest posterior {after} below Bayes' for prior probability {q}"
        return None

    return check


def pair_table_ok(prior: Any, eps: Any) -> Callable[[Any], str | None]:
    def check(table: Any) -> str | None:
        post = table["largest posterior of the secret (between the two)"].to_numpy(dtype=float)
        if np.isnan(post).any() or (post < 0).any() or (post > 1).any():
            return f"posteriors {post} are not probabilities"
        marg = prior.marginals()
        for row, value in zip(table.itertuples(index=False), post):
            x, y = prior.labels.index(row[0]), prior.labels.index(row[1])
            both = (marg[:, x] > 0) & (marg[:, y] > 0)
            with mpmath.workdps(60):
                odds = max(mpmath.mpf(float(a)) / mpmath.mpf(float(b)) for a, b in zip(marg[both, x], marg[both, y]))
                e = mpmath.exp(mpmath.mpf(float(eps))) * odds
                if mpmath.mpf(float(value)) < e / (1 + e):
                    return f"pair posterior {value} below Bayes' {mpmath.nstr(e / (1 + e), 17)}"
        return None

    return check


def hit_lower_bound_ok(k: int, m: int, gap: float) -> Callable[[Any], str | None]:
    """Top-k is right unless one of the k·(m − k) pairs swaps: Pr[Z_j − Z_i > gap] for two standard noises is at
    most e^(−gap)·(1 + gap/2)/2 (Laplace) or 1/(1 + e^gap) (Gumbel: a logistic difference) — a union bound."""

    def check(hit: Any) -> str | None:
        if not 0 <= hit <= 1:
            return f"{hit} is not a probability"
        swap = max(math.exp(-gap) * (1 + gap / 2) / 2, 1 / (1 + math.exp(min(gap, 700))))
        if hit < 1 - k * (m - k) * swap - 1e-12:
            return f"hit {hit} below the union bound {1 - k * (m - k) * swap}"
        return None

    return check


def accuracy_ok(rows: Any) -> str | None:
    for row in rows:
        for name in ("hit", "hit_low", "hit_high"):
            value = getattr(row, name, None)
            if isinstance(value, float) and not math.isnan(value) and not 0 <= value <= 1:
                return f"{row.mechanism} {name} = {value}"
    return None


def smoothing_ok(result: Any) -> str | None:
    if np.isnan(result.expected_mse).any() or (result.expected_mse < 0).any():
        return f"expected errors {result.expected_mse}"
    if (result.expected_mse > result.expected_mse_raw * (1 + 1e-9)).any():
        return "the smoothed expected error is above the raw release's"
    return None


# --- the cases --------------------------------------------------------------------------------------------

# priors
fuzz("MarkovChainPrior", pc.MarkovChainPrior, {"transition": P, "length": T}, "transition", MATRIX)
fuzz("MarkovChainPrior", pc.MarkovChainPrior, {"transition": P, "length": T}, "length", WHOLE,
     skip=("zero",))  # a length of 1 or 0: the bound is checked by the whole-number list
case("MarkovChainPrior[length=1]", lambda: pc.MarkovChainPrior(P, length=1), E)
fuzz("MarkovChainPrior", pc.MarkovChainPrior, {"transition": P, "length": T}, "initial",
     [("nan", [math.nan, 1.0], R), ("neg", [-0.5, 1.5], R), ("sum2", [1.0, 1.0], R), ("bools", [True, False], R),
      ("short", [1.0], R), ("long", [0.5, 0.25, 0.25], R), ("str", "x", R), ("dict", {}, R),
      ("inf", [math.inf, 0.0], R), ("matrix", [[0.5, 0.5]], R), ("point-mass", [1.0, 0.0], E)])
fuzz("MarkovChainPrior", pc.MarkovChainPrior, {"transition": P, "length": T}, "labels",
     [("short", ["a"], R), ("duplicate", ["a", "a"], R), ("str", "ab", R), ("int", 3, R), ("dict", {}, R)])
fuzz("GaussianProcessPrior", pc.GaussianProcessPrior, {"n": 5, "length_scale": 1.0}, "n", WHOLE)
fuzz("GaussianProcessPrior", pc.GaussianProcessPrior, {"n": 5, "length_scale": 1.0}, "length_scale", POSITIVE)
fuzz("GaussianProcessPrior", pc.GaussianProcessPrior, {"n": 5, "length_scale": 1.0}, "gamma", POSITIVE)
fuzz("GaussianProcessPrior", pc.GaussianProcessPrior, {"n": 5, "length_scale": 1.0}, "delta", POSITIVE)
fuzz("GaussianProcessPrior", pc.GaussianProcessPrior, {"n": 5, "length_scale": 1.0}, "kernel",
     [("unknown", "rbf", R), ("None", None, R), ("int", 1, R)])
fuzz("stationary_distribution", pc.stationary_distribution, {"transition": P}, "transition", MATRIX,
     check=distribution_ok)
case("stationary_distribution[list]", lambda: pc.stationary_distribution([[0.9, 0.1], [0.2, 0.8]]), E,
     distribution_ok)
case("stationary_distribution[reducible]", lambda: pc.stationary_distribution([[1.0, 0.0], [0.0, 1.0]]), E,
     distribution_ok)
fuzz("fit_markov_chain", pc.fit_markov_chain, {"data": SEQS}, "data",
     [("None", None, R), ("frame", EVENTS, R), ("list", [[0, 1]], R), ("str", "x", R)])
fuzz("fit_markov_chain", pc.fit_markov_chain, {"data": SEQS}, "smoothing", EPS_OR_ZERO)
fuzz("fit_markov_chain", pc.fit_markov_chain, {"data": SEQS}, "length", [*WHOLE, ("one", 1, E)],
     skip=("None",))
for kind_name, bad_params in [
    ("binary", {"p": math.nan}), ("binary", {"p": True}), ("binary", {"q": 1.5}), ("binary", {"length": 0}),
    ("binary", {"length": 2.5}), ("binary", {"p": "0.5"}), ("matrix", {"matrix": [[0.5, 0.6], [0.5, 0.5]]}),
    ("matrix", {"matrix": [[math.nan, 1.0], [0.5, 0.5]]}), ("matrix", {"matrix": [[0.5, 0.5]]}),
    ("matrix", {"matrix": None}), ("theta", {"theta": ()}), ("theta", {"theta": ((0.5, 1.5),)}),
    ("theta", {"theta": ((math.nan, 0.5),)}), ("gaussian", {"length_scale": -1.0}),
    ("gaussian", {"n": 10**12}), ("gaussian", {"delta": math.nan}), ("gaussian", {"kernel": "rbf"}),
]:
    kind = PRIOR_KINDS[kind_name]
    params = {**kind.defaults, **bad_params}
    label = ",".join(f"{k}={v!r}" for k, v in bad_params.items())

    def build(kind: Any = kind, params: dict[str, Any] = params) -> Any:
        problems = kind.problems(params)
        if problems:
            raise ValueError(problems[0])
        return kind.prior(params)

    case(f"kinds.{kind_name}[{label}]", build, R)

# curves
fuzz("influence_curve", pc.influence_curve, {"prior_or_priors": PRIOR}, "prior_or_priors",
     [(lbl, v, r) for lbl, v, r in PRIOR_BAD if lbl != "matrix"], check=curve_ok)
fuzz("influence_curve", pc.influence_curve, {"prior_or_priors": PRIOR}, "max_b", WHOLE, check=curve_ok,
     skip=("None",))
fuzz("influence_curve.gp", pc.influence_curve, {"prior_or_priors": GP}, "max_b", WHOLE, check=curve_ok,
     skip=("None",))
case("influence_curve[gp]", lambda: pc.influence_curve(GP), E, curve_ok)
for p_label, p_value, p_refuse in PROBABILITY:
    case(f"binary_chain_curve[p={p_label}]", lambda v=p_value: pc.binary_chain_curve(v, 0.7, 2, 8), p_refuse,
         binary_vs_engine(p_value, 0.7, 8))
    case(f"binary_chain_curve[q={p_label}]", lambda v=p_value: pc.binary_chain_curve(0.9, v, 2, 8), p_refuse,
         binary_vs_engine(0.9, q=p_value, length=8))
fuzz("binary_chain_curve", pc.binary_chain_curve, {"p": 0.9, "q": 0.7, "max_b": 2, "length": 8}, "max_b", WHOLE,
     check=curve_ok)
fuzz("binary_chain_curve", pc.binary_chain_curve, {"p": 0.9, "q": 0.7, "max_b": 2, "length": 8}, "length", WHOLE,
     check=curve_ok)
case("binary_chain_curve[p=0,q=0.05]", lambda: pc.binary_chain_curve(0.0, 0.05, 2, 8), E,
     binary_vs_engine(0.0, 0.05, 8))
case("binary_chain_curve[p=1e-15,q=0.05]", lambda: pc.binary_chain_curve(1e-15, 0.05, 2, 8), E,
     binary_vs_engine(1e-15, 0.05, 8))
fuzz("gaussian_estimate", pc.gaussian_estimate, {"prior": GP}, "prior", [("None", None, R), ("markov", PRIOR, R)])
fuzz("InfluenceCurve", pc.InfluenceCurve, {"b": np.array([1, 2]), "a": np.array([1.0, 0.5]), "length": T}, "a",
     [("nan", np.array([math.nan, 0.5]), R), ("neg", np.array([-1.0, 0.5]), R), ("short", np.array([1.0]), R),
      ("str", "x", R), ("None", None, R), ("bools", np.array([True, False]), R)], check=curve_ok)
fuzz("InfluenceCurve", pc.InfluenceCurve, {"b": np.array([1, 2]), "a": np.array([1.0, 0.5]), "length": T}, "b",
     [("zero", np.array([0, 1]), R), ("float", np.array([1.5, 2.0]), R), ("descending", np.array([2, 1]), R),
      ("None", None, R), ("above-T", np.array([1, T + 5]), R)], check=curve_ok)

# calibration and composition
fuzz("calibrate", pc.calibrate, {"curve": CURVE, "eps_puffer": 2.0}, "eps_puffer", POSITIVE, check=calibration_ok)
fuzz("calibrate", pc.calibrate, {"curve": CURVE, "eps_puffer": 2.0}, "curve", CURVE_BAD + [("prior", PRIOR, R)])
for label, value, refuse in POSITIVE:
    case(f"certify[eps_dp={label}]", lambda v=value: pc.certify(CURVE, v), refuse,
         certified_ok(value) if isinstance(value, float) else None)
fuzz("group_dp", pc.group_dp, {"curve": CURVE, "eps_puffer": 2.0}, "eps_puffer", POSITIVE, check=calibration_ok)
fuzz("plan", pc.plan, {"curve": CURVE, "total_eps_puffer": 4.0, "releases": 2}, "total_eps_puffer", POSITIVE,
     check=calibration_ok)
fuzz("plan", pc.plan, {"curve": CURVE, "total_eps_puffer": 4.0, "releases": 2}, "releases", WHOLE,
     check=calibration_ok)
fuzz("compose", pc.compose, {"calibrations": [CAL]}, "calibrations",
     [("None", None, R), ("calibration", CAL, R), ("str", "x", R), ("list-None", [None], R), ("list-num", [1.0], R),
      ("dict", {}, R), ("empty", [], E)])
fuzz("cumulative", pc.cumulative, {"calibrations": [CAL]}, "calibrations",
     [("None", None, R), ("calibration", CAL, R), ("list-None", [None], R)])
fuzz("naive_sum", pc.naive_sum, {"calibrations": [CAL]}, "calibrations",
     [("None", None, R), ("calibration", CAL, R), ("list-None", [None], R)])

# mechanisms
fuzz("pufferfish_laplace", pc.pufferfish_laplace, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "eps_puffer",
     POSITIVE)
fuzz("pufferfish_laplace", pc.pufferfish_laplace, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "sensitivity",
     POSITIVE)
fuzz("pufferfish_laplace", pc.pufferfish_laplace, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "queries", WHOLE)
fuzz("pufferfish_laplace", pc.pufferfish_laplace, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "curve_or_prior",
     CURVE_BAD)
fuzz("pufferfish_exponential", pc.pufferfish_exponential, {"curve_or_prior": CURVE, "eps_puffer": 2.0},
     "eps_puffer", POSITIVE)
fuzz("pufferfish_exponential", pc.pufferfish_exponential, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "k", WHOLE)
fuzz("group_dp_laplace", pc.group_dp_laplace, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "eps_puffer", POSITIVE)
LAPLACE = pc.pufferfish_laplace(CURVE, 2.0)
TOPK = pc.pufferfish_exponential(CURVE, 2.0, k=1)
for mech_name, mech in (("laplace", LAPLACE), ("exponential", TOPK)):
    base = {"counts": [3.0, 1.0], "trials": 10, "rng": RNG}
    fuzz(f"{mech_name}.simulate", mech.simulate, base, "counts", COUNTS)
    fuzz(f"{mech_name}.simulate", mech.simulate, base, "trials", WHOLE)
    fuzz(f"{mech_name}.simulate", mech.simulate, base, "rng", RNG_BAD)
fuzz("make_mechanism", pc.make_mechanism,
     {"name": "pufferfish_laplace", "eps_puffer": 2.0, "curve": CURVE, "priors": PRIOR, "query": "histogram"},
     "name", [("unknown", "gauss", R), ("None", None, R), ("int", 1, R)])

# MQM
fuzz("mqm_noise_scale", pc.mqm_noise_scale, {"prior_or_priors": PRIOR, "eps_puffer": 2.0}, "eps_puffer", POSITIVE,
     check=positive_ok)
fuzz("mqm_noise_scale", pc.mqm_noise_scale, {"prior_or_priors": PRIOR, "eps_puffer": 2.0}, "prior_or_priors",
     PRIOR_BAD + [("gaussian", GP, R)], check=positive_ok)
fuzz("mqm_eps_for_scale", pc.mqm_eps_for_scale, {"prior_or_priors": PRIOR, "sigma": 2.0}, "sigma", POSITIVE,
     check=lambda e: None if e >= 0 and not math.isnan(e) else f"ε {e}")
fuzz("mqm_laplace", pc.mqm_laplace, {"prior_or_priors": PRIOR, "eps_puffer": 2.0}, "sensitivity", POSITIVE)
fuzz("mqm_top_k_counts", pc.mqm_top_k_counts, {"prior_or_priors": PRIOR, "eps_puffer": 2.0, "n_counts": 2},
     "n_counts", WHOLE)

# streams
fuzz("temporal_privacy_leakage", pc.temporal_privacy_leakage, {"prior_or_priors": PRIOR, "eps": [1.0] * T}, "eps",
     EPS_SEQ, check=tpl_ok)
fuzz("temporal_privacy_leakage", pc.temporal_privacy_leakage, {"prior_or_priors": PRIOR, "eps": [1.0] * T},
     "prior_or_priors", PRIOR_BAD, check=tpl_ok)
case("temporal_privacy_leakage[eps=1e17 first]",
     lambda: pc.temporal_privacy_leakage(PRIOR, [1e17] + [1.0] * (T - 1)), E, tpl_ok)
fuzz("leakage_function", pc.leakage_function, {"Q": P, "alpha": 1.0}, "Q", MATRIX)
for label, value, refuse in EPS_OR_ZERO + [("1e17", 1e17, E), ("1e300", 1e300, E)]:
    case(f"leakage_function[alpha={label}]", lambda v=value: pc.leakage_function(P, v), refuse,
         leakage_ok(value) if isinstance(value, float) else None)
fuzz("leakage_supremum", pc.leakage_supremum, {"matrix": P, "eps": 1.0}, "eps", EPS_OR_ZERO)
for label, value, refuse in POSITIVE:
    case(f"max_eps_for_tpl[target={label}]", lambda v=value: pc.max_eps_for_tpl(PRIOR, v), refuse,
         max_eps_ok(value) if isinstance(value, float) else None)
fuzz("max_eps_for_tpl", pc.max_eps_for_tpl, {"prior_or_priors": PRIOR, "target": 1.0}, "unbounded", FLAG)
fuzz("max_eps_for_tpl", pc.max_eps_for_tpl, {"prior_or_priors": PRIOR, "target": 1.0}, "prior_or_priors", PRIOR_BAD)
for label, value, refuse in POSITIVE:
    case(f"optimal_schedule[target={label}]", lambda v=value: pc.optimal_schedule(PRIOR, v), refuse,
         schedule_ok(value) if isinstance(value, float) else None)
fuzz("optimal_schedule", pc.optimal_schedule, {"prior_or_priors": PRIOR, "target": 1.0}, "length", WHOLE,
     skip=("None",))
fuzz("translation_bound", pc.translation_bound, {"curve": CURVE, "eps": [1.0] * T}, "eps", EPS_SEQ,
     check=translation_ok)
fuzz("translation_bound", pc.translation_bound, {"curve": CURVE, "eps": [1.0] * T}, "contiguous", FLAG,
     check=translation_ok)
fuzz("translation_bound", pc.translation_bound, {"curve": CURVE, "eps": [1.0] * T}, "curve", CURVE_BAD)
fuzz("tpl_supremum", pc.tpl_supremum, {"prior_or_priors": PRIOR, "eps": 1.0}, "eps", EPS_OR_ZERO)
fuzz("stream_bounds", pc.stream_bounds, {"prior_or_priors": PRIOR, "eps": [1.0] * T}, "eps", EPS_SEQ)
fuzz("plan_stream", pc.plan_stream, {"prior_or_priors": PRIOR, "target": 2.0}, "unbounded", FLAG)
fuzz("backward_privacy_leakage", pc.backward_privacy_leakage, {"backward": P, "eps": [1.0] * T}, "backward", MATRIX)
fuzz("backward_privacy_leakage", pc.backward_privacy_leakage, {"backward": P, "eps": [1.0] * T}, "eps", EPS_SEQ,
     skip=("short", "long"))
fuzz("randomized_response_emission", randomized_response_emission, {"n_states": 2, "eps": 1.0}, "n_states", WHOLE,
     skip=("huge",))
case("randomized_response_emission[n_states=huge]", lambda: randomized_response_emission(10**12, 1.0), R)
for label, value, refuse in EPS_OR_ZERO + [("800", 800.0, E), ("50", 50.0, E)]:  # ε = 0: outputs ignore the state
    case(f"randomized_response_emission[eps={label}]", lambda v=value: randomized_response_emission(2, v), refuse,
         emission_ok(value) if isinstance(value, float) else None)

# accuracy
COUNT_TARGET = pc.CountTarget(alpha=5.0, beta=0.1)
for label, value, refuse in POSITIVE:
    case(f"CountTarget[alpha={label}]", lambda v=value: pc.CountTarget(alpha=v, beta=0.1), refuse)
for label, value, refuse in PROBABILITY:
    case(f"CountTarget[beta={label}]", lambda v=value: pc.CountTarget(alpha=5.0, beta=v),
         refuse or label in ("zero", "one"))
for label, value, refuse in WHOLE:
    case(f"TopKTarget[k={label}]", lambda v=value: pc.TopKTarget(k=v, hit=0.9, n_states=2, gap=5.0),
         refuse or label in ("huge",))
fuzz("accuracy_at", pc.accuracy_at, {"eps_puffer": 2.0, "target": COUNT_TARGET, "curve": CURVE, "priors": PRIOR},
     "eps_puffer", POSITIVE)
fuzz("accuracy_at", pc.accuracy_at, {"eps_puffer": 2.0, "target": COUNT_TARGET, "curve": CURVE, "priors": PRIOR},
     "target", [("None", None, R), ("str", "x", R), ("float", 0.5, R)])
fuzz("accuracy_first", pc.accuracy_first, {"target": COUNT_TARGET, "curve": CURVE, "priors": PRIOR}, "curve",
     CURVE_BAD)

# inference
fuzz("posterior_states", pc.posterior_states, {"prior": PRIOR, "emission": EMISSION, "observations": [0, 1, 1]},
     "emission", EMISSION_BAD, check=posterior_ok)
fuzz("posterior_states", pc.posterior_states, {"prior": PRIOR, "emission": EMISSION, "observations": [0, 1, 1]},
     "observations", OBSERVATIONS, check=posterior_ok)
fuzz("posterior_states", pc.posterior_states, {"prior": PRIOR, "emission": EMISSION, "observations": [0, 1, 1]},
     "prior", [("None", None, R), ("list", [PRIOR], R), ("gaussian", GP, R)])
fuzz("map_states", pc.map_states, {"prior": PRIOR, "emission": EMISSION, "observations": [0, 1, 1]},
     "observations", OBSERVATIONS)

# data
fuzz("load_sequences", pc.load_sequences, {"source": EVENTS}, "source", SOURCE_BAD)
fuzz("load_sequences", pc.load_sequences, {"source": EVENTS}, "user",
     [("missing", "nobody", R), ("None", None, R), ("int", 3, R)])
fuzz("load_sequences", pc.load_sequences, {"source": EVENTS}, "max_rows", WHOLE, skip=("huge", "npint"))
fuzz("load_sequences", pc.load_sequences, {"source": EVENTS}, "drop_missing", FLAG)
fuzz("load_stats", pc.load_stats, {"source": EVENTS}, "source",
     [(lbl, v, r) for lbl, v, r in SOURCE_BAD if lbl in ("empty-bytes", "None", "int", "no-columns", "dict")])
fuzz("load_stats", pc.load_stats, {"source": EVENTS}, "engine", [("unknown", "sqlite", R), ("None", None, R)])

# simulation
SIM = {"data": SEQS, "prior": PRIOR, "k": 1, "eps_grid": (1.0,), "trials": 5, "rng": 0,
       "mechanisms": ["pufferfish_laplace"]}
fuzz("simulate", pc.simulate, SIM, "eps_grid",
     [("empty", (), R), ("nan", (math.nan,), R), ("neg", (-1.0,), R), ("bools", (True,), R), ("str", "x", R),
      ("None", None, R), ("zero", (0.0,), R)])
fuzz("simulate", pc.simulate, SIM, "trials", WHOLE)
fuzz("simulate", pc.simulate, SIM, "k", WHOLE)
fuzz("simulate", pc.simulate, SIM, "releases", WHOLE)
fuzz("simulate", pc.simulate, SIM, "data", [("None", None, R), ("frame", EVENTS, R), ("str", "x", R)])
fuzz("simulate", pc.simulate, SIM, "postprocess", FLAG)
fuzz("simulate", pc.simulate, SIM, "query", [("unknown", "median", R), ("None", None, R)])

# the risk view, the noise laws, the new baselines and every other public function (issue 34: numbers beyond float
# range, subnormals, −0.0 and numpy scalars reach every numeric argument through the lists above)
fuzz("max_posterior", pc.max_posterior, {"prior_probability": 0.3, "eps": 1.0}, "prior_probability", PROBABILITY,
     check=lambda v: None)
for p_label, p_value, p_refuse in PROBABILITY + [("1e-305", 1e-305, E)]:
    for e_label, e_value in (("710", 710.0), ("744", 744.0), ("1", 1.0), ("1e-300", 1e-300), ("1e5", 1e5)):
        case(f"max_posterior[p={p_label},eps={e_label}]", lambda p=p_value, e=e_value: pc.max_posterior(p, e),
             p_refuse, posterior_bound_ok(p_value, e_value, upper=True))
        case(f"min_posterior[p={p_label},eps={e_label}]", lambda p=p_value, e=e_value: min_posterior(p, e),
             p_refuse, posterior_bound_ok(p_value, e_value, upper=False))
for label, value, refuse in EPS_OR_ZERO + [("710", 710.0, E), ("744", 744.0, E)]:
    case(f"max_posterior[eps={label}]", lambda v=value: pc.max_posterior(1e-305, v), refuse,
         posterior_bound_ok(1e-305, value, upper=True))
    case(f"attacker_table[eps={label}]", lambda v=value: pc.attacker_table(EXTREME, v), refuse,
         attacker_table_ok(EXTREME, value))
    case(f"pair_table[eps={label}]", lambda v=value: pc.pair_table(EXTREME, v), refuse, pair_table_ok(EXTREME, value))
    case(f"tradeoff_curve[eps={label}]", lambda v=value: pc.tradeoff_curve(v), refuse)
fuzz("attacker_table", pc.attacker_table, {"prior_or_priors": PRIOR, "eps": 1.0}, "prior_or_priors", PRIOR_BAD)
fuzz("pair_table", pc.pair_table, {"prior_or_priors": PRIOR, "eps": 1.0}, "prior_or_priors", PRIOR_BAD)
fuzz("tradeoff_curve", pc.tradeoff_curve, {"eps": 1.0}, "points", WHOLE, skip=("huge", "toolarge"))
TOPK = {"k": 1, "m": 2, "gap": 3.0, "scale": 1.0, "noise": "laplace"}
for noise in ("laplace", "gumbel"):
    for arg, bad in (("gap", POSITIVE), ("scale", POSITIVE), ("k", WHOLE), ("m", WHOLE)):
        fuzz(f"topk_hit_at_gap.{noise}", topk_hit_at_gap, {**TOPK, "noise": noise}, arg,
             [(lbl, v, r) for lbl, v, r in bad if not (arg in "km" and lbl in ("huge", "toolarge"))], check=unit_ok)
    for gap in (1e3, 1e5, 1e8, 1e300):
        for k, m in ((1, 2), (2, 3), (3, 6), (1, 50)):
            case(f"topk_hit_at_gap.{noise}[gap={gap:g},k={k},m={m}]",
                 lambda g=gap, k=k, m=m, nz=noise: topk_hit_at_gap(k, m, g, 1.0, nz), E, hit_lower_bound_ok(k, m, gap))
fuzz("topk_hit_at_gap", topk_hit_at_gap, TOPK, "noise", [("unknown", "normal", R), ("None", None, TY)])
fuzz("topk_gap_for", topk_gap_for, {"k": 1, "m": 3, "hit": 0.9, "scale": 1.0, "noise": "laplace"}, "hit", PROBABILITY,
     check=positive_or_zero_ok)
fuzz("topk_gap_for", topk_gap_for, {"k": 1, "m": 3, "hit": 0.9, "scale": 1.0, "noise": "laplace"}, "scale", POSITIVE,
     check=positive_or_zero_ok)
for arg, bad in (("alpha", POSITIVE), ("scale", POSITIVE)):
    for law in ("opendp", "integer"):
        fuzz(f"laplace_failure.{law}", laplace_failure, {"alpha": 3.0, "scale": 1.0, "law": law}, arg, bad,
             check=unit_ok)
for arg, bad in (("alpha", POSITIVE), ("failure", PROBABILITY)):
    for law in ("opendp", "integer"):
        fuzz(f"laplace_scale_for.{law}", laplace_scale_for, {"alpha": 3.0, "failure": 0.1, "law": law}, arg, bad,
             check=positive_ok)
for arg, bad in (("scale", POSITIVE), ("failure", PROBABILITY)):
    for law in ("opendp", "integer"):
        fuzz(f"laplace_alpha_for.{law}", laplace_alpha_for, {"scale": 3.0, "failure": 0.1, "law": law}, arg, bad,
             check=positive_or_zero_ok)
for alpha_label, alpha in (("1e300", 1e300), ("toolarge", HUGE_INT), ("subnormal", SUBNORMAL), ("1e-300", 1e-300),
                           ("1e308", 1e308)):
    for beta_label, beta in (("0.5", 0.5), ("0.1", 0.1), ("subnormal", SUBNORMAL), ("1e-300", 1e-300)):
        for law in ("opendp", "integer", "continuous"):
            refuse = R if alpha_label in ("toolarge", "subnormal") else E
            case(f"CountTarget.scale[alpha={alpha_label},beta={beta_label},law={law}]",
                 lambda a=alpha, b=beta, lw=law: pc.CountTarget(a, b, law=lw).scale(), refuse, positive_ok)
for label, value, refuse in POSITIVE:
    case(f"CountTarget[sensitivity={label}]", lambda v=value: pc.CountTarget(5.0, 0.1, sensitivity=v).scale(),
         refuse, positive_ok)
for label, value, refuse in PROBABILITY:
    case(f"TopKTarget[hit={label}]", lambda v=value: pc.TopKTarget(k=1, hit=v, n_states=2, gap=5.0),
         refuse or label in ("zero", "one"))
for label, value, refuse in POSITIVE:
    case(f"TopKTarget[gap={label}]", lambda v=value: pc.TopKTarget(k=1, hit=0.9, n_states=2, gap=v),
         R if label == "None" else refuse)  # gap=None is the default: give counts instead
TOPK_TARGET = pc.TopKTarget(k=1, hit=0.9, n_states=2, gap=5.0)
fuzz("accuracy_at.topk", pc.accuracy_at, {"eps_puffer": 2.0, "target": TOPK_TARGET, "curve": CURVE, "priors": PRIOR},
     "eps_puffer", POSITIVE, check=accuracy_ok)
for gap in (1e3, 1e5, 1e9):
    case(f"accuracy_at.topk[gap={gap:g}]", lambda g=gap: pc.accuracy_at(
        2.0, pc.TopKTarget(k=1, hit=0.9, n_states=2, gap=g), CURVE, PRIOR), E, accuracy_ok)
fuzz("calibration_objective", pc.calibration_objective, {"curve": CURVE, "eps_puffer": 2.0}, "eps_puffer", POSITIVE)
fuzz("certify_objective", pc.certify_objective, {"curve": CURVE, "eps_dp": 1.0}, "eps_dp", POSITIVE)
fuzz("group_dp_cumulative", pc.group_dp_cumulative, {"length": T, "eps_dps": [1.0, 1.0]}, "length", WHOLE,
     skip=("huge", "toolarge"))
fuzz("group_dp_cumulative", pc.group_dp_cumulative, {"length": T, "eps_dps": [1.0, 1.0]}, "eps_dps",
     [(lbl, v, E if lbl == "empty" else r) for lbl, v, r in EPS_SEQ if lbl not in ("short", "long")])
fuzz("group_dp_exponential", pc.group_dp_exponential, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "eps_puffer",
     POSITIVE)
fuzz("group_dp_exponential", pc.group_dp_exponential, {"curve_or_prior": CURVE, "eps_puffer": 2.0}, "k", WHOLE)
fuzz("mqm_estimate", pc.mqm_estimate, {"prior_or_priors": PRIOR, "eps_puffer": 2.0}, "eps_puffer", POSITIVE)
fuzz("mqm_approx_scale", mqm_approx_scale, {"prior_or_priors": PRIOR, "eps_puffer": 2.0}, "eps_puffer", POSITIVE,
     check=positive_ok)
fuzz("wasserstein_laplace", wasserstein_laplace, {"prior_or_priors": PRIOR, "eps_puffer": 2.0}, "eps_puffer", POSITIVE)
case("wasserstein_laplace[W=0: an even deterministic alternation]",
     lambda: wasserstein_laplace(pc.MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=4), 1.0), E,
     lambda m: None if m.scale > 0 and math.isfinite(m.scale) else f"noise scale {m.scale}")
case("make_mechanism[wasserstein, W=0]", lambda: pc.make_mechanism(
    "wasserstein", 1.0, pc.influence_curve(ALTERNATION), ALTERNATION, query="histogram"), E)
fuzz("influence_estimate", pc.influence_estimate, {"prior_or_priors": PRIOR}, "max_b", WHOLE, skip=("None",))
fuzz("influence_drivers", pc.influence_drivers, {"prior": PRIOR}, "prior", PRIOR_BAD[:4])
fuzz("forward_privacy_leakage", pc.forward_privacy_leakage, {"forward": P, "eps": [1.0] * T}, "forward", MATRIX)
fuzz("forward_privacy_leakage", pc.forward_privacy_leakage, {"forward": P, "eps": [1.0] * T}, "eps", EPS_SEQ,
     skip=("short", "long"))
fuzz("tpl_estimate", pc.tpl_estimate, {"prior_or_priors": PRIOR}, "prior_or_priors", PRIOR_BAD)
fuzz("tpl_refusal", pc.tpl_refusal, {"prior_or_priors": PRIOR}, "prior_or_priors", PRIOR_BAD)
for label, value, refuse in POSITIVE:
    case(f"optimal_schedule[target={label},length=6]", lambda v=value: pc.optimal_schedule(PRIOR, v, 6), refuse,
         schedule_ok(value) if isinstance(value, float) else None)
fuzz("exact_histogram_leakage", pc.exact_histogram_leakage, {"prior_or_priors": SMALL, "eps": 1.0}, "eps", POSITIVE,
     check=positive_or_zero_ok)
fuzz("exact_histogram_leakage", pc.exact_histogram_leakage, {"prior_or_priors": SMALL, "eps": 1.0}, "k", WHOLE,
     skip=("huge", "toolarge"))
for arg in ("n_states", "length", "outputs", "n_priors"):
    fuzz("exact_stream_estimate", pc.exact_stream_estimate, {"n_states": 2, "length": 4, "outputs": 2}, arg, WHOLE)
fuzz("exact_stream_estimate", pc.exact_stream_estimate, {"n_states": 2, "length": 4, "outputs": 2}, "limit", POSITIVE)
fuzz("exact_stream_leakage", pc.exact_stream_leakage, {"prior_or_priors": SMALL, "emissions": EMISSION}, "emissions",
     EMISSION_BAD)
fuzz("attack_histogram", pc.attack_histogram, {"prior_or_priors": SMALL, "eps": 1.0, "draws": 20}, "eps", POSITIVE)
for arg in ("draws", "k", "max_sweeps"):
    fuzz("attack_histogram", pc.attack_histogram, {"prior_or_priors": SMALL, "eps": 1.0, "draws": 20}, arg, WHOLE,
         skip=("huge", "toolarge"))
fuzz("attack_stream", pc.attack_stream, {"prior_or_priors": SMALL, "emissions": EMISSION, "draws": 20}, "emissions",
     EMISSION_BAD)
for arg in ("k", "length", "priors", "draws", "restarts", "max_sweeps"):
    fuzz("stream_attack_estimate", pc.stream_attack_estimate, {"k": 2, "length": 4}, arg,
         [(lbl, v, E if (arg, lbl) == ("draws", "zero") else r) for lbl, v, r in WHOLE])  # 0 draws: what fits
SMOOTH = {"prior": PRIOR, "releases": np.full((T, 2), 5.0), "noise_variance": 2.0, "users": 10}
PER_STEP = {"list": R}  # a list is a valid type here (one value per step): one of the wrong length is a wrong value
fuzz("smooth_count_stream", pc.smooth_count_stream, SMOOTH, "noise_variance",
     [(lbl, v, PER_STEP.get(lbl, r)) for lbl, v, r in POSITIVE], check=smoothing_ok)
fuzz("smooth_count_stream", pc.smooth_count_stream, SMOOTH, "users",
     [(lbl, v, PER_STEP.get(lbl, r)) for lbl, v, r in WHOLE], check=smoothing_ok)
fuzz("smooth_count_stream", pc.smooth_count_stream, SMOOTH, "releases",
     [("nan", np.full((T, 2), math.nan), R), ("short-rows", np.full((T, 1), 5.0), R), ("None", None, TY),
      ("str", "x", TY), ("toolarge", [[HUGE_INT, 1]] * T, R), ("huge", np.full((T, 2), 1e300), E)],
     check=smoothing_ok)
fuzz("smooth_count_stream", pc.smooth_count_stream, SMOOTH, "project", FLAG)
fuzz("count_moments", pc.count_moments, {"prior": PRIOR, "presence": np.ones((3, T))}, "presence",
     [("None", None, TY), ("str", "x", TY), ("halves", np.full((3, T), 0.5), R), ("nan", np.full((3, T), math.nan), R),
      ("long", np.ones((3, T + 2)), R)])
fuzz("likelihood_ratio_points", pc.likelihood_ratio_points,
     {"prior": PRIOR, "emission": EMISSION, "entry": 1, "pair": (0, 1), "draws": 200}, "entry",
     [(lbl, v, E if lbl == "zero" else r) for lbl, v, r in WHOLE], skip=("huge", "toolarge"))  # 0-based
fuzz("likelihood_ratio_points", pc.likelihood_ratio_points,
     {"prior": PRIOR, "emission": EMISSION, "entry": 1, "pair": (0, 1), "draws": 200}, "draws", WHOLE,
     skip=("huge", "toolarge"))
fuzz("smoothing_accuracy", pc.smoothing_accuracy, {"prior": PRIOR, "emission": EMISSION, "draws": 200}, "draws", WHOLE,
     skip=("huge", "toolarge"))
fuzz("smoothing_accuracy", pc.smoothing_accuracy, {"prior": PRIOR, "emission": EMISSION, "draws": 200}, "length",
     WHOLE, skip=("huge", "toolarge", "None"))
RANKING = [("nan", [math.nan, 1], R), ("str", "x", TY), ("None", None, TY), ("bools", [True, False], TY),
           ("toolarge", [HUGE_INT, 0], R), ("out-of-range", [5, 0], R), ("fraction", [0.5, 1.0], R),
           ("repeated-after-k", [1, 1], E), ("empty", [], R)]  # only the top k = 1 is read
for metric in (pc.acc_at_k, pc.hit_rate_at_k, pc.ndcg_at_k, pc.l1_count_error):
    base = {"predicted": np.array([[0, 1]]), "counts": np.array([[2.0, 1.0]]), "k": 1}
    fuzz(metric.__name__, metric, base, "k", WHOLE, skip=("huge", "toolarge"))
    fuzz(metric.__name__, metric, base, "predicted", RANKING)
    fuzz(metric.__name__, metric, base, "counts", COUNTS, skip=("matrix",))
fuzz("transition_counts", pc.transition_counts, {"data": SEQS}, "data", [("None", None, TY), ("str", "x", TY)])
fuzz("split_by_time", pc.split_by_time, {"data": SEQS}, "train_fraction", PROBABILITY)
fuzz("split_by_users", pc.split_by_users, {"data": SEQS, "rng": 0}, "test_fraction", PROBABILITY)
fuzz("posterior_mean_chain", pc.posterior_mean_chain, {"data": SEQS}, "concentration", POSITIVE, skip=("None",))
fuzz("dirichlet_alternative", pc.dirichlet_alternative, {"data": SEQS, "eps_puffer": 2.0, "draws": 3}, "eps_puffer",
     POSITIVE)
fuzz("dirichlet_alternative", pc.dirichlet_alternative, {"data": SEQS, "eps_puffer": 2.0, "draws": 3}, "draws", WHOLE,
     skip=("huge", "toolarge"))
fuzz("smoothing_effect", pc.smoothing_effect, {"data": SEQS, "eps_puffer": 2.0}, "eps_puffer", POSITIVE)
fuzz("fit_prior_set", pc.fit_prior_set, {"data": SEQS, "draws": 3}, "draws", WHOLE, skip=("huge", "toolarge"))
fuzz("fit_prior_set", pc.fit_prior_set, {"data": SEQS, "draws": 3}, "concentration", POSITIVE, skip=("None",))
fuzz("row_sensitivity", pc.row_sensitivity, {"priors": [PRIOR, PRIOR], "draws": 3}, "b", WHOLE,
     skip=("huge", "toolarge"))
fuzz("read_table", pc.read_table, {"source": EVENTS}, "max_rows", WHOLE, skip=("huge", "npint", "toolarge"))
TABLE_BAD = [case for case in SOURCE_BAD if case[0] not in ("no-columns", "nan-states", "empty-frame")]  # any table
fuzz("read_table", pc.read_table, {"source": EVENTS}, "source", TABLE_BAD)
fuzz("read_columns", pc.read_columns, {"source": EVENTS}, "source", TABLE_BAD)
fuzz("get_dataset", pc.get_dataset, {"name": "seattle-weather"}, "name", [("unknown", "nothing", R), ("None", None, TY),
                                                                  ("int", 3, TY)])
for label, source in (("utf-16", EVENTS.to_csv(index=False).encode("utf-16")),
                      ("utf-16-le-bom", b"\xff\xfe" + EVENTS.to_csv(index=False).encode("utf-16-le")),
                      ("latin-1", EVENTS.assign(state=["é", "ü", "é", "ü", "ü", "é", "é", "ü"]).to_csv(
                          index=False).encode("latin-1"))):
    case(f"load_sequences[source={label}]", lambda s=source: pc.load_sequences(s), E)
    case(f"load_stats[source={label}]", lambda s=source: pc.load_stats(s), E)
fuzz("load_stats", pc.load_stats, {"source": EVENTS}, "source",
     [("garbage-csv", b"user,time\n1,2,3,4\n\x01", R), ("zero-bytes", b"\x00" * 1000, R),
      ("missing-file", "/nonexistent/x.csv", R), ("directory", NO_DATA_FOLDER, R), ("list", [1, 2], TY)])
RESULT = pc.simulate(**SIM)
fuzz("explain_simulation", pc.explain_simulation, {"result": RESULT}, "release", WHOLE, skip=("huge",))
fuzz("explain_simulation", pc.explain_simulation, {"result": RESULT}, "result",
     [("None", None, TY), ("str", "x", TY), ("dict", {}, TY)])

# --- classification ------------------------------------------------------------------------------------

INTERNAL_MESSAGES = (
    "is not iterable", "maximum allowed size", "could not convert", "index out of range", "has no attribute",
    "unsupported operand", "not subscriptable", "unhashable", "truth value of an array", "invalid literal",
    "setting an array element", "could not broadcast", "operands could not be broadcast", "inhomogeneous",
    "too many indices", "is out of bounds", "cannot reshape", "argument must be", "only integer scalar",
    "only length-1 arrays", "zero-size array", "cannot convert float", "math domain error", "must not contain infs",
    "not supported between", "object cannot be interpreted", "'nonetype' object", "'str' object", "'dict' object",
    "'list' object", "'float' object", "'bool' object", "takes from", "positional argument", "keyword argument",
)
CLASSES = ("CLEAN", "ACCEPTED", "UNCLEAN", "SILENT WRONG")


class Timeout(Exception):
    """A case ran longer than CASE_SECONDS."""


def _alarm(signum: int, frame: Any) -> None:
    raise Timeout


def classify(item: Case) -> tuple[str, str]:
    """(class, detail) of one case."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        with np.errstate(all="ignore"):
            result = item.call()
    except Timeout:
        return "UNCLEAN", f"still running after {CASE_SECONDS} s"
    except (ValueError, TypeError) as exc:
        message = str(exc)
        lower = message.lower()
        if not message.strip() or any(text in lower for text in INTERNAL_MESSAGES):
            return "UNCLEAN", f"{type(exc).__name__}: {message[:200]}"
        if type(exc).__module__.startswith(("numpy", "scipy", "duckdb", "pandas", "pyarrow")) or \
                "LinAlgError" in type(exc).__name__:
            return "UNCLEAN", f"{type(exc).__module__}.{type(exc).__name__}: {message[:200]}"
        if item.must_refuse == TY and not isinstance(exc, TypeError):
            return "UNCLEAN", f"a wrong type refused as a wrong value ({type(exc).__name__}, not a TypeError): " \
                f"{message[:160]}"
        return "CLEAN", message[:200]
    except Exception as exc:  # every other exception is unclean: that is what this file counts
        return "UNCLEAN", f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if item.must_refuse:
        return "SILENT WRONG", f"accepted, returned {_short(result)}"
    problem = _nans(result) or (item.check(result) if item.check else None)
    if problem:
        return "SILENT WRONG", problem
    return "ACCEPTED", _short(result)


def _short(value: Any) -> str:
    return repr(value).replace("\n", " ")[:120]


def test_every_base_call_is_accepted() -> None:
    """A fuzzed argument is only tested if the call with every other argument as given works."""
    failed = []
    for name, call in BASES.items():
        try:
            with np.errstate(all="ignore"):
                call()
        except Exception as exc:  # noqa: BLE001 - every failure is listed
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failed, failed


def test_enough_cases() -> None:
    assert len(CASES) >= 300
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("item", CASES, ids=[c.name for c in CASES])
def test_fuzz_case(item: Case) -> None:
    outcome, detail = classify(item)
    assert outcome in ("CLEAN", "ACCEPTED"), f"{outcome}: {detail}"


def main() -> None:
    counts: Counter[str] = Counter()
    bad = []
    for item in CASES:
        outcome, detail = classify(item)
        counts[outcome] += 1
        if outcome not in ("CLEAN", "ACCEPTED"):
            bad.append((outcome, item.name, detail))
    for outcome, name, detail in bad:
        print(f"{outcome:13s} {name}: {detail}")
    print(f"\n{'class':13s} cases")
    for name in CLASSES:
        print(f"{name:13s} {counts[name]}")
    print(f"{'total':13s} {sum(counts.values())}")


if __name__ == "__main__":
    main()
