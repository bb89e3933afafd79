"""What is secret on the analyst's path (docs/math.md §16): the path's target, plan, trial, report and script follow
the secrets chosen under *What is secret* (the same setting, link key ``sec``, as the pages the path opens).

The section is drawn on the target step (for the chain fitted to the data); the later steps say what is protected
in one sentence.  The curve is :func:`app_ui.secrets.page.page_curve`'s (Θ's, with prior uncertainty), the trial
run's secrets the same ones resolved on the chain's entries, and the script builds them from their source.
"""

from __future__ import annotations

from app_ui.guided.settings import AnalystSettings
from app_ui.prior.current import Uncertainty
from app_ui.secrets.controls import prior_shape
from app_ui.secrets.page import page_curve, protected
from app_ui.secrets.settings import AnyChosen
from puffer_core import InfluenceCurve


def path_curve(settings: AnalystSettings, everything: InfluenceCurve, spread: Uncertainty | None) -> InfluenceCurve:
    """The curve the path computes with: ``everything`` (every pair at every entry) or the chosen secrets' curve."""
    return page_curve(settings.secrets, settings.prior, everything, spread)


def path_secrets(settings: AnalystSettings) -> AnyChosen | None:
    """The chosen secrets resolved on the fitted chain's entries (None for every pair at every entry): what the
    trial run's simulation takes."""
    if settings.secrets.is_all:
        return None
    _, length = prior_shape(settings.prior.kind, settings.prior.params)
    return settings.secrets.resolved(length)


def path_protected(settings: AnalystSettings) -> None:
    """The sentence of what the step's numbers protect, at the path's ε_puffer."""
    protected(settings.secrets, settings.prior, float(settings.eps_puffer))


def script_secrets(settings: AnalystSettings) -> tuple[str, list[str]]:
    """The secrets as Python for the path's script (``ALL_SECRETS`` for every pair) and the names it imports."""
    _, length = prior_shape(settings.prior.kind, settings.prior.params)
    return settings.secrets.source(length), settings.secrets.names()


def secrets_words(settings: AnalystSettings) -> str:
    """What is protected, in words, for the report's settings."""
    labels, _ = prior_shape(settings.prior.kind, settings.prior.params)
    return settings.secrets.secrets.sentence(labels, float(settings.eps_puffer), None)
