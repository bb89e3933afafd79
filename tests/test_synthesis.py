"""Synthetic sequences (docs/math.md §19): counts, sensitivity, calibration, noise, model, sampler, fidelity, refusals.

Every number is checked against something that shares no code with it: loops over users, enumeration of
one-entry and window changes (tests/support/brute_synthesis.py), the discrete Laplace law summed term by term,
the chain's probabilities multiplied by hand, the written file read back by the ordinary reader.  The exact
privacy audit is tests/test_synthesis_audit.py.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from puffer_core.accounting.composition import Accountant, compose
from puffer_core.data.datasets import get_dataset, load_dataset
from puffer_core.data.readers import load_sequences
from puffer_core.data.sequences import Sequences
from puffer_core.engine.curve import InfluenceCurve
from puffer_core.errors import DataError
from puffer_core.mechanisms.laplace import pufferfish_laplace
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.secrets import Secrets
from puffer_core.synthesis.counts import RUN_BINS, ChainCounts, chain_counts
from puffer_core.synthesis.fidelity import fidelity, noise_scores, reference_counts
from puffer_core.synthesis.model import fit_synthetic_chain, project_to_total
from puffer_core.synthesis.privacy import (
    ENTRY_L1,
    ENTRY_L2,
    CountAccuracy,
    baseline_scale,
    block_l1,
    calibrate_scale,
    certify_scale,
    expected_abs_noise,
    noise_variance,
    scale_for_abs_noise,
)
from puffer_core.synthesis.release import NoisyCounts, SynthesisEvent, discrete_laplace, release_counts
from puffer_core.synthesis.sample import SyntheticSample
from puffer_core.synthesis.script import synthesis_source
from puffer_core.synthesis.sweep import fidelity_over_eps
from puffer_core.synthesis.synthesize import plan_synthesis, synthesize
from tests.support.brute_synthesis import counts_of, window_changes


@pytest.fixture(scope="module")
def checkins() -> Sequences:
    return load_dataset("checkins")


def _frame(seed: int = 0, users: int = 30, states: int = 4, groups: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        length = int(rng.integers(1, 12))
        country = ["fr", "de", "it"][u % 3]
        for t in range(length):
            rows.append({"user": f"u{u:02d}", "time": t * 10 + int(rng.integers(0, 5)),
                         "state": f"s{int(rng.integers(0, states))}", "country": country})
    frame = pd.DataFrame(rows)
    return frame if groups else frame.drop(columns="country")


# --- the counts ----------------------------------------------------------------------------------------------------


def test_chain_counts_equal_loops_over_users() -> None:
    frame = _frame(1)
    seqs = load_sequences(frame, group="country")
    counts = chain_counts(seqs)
    k, g = seqs.n_states, len(seqs.groups)
    transitions = np.zeros((g, k, k), int)
    first = np.zeros((g, k), int)
    runs = np.zeros((g, k, RUN_BINS), int)
    visits = np.zeros((g, k), int)
    lengths: dict[tuple[int, int], int] = {}
    for i in range(seqs.n_users):
        codes = list(seqs.sequence(i))
        group = int(seqs.group_codes[seqs.offsets[i]])
        first[group, codes[0]] += 1
        for a, b in zip(codes, codes[1:]):
            transitions[group, a, b] += 1
        for state, run in itertools.groupby(codes):
            runs[group, state, min(len(list(run)), RUN_BINS) - 1] += 1
        for state in set(codes):
            visits[group, state] += 1
        lengths[(group, len(codes))] = lengths.get((group, len(codes)), 0) + 1
    assert np.array_equal(counts.transitions, transitions) and np.array_equal(counts.first_states, first)
    assert np.array_equal(counts.runs, runs) and np.array_equal(counts.visits, visits)
    got = {(gi, int(v)): int(counts.length_users[gi, j]) for gi in range(g)
           for j, v in enumerate(counts.length_values) if counts.length_users[gi, j]}
    assert got == lengths
    assert dict(counts.columns) == {"user": "user", "time": "time", "state": "state", "group": "country"}
    pooled = chain_counts(seqs.stats(), by_group=False)  # SequenceStats: one chain for everyone
    assert np.array_equal(pooled.transitions[0], transitions.sum(axis=0))
    assert np.array_equal(counts.pooled().transitions, pooled.transitions)


def test_counts_refuse_users_in_two_groups_and_grouped_stats(checkins: Sequences) -> None:
    weather = load_dataset("seattle-weather", "year")  # a year spans four seasons
    with pytest.raises(DataError, match="more than one group of 'season'.*constant per user"):
        chain_counts(weather)
    assert chain_counts(weather, by_group=False).groups is None
    with pytest.raises(DataError, match="pooled together.*by_group=False"):
        chain_counts(checkins.stats())


# --- sensitivity --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "length"), [(2, 1), (2, 2), (2, 3), (2, 6), (3, 3), (3, 4)])
def test_sensitivity_by_enumerating_every_window_change(k: int, length: int) -> None:
    """One entry: L1 ≤ 4 and L2 ≤ √6, both attained (T ≥ 3); a window of h entries: L1 ≤ 2h + 2 (2T for all)."""
    changes = window_changes(k, length)
    entry = [(l1, l2) for h, _, l1, l2 in changes if h == 1]
    assert max(l1 for l1, _ in entry) <= ENTRY_L1 and max(l2 for _, l2 in entry) <= ENTRY_L2 + 1e-12
    if length >= 3:
        assert max(l1 for l1, _ in entry) == ENTRY_L1 and math.isclose(max(l2 for _, l2 in entry), ENTRY_L2)
    for h in range(1, length + 1):
        worst = max(l1 for size, _, l1, _ in changes if size == h)
        assert worst <= block_l1(h, length)
        if length >= h + 2 or h == length:  # an inner window, or the whole sequence: the bound is attained
            assert worst == block_l1(h, length)


def test_one_entry_of_a_user_moves_only_its_group() -> None:
    before = np.array(counts_of([(0, 1, 0), (1, 0)], [0, 1], 2, 2))
    after = np.array(counts_of([(0, 0, 0), (1, 0)], [0, 1], 2, 2))
    diff = after - before
    assert np.abs(diff).sum() == ENTRY_L1 and not diff[4:8].any() and not diff[-2:].any()


# --- calibration ------------------------------------------------------------------------------------------------


def _curve() -> InfluenceCurve:
    return InfluenceCurve(np.arange(1, 9), np.array([3.0, 1.5, 0.9, 0.5, 0.3, 0.1, 0.05, 0.0]), 8)


@pytest.mark.parametrize("eps", [0.05, 0.4, 1.0, 2.5, 7.0])
def test_calibrate_and_certify_are_the_window_rule(eps: float) -> None:
    curve = _curve()
    calibration, scale = calibrate_scale(curve, eps)
    # by hand: every point's ε at this scale; the chosen one meets eps exactly, none is below eps
    costs = [(2 * b + 2 if b < 8 else 16) / scale + a for b, a in curve.points()]
    assert min(costs) == pytest.approx(eps, rel=1e-12)
    assert calibration.eps_puffer == eps and calibration.b * calibration.eps_dp + calibration.a == pytest.approx(eps)
    assert certify_scale(curve, scale).eps_puffer == pytest.approx(eps, rel=1e-12)
    assert certify_scale(curve, scale * 1.01).eps_puffer < eps  # more noise, a smaller ε
    plain = [(4 * b) / scale + a for b, a in curve.points()]  # group privacy would charge more
    assert min(plain) >= eps - 1e-12


def test_baselines_and_the_event() -> None:
    cal, scale = baseline_scale("group_dp", 2.0, 10)
    assert scale == pytest.approx(4 * 10 / 2.0) and cal.eps_dp == pytest.approx(0.2)
    cal, scale = baseline_scale("user_dp", 2.0, 10)
    assert scale == pytest.approx(2 * 10 / 2.0)
    calibration, scale = calibrate_scale(_curve(), 1.0)
    event = SynthesisEvent("synthetic_sequences", calibration, scale=scale, window_l1=block_l1(calibration.b, 8))
    assert event.eps_dp == pytest.approx(ENTRY_L1 / scale)  # the noise's own per-entry level, never less
    assert event.eps_dp >= calibration.eps_dp
    other = pufferfish_laplace(_curve(), 0.7).accounting
    ledger = Accountant(8).ledger([event, other])
    assert ledger.eps_puffer[0] == pytest.approx(1.0)
    assert ledger.eps_puffer[1] == pytest.approx(compose([event.calibration, other.calibration]))
    assert ledger.eps_puffer[1] == pytest.approx(max(event.a, other.a) + (1.0 - event.a) + (0.7 - other.a))
    assert ledger.group_dp[0] == pytest.approx(8 * ENTRY_L1 / scale)


def test_accuracy_target_gives_the_scale_and_the_guarantee(checkins: Sequences) -> None:
    target = CountAccuracy(alpha=20, beta=0.05)
    scale = target.scale(30)
    # the integer law summed term by term: Pr[|Z| > 20] at that scale is ≤ 0.05, and just above it is not
    alpha = math.exp(-1 / scale)
    tail = 2 * sum((1 - alpha) / (1 + alpha) * alpha**z for z in range(21, 5000))
    assert tail <= 0.05 < 2 * sum((1 - alpha) / (1 + alpha) * alpha**z for z in range(20, 5000))
    plan = plan_synthesis(checkins, None, accuracy=target, by_group=False)
    assert plan.scale == pytest.approx(CountAccuracy(20, 0.05).scale(12 * 12 + 12))
    assert plan.eps_puffer == pytest.approx(certify_scale(plan.curve, plan.scale).eps_puffer)


# --- the noise ----------------------------------------------------------------------------------------------------


def test_discrete_laplace_law_and_moments() -> None:
    scale = 2.5
    alpha = math.exp(-1 / scale)
    draws = discrete_laplace(200_000, scale, np.random.default_rng(0))
    values = np.arange(-15, 16)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(values)
    observed = np.array([(draws == v).sum() for v in values] + [(np.abs(draws) > 15).sum()])
    expected = np.append(pmf, 1 - pmf.sum()) * draws.size
    assert scipy_stats.chisquare(observed, expected).pvalue > 1e-4
    z = np.arange(-2000, 2001)
    law = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)
    assert expected_abs_noise(scale) == pytest.approx((law * np.abs(z)).sum(), rel=1e-12)
    assert noise_variance(scale) == pytest.approx((law * z**2).sum(), rel=1e-12)
    assert scale_for_abs_noise(expected_abs_noise(scale)) == pytest.approx(scale, rel=1e-12)


def test_release_draws_with_opendp_or_numpy() -> None:
    counts = chain_counts(load_sequences(_frame(2), group="country"))
    plan = plan_synthesis(counts, None, 3.0, if_no_signal="allow")
    real = release_counts(counts, plan.scale, plan.event, "pufferfish", None)
    assert real.drawn_by == "opendp" and real.transitions.shape == counts.transitions.shape
    assert np.array_equal(real.length_users, counts.length_users)  # lengths are public: exact
    a = release_counts(counts, plan.scale, plan.event, "pufferfish", np.random.default_rng(4))
    b = release_counts(counts, plan.scale, plan.event, "pufferfish", np.random.default_rng(4))
    assert a.drawn_by == "numpy" and np.array_equal(a.transitions, b.transitions)
    noise = np.concatenate([(a.transitions - counts.transitions).ravel(),
                            (a.first_states - counts.first_states).ravel()])
    assert noise.size == counts.n_groups * (counts.n_states**2 + counts.n_states) and noise.std() > 0


# --- the model ----------------------------------------------------------------------------------------------------


def test_projection_is_the_closest_point_and_never_farther_from_the_truth() -> None:
    rng = np.random.default_rng(1)
    for _ in range(300):
        size = int(rng.integers(2, 12))
        truth = rng.multinomial(int(rng.integers(0, 40)), rng.dirichlet(np.ones(size)))
        noisy = truth + rng.laplace(0, 3, size)
        total = float(truth.sum())
        v = project_to_total(noisy, total)
        assert v.min() >= 0 and v.sum() == pytest.approx(total)
        assert np.linalg.norm(v - truth) <= np.linalg.norm(noisy - truth) + 1e-9
        if total > 0:  # KKT: one threshold τ, v = noisy − τ where positive, noisy ≤ τ where 0
            tau = (noisy - v)[v > 0]
            assert np.allclose(tau, tau[0]) and np.all(noisy[v == 0] <= tau[0] + 1e-9)


def test_the_chain_is_valid_and_reads_the_release_only() -> None:
    counts = chain_counts(load_sequences(_frame(3), group="country"))
    plan = plan_synthesis(counts, None, 2.0, if_no_signal="allow")
    release = release_counts(counts, plan.scale, plan.event, "pufferfish", np.random.default_rng(0))
    for method in ("projection", "dirichlet"):
        chain = fit_synthetic_chain(release, method)
        assert np.allclose(chain.transition.sum(axis=-1), 1) and chain.transition.min() >= 0
        assert np.allclose(chain.initial.sum(axis=-1), 1) and chain.initial.min() >= 0
    # another dataset with the same lengths and the same noisy numbers gives the same chain and the same table
    other = NoisyCounts(release.states, release.groups, release.transitions, release.first_states,
                        release.length_values, release.length_users, release.columns, release.scale, release.event,
                        "pufferfish", "numpy")
    a, b = fit_synthetic_chain(release), fit_synthetic_chain(other)
    assert np.array_equal(a.transition, b.transition) and np.array_equal(a.initial, b.initial)
    table_a = SyntheticSample(a, release.length_values, release.length_users, release.columns, 9).to_frame()[0]
    table_b = SyntheticSample(b, other.length_values, other.length_users, other.columns, 9).to_frame()[0]
    pd.testing.assert_frame_equal(table_a, table_b)


def test_without_noise_mass_a_row_becomes_the_coarser_estimate() -> None:
    counts = ChainCounts(("a", "b", "c"), None, [[[5, 0, 0], [0, 0, 0], [0, 0, 0]]], [[1, 0, 0]], [6], [[1]],
                         {"user": "u", "time": "t", "state": "s"})
    event = plan_synthesis(counts, None, 50.0, if_no_signal="allow", min_group_users=1).event
    release = NoisyCounts(counts.states, None, counts.transitions, counts.first_states, counts.length_values,
                          counts.length_users, counts.columns, 0.01, event, "pufferfish", "numpy")
    chain = fit_synthetic_chain(release)
    assert chain.transition[0, 0] == pytest.approx([1, 0, 0])  # only a → a was seen: rows b and c go where all go
    assert chain.transition[0, 1] == pytest.approx([1, 0, 0]) and chain.transition[0, 2] == pytest.approx([1, 0, 0])


# --- the sampler --------------------------------------------------------------------------------------------------


def test_sampled_sequences_follow_the_chain() -> None:
    transition = np.array([[[0.7, 0.3, 0.0], [0.2, 0.5, 0.3], [0.0, 0.6, 0.4]]])
    initial = np.array([[0.5, 0.0, 0.5]])
    from puffer_core.synthesis.model import SyntheticChain

    chain = SyntheticChain(("a", "b", "c"), None, initial, transition, transition, initial, "test")
    sample = SyntheticSample(chain, np.array([3]), np.array([[20_000]]), {"user": "u", "time": "t", "state": "s"},
                             seed=3, chunk_rows=7_001)
    table, counts = sample.to_frame()
    codes = table["s"].cat.codes.to_numpy().reshape(-1, 3)  # users are whole and in order: one row each
    assert (table["u"].to_numpy().reshape(-1, 3) == table["u"].to_numpy()[::3, None]).all()
    observed = np.bincount(codes @ [9, 3, 1], minlength=27)
    expected = np.zeros(27)
    for seq in itertools.product(range(3), repeat=3):  # the chain's probabilities, multiplied by hand
        expected[seq[0] * 9 + seq[1] * 3 + seq[2]] = (initial[0, seq[0]] * transition[0, seq[0], seq[1]]
                                                      * transition[0, seq[1], seq[2]])
    assert not observed[expected == 0].any()  # no transition of probability 0 is ever drawn
    assert scipy_stats.chisquare(observed[expected > 0], expected[expected > 0] * 20_000).pvalue > 1e-4
    assert np.array_equal(table["t"].to_numpy(), np.tile([1, 2, 3], 20_000))
    assert counts.n_users == 20_000 and counts.first_states.sum() == 20_000


def test_one_seed_one_table_whatever_the_chunks_and_the_file(checkins: Sequences, tmp_path: Path) -> None:
    columns = get_dataset("checkins").columns()
    small = synthesize(checkins, None, 4.0, rng=7, columns=columns, chunk_rows=999)
    large = synthesize(checkins, None, 4.0, rng=7, columns=columns)
    pd.testing.assert_frame_equal(small.table, large.table)
    assert list(large.table.columns) == ["user", "time", "state", "country"]
    real = chain_counts(checkins)
    assert np.array_equal(large.synthetic_counts.length_users, real.length_users)  # lengths are public: exact
    assert large.table["user"].str.startswith("synthetic-").all()  # never a real user's id
    data = load_dataset("seattle-weather", "month")
    columns = get_dataset("seattle-weather").columns("month")
    table = synthesize(data, None, 4.0, rng=7, columns=columns).table
    assert list(table.columns) == ["month", "date", "weather", "season"]
    for name in ("synthetic.parquet", "synthetic.csv", "synthetic.csv.gz"):
        written = synthesize(data, None, 4.0, rng=7, columns=columns, out=tmp_path / name, chunk_rows=100)
        if name.endswith(".parquet"):  # the file holds the same rows as the table in memory
            assert pd.read_parquet(tmp_path / name).astype(str).equals(table.astype(str))
        back = load_sequences(tmp_path / name, user="month", time="date", state="weather", group="season")
        assert back.n_entries == data.n_entries and back.n_users == data.n_users
        # the sampler's own counts equal the counts of the file read back by the ordinary reader
        again = chain_counts(back)
        for field in ("transitions", "first_states", "length_values", "length_users", "runs", "visits"):
            assert np.array_equal(getattr(again, field), getattr(written.synthetic_counts, field)), field
        assert again.states == data.states and again.groups == data.groups


def test_integer_labels_come_back_as_integers(tmp_path: Path) -> None:
    frame = _frame(4, groups=False)
    frame["state"] = frame["state"].str[1:].astype(int) * 10
    result = synthesize(load_sequences(frame), None, 5.0, rng=1, if_no_signal="allow", out=tmp_path / "s.parquet")
    back = pd.read_parquet(tmp_path / "s.parquet")
    assert pd.api.types.is_integer_dtype(back["state"].astype(int)) and set(back["state"]) <= {0, 10, 20, 30}
    assert result.table is None and result.path == tmp_path / "s.parquet"


# --- fidelity ---------------------------------------------------------------------------------------------------


def test_fidelity_of_a_table_with_itself_is_perfect_and_a_known_case_by_hand(checkins: Sequences) -> None:
    real = chain_counts(checkins)
    scores = fidelity(real, real).scores()
    assert np.allclose(scores[["transition_error", "stationary_tv", "dwell_error", "query_error"]], 0)
    assert (scores["topk_hit"] == 1).all() and list(scores["group"][:2]) == ["all", real.groups[0]]
    names = {"user": "u", "time": "t", "state": "s"}
    a = ChainCounts(("x", "y"), None, [[[2, 2], [0, 4]]], [[1, 0]], [9], [[1]], names, visits=[[1, 1]],
                    runs=np.zeros((1, 2, RUN_BINS)))
    b = ChainCounts(("x", "y"), None, [[[3, 1], [1, 3]]], [[0, 1]], [9], [[1]], names, visits=[[1, 1]],
                    runs=np.zeros((1, 2, RUN_BINS)))
    row = fidelity(a, b, top_k=1, query="first_state").scores().iloc[0]
    # rows: x: (.5,.5) vs (.75,.25) → TV .25, weight 4/8; y: (0,1) vs (.25,.75) → TV .25, weight 4/8
    assert row["transition_error"] == pytest.approx(0.25)
    # entries: a: x 1+2=3, y 2+4=6; dwell x = 3/(3−2) = 3, y = 6/(6−4) = 3; b: x 0+4 = 4 → 4/(4−3) = 4, y 5/(5−3)
    assert row["dwell_error"] == pytest.approx(3 / 9 * abs(3 - 4) + 6 / 9 * abs(3 - 2.5))
    assert row["query_error"] == pytest.approx(1.0) and row["topk_hit"] == 1.0


def test_fidelity_frames_noise_and_reference() -> None:
    data = load_dataset("seattle-weather", "month")
    real = chain_counts(data)
    result = synthesize(data, None, 5.0, rng=2)
    fid = fidelity(real, result.synthetic_counts)
    assert len(fid.transition_frame()) == 5 * 5 * 5 and len(fid.state_frame()) == 5 * 5
    dwell = fid.dwell_frame()
    assert len(dwell) == 5 * 5 * RUN_BINS
    shares = dwell.groupby(["group", "state"])["real"].sum()
    assert np.allclose(shares[shares > 0], 1) and shares[("all", "snow")] == pytest.approx(1)
    assert len(fid.topk_frame()) == 5 * 3
    noise = noise_scores(real, result.chain)
    assert (noise["transition_error"] >= 0).all() and list(noise["group"])[0] == "all"
    reference = fidelity(real, reference_counts(real)).scores()
    assert reference["transition_error"].iloc[0] < fid.scores()["transition_error"].iloc[0]
    grid = fidelity_over_eps(real, None, [2.0, 5.0], runs=2, rng=0)
    assert set(grid["part"]) == {"total", "noise", "sampling"} and set(grid["guarantee"]) >= {"pufferfish", "group_dp"}
    total = grid[(grid.part == "total") & (grid.group == "all") & (grid.metric == "transition_error")]
    means = total.groupby(["guarantee", "eps_puffer"])["value"].mean()
    assert means["pufferfish", 5.0] < means["pufferfish", 2.0]  # more ε, a closer table


# --- bad input ----------------------------------------------------------------------------------------------------


def test_bad_input_is_refused_with_what_to_do() -> None:
    data = load_dataset("seattle-weather", "month")
    with pytest.raises(DataError, match="not even one row.*signal from ε_puffer ≈"):
        plan_synthesis(data, None, 0.2)
    message = ""
    try:
        plan_synthesis(data, None, 0.2)
    except DataError as exc:
        message = str(exc)
    needed = float(message.split("ε_puffer ≈ ")[1].split(";")[0])
    plan_synthesis(data, None, needed * 1.01)  # from the ε it names, the release is accepted
    weak = plan_synthesis(data, None, 0.2, if_no_signal="allow")
    assert "no_signal" in [n.code for n in weak.notes]
    one = load_sequences(pd.DataFrame({"user": [1, 1, 2, 2, 3, 3], "time": [1, 2] * 3, "state": list("abbaab"),
                                       "grp": ["x", "x", "y", "y", "y", "y"]}), group="grp")
    with pytest.raises(DataError, match="'x' have fewer than 2 users.*min_group_users=1"):
        plan_synthesis(one, None, 50.0)
    notes = plan_synthesis(one, None, 50.0, min_group_users=1, if_no_signal="allow").notes
    assert "one_user_group" in [n.code for n in notes]
    assert all(n.about_data for n in notes if n.code == "one_user_group")
    rare = load_sequences(pd.DataFrame({"user": [1, 1, 1, 2, 2, 2], "time": [1, 2, 3] * 2, "state": list("aabaac")}))
    assert "rare_states" in [n.code for n in plan_synthesis(rare, None, 50.0, if_no_signal="allow").notes]
    empty = ChainCounts(("a", "b"), ("g", "h"), np.zeros((2, 2, 2)), [[1, 0], [0, 0]], [1], [[1], [0]],
                        {"user": "u", "time": "t", "state": "s", "group": "grp"})
    with pytest.raises(DataError, match="'h' have no users"):
        plan_synthesis(empty, None, 1.0)
    with pytest.raises(ValueError, match="either eps_puffer .* or accuracy"):
        plan_synthesis(data, None)
    with pytest.raises(ValueError, match="prior has 2 states but the data have 5"):
        plan_synthesis(data, MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]]), 1.0)
    with pytest.raises(ValueError, match="rng must be None"):
        synthesize(data, None, 5.0, rng="seed")
    with pytest.raises(ValueError, match="write the synthetic table as"):
        synthesize(data, None, 5.0, rng=0, out="synthetic.xlsx")


def test_chosen_secrets_are_recorded_and_never_cost_more_noise_than_every_pair() -> None:
    data = load_dataset("seattle-weather", "month")
    secrets = Secrets(positions=(0, 1, 2))
    chosen = plan_synthesis(data, None, 5.0, secrets=secrets)
    every = plan_synthesis(data, None, 5.0)
    assert chosen.curve.secrets == secrets and chosen.secrets == secrets
    assert np.all(chosen.curve.a <= every.curve.a + 1e-12)  # fewer secrets: a(b) never above (docs/math.md §16)
    assert chosen.eps_puffer == every.eps_puffer and chosen.scale <= every.scale * (1 + 1e-12)


def test_a_real_release_end_to_end() -> None:
    data = load_dataset("seattle-weather", "month")
    result = synthesize(data, None, 5.0)  # OpenDP's noise, a seed from the operating system
    assert result.release.drawn_by == "opendp" and len(result.table) == data.n_entries
    assert result.event.eps_puffer == pytest.approx(5.0) and isinstance(result.event, SynthesisEvent)
    assert result.release.to_dict()["event"]["eps_puffer"] == pytest.approx(5.0)


def test_the_script_source_does_the_same_synthesis(capsys: pytest.CaptureFixture) -> None:
    data = load_dataset("seattle-weather", "month")
    imports, code = synthesis_source(eps_puffer=5.0, seed=11, top_k=2, query="occupancy")
    namespace: dict[str, object] = {"data": data, "prior": None}
    exec(f"from puffer_core import {', '.join(imports)}\n" + code, namespace)  # noqa: S102 - the code under test
    direct = synthesize(data, None, 5.0, rng=11)
    pd.testing.assert_frame_equal(namespace["result"].table, direct.table)
    pd.testing.assert_frame_equal(namespace["scores"], direct.fidelity(top_k=2, query="occupancy").scores())
    printed = capsys.readouterr().out
    assert direct.event.describe() in printed and "stationary_tv" in printed
    accuracy = synthesis_source(accuracy=CountAccuracy(25, 0.1), data="counts")
    assert "CountAccuracy" in accuracy[0] and "rng=None" in accuracy[1] and "a real release" in accuracy[1]


def test_progress_is_reported_and_stopping_leaves_no_file(tmp_path: Path) -> None:
    data = load_dataset("seattle-weather", "month")
    seen: list[float] = []
    synthesize(data, None, 5.0, rng=0, chunk_rows=100, progress=lambda stage, fraction: seen.append(fraction))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)

    def stop(stage: str, fraction: float) -> None:
        if fraction > 0:
            raise KeyboardInterrupt

    target = tmp_path / "s.parquet"
    with pytest.raises(KeyboardInterrupt):
        synthesize(data, None, 5.0, rng=0, chunk_rows=100, out=target, progress=stop)
    assert not target.exists()


def test_bytes_for_a_download_are_the_same_table() -> None:
    import gzip
    import io

    result = synthesize(load_dataset("seattle-weather", "month"), None, 5.0, rng=0)
    for kind in ("parquet", "csv", "csv.gz"):
        data, counts = result.sample.to_bytes(kind)
        if kind == "parquet":
            back = pd.read_parquet(io.BytesIO(data))
        else:
            back = pd.read_csv(io.BytesIO(gzip.decompress(data) if kind == "csv.gz" else data))
        assert back.astype(str).equals(result.table.astype(str))
        assert np.array_equal(counts.transitions, result.synthetic_counts.transitions)
