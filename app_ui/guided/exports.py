"""The analyst's path as a script and as report settings: every number the path shows, recomputable.

:func:`script` fills ``app_ui/core/scripts/guided.py``: it loads the same data (a built-in dataset by name, an
upload from the file next to it), fits the same chain (or draws the same Θ), and prints the target, the plan and
the trial's table as the path shows them (a test compares the two).  :func:`report_settings` lists every setting
the path used, for its report.
"""

from __future__ import annotations

from typing import Any

from app_ui.core.templates import Code, fill
from app_ui.data.picker import LoadedData
from app_ui.guided.analyst import QUERIES, TRIAL_MECHANISMS
from app_ui.guided.secrets import script_secrets, secrets_words
from app_ui.guided.settings import AnalystSettings
from puffer_core.priors.fitting import DEFAULT_SMOOTHING


def _data_source(loaded: LoadedData) -> tuple[str, str, list[str]]:
    """How the script gets the data: its words, its code and the names it imports."""
    builtin = loaded.builtin
    if builtin is not None:
        code = f"data = load_dataset({builtin.name!r}, user={loaded.columns['user']!r})\n"
        return f"{builtin.title}. {builtin.source}", code, ["load_dataset"]
    repair = loaded.repair
    options = {
        **loaded.columns,
        "drop_missing": bool(repair and repair.drop_missing),
        "drop_duplicates": bool(repair and repair.drop_duplicates),
    }
    code = (
        f"DATA = sys.argv[1] if len(sys.argv) > 1 else {loaded.name!r}\n"
        "data = load_sequences(DATA, " + ", ".join(f"{key}={value!r}" for key, value in options.items()) + ")\n"
    )
    how = f"the file you uploaded, {loaded.name} (the app kept no copy: put the file next to this script)"
    return how, code, ["load_sequences"]


def _prior_source(settings: AnalystSettings, length: int) -> tuple[str, str, list[str]]:
    """How the script gets the attacker's belief: its words, its code (``prior`` and ``curve``) and imports."""
    chosen = settings.prior.uncertainty
    if not chosen.on:
        code = (
            "# the Markov chain fitted on the data (docs/math.md §6): the attacker's belief, and its a(b) curve\n"
            f"prior = fit_markov_chain(data, smoothing={DEFAULT_SMOOTHING!r})\n"
            "curve = influence_curve(prior, secrets=SECRETS)\n"
        )
        words = f"the Markov chain fitted on these data (docs/math.md §6, smoothing τ = {DEFAULT_SMOOTHING:g})."
        return words, code, ["fit_markov_chain", "influence_curve"]
    code = (
        f"# Θ: the fitted chain and {chosen.draws} draws from its Dirichlet posterior (docs/math.md §12); the curve"
        " covers them all\n"
        f"spread = prior_spread(data, draws={chosen.draws}, seed={chosen.seed},"
        f" concentration={chosen.concentration!r}, length={length}, smoothing={DEFAULT_SMOOTHING!r})\n"
        + ("prior, curve = list(spread.priors), spread.robust\n" if settings.secrets.is_all
           else "prior = list(spread.priors)\ncurve = influence_curve(prior, secrets=SECRETS)  # for the secrets\n")
    )
    words = (
        f"Θ = the chain fitted on these data and {chosen.draws} draws from its Dirichlet posterior (docs/math.md"
        f" §12, seed {chosen.seed})."
    )
    return words, code, ["prior_spread", "influence_curve"]


def script(loaded: LoadedData, settings: AnalystSettings, length: int, trial: bool) -> str:
    """The path as a Python program (``app_ui/core/scripts/guided.py`` filled in); ``length`` is the fit's T and
    ``trial`` whether the trial was run with these settings (its table is printed only then)."""
    how, data, data_imports = _data_source(loaded)
    prior_words, prior, prior_imports = _prior_source(settings, length)
    run = "python guided.py" if loaded.builtin is not None else f"python guided.py [path to {loaded.name}]"
    secrets, secret_names = script_secrets(settings)  # what is secret (docs/math.md §16)
    return fill(
        "guided",
        doc={"Data": how, "Prior": prior_words, "Run": run},
        values={
            "EPS": float(settings.eps_puffer),
            "RELEASES": settings.plan_releases,
            "QUERY": settings.query,
            "K": settings.k,
            "TRIALS": settings.trials,
            "SEED": settings.seed,
            "TRIAL": trial,
            "MECHANISMS": Code(repr(TRIAL_MECHANISMS[settings.query])),
            "SECRETS": Code(secrets),
        },
        blocks={"data": data, "prior": prior},
        imports=[*data_imports, *prior_imports, *secret_names],
    )


def report_settings(loaded: LoadedData, settings: AnalystSettings, prior: str, trial: bool) -> dict[str, Any]:
    """Every setting the path used, for the report: the data and its columns, the prior (with or without its
    uncertainty), the target, the plan and the trial's query, k, trials and seed."""
    columns = loaded.columns
    chosen = settings.prior.uncertainty
    out: dict[str, Any] = {
        "data": loaded.description,
        "columns (user, time, state)": ", ".join(str(columns.get(c)) for c in ("user", "time", "state")),
        "group column": columns.get("group") or "none (one group)",
        "prior": prior,
        "prior uncertainty": (
            f"on: {chosen.draws} posterior draws, seed {chosen.seed},"
            f" α₀ = {'1/K' if chosen.concentration is None else f'{chosen.concentration:g}'}"
            if chosen.on
            else "off (the fitted chain alone)"
        ),
        "smoothing τ of the fit": DEFAULT_SMOOTHING,
        "target ε_puffer per release": settings.eps_puffer,
        "releases planned": settings.plan_releases,
        "what you publish": QUERIES[settings.query],
        "what is secret": secrets_words(settings),  # docs/math.md §16
    }
    if settings.query == "topk":
        out["k"] = settings.k
    out["trial"] = (
        f"{settings.trials} trials, seed {settings.seed}, mechanisms {' and '.join(TRIAL_MECHANISMS[settings.query])}"
        if trial
        else "not run"
    )
    return out
