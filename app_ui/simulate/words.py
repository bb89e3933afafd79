"""The Simulate page's words and exports: the ε grid as typed, the best mechanism per ε, the "what this shows"
note, what a robust prior set changed, the report's settings, and the script that recomputes the page.

Nothing here computes a formula: the numbers come from :func:`puffer_core.simulation.simulate`
and :func:`puffer_core.simulation.explain.explain_simulation`; this module chooses the words for their codes
(docs/math.md §3–§7) and writes them down.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from app_ui.core.state import EPS_RANGE
from app_ui.core.tables import fmt, join_words
from app_ui.core.templates import Code, fill
from app_ui.data.picker import LoadedData
from app_ui.prior.smoothing import drivers_sentence
from app_ui.simulate.secrets import secrets_sentence, secrets_source
from puffer_core.mechanisms import DEFAULT_MECHANISMS, MECHANISMS, Calibrated
from puffer_core.simulation.explain import Explanation, Finding, base_name
from puffer_core.simulation.run import SimulationResult

if TYPE_CHECKING:  # the form (app_ui.simulate.settings) imports these words
    from app_ui.simulate.settings import SimulateSettings

PAPER_FIRST = DEFAULT_MECHANISMS["topk"][0]  # what [C] §7's experiments (Tables 2–5) rank first on top-k
QUERY_NAMES = {"topk": "Top-k states of every group", "histogram": "Histogram of every group"}
RELEASE_MODE_NAMES = {
    "repeat": "the same data again (fresh noise each time)",
    "windows": "consecutive time windows (e.g. one per month)",
}
TOPK_LAPLACE_NAMES = {
    "split": "m counts with ε/m each, then sorted (the papers' baseline)",
    "histogram": "one histogram of L1 sensitivity 2, then sorted",
}
METRIC_HELP = {
    "Acc": "Acc@j: the j-th released state is the true j-th state (docs/math.md §7)",
    "HitRate": "Hit Rate@k: share of the true top k that was released",
    "NDCG": "NDCG@k: the released ranking's discounted gain over the best possible",
    "L1": "L1 count error: how many entries the released ranking misses, summed over ranks",
}


@dataclass(frozen=True)
class Grid:
    """The ε_puffer grid as typed: the values to use, or the problems; ``notes`` say what was changed."""

    values: tuple[float, ...]
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def parse_grid(text: str) -> Grid:
    """ε_puffer values typed as '0.5, 1, 2' (commas or semicolons), checked as typed, in the user's words.

    Every value must be a number between EPS_RANGE's bounds; a value typed twice is used once
    and a note says so.
    """
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if not parts:
        return Grid((), ("type at least one ε_puffer, e.g. 0.5, 1, 2",))
    values: list[float] = []
    problems: list[str] = []
    not_positive: list[str] = []
    out_of_range: list[str] = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            problems.append(f"'{part}' is not a number")
            continue
        if not math.isfinite(value):
            problems.append(f"'{part}' is not a finite number")
        elif value <= 0:
            not_positive.append(part)
        elif not EPS_RANGE.low <= value <= EPS_RANGE.high:
            out_of_range.append(part)
        else:
            values.append(value)
    if not_positive:
        listed = join_words(not_positive)
        problems.append(f"every ε_puffer must be positive (above 0); {listed} {_is(not_positive)} not")
    if out_of_range:
        problems.append(
            f"every ε_puffer must be between {EPS_RANGE.low:g} and {EPS_RANGE.high:g};"
            f" {join_words(out_of_range)} {_is(out_of_range)} not"
        )
    unique = tuple(dict.fromkeys(values))
    notes = ()
    if len(unique) < len(values):
        twice = [f"{v:g}" for v in unique if values.count(v) > 1]
        notes = (f"{join_words(twice)} typed more than once: each is used once.",)
    return Grid(unique if not problems else (), tuple(problems), notes)


def _is(items: Sequence[str]) -> str:
    return "is" if len(items) == 1 else "are"


def _eps_list(values: Sequence[float]) -> str:
    return join_words([f"{v:g}" for v in sorted(values)])


def label(name: str) -> str:
    """The mechanism's label; a mechanism post-processed with the prior is "<label> + prior"."""
    base = base_name(name)
    if base not in MECHANISMS:
        return name
    return MECHANISMS[base].label + (" + prior" if name != base else "")


# --------------------------------------------------------------------------- best per ε and the note


def best_frame(explanation: Explanation) -> pd.DataFrame:
    """One row per ε_puffer: the best mechanism on these data, its mean and 95% interval, and the ties."""
    rows = []
    for w in explanation.winners:
        rows.append(
            {
                "ε_puffer": f"{w.eps_puffer:g}",
                "best on these data": w.label,
                f"{explanation.metric} (95% interval)": f"{fmt(w.mean, 3)} ({fmt(w.ci_low, 3)} – {fmt(w.ci_high, 3)})",
                "tied within the intervals": ", ".join(
                    [*(f"{label(m)} (the same mechanism here)" for m in w.identical), *(label(m) for m in w.tied)]
                )
                or "—",
            }
        )
    return pd.DataFrame(rows)


def contradicts_paper(explanation: Explanation) -> bool:
    """Pufferfish is beaten beyond the intervals, or falls back to group DP somewhere."""
    return bool(explanation.codes() & {"pufferfish_not_best", "group_dp_fallback", "fallback_not_best"})


def agreement(explanation: Explanation, mechanisms: Sequence[str]) -> str | None:
    """A line for results that agree with the paper's ordering (None when there is nothing to say)."""
    if contradicts_paper(explanation) or PAPER_FIRST not in mechanisms or not explanation.winners:
        return None
    return (
        f"As in the paper's experiments ([C] §7), {label(PAPER_FIRST)} is best or tied with the best at every"
        f" ε_puffer on these data ({explanation.metric}, 95% intervals)."
    )


def what_this_shows(explanation: Explanation) -> list[str]:
    """The note, one markdown sentence per reason, when the results contradict the paper's ordering (else []).

    The first line is the headline.  Where Pufferfish fell back to group DP, the fallback is the
    headline and no line says that Pufferfish loses there: it *is* group DP at that ε_puffer, and
    a better mechanism there beats group DP (:func:`_fallback_losses`).  Losses are only claimed
    beyond the 95% intervals (the explanation's ties).
    """
    if not contradicts_paper(explanation):
        return []
    lines = [*_fallbacks(explanation), *_losses(explanation), *_fallback_losses(explanation)]
    lines += _short(explanation)
    lines += _drivers(explanation)
    lines += _sticky(explanation)
    lines += _mqm(explanation)
    lines += _unseen(explanation)
    lines += _gains(explanation)
    lines += _better_choice(explanation)
    return lines


def _by(findings: list[Finding], key: Any) -> dict[Any, list[Finding]]:
    out: dict[Any, list[Finding]] = {}
    for f in findings:
        out.setdefault(key(f), []).append(f)
    return out


def _losses(explanation: Explanation) -> list[str]:
    better = "higher" if explanation.higher_is_better else "lower (better)"
    out = []
    pairs = _by(explanation.find("pufferfish_not_best"), lambda f: (f.mechanism, f.numbers["pufferfish"]))
    for (best, pufferfish), found in pairs.items():
        first = found[0]
        out.append(
            f"**{label(best)} beats {label(pufferfish)}** at ε_puffer = {_eps_list([f.eps_puffer for f in found])}:"
            f" its {explanation.metric} is {better} beyond the 95% intervals ({fmt(first.numbers['best_mean'], 3)}"
            f" against {fmt(first.numbers['pufferfish_mean'], 3)} at ε_puffer = {first.eps_puffer:g}), although the"
            " paper's experiments rank Pufferfish first ([C] §7)."
        )
    return out


def _fallbacks(explanation: Explanation) -> list[str]:
    out = []
    for mechanism, found in _by(explanation.find("group_dp_fallback"), lambda f: f.mechanism).items():
        first = found[0]
        t = first.numbers["t_max"]
        if first.numbers["best_curve_b"] is not None:
            detail = (
                f"; at ε_puffer = {first.eps_puffer:g} the best shorter window, b = {first.numbers['best_curve_b']},"
                f" allows ε_DP = {fmt(first.numbers['best_curve_eps_dp'], 3)}, group DP"
                f" {fmt(first.numbers['eps_dp'], 3)}"
            )
        else:
            detail = f"; a(b) stays at or above ε_puffer = {first.eps_puffer:g} for every b < T"
        out.append(
            f"**{label(mechanism)} falls back to group DP** at ε_puffer = {_eps_list([f.eps_puffer for f in found])}:"
            f" no window b shorter than a whole sequence lets it spend more than ε_puffer / T per entry"
            f" (T = {t}{detail}), so it protects each user's whole sequence as one record (b = T) — exactly what"
            f" {_twin_words(first.numbers['same_as'])} does: there the two are the same mechanism, and any difference"
            " between their results is simulation noise."
        )
    return out


def _twin_words(twin: str | None) -> str:
    """The group-DP twin of a mechanism that fell back, by its label (group DP itself when it has none)."""
    return label(twin) if twin is not None else "group DP with the same noise"


def _group_dp_like(name: str) -> str:
    """The label of the group-DP mechanism that releases what ``name`` releases (the noise MQM falls back to)."""
    releases = MECHANISMS[base_name(name)].releases if base_name(name) in MECHANISMS else None
    for other, spec in MECHANISMS.items():
        if spec.calibrated is Calibrated.GROUP_DP and spec.releases is releases:
            return label(other)
    return "group DP"


def _fallback_losses(explanation: Explanation) -> list[str]:
    """Where Pufferfish fell back and something beats it: a comparison of group-DP mechanisms, said so."""
    better = "higher" if explanation.higher_is_better else "lower (better)"
    out = []
    pairs = _by(explanation.find("fallback_not_best"), lambda f: (f.mechanism, f.numbers["pufferfish"]))
    for (best, pufferfish), found in pairs.items():
        first = found[0]
        out.append(
            f"Where {label(pufferfish)} is group DP (ε_puffer = {_eps_list([f.eps_puffer for f in found])}),"
            f" **{label(best)} is the better mechanism**: its {explanation.metric} is {better} beyond the 95%"
            f" intervals ({fmt(first.numbers['best_mean'], 3)} against {fmt(first.numbers['pufferfish_mean'], 3)} at"
            f" ε_puffer = {first.eps_puffer:g}) — a comparison with {_twin_words(first.numbers['same_as'])}, not a loss"
            " of the Pufferfish calibration."
        )
    return out


def _drivers(explanation: Explanation) -> list[str]:
    """What drives a(1), naming the transitions; "never observed in the data" when that is the cause."""
    found = explanation.find("a1_drivers")
    if not found or not found[0].numbers["terms"]:
        return []
    return [drivers_sentence(found[0].numbers)]


def _short(explanation: Explanation) -> list[str]:
    found = explanation.find("short_sequences")
    if not found:
        return []
    t = found[0].numbers["t_max"]
    parts = []
    for f in sorted(found, key=lambda f: f.eps_puffer):
        b = f.numbers["first_b_below"]
        parts.append(
            f"below {f.eps_puffer:g} only from b = {b}" if b is not None else f"never below {f.eps_puffer:g} for b < T"
        )
    text = (
        f"**The sequences are short** (at most T = {t} entries per user): a(b) falls {join_words(parts)},"
        " so most of a sequence must be hidden before the leak drops under the budget."
    )
    longer = [(f.eps_puffer, f.numbers.get("break_even_length")) for f in found]
    longer = [(e, n) for e, n in longer if n is not None]
    if longer:
        e, n = longer[0]
        text += (
            f" On the same chain, sequences longer than about {math.ceil(n)} entries would let the curve beat"
            f" group DP at ε_puffer = {e:g}."
        )
    return [text]


def _sticky(explanation: Explanation) -> list[str]:
    found = explanation.find("sticky_chain")
    if not found:
        return []
    n = found[0].numbers
    a1 = f": a(1) = {fmt(n['a_1'], 3)}" if n.get("a_1") is not None else ""
    return [
        f"**The chain is sticky**: the next entry repeats the current state with probability"
        f" {fmt(n['repeat_probability'], 2)} ({n['stickiest_state']} stays {n['stickiest_state']} with probability"
        f" {fmt(n['stickiest_stay'], 2)}), so neighbouring entries give each other away{a1}."
    ]


def _mqm(explanation: Explanation) -> list[str]:
    found = explanation.find("mqm_group_dp_noise")
    if not found:
        return []
    first = min(found, key=lambda f: f.eps_puffer)
    n = first.numbers
    m = n["queries"]
    scale = f"T/ε_puffer with T = {n['t_max']}" if m == 1 else f"T·m/ε_puffer with T = {n['t_max']} and m = {m} counts"
    return [
        f"**{label(str(first.mechanism))} adds group-DP noise** at ε_puffer ="
        f" {_eps_list([f.eps_puffer for f in found])}: it finds no"
        f" Markov quilt smaller than the whole sequence, so its noise is that of a whole sequence, σ_max ="
        f" {fmt(n['sigma_max'], 4)} at ε_puffer = {first.eps_puffer:g} ({scale}) — the same noise as"
        f" {_group_dp_like(str(first.mechanism))}."
    ]


def _unseen(explanation: Explanation) -> list[str]:
    found = explanation.find("unseen_transitions")
    drivers = explanation.find("a1_drivers")
    if not found or (drivers and drivers[0].numbers["unseen"]):  # the drivers' line names them already
        return []
    n = found[0].numbers
    return [
        f"**{n['count']} transitions never occur in the data** (e.g. {n['example']}): they hold the smoothing"
        f" τ = {n['smoothing']:g}, and each can add up to log(1/τ) = {fmt(n['log_inverse_smoothing'], 3)} to a(b)."
    ]


def _gains(explanation: Explanation) -> list[str]:
    out = []
    fallback = {(f.mechanism, f.eps_puffer) for f in explanation.find("group_dp_fallback")}
    for mechanism, found in _by(explanation.find("pufferfish_gain"), lambda f: f.mechanism).items():
        kept = [f for f in found if (mechanism, f.eps_puffer) not in fallback]
        if not kept or len(kept) == len(found):
            continue
        low, high = fmt(min(f.numbers["gain"] for f in kept), 3), fmt(max(f.numbers["gain"] for f in kept), 3)
        factor = f"{low}×" if low == high else f"{low}× to {high}×"
        out.append(
            f"Where it does not fall back (ε_puffer = {_eps_list([f.eps_puffer for f in kept])}), {label(mechanism)}"
            f" spends {factor} the per-entry ε_DP of group DP."
        )
    return out


def _better_choice(explanation: Explanation) -> list[str]:
    lost = {f.eps_puffer for f in explanation.find("pufferfish_not_best") + explanation.find("fallback_not_best")}
    if not lost:
        return []
    picks = _by([w for w in explanation.winners if w.eps_puffer in lost], lambda w: w.label)
    choice = "; ".join(f"{name} at ε_puffer = {_eps_list([w.eps_puffer for w in ws])}" for name, ws in picks.items())
    return [f"**The better choice on these data**: {choice} (ties within the 95% intervals are in the table above)."]


# --------------------------------------------------------------------------- a robust prior set Θ


def changes_frame(robust: SimulationResult, fitted: SimulationResult, metric: str, release: int) -> pd.DataFrame:
    """The mechanisms and ε_puffer whose ε_DP per entry or metric changed with Θ: fitted → Θ for each."""

    def first_release(result: SimulationResult) -> pd.DataFrame:
        ledger = result.ledger[result.ledger["release"] == 1][["mechanism", "eps_puffer", "eps_dp"]]
        rows = result.metrics[(result.metrics["metric"] == metric) & (result.metrics["release"] == release)]
        return ledger.merge(rows[["mechanism", "eps_puffer", "mean"]], on=["mechanism", "eps_puffer"])

    both = first_release(fitted).merge(first_release(robust), on=["mechanism", "eps_puffer"], suffixes=("_fit", "_set"))
    both = both[(both["eps_dp_fit"] != both["eps_dp_set"]) | (both["mean_fit"] != both["mean_set"])]
    return pd.DataFrame(
        {
            "mechanism": [label(m) for m in both["mechanism"]],
            "ε_puffer": [f"{e:g}" for e in both["eps_puffer"]],
            "ε_DP per entry: fitted → Θ": [f"{fmt(x)} → {fmt(y)}" for x, y in zip(both.eps_dp_fit, both.eps_dp_set)],
            f"{metric}: fitted → Θ": [f"{fmt(x, 3)} → {fmt(y, 3)}" for x, y in zip(both.mean_fit, both.mean_set)],
        }
    )


def changes_summary(robust: SimulationResult, fitted: SimulationResult, draws: int) -> str:
    """What Θ changed, in words: where its a(b) is furthest above the fit's, and the largest fall of an ε_DP."""
    a_fit = {int(b): float(a) for b, a in fitted.settings["curve"]}
    a_set = {int(b): float(a) for b, a in robust.settings["curve"]}
    gaps = {b: a_set[b] - a_fit[b] for b in a_fit if b in a_set and math.isfinite(a_set[b]) and math.isfinite(a_fit[b])}
    text = (
        f"Θ is the fit and {draws} posterior draws (docs/math.md §12); every mechanism is calibrated for all"
        " of them at once."
    )
    widest = max(gaps, key=gaps.__getitem__) if gaps else None
    if widest is not None and gaps[widest] > 0:
        text += (
            f" Θ's a(b) is furthest above the fit's at b = {widest}: {fmt(a_set[widest], 3)} instead of"
            f" {fmt(a_fit[widest], 3)}."
        )
    both = fitted.ledger[fitted.ledger["release"] == 1].merge(
        robust.ledger[robust.ledger["release"] == 1], on=["mechanism", "eps_puffer"], suffixes=("_fit", "_set")
    )
    ratio = (both["eps_dp_set"] / both["eps_dp_fit"]).to_numpy(dtype=float)
    worst = int(ratio.argmin()) if ratio.size else None
    if worst is not None and ratio[worst] < 1 - 1e-12:
        row = both.iloc[worst]
        text += (
            f" The largest change: {label(row['mechanism'])} at ε_puffer = {row['eps_puffer']:g} spends ε_DP ="
            f" {fmt(float(row['eps_dp_set']), 3)} per entry instead of {fmt(float(row['eps_dp_fit']), 3)}"
            f" ({fmt(100 * (1 - ratio[worst]), 2)}% less), so it adds more noise."
        )
    else:
        text += " No mechanism's ε_DP per entry changed: the learned prior's uncertainty does not move the calibration."
    return text


# --------------------------------------------------------------------------- report settings and the script


def report_settings(loaded: LoadedData, chosen: SimulateSettings) -> dict[str, Any]:
    """Every setting of the page, in the user's words, for the HTML report."""
    out: dict[str, Any] = {"data": loaded.description}
    builtin = loaded.builtin
    if builtin is not None:
        out["data source"] = builtin.source
        out["data licence"] = builtin.licence
    out["columns"] = {role: name for role, name in loaded.columns.items() if name is not None}
    repair = loaded.repair
    if repair is not None:
        out["repair"] = f"{repair.describe() or 'no row'} dropped; {repair.rows_kept} of {repair.rows_read} rows kept"
    seqs = loaded.stats
    out["users, entries, states"] = f"{seqs.n_users}, {seqs.n_entries}, {seqs.n_states}"
    out["prior"] = prior_words(chosen)
    out["query"] = chosen.query + (f", k = {chosen.k}" if chosen.query == "topk" else "")
    out["mechanisms"] = [label(m) for m in chosen.mechanisms]
    out["ε_puffer grid"] = list(chosen.eps_grid)
    out.update(
        {
            "releases": chosen.releases,
            "release mode": chosen.release_mode,
            "trials": chosen.trials,
            "seed": chosen.seed,
            "topk laplace": chosen.topk_laplace,
        }
    )
    out["what is secret"] = secrets_sentence(chosen.secrets, [str(s) for s in seqs.states])  # docs/math.md §16
    out["post-processing with the prior"] = "yes (docs/math.md §14)" if chosen.postprocess else "no"
    return out


def prior_words(chosen: SimulateSettings) -> str:
    tau = chosen.smoothing
    fitted = f"the Markov chain fitted on these data (docs/math.md §6, smoothing τ = {tau:g})"
    if not chosen.robust:
        return fitted
    alpha = "1/K" if chosen.concentration is None else f"{chosen.concentration:g}"
    return (
        f"robust set Θ: {fitted} and {chosen.draws} Dirichlet posterior draws (α₀ = {alpha},"
        f" seed {chosen.prior_seed}; docs/math.md §12)"
    )


def script(loaded: LoadedData, chosen: SimulateSettings, metric: str, release: int) -> str:
    """The page as a Python program (``app_ui/core/scripts/simulate.py`` filled in) recomputing its simulation.

    It prints ``## metrics``, ``## ledger`` and ``## best`` blocks (and, with a robust Θ,
    ``## metrics with the fitted prior only``), each a CSV table with full-precision numbers, then the
    page's table of ``metric`` in ``release`` as the page prints it.
    """
    imports = ["load_sequences"]
    builtin = loaded.builtin
    if builtin is not None:
        how = f"{builtin.title}. {builtin.source}"
        data = f"data = load_dataset({builtin.name!r}, user={loaded.columns['user']!r})\n"
        run = "python simulate.py"
        imports = ["load_dataset"]
    else:
        repair = loaded.repair
        how = f"the file you uploaded, {loaded.name} (the app kept no copy: put the file next to this script)"
        options = {
            **loaded.columns,
            "drop_missing": bool(repair and repair.drop_missing),
            "drop_duplicates": bool(repair and repair.drop_duplicates),
        }
        data = (
            f"DATA = sys.argv[1] if len(sys.argv) > 1 else {loaded.name!r}\n"
            "data = load_sequences(DATA, " + ", ".join(f"{key}={value!r}" for key, value in options.items()) + ")\n"
        )
        run = f"python simulate.py [path to {loaded.name}]"
    imports += ["transition_counts"]
    tau = chosen.smoothing
    if chosen.robust:
        imports.append("fit_prior_set")
        prior = (
            f"# Θ: the fitted chain (docs/math.md §6) and {chosen.draws} Dirichlet posterior draws (§12)\n"
            f"prior = fit_prior_set(data, draws={chosen.draws}, seed={chosen.prior_seed},"
            f" concentration={chosen.concentration!r}, smoothing={tau!r})\n"
        )
    else:
        imports.append("fit_markov_chain")
        prior = (
            "# the Markov chain fitted on the data (docs/math.md §6)\n"
            f"prior = fit_markov_chain(data, smoothing={tau!r})\n"
        )
    settings = {
        "query": chosen.query,
        "k": chosen.k,
        "mechanisms": list(chosen.mechanisms),
        "eps_grid": list(chosen.eps_grid),
        "releases": chosen.releases,
        "release_mode": chosen.release_mode,
        "trials": chosen.trials,
        "rng": chosen.seed,
        "topk_laplace": chosen.topk_laplace,
        "postprocess": chosen.postprocess,
    }
    lines = "".join(f"    {key}={value!r},\n" for key, value in settings.items())
    source = secrets_source(chosen.secrets)
    if source is not None:  # what is secret (docs/math.md §16)
        lines += f"    secrets={source},\n"
        imports.append("Secrets")
    return fill(
        "simulate",
        doc={"Data": how, "Prior": f"{prior_words(chosen)}.", "Run": run},
        values={
            "SETTINGS": Code(f"dict(\n{lines})"),
            "METRIC": metric,
            "RELEASE": int(release),
            "COMPARE": chosen.robust,
            "SMOOTHING": float(tau),
        },
        blocks={"data": data, "prior": prior},
        imports=imports,
    )


def parse_script_output(text: str, as_text: bool = False) -> dict[str, pd.DataFrame]:
    """The CSV blocks printed by :func:`script`'s program, by name (for tests and for reading it back);
    ``as_text``: every cell as the text printed (to compare with what the page shows)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = blocks.setdefault(line[3:].strip(), [])
        elif current is not None:
            current.append(line)
    kind = str if as_text else None
    return {name: pd.read_csv(io.StringIO("\n".join(lines)), dtype=kind) for name, lines in blocks.items()}
