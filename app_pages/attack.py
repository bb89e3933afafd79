"""How tight is my bound? An attacker's lower bound ≤ the exact truth ≤ every reported bound (docs/math.md §11)."""

from __future__ import annotations

import streamlit as st

from app_ui import page_path
from app_ui.accuracy.risk import attack_region_section
from app_ui.attack.secrets import attack_secrets_section
from app_ui.attack.settings import ATTACK_DRAWS, ATTACK_EPS, ATTACK_K, ATTACK_RELEASE, ATTACK_SEED, AttackSettings
from app_ui.attack.views import (
    DEMO_PRIORS,
    USER,
    AttackExport,
    attack_report,
    attack_row,
    attack_script,
    is_stream,
    ladder,
    ladder_tables,
    notes,
    release_label,
    user_chains,
)
from app_ui.core import inputs, state
from app_ui.core.report import offer_exports
from app_ui.core.tables import static_table
from app_ui.prior.settings import PriorChoice
from puffer_core.tightness.ladder import ratio_text
from puffer_core.tightness.releases import RELEASES

st.title("How tight is my bound?")
st.markdown(
    "Every guarantee on the other pages is an **upper bound**. The exact leakage needs every sequence of"
    " the chain (K^T of them), so beyond toy sizes nobody knows whether the truth is half the bound or all"
    " of it. An **attacker** answers from below: for an output it finds, it computes exactly how far"
    " the release moves the posterior odds of X_t = x against X_t = x' — a leakage the release really has."
    " It draws outputs from the mechanism, then climbs to the ones that move the odds most. So"
    " **attack (lower bound) ≤ truth ≤ reported bound**, and the seed reproduces the attack (docs/math.md §11)."
)
state.show_ignored_link_settings()

# the user's prior (Influence curves page), when the attacker can use it
prior = PriorChoice.from_session()  # set on the Influence curves page: this page does not change it
description = prior.record.description(prior.values)
try:
    chains = user_chains(prior.kind, prior.params)
    user_problem = None if chains is not None else "it is a Gaussian process; the attacker needs a Markov chain"
except ValueError as exc:
    chains, user_problem = None, str(exc)
secret = attack_secrets_section(prior, chains is not None)  # what is secret for your prior (docs/math.md §16)

left, right = st.columns([3, 2], gap="large")
with left:
    release = state.radio(
        st,
        "Release under attack",
        ATTACK_RELEASE,
        {name: spec.label[0].upper() + spec.label[1:] for name, spec in RELEASES.items()},
        key="w_attack_release",
    )
    options = [*DEMO_PRIORS, USER] if chains is not None else list(DEMO_PRIORS)
    st.markdown("**Priors to attack**")
    picks = st.columns(3)
    chosen = [
        key
        for i, key in enumerate(options)
        if picks[i % 3].checkbox(
            DEMO_PRIORS[key].short if key != USER else "your prior",
            value=True,
            key=f"w_attack_prior_{key}",
            persist_state="session",
        )
    ]
    with st.expander("What are these priors?"):
        st.markdown(
            "\n".join(f"- **{demo.short}**: {demo.label}" for demo in DEMO_PRIORS.values())
            + (
                f"\n- **your prior**: {description} (Influence curves page)"
                if chains is not None
                else f"\n\nYour prior ({description}) is not offered: {user_problem}."
            )
            + "\n\nTo attack a chain fitted to your data: Influence curves → K-state Markov chain → preset"
            " “Fitted from data”."
        )
    if chains is None:
        st.caption(f"Your prior ({description}) is not offered: {user_problem}.")
    st.page_link(page_path("curves"), label="Change your prior", icon=":material/tune:")
with right:
    eps_label = "ε per step" if is_stream(release) else "ε of the release (per entry)"
    state.number_input(st, eps_label, ATTACK_EPS, step=0.1, key="w_attack_eps")
    if release == "exponential":
        state.number_input(st, "k (top states released)", ATTACK_K, key="w_attack_k")
    c1, c2 = st.columns(2)
    state.number_input(c1, "Seed", ATTACK_SEED, key="w_attack_seed")
    state.number_input(
        c2,
        "Draws",
        ATTACK_DRAWS,
        step=50,
        key="w_attack_draws",
        help="Outputs drawn from the mechanism before the climb; more draws, a larger lower bound (slower).",
    )
    inputs.stop_if_invalid()  # never run with a value other than the one in its box
    if secret is None:
        st.stop()
    run = st.button("Run the attack", type="primary", icon=":material/target:", key="w_attack_run")

settings = AttackSettings.from_session()  # as the controls above left them
eps, seed, draws = settings.eps, settings.seed, settings.draws
k = settings.k if release == "exponential" else 1
sources = tuple(
    ("demo", key) if key != USER else ("user", prior.kind, prior.params, description, secret) for key in chosen
)
run_key = (sources, release, eps, k, seed, draws)
runs = st.session_state.setdefault("attack_runs", set())

if not sources:
    st.info("Choose at least one prior to attack.")
elif run or run_key in runs:
    rows, attacked, failures = [], [], []
    progress = st.progress(0.0, text="Attacking…") if run_key not in runs else None
    for i, source in enumerate(sources):
        if progress is not None:
            progress.progress(i / len(sources), text=f"Attacking prior {i + 1} of {len(sources)}…")
        try:
            rows.append(attack_row(source, release, eps, k, seed, draws))
            attacked.append(source)
        except ValueError as exc:
            failures.append(f"{'your prior' if source[0] == 'user' else DEMO_PRIORS[source[1]].short}: {exc}")
    if progress is not None:
        progress.empty()
    runs.add(run_key)
    for failure in failures:
        st.error(failure)
    if rows:
        broken = [r.short for r in rows if not r.in_order]
        if broken:
            st.error(
                "The order lower ≤ truth ≤ bound fails for " + ", ".join(broken) + ": a bound is wrong. Please report"
                " this with the script below."
            )
        st.markdown(
            f"**Lower bound (attack) ≤ truth (exact) ≤ reported bound** — {release_label(release)}, ε = {eps:g},"
            f" seed {seed}, {draws} draws"
        )
        export = AttackExport(tuple(attacked), release, eps, k, seed, draws)
        st.plotly_chart(ladder(export), key="attack_chart", config={"displaylogo": False})
        bounds, where = ladder_tables(export)  # two narrow tables: nothing to scroll sideways on a phone
        static_table(bounds)
        static_table(where)
        for note in notes(rows):
            st.caption(note)
        st.markdown(
            "\n".join(
                f"- **{r.short}**: {r.describe()}"
                + (f" — the attack reaches {ratio_text(r)} of the tightest bound." if ratio_text(r) else "")
                for r in rows
                if r.lower is not None
            )
        )
        if not is_stream(release):
            st.caption("TPL bounds streams only: a histogram of the whole sequence is one release.")
        st.caption(
            "Attack ÷ tightest bound near 100%: the bound is nearly tight (the truth is close to it). The exact"
            " truth is enumerated only for tiny chains; the attack and the exact value agree to rounding when the"
            " attack finds the worst output."
        )
        if is_stream(release):
            attack_region_section(export)
        st.divider()
        script = attack_script(export)
        offer_exports(lambda: attack_report(export), script, "attack", "attack")
        with st.expander("The script behind these numbers"):
            st.code(script, language="python")
else:
    st.info("Press **Run the attack**: each prior is attacked with the seed above (results are kept for the session).")

state.share(settings.link())
