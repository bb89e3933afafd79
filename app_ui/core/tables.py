"""Numbers and tables as every page prints them: ∞ for +inf, 4 significant digits, numbers right-aligned.

A table is formatted once: :func:`shown` pairs the numbers (for the CSV download and the report)
with the text the page prints, and a view cached by its inputs keeps both, so that a rerun only
sends the table again.  :func:`show_table` draws a table that scrolls inside its own frame
(``st.dataframe``); :func:`static_table` one that wraps its text to the page's width
(``st.table``: nothing to scroll sideways on a phone).  Downloads never rerun the page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from puffer_core.display import fmt


def join_words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list in a sentence."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

def display_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every float column as text: ∞ shown as ∞, 4 significant digits, empty where NaN."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            out[column] = [fmt(float(v)) if not pd.isna(v) else "" for v in out[column]]
    return out


@dataclass(frozen=True, eq=False)
class Shown:
    """A table as numbers (``frame``, for downloads and reports) and as the page prints it (``text``)."""

    frame: pd.DataFrame
    text: pd.DataFrame
    numeric: tuple[str, ...]  # the columns that hold numbers: right-aligned


def shown(frame: pd.DataFrame) -> Shown:
    """Format ``frame`` once for printing (keep the result with the frame, e.g. in a cached view)."""
    numeric = tuple(str(c) for c in frame.columns if pd.api.types.is_float_dtype(frame[c]))
    return Shown(frame, display_table(frame), numeric)


def show_table(table: pd.DataFrame | Shown, key: str, **kwargs: Any) -> None:
    """``st.dataframe`` of the table as text, number columns right-aligned; ``column_config`` adds to that."""
    table = table if isinstance(table, Shown) else shown(table)
    config: dict[str, Any] = {c: st.column_config.TextColumn(c, alignment="right") for c in table.numeric}
    config.update(kwargs.pop("column_config", None) or {})
    st.dataframe(table.text, hide_index=True, key=key, column_config=config, **kwargs)


def right_aligned(table: pd.DataFrame | Shown) -> Styler:
    """The table as text with its number columns right-aligned, for :func:`static_table` (build it once)."""
    table = table if isinstance(table, Shown) else shown(table)
    # "!important": the table's own stylesheet aligns every cell left
    return table.text.style.set_properties(subset=list(table.numeric), **{"text-align": "right !important"})


def static_table(table: pd.DataFrame | Shown | Styler) -> None:
    """A table that wraps its text to the page's width (no sideways scrolling), numbers right-aligned."""
    st.table(table if isinstance(table, Styler) else right_aligned(table), hide_index=True)


def csv_download(frame: pd.DataFrame, file_name: str, label: str, key: str) -> None:
    """A download button for a table (``inf`` written as inf), without rerunning the page.

    The CSV is written when the button is clicked, not on every rerun, in UTF-8 with a byte-order mark:
    Excel then reads ε, Θ and ∞ as they are (without it, it guesses a Windows code page and garbles them).
    Every reader of the app's own CSVs (the ledger's, a dataset's) skips the mark.
    """
    st.download_button(
        label,
        lambda: frame.to_csv(index=False).encode("utf-8-sig"),
        file_name=file_name,
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def show_problems(problems: Iterable[str]) -> None:
    """One ``st.error`` per problem, as a sentence."""
    for problem in problems:
        st.error(problem[0].upper() + problem[1:] + ".")
