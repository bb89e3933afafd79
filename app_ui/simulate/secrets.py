"""What is secret on the Simulate page (docs/math.md §16): the shared section for the loaded data, read into the
text of value secrets the simulation takes ("" for every pair of values at every entry), and back into the
library's value, the script's source and the report's sentence.

The data's states are the chain's; like Synthesize, the page offers value pairs at every entry or at chosen
entries (no event secrets, no rule on a time grid: the simulation may run on counts, which keep no times).
"""

from __future__ import annotations

from collections.abc import Sequence

from app_ui.data.picker import LoadedData
from app_ui.secrets.controls import data_secrets_section
from app_ui.secrets.views import SecretsText, value_secrets_of
from puffer_core.secrets import ALL_SECRETS, Secrets


def longest(loaded: LoadedData) -> int:
    """The longest sequence's number of entries (what chosen entries may name)."""
    return int(max(loaded.stats.length_values, default=1))


def simulate_secrets_section(loaded: LoadedData) -> str | None:
    """Draw the "What is secret" section for these data; the chosen value secrets' text ("" for every pair at every
    entry), or None after an ``st.error`` (recorded for :func:`~app_ui.core.inputs.stop_if_invalid`)."""
    length = longest(loaded)
    choice = data_secrets_section(tuple(str(s) for s in loaded.stats.states), length)
    if choice is None:
        return None
    if choice.is_all:
        return ""
    return SecretsText().encode(choice.resolved(length))


def secrets_of(text: str) -> Secrets | None:
    """The library's value for ``text`` (None for every pair at every entry)."""
    return value_secrets_of(text, "Simulate protects value pairs of entries; event secrets are not offered here")


def secrets_source(text: str) -> str | None:
    """The secrets as Python for the exported script (None for every pair at every entry)."""
    value = secrets_of(text)
    return None if value is None else value.source()


def secrets_sentence(text: str, states: Sequence[str]) -> str:
    """What the simulation's mechanisms protect, in words."""
    value = secrets_of(text)
    return (ALL_SECRETS if value is None else value).sentence([str(s) for s in states], None, None)
