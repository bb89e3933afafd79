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

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import puffer_core as pc  # noqa: E402
from puffer_core.mechanisms.laws import randomized_response_emission  # noqa: E402
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

# --- bad values per kind of argument: (label, value, must_refuse) -------------------------------------------

R, E = True, False  # R: must be refused; E: refusing or returning a sane value are both fine

WRONG_TYPES = [("str", "1", R), ("None", None, R), ("list", [1.0], R), ("dict", {}, R), ("True", True, R),
               ("False", False, R)]
NUMBER = [("nan", math.nan, R), ("-inf", -math.inf, R), ("inf", math.inf, E), *WRONG_TYPES]
POSITIVE = [*NUMBER, ("neg", -1.0, R), ("zero", 0.0, R), ("huge", 1e308, E), ("tiny", 1e-300, E),
            ("np.nan", np.float64("nan"), R)]
EPS_OR_ZERO = [*NUMBER, ("neg", -1.0, R), ("zero", 0.0, E), ("huge", 1e308, E), ("tiny", 1e-300, E)]
WHOLE = [("nan", math.nan, R), ("float", 2.5, R), ("neg", -1, R), ("zero", 0, R), ("True", True, R),
         ("False", False, R), ("str", "3", R), ("None", None, R), ("list", [3], R), ("hugefloat", 1e308, R),
         ("huge", 10**12, E), ("npint", np.int64(3), E), ("inf", math.inf, R)]
PROBABILITY = [("nan", math.nan, R), ("neg", -0.1, R), ("above1", 1.1, R), ("inf", math.inf, R),
               ("True", True, R), ("False", False, R), ("str", "0.5", R), ("None", None, R), ("zero", 0.0, E),
               ("one", 1.0, E), ("tiny", 1e-300, E), ("nearly1", 1 - 1e-16, E)]
FLAG = [("yes", "yes", R), ("x", "x", R), ("one", 1, R), ("zero", 0, R), ("None", None, R), ("nan", math.nan, R),
        ("np.True_", np.True_, E)]
MATRIX = [("nan", [[math.nan, 1.0], [0.5, 0.5]], R), ("inf", [[math.inf, 0.0], [0.5, 0.5]], R),
          ("neg", [[-0.1, 1.1], [0.5, 0.5]], R), ("sum1.2", [[0.6, 0.6], [0.5, 0.5]], R),
          ("array-sum1.2", np.array([[0.6, 0.6], [0.5, 0.5]]), R), ("nonsquare", [[0.5, 0.5]], R),
          ("vector", [0.5, 0.5], R), ("empty", [], R), ("empty-row", [[]], R), ("None", None, R), ("str", "x", R),
          ("dict", {}, R), ("bools", [[True, False], [False, True]], R), ("1x1", [[1.0]], R),
          ("huge", [[1e308, 1e308], [0.5, 0.5]], R), ("text-cells", [["a", "b"], [0.5, 0.5]], R),
          ("ragged", [[0.5, 0.5], [0.5]], R), ("3x2", [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], R),
          ("scalar", 0.5, R), ("3d", np.full((2, 2, 2), 0.5), R)]
PRIOR_BAD = [("None", None, R), ("str", "x", R), ("empty", [], R), ("list-None", [None], R), ("dict", {}, R),
             ("int", 3, R), ("matrix", P, R), ("mixed-K", [PRIOR, PRIOR3], R)]
CURVE_BAD = [("None", None, R), ("str", "x", R), ("dict", {}, R), ("list", [], R), ("int", 3, R),
             ("calibration", CAL, R)]
EPS_SEQ = [("empty", [], R), ("nan", [math.nan] * T, R), ("neg", [-1.0] * T, R), ("bools", [True] * T, R),
           ("str", "x", R), ("None", None, R), ("short", [1.0] * (T - 1), R), ("long", [1.0] * (T + 3), R),
           ("inf-first", [math.inf] + [1.0] * (T - 1), E), ("huge", [1e308] * T, E), ("zeros", [0.0] * T, E),
           ("nested", [[1.0]] * T, R), ("text-cells", ["a"] * T, R)]
EMISSION_BAD = [(label, value, R) for label, value, _ in MATRIX if label not in ("nonsquare", "3x2", "1x1")]
OBSERVATIONS = [("empty", [], R), ("out-of-range", [0, 5], R), ("float", [0.5, 1], R), ("bools", [True, False], R),
                ("None", None, R), ("str", "01", R), ("negative", [-1, 0], R), ("nan", [math.nan], R),
                ("longer-than-prior", [0] * (T + 1), E)]  # documented: T is the number of observations
COUNTS = [("nan", [math.nan, 1.0], R), ("empty", [], R), ("str", "x", R), ("None", None, R),
          ("bools", [True, 1.0], R), ("inf", [math.inf, 1.0], R), ("negative", [-1.0, 2.0], E),
          ("huge", [1e308, 1.0], E), ("matrix", [[1.0, 2.0]], E)]
RNG_BAD = [("None", None, R), ("int", 0, R), ("str", "x", R), ("legacy", np.random.RandomState(0), R)]
SOURCE_BAD = [("empty-bytes", b"", R), ("zero-bytes", b"\x00" * 1000, R), ("missing-file", "/nonexistent/x.csv", R),
              ("None", None, R), ("int", 3, R), ("no-columns", pd.DataFrame({"a": [1, 2]}), R),
              ("nan-states", EVENTS.assign(state=[math.nan] * 8), R), ("garbage-csv", b"user,time\n1,2,3,4\n\x01", R),
              ("dict", {}, R), ("empty-frame", EVENTS.iloc[:0], R), ("list", [1, 2], R),
              ("directory", "/tmp", R)]  # an endless stream (/dev/zero): tests/test_readers_repair.py, test_cli.py


class Case(NamedTuple):
    name: str
    call: Callable[[], Any]
    must_refuse: bool
    check: Callable[[Any], str | None] | None  # returns a problem with an accepted value, or None


CASES: list[Case] = []


def fuzz(name: str, fn: Callable[..., Any], base: dict[str, Any], arg: str, bad: list[tuple[str, Any, bool]],
         check: Callable[[Any], str | None] | None = None, skip: tuple[str, ...] = ()) -> None:
    """One case per bad value of ``arg``, every other argument as in ``base``."""
    for label, value, refuse in bad:
        if label in skip:
            continue
        kwargs = {**base, arg: value}
        CASES.append(Case(f"{name}[{arg}={label}]", lambda kw=kwargs: fn(**kw), refuse, check))


def case(name: str, call: Callable[[], Any], refuse: bool, check: Callable[[Any], str | None] | None = None) -> None:
    CASES.append(Case(name, call, refuse, check))


# --- checks on accepted values, independent of the code that made them ------------------------------------

_NOT_APPLICABLE = {False: ("hit", "hit_low", "hit_high"), True: ("alpha", "beta")}


def _nans(value: Any, depth: int = 0) -> str | None:
    """Where a NaN (or -inf) hides in a returned value, or None."""
    if depth > 4:
        return None
    if isinstance(value, (float, np.floating)):
        return "NaN" if math.isnan(value) else ("-inf" if value == -math.inf else None)
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return "NaN in array" if np.isnan(value).any() else None
    if isinstance(value, pd.DataFrame):
        numeric = value.select_dtypes("number")
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
fuzz("make_mechanism", pc.make_mechanism, {"name": "pufferfish", "eps_puffer": 2.0, "curve": CURVE, "priors": PRIOR},
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
       "mechanisms": ["pufferfish"]}
fuzz("simulate", pc.simulate, SIM, "eps_grid",
     [("empty", (), R), ("nan", (math.nan,), R), ("neg", (-1.0,), R), ("bools", (True,), R), ("str", "x", R),
      ("None", None, R), ("zero", (0.0,), R)])
fuzz("simulate", pc.simulate, SIM, "trials", WHOLE)
fuzz("simulate", pc.simulate, SIM, "k", WHOLE)
fuzz("simulate", pc.simulate, SIM, "releases", WHOLE)
fuzz("simulate", pc.simulate, SIM, "data", [("None", None, R), ("frame", EVENTS, R), ("str", "x", R)])
fuzz("simulate", pc.simulate, SIM, "postprocess", FLAG)
fuzz("simulate", pc.simulate, SIM, "query", [("unknown", "median", R), ("None", None, R)])

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
        if type(exc).__module__.startswith("numpy") or "LinAlgError" in type(exc).__name__:
            return "UNCLEAN", f"{type(exc).__name__}: {message[:200]}"
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
