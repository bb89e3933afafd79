"""Classroom core: privacy collapse, a finite Pufferfish checker, a composability test.

Pufferfish mechanisms can look private one release at a time and collapse when run twice
(docs/math.md §4, §8; [C] §4–5, [S] Thm III.4, [P] §7, §9, App. J, Ex. 10.5).  Everything here is
exact on finite models, so a student can watch the numbers, not just read about them.
Papers: [C] Composition for Pufferfish Privacy, [S] Song & Chaudhuri (MQM composition),
[P] Kifer & Machanavajjhala (the Pufferfish framework); full references in docs/references.md.

Models and the checker (docs/math.md §1, §9)
    SecretPair(first_label, first, second_label, second) / SecretPair.complement(label, holds)
        — what a student sees: the two statements the attacker must not tell apart.
    FiniteModel(datasets, priors, secret_pairs, mechanism, outputs=None, name="", prior_labels=None)
        — the whole Pufferfish instantiation as tables: datasets, priors, secrets, output probabilities.
    model_from_chain(priors, mechanism, outputs=None) -> FiniteModel
        — a tiny Markov chain the student edits, with secrets X_t = x vs X_t = x'.
    check(model, releases=1) -> LeakageReport(eps, pair, prior_index, outputs, ...)
        — the exact ε_puffer of k releases, with the worst secret pair, prior and output (.explain()).
    leakage_by_runs(model, max_releases) -> list[float]
        — check(model, k).eps for k = 1..max_releases.

The attacker over repeated runs (docs/math.md §8)
    posterior_trace(model, true_dataset, runs, rng, prior_index=None) -> pandas.DataFrame
        — the posterior of every secret after each run: the curve that jumps to 1.
    expected_runs_to_reveal(model, true_dataset, target="secret") -> float
        — the exact expected number of runs until the secret (or dataset) is certain.
    simulate_runs_to_reveal(model, true_dataset, rng, trials=10_000, target="secret") -> RevealSimulation
        — the same by simulation: a histogram of run counts and its mean.

Collapse examples (docs/math.md §8)
    example_1(first, second, prob_first) -> FiniteModel
        — [C] Ex. 1: zero leakage per run, the dataset after ≤ 1 + 1/(1 − max Pr(D|s)) runs.
    example_2(n=3) -> FiniteModel
        — [C] Ex. 2: n fair bits, parity outputs; zero leakage, whole dataset after 3 runs.
    example_3(lower_t, upper_t, lower_f, upper_f) -> FiniteModel; example_3_epsilon(...) -> float
        — [C] Ex. 3: many priors, finite ε per run (the paper's formula), the secret after 3 runs.
    appendix_j_example(prior=None) -> FiniteModel
        — [P] App. J on {0,1}²: ε = 0 for one run, +inf for two.
    exam_order_example(eps, n) -> float; exam_order_model(eps, n) -> FiniteModel
        — [P] Ex. 10.5: ε-DP noise on an exam count leaks ln((e^{εn}−1)/(n(1−e^{−ε}))).
    laplace_sum_counterexample(p=0.9, q=0.01) -> (eps_one_release, eps_two_releases)
        — [S] Thm III.4: 1.9177 for one release, 3.8476 > 2 × 1.9177 for two.
    laplace_sum_leakage(p, q, releases=1, scale=1.0) -> float
    laplace_noise_leakage(given_first, given_second, scale=1.0, releases=1) -> float
        — exact sup of the Laplace density ratio, for any number of releases.

Randomized response, the differentially private contrast (docs/math.md §1, §8)
    randomized_response(model, eps) -> FiniteModel
        — the model's first secret pair answered truthfully with probability e^ε/(1+e^ε): k runs leak k·ε.
    randomized_response_per_entry(n_states, eps_dp) -> mechanism(sequence) -> probabilities
        — K-ary randomized response on every entry, per-entry ε_DP-DP, for exact_leakage/model_from_chain.

Composability (docs/math.md §4; [C] §5.1)
    composability(model_or_matrix, secret_pairs=None, datasets=None, outputs=None) -> ComposabilityReport
        — the smallest ε for which the NfC linear programs hold, and the binding β (DP-style or not).

Counting queries of [P] §7
    counting_mechanism(q, n, eps) -> CountingMechanism
        — Algorithm 1: sometimes the exact count, certified, under a single prior.
    hedging_counting_mechanism(q_star, n, eps, alpha=0.001) -> CountingMechanism
        — Algorithm 3 (k_hi corrected): exact counts that stay private for hedged attackers.
    single_prior_histogram(q, n, eps), hedging_histogram(q_star, n, eps, alpha) -> HistogramMechanism
        — Algorithms 2 and 4; the checker finds their claimed 2ε can fail with 3+ cells.
    counting_model(mechanism, attacker_q=None), histogram_model(mechanism, attacker_q=None) -> FiniteModel
        — the secrets (σ_(i,t), ¬σ_i) and attacker priors of [P] §7, ready for check().

Randomness always comes from an explicit ``numpy.random.Generator``; +inf is a legitimate ε,
NaN never is; bad parameters raise ValueError with a message meant for a student.
"""

from .attack import RevealSimulation, expected_runs_to_reveal, posterior_trace, simulate_runs_to_reveal
from .collapse import (
    appendix_j_example,
    exam_order_example,
    exam_order_model,
    example_1,
    example_2,
    example_3,
    example_3_epsilon,
    laplace_noise_leakage,
    laplace_sum_counterexample,
    laplace_sum_leakage,
)
from .counting import (
    CountingMechanism,
    CountRelease,
    HistogramMechanism,
    counting_mechanism,
    counting_model,
    hedging_counting_mechanism,
    hedging_histogram,
    histogram_model,
    single_prior_histogram,
)
from .model import FiniteModel, LeakageReport, SecretPair, check, leakage_by_runs, model_from_chain
from .nfc import ComposabilityReport, NfcConstraint, composability
from .randomized import randomized_response, randomized_response_per_entry

__all__ = [
    "ComposabilityReport",
    "CountRelease",
    "CountingMechanism",
    "FiniteModel",
    "HistogramMechanism",
    "LeakageReport",
    "NfcConstraint",
    "RevealSimulation",
    "SecretPair",
    "appendix_j_example",
    "check",
    "composability",
    "counting_mechanism",
    "counting_model",
    "exam_order_example",
    "exam_order_model",
    "example_1",
    "example_2",
    "example_3",
    "example_3_epsilon",
    "expected_runs_to_reveal",
    "hedging_counting_mechanism",
    "hedging_histogram",
    "histogram_model",
    "laplace_noise_leakage",
    "laplace_sum_counterexample",
    "laplace_sum_leakage",
    "leakage_by_runs",
    "model_from_chain",
    "posterior_trace",
    "randomized_response",
    "randomized_response_per_entry",
    "simulate_runs_to_reveal",
    "single_prior_histogram",
]
