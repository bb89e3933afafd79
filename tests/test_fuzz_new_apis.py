"""The fuzz table of tests/test_fuzz_api.py over the APIs added since (issues 28–34): secrets, the engine's
``secrets=`` and redaction plans, Rényi accounting, the Gaussian mechanism and its count laws and mixtures, the
best possible mechanism, and synthetic sequences.

The same classes and rule: every bad input is refused with the library's errors (InvalidParameter, DataError,
Refused: a ValueError or a TypeError naming the problem), or it gives a sane value (no NaN, and where a check
is cheap and independent it holds); never a raw traceback, a NaN or a silent wrong number.
``python -m tests.test_fuzz_new_apis`` prints the count per class.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

import puffer_core as pc
from puffer_core.accounting.renyi import check_renyi_order, combined_sigma, renyi_ledger, renyi_to_approx
from puffer_core.mechanisms.count_laws import check_count_states, count_laws, count_laws_estimate
from puffer_core.mechanisms.gaussian import gaussian_count, gaussian_histogram
from puffer_core.mechanisms.gaussian_calibration import (
    calibrate_gaussian_count,
    gaussian_count_estimate,
    gwm_eps,
    gwm_sigma,
)
from puffer_core.mechanisms.mixtures import count_grid, make_grid
from puffer_core.optimal import optimal_count_mechanism, optimal_histogram_mechanism
from puffer_core.optimal.compare import compare_with_floor
from puffer_core.optimal.lp import programme_estimate
from puffer_core.optimal.repeat import repeated_estimate, repeated_leakage
from puffer_core.secrets import EventSecrets, PopulationSecrets, Secrets, TimeRule, read_secrets
from puffer_core.synthesis import fidelity, load_chain_counts, plan_synthesis, synthesis_source, synthesize
from puffer_core.synthesis.counts import chain_counts
from tests.test_fuzz_api import (
    CLASSES,
    EPS_OR_ZERO,
    EVENTS,
    FLAG,
    GP,
    HUGE_INT,
    NUMBER,
    POSITIVE,
    PRIOR,
    PRIOR3,
    PRIOR_BAD,
    PROBABILITY,
    RNG_BAD,
    SEQS,
    SOURCE_BAD,
    TY,
    WHOLE,
    WRONG_TYPES,
    Case,
    E,
    P,
    R,
    classify,
    curve_ok,
    positive_ok,
)

CASES: list[Case] = []
BASES: dict[str, Any] = {}


def fuzz(name: str, fn: Any, base: dict[str, Any], arg: str, bad: list[tuple[str, Any, bool | str]],
         check: Any = None, skip: tuple[str, ...] = ()) -> None:
    """One case per bad value of ``arg``, every other argument as in ``base`` (as in tests/test_fuzz_api.py)."""
    BASES.setdefault(f"{name}({', '.join(sorted(base))})", lambda kw=dict(base): fn(**kw))
    for label, value, refuse in bad:
        if label not in skip:
            CASES.append(Case(f"{name}[{arg}={label}]", lambda kw={**base, arg: value}: fn(**kw), refuse, check))


def case(name: str, call: Any, refuse: bool | str, check: Any = None) -> None:
    CASES.append(Case(name, call, refuse, check))


# --- bad values of the new kinds of arguments ----------------------------------------------------------------

INDICES = [("neg", (-1,), R), ("float", (0.5,), TY), ("str", "0", TY), ("bools", (True,), TY), ("nan", (math.nan,), TY),
           ("nested", ((0,),), TY), ("toolarge", (HUGE_INT,), R), ("None-item", (None,), TY), ("dict", {}, TY),
           ("np.int64", (np.int64(0),), E)]
STATES = [("empty", [], R), ("beyond", [5], R), ("neg", [-1], R), ("float", [0.5], TY), ("None", None, TY),
          ("str", "x", TY), ("bools", [True], TY), ("nan", [math.nan], TY), ("duplicate", [0, 0], E),
          ("toolarge", [HUGE_INT], R)]
ORDER = [("one", 1.0, R), ("below1", 0.5, R), ("zero", 0.0, R), ("neg", -2.0, R), ("nan", math.nan, R),
         *WRONG_TYPES, ("inf", math.inf, E), ("huge", 1e308, E), ("toolarge", HUGE_INT, R),
         ("np.float32", np.float32(2.0), E)]
SECRETS_BAD = [("str", "all", TY), ("int", 3, TY), ("dict", {}, TY), ("positions-beyond", Secrets(positions=(99,)), R),
               ("state-beyond", Secrets(pairs="sensitive", states=(5,)), R),
               ("listed-beyond", Secrets(pairs="list", listed=((0, 7),)), R),
               ("population", PopulationSecrets(((PRIOR, PRIOR),)), TY)]
NODE = [("neg", -1, R), ("beyond", 5, R), ("float", 1.5, TY), ("None", None, TY), ("True", True, TY),
        ("str", "1", TY), ("nan", math.nan, TY), ("toolarge", HUGE_INT, R), ("np.int64", np.int64(2), E)]
TEXT = [("garbage", "zz;;", R), ("None", None, TY), ("int", 3, TY), ("bytes", b"p=all", TY),
        ("bad-state", "p=sensitive;s=x", R), ("neg-position", "p=all;t=-1", R), ("reversed", "p=all;t=3-1", R),
        ("nul", "p=all\x00", R), ("unknown-key", "p=all;q=1", R), ("huge-position", "p=all;t=0-99999999999", R),
        ("event-empty", "e:s=;w=1-2", R), ("bad-hour", "p=all;r=h25", R), ("all", "all", E), ("empty", "", E)]


def _leq(bound: float) -> Any:
    """A feasible plan leaks at most ε; an infeasible one (max_size too small) says so and leaks more."""

    def check(value: Any) -> str | None:
        below = 0.0 <= value.leakage <= bound * (1 + 1e-12) + 1e-12
        return None if below == value.feasible else f"leakage {value.leakage} with feasible = {value.feasible}"

    return check


def _at_least(low: float) -> Any:
    def check(value: Any) -> str | None:
        return None if value >= low and not math.isnan(value) else f"{value} below {low}"

    return check


# --- puffer_core.secrets --------------------------------------------------------------------------------------

fuzz("Secrets", Secrets, {"pairs": "sensitive", "states": (0,)}, "pairs",
     [("unknown", "nope", R), ("None", None, TY), ("int", 3, TY), ("bytes", b"all", TY)])
fuzz("Secrets", Secrets, {"pairs": "sensitive", "states": (0,)}, "states", INDICES)
fuzz("Secrets", Secrets, {"pairs": "sensitive", "states": (0,)}, "ordered", FLAG)
fuzz("Secrets", Secrets, {}, "positions", [*INDICES, ("empty", (), R), ("range", range(3), E)])
fuzz("Secrets", Secrets, {"pairs": "groups", "groups": ((0, 1),)}, "groups",
     [("flat", (0, 1), TY), ("None", None, TY), ("neg", ((-1,), (1,)), R), ("float", ((0.5,), (1,)), TY),
      ("one-group", ((0,),), R), ("overlap", ((0, 1), (1,)), E), ("empty-group", ((), (1,)), R)])
fuzz("Secrets", Secrets, {"pairs": "list", "listed": ((0, 1),)}, "listed",
     [("flat", (0, 1), TY), ("triple", ((0, 1, 2),), R), ("self", ((1, 1),), R), ("neg", ((-1, 0),), R),
      ("float", ((0.5, 1),), TY), ("None", None, TY), ("empty", (), R)])
fuzz("Secrets", Secrets, {}, "rule", [("str", "night", TY), ("int", 1, TY), ("dict", {}, TY)])
fuzz("TimeRule", TimeRule, {"hours": (22, 23)}, "hours",
     [("24", (24,), R), ("neg", (-1,), R), ("float", (1.5,), TY), ("str", "1", TY), ("bools", (True,), TY),
      ("None", None, TY), ("toolarge", (HUGE_INT,), R)])
fuzz("TimeRule", TimeRule, {"weekdays": (5, 6)}, "weekdays",
     [("7", (7,), R), ("neg", (-1,), R), ("float", (1.5,), TY), ("str", "1", TY), ("None", None, TY)])
fuzz("TimeRule", TimeRule, {"start": "2020-01-01", "end": "2020-12-31"}, "start",
     [("month13", "2020-13-01", R), ("garbage", "x", R), ("int", 3, TY), ("after-end", "2021-01-01", R),
      ("empty", "", R)])
fuzz("TimeRule", TimeRule, {"hours": (1,)}, "name", [("int", 3, TY), ("bytes", b"x", TY)])
fuzz("EventSecrets", EventSecrets, {"states": (0,), "windows": ((1, 2),)}, "states",
     [("empty", (), R), *INDICES])
fuzz("EventSecrets", EventSecrets, {"states": (0,), "windows": ((1, 2),)}, "windows",
     [("empty", (), R), ("reversed", ((3, 1),), R), ("neg", ((-1, 2),), R), ("float", ((0.5, 2),), TY),
      ("flat", (1, 2), TY), ("None", None, TY), ("triple", ((1, 2, 3),), R), ("str", "1-2", TY)])
fuzz("PopulationSecrets", PopulationSecrets, {"pairs": ((PRIOR, PRIOR),)}, "pairs",
     [("empty", (), R), ("None", None, TY), ("single", (PRIOR,), TY), ("mixed-K", ((PRIOR, PRIOR3),), R),
      ("matrices", ((P, P),), TY), ("gp", ((GP, GP),), TY), ("triple", ((PRIOR, PRIOR, PRIOR),), R)])
fuzz("PopulationSecrets", PopulationSecrets, {"pairs": ((PRIOR, PRIOR),)}, "names",
     [("short", (("a",),), R), ("int", ((1, 2),), E), ("too-many", (("a", "b"), ("c", "d")), R)])
fuzz("read_secrets", read_secrets, {"text": "p=sensitive;s=0"}, "text", TEXT)

# --- the engine's secrets= and redaction plans -----------------------------------------------------------------

fuzz("influence_curve", pc.influence_curve, {"prior_or_priors": PRIOR}, "secrets",
     [*SECRETS_BAD, ("event-beyond", EventSecrets((0,), ((3, 9),)), R),
      ("event-state-beyond", EventSecrets((7,), ((1, 2),)), R)],
     check=curve_ok)
fuzz("influence_curve[gp]", pc.influence_curve, {"prior_or_priors": GP}, "secrets",
     [("pairs", Secrets(pairs="sensitive", states=(0,)), R), ("event", EventSecrets((0,), ((1, 2),)), R),
      ("positions-beyond", Secrets(positions=(5,)), R), ("str", "all", TY)], check=curve_ok)
fuzz("redaction_plan", pc.redaction_plan, {"prior_or_priors": PRIOR, "node": 2, "eps": 1.0}, "node", NODE,
     check=_leq(1.0))
fuzz("redaction_plan", pc.redaction_plan, {"prior_or_priors": PRIOR, "node": 2, "eps": 1.0}, "eps", EPS_OR_ZERO,
     skip=("inf",))
fuzz("redaction_plan", pc.redaction_plan, {"prior_or_priors": PRIOR, "node": 2, "eps": 1.0}, "prior_or_priors",
     [*PRIOR_BAD, ("gp", GP, R)])
fuzz("redaction_plan", pc.redaction_plan, {"prior_or_priors": PRIOR, "node": 2, "eps": 1.0}, "secrets",
     [(lbl, v, E if lbl == "positions-beyond" else r) for lbl, v, r in SECRETS_BAD], check=_leq(1.0))  # the node
# is the position
fuzz("redaction_plan", pc.redaction_plan, {"prior_or_priors": PRIOR, "node": 2, "eps": 1.0}, "max_size", WHOLE,
     check=_leq(1.0), skip=("None",))

# --- Rényi accounting ------------------------------------------------------------------------------------------

fuzz("check_renyi_order", check_renyi_order, {"alpha": 2.0}, "alpha", ORDER)
fuzz("renyi_to_approx", renyi_to_approx, {"alpha": 2.0, "eps": 1.0, "delta": 1e-6}, "alpha", ORDER,
     check=_at_least(0.0))
fuzz("renyi_to_approx", renyi_to_approx, {"alpha": 2.0, "eps": 1.0, "delta": 1e-6}, "eps", EPS_OR_ZERO,
     check=_at_least(0.0))
fuzz("renyi_to_approx", renyi_to_approx, {"alpha": 2.0, "eps": 1.0, "delta": 1e-6}, "delta",
     [(lbl, v, R if lbl in ("zero", "one", "neg-zero") else r) for lbl, v, r in PROBABILITY],
     check=_at_least(1.0))  # ε_δ ≥ ε
fuzz("combined_sigma", combined_sigma, {"sigmas": [1.0, 2.0]}, "sigmas",
     [("empty", [], R), ("nan", [math.nan], R), ("neg", [-1.0], R), ("zero", [0.0], R), ("str", "x", TY),
      ("None", None, TY), ("bools", [True], TY), ("inf", [math.inf], E), ("toolarge", [HUGE_INT], R)],
     check=positive_ok)
EVENT = gaussian_histogram(PRIOR, 1.0).accounting
fuzz("renyi_ledger", renyi_ledger, {"events": [EVENT]}, "events",
     [("None", None, TY), ("ints", [1, 2], TY), ("str", "x", TY), ("nested", [[EVENT]], TY)])
fuzz("renyi_ledger", renyi_ledger, {"events": [EVENT]}, "delta",
     [(lbl, v, R if lbl in ("zero", "one", "neg-zero") else r) for lbl, v, r in PROBABILITY if lbl != "None"])
fuzz("renyi_ledger", renyi_ledger, {"events": [EVENT]}, "alpha", [o for o in ORDER if o[0] != "None"])

# --- the Gaussian mechanism, its count laws and mixtures -------------------------------------------------------

fuzz("gaussian_histogram", gaussian_histogram, {"prior_or_priors": PRIOR, "eps": 1.0}, "eps", POSITIVE,
     skip=("tiny", "subnormal"))
fuzz("gaussian_histogram", gaussian_histogram, {"prior_or_priors": PRIOR, "eps": 1.0}, "alpha", ORDER)
fuzz("gaussian_histogram", gaussian_histogram, {"prior_or_priors": PRIOR, "eps": 1.0}, "prior_or_priors",
     [*PRIOR_BAD, ("gp", GP, TY)])
fuzz("gaussian_histogram", gaussian_histogram, {"prior_or_priors": PRIOR, "eps": 1.0}, "secrets", SECRETS_BAD)
fuzz("gaussian_histogram", gaussian_histogram, {"prior_or_priors": PRIOR, "eps": 1.0}, "exact", FLAG)
fuzz("gaussian_count", gaussian_count, {"prior_or_priors": PRIOR, "states": [0], "eps": 1.0}, "states", STATES)
fuzz("calibrate_gaussian_count", calibrate_gaussian_count, {"prior_or_priors": PRIOR, "states": [0], "eps": 1.0},
     "states", STATES)
fuzz("calibrate_gaussian_count", calibrate_gaussian_count, {"prior_or_priors": PRIOR, "states": [0], "eps": 1.0},
     "eps", POSITIVE, skip=("tiny", "subnormal"))
fuzz("gwm_sigma", gwm_sigma, {"w": 1.0, "alpha": 2.0, "eps": 1.0}, "w",
     [(lbl, v, E if lbl in ("zero", "neg-zero", "subnormal", "subnormal-big") else r) for lbl, v, r in POSITIVE],
     check=_at_least(0.0))  # W∞ = 0: no noise
fuzz("gwm_sigma", gwm_sigma, {"w": 1.0, "alpha": 2.0, "eps": 1.0}, "alpha", ORDER, check=positive_ok)
fuzz("gwm_sigma", gwm_sigma, {"w": 1.0, "alpha": 2.0, "eps": 1.0}, "eps", POSITIVE, check=_at_least(0.0))
fuzz("gwm_eps", gwm_eps, {"w": 1.0, "alpha": 2.0, "sigma": 1.0}, "sigma",
     [(lbl, v, E if lbl in ("zero", "neg-zero", "subnormal", "subnormal-big") else r) for lbl, v, r in POSITIVE],
     check=_at_least(0.0))  # σ = 0: ε = ∞
fuzz("gaussian_count_estimate", gaussian_count_estimate, {"n_states": 2, "length": 5, "alpha": 2.0, "eps": 1.0},
     "n_states", WHOLE)
fuzz("gaussian_count_estimate", gaussian_count_estimate, {"n_states": 2, "length": 5, "alpha": 2.0, "eps": 1.0},
     "length", WHOLE)
fuzz("count_laws", count_laws, {"prior_or_priors": PRIOR, "states": [0]}, "states", STATES)
fuzz("count_laws", count_laws, {"prior_or_priors": PRIOR, "states": [0]}, "prior_or_priors",
     [*PRIOR_BAD, ("gp", GP, TY)])
fuzz("count_laws", count_laws, {"prior_or_priors": PRIOR, "states": [0]}, "secrets", SECRETS_BAD)
fuzz("count_laws_estimate", count_laws_estimate, {"n_states": 2, "length": 5}, "length", WHOLE)
fuzz("count_laws_estimate", count_laws_estimate, {"n_states": 2, "length": 5}, "n_priors", WHOLE)
fuzz("check_count_states", check_count_states, {"states": [0], "n_states": 2}, "states", STATES)
fuzz("count_grid", count_grid, {"sigma": 1.0, "low": 0.0, "high": 5.0}, "sigma", EPS_OR_ZERO)  # σ = 0: no noise
fuzz("count_grid", count_grid, {"sigma": 1.0, "low": 0.0, "high": 5.0}, "high",
     [*NUMBER, ("below-low", -1.0, R)], skip=("inf",))
fuzz("make_grid", make_grid, {"sigma": 1.0, "low": 0.0, "high": 5.0, "step": 0.5}, "step", POSITIVE,
     skip=("tiny",))

# --- the best possible mechanism -------------------------------------------------------------------------------

fuzz("optimal_histogram_mechanism", optimal_histogram_mechanism, {"prior_or_priors": PRIOR, "eps_puffer": 1.0},
     "eps_puffer", POSITIVE, skip=("tiny", "subnormal"))
fuzz("optimal_histogram_mechanism", optimal_histogram_mechanism, {"prior_or_priors": PRIOR, "eps_puffer": 1.0},
     "prior_or_priors", [*PRIOR_BAD, ("gp", GP, TY)])
fuzz("optimal_histogram_mechanism", optimal_histogram_mechanism, {"prior_or_priors": PRIOR, "eps_puffer": 1.0},
     "secrets", SECRETS_BAD)
fuzz("optimal_count_mechanism", optimal_count_mechanism, {"prior_or_priors": PRIOR, "states": [0],
                                                          "eps_puffer": 1.0}, "states", STATES)
fuzz("compare_with_floor", compare_with_floor, {"prior_or_priors": PRIOR, "eps_puffer": 1.0}, "eps_puffer",
     POSITIVE, skip=("tiny", "subnormal"))
fuzz("compare_with_floor", compare_with_floor, {"prior_or_priors": PRIOR, "eps_puffer": 1.0}, "states", STATES,
     skip=("None",))
fuzz("compare_with_floor", compare_with_floor, {"prior_or_priors": PRIOR, "eps_puffer": 1.0}, "alpha", ORDER)
fuzz("compare_with_floor", compare_with_floor, {"prior_or_priors": PRIOR, "eps_puffer": 1.0}, "optimal",
     [("str", "x", TY), ("int", 3, TY), ("other-eps", optimal_histogram_mechanism(PRIOR, 2.0), R)])
OPTIMAL = optimal_histogram_mechanism(PRIOR, 1.0)
fuzz("repeated_leakage", repeated_leakage, {"optimal": OPTIMAL, "k": 2}, "k", WHOLE, skip=("huge", "toolarge"))
fuzz("repeated_leakage", repeated_leakage, {"optimal": OPTIMAL, "k": 2}, "optimal",
     [("None", None, TY), ("str", "x", TY), ("curve", pc.influence_curve(PRIOR), TY)])
fuzz("repeated_leakage", repeated_leakage, {"optimal": OPTIMAL, "k": 2}, "curve",
     [("str", "x", TY), ("int", 3, TY), ("other-length", pc.influence_curve(PRIOR3), E)])
fuzz("programme_estimate", programme_estimate, {"n_values": 3, "n_outputs": 4, "n_pairs": 2}, "n_values", WHOLE)
fuzz("repeated_estimate", repeated_estimate, {"n_outputs": 4, "k": 2, "n_values": 3, "n_laws": 2}, "k", WHOLE)

# --- synthetic sequences ---------------------------------------------------------------------------------------

SYN = {"data": SEQS, "eps_puffer": 2.0, "if_no_signal": "allow"}
fuzz("plan_synthesis", plan_synthesis, SYN, "data",
     [("None", None, TY), ("str", "x", TY), ("frame", EVENTS, TY), ("int", 3, TY), ("list", [[0, 1]], TY)])
fuzz("plan_synthesis", plan_synthesis, SYN, "eps_puffer", POSITIVE, skip=("None", "tiny", "subnormal"))
fuzz("plan_synthesis", plan_synthesis, SYN, "guarantee",
     [("unknown", "nope", R), ("None", None, TY), ("int", 3, TY)])
fuzz("plan_synthesis", plan_synthesis, SYN, "by_group", [f for f in FLAG if f[0] != "None"])
fuzz("plan_synthesis", plan_synthesis, SYN, "min_group_users", WHOLE, skip=("huge", "toolarge"))
fuzz("plan_synthesis", plan_synthesis, SYN, "if_no_signal",
     [("unknown", "nope", R), ("None", None, TY), ("int", 1, TY)])
fuzz("plan_synthesis", plan_synthesis, SYN, "secrets", SECRETS_BAD)
fuzz("plan_synthesis", plan_synthesis, SYN, "prior", [("str", "x", TY), ("int", 3, TY), ("gp", GP, TY),
                                                      ("other-K", PRIOR3, R)])
fuzz("synthesize", synthesize, SYN, "rng", [(lbl, v, E if lbl == "int" else r) for lbl, v, r in RNG_BAD],
     skip=("None",))  # a whole number is a seed
fuzz("synthesize", synthesize, SYN, "method", [("unknown", "nope", R), ("None", None, TY), ("int", 3, TY)])
fuzz("synthesize", synthesize, SYN, "chunk_rows", WHOLE, skip=("huge", "toolarge"))
REAL = chain_counts(SEQS)
fuzz("fidelity", fidelity, {"real": REAL, "synthetic": REAL, "top_k": 2}, "top_k", WHOLE)
fuzz("fidelity", fidelity, {"real": REAL, "synthetic": REAL, "top_k": 2}, "query",
     [("unknown", "nope", R), ("None", None, TY), ("int", 3, TY)])
fuzz("fidelity", fidelity, {"real": REAL, "synthetic": REAL, "top_k": 2}, "synthetic",
     [("None", None, TY), ("str", "x", TY), ("seqs", SEQS, TY)])
fuzz("synthesis_source", synthesis_source, {"eps_puffer": 2.0}, "eps_puffer", POSITIVE, skip=("None",))
fuzz("synthesis_source", synthesis_source, {"eps_puffer": 2.0}, "seed", WHOLE, skip=("None", "zero"))
fuzz("synthesis_source", synthesis_source, {"eps_puffer": 2.0}, "data",
     [("int", 3, TY), ("not-a-name", "1x; import os", R), ("None", None, TY)])
fuzz("load_chain_counts", load_chain_counts, {"source": EVENTS}, "source",
     [s for s in SOURCE_BAD if s[0] != "nan-states"])


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
    for item in CASES:
        outcome, detail = classify(item)
        counts[outcome] += 1
        if outcome not in ("CLEAN", "ACCEPTED"):
            print(f"{outcome:13s} {item.name}: {detail}")
    print("  ".join(f"{name}: {counts[name]}" for name in CLASSES), f" total: {sum(counts.values())}")


if __name__ == "__main__":
    main()
