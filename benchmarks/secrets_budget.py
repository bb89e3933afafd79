"""What saying what is secret buys: ε_DP for ε_puffer = 1 on the built-in data, all pairs against chosen secrets.

Run: python benchmarks/secrets_budget.py

For the synthetic check-ins (one sequence per user) and the real Seattle weather (one sequence per month, and per
year), each with the Markov chain fitted to it (docs/math.md §6), the per-entry ε_DP that guarantees
ε_puffer = 1 (docs/math.md §3) for:

- every pair of states at every entry (today's default);
- one sensitive state against every other state (check-ins: "Bar"; weather: "snow"), and the state whose
  choice gains the most;
- night-time entries only.  The check-ins' time column holds times of day: night is 22:00–05:59, applied to
  every user's check-ins, and a position is protected when it is night-time for some user (docs/math.md §16).
  The weather's time column holds dates with no time of day — a night rule would match every entry (every
  date reads as midnight) — so its "night-time" row protects weekend days instead, and says so;
- both together.

The gain is ε_DP for the chosen secrets over ε_DP for every pair (more budget per release, less noise).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from puffer_core import calibrate, fit_markov_chain, influence_curve, load_dataset  # noqa: E402
from puffer_core.secrets import ALL_SECRETS, Secrets, TimeRule  # noqa: E402

EPS_PUFFER = 1.0


def rows(name: str, user: str | None, sensitive: str, rule: TimeRule, rule_words: str):
    data = load_dataset(name, user)
    prior = fit_markov_chain(data)
    state = data.states.index(sensitive)
    timed = Secrets(rule=rule).resolve(data)
    choices = [
        ("every pair, every entry", ALL_SECRETS),
        (f"{sensitive} vs the rest", Secrets(pairs="sensitive", states=(state,))),
        (rule_words, timed),
        (f"{sensitive} vs the rest, {rule_words}", Secrets(pairs="sensitive", states=(state,),
                                                           positions=timed.positions)),
    ]
    gains = {}
    for other, label in enumerate(data.states):  # every state as the sensitive one: the range of the gain
        curve = influence_curve(prior, secrets=Secrets(pairs="sensitive", states=(other,)))
        gains[label] = calibrate(curve, EPS_PUFFER).eps_dp
    best = max(gains, key=gains.get)
    choices.insert(2, (f"{best} vs the rest (the best single state)", Secrets(pairs="sensitive",
                                                                             states=(data.states.index(best),))))
    base = None
    for label, secrets in choices:
        start = time.process_time()
        curve = influence_curve(prior, secrets=secrets)
        cal = calibrate(curve, EPS_PUFFER)
        seconds = time.process_time() - start
        base = cal.eps_dp if base is None else base
        protected = prior.length if secrets.positions is None else len(secrets.positions)
        yield (f"{name}{'' if user is None else ' per ' + user}", label, f"{protected}/{prior.length}",
               cal.b, cal.a, cal.eps_dp, cal.eps_dp / base, seconds)


def main() -> None:
    print(f"ε_puffer = {EPS_PUFFER:g}; CPU seconds per curve and calibration")
    print("| data (K states, T entries) | what is secret | protected positions | b* | a(b*) | ε_DP | gain | CPU (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    cases = [
        ("checkins", None, "Bar", TimeRule.night(22, 5), "night-time (22:00–05:59)"),
        ("seattle-weather", "month", "snow", TimeRule.weekends(), "weekends (dates have no time of day)"),
        ("seattle-weather", "year", "snow", TimeRule.weekends(), "weekends (dates have no time of day)"),
    ]
    for case in cases:
        for data, label, protected, b, a, eps_dp, gain, seconds in rows(*case):
            print(f"| {data} | {label} | {protected} | {b} | {a:.4g} | {eps_dp:.5g} | {gain:.2f}× | {seconds:.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
