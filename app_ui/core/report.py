"""A decision leaves the app as a report and a script.

Every page that ends in a decision (Calibrate, Plan & compose, Simulate, Streams, How tight is my
bound?) offers two downloads side by side: an HTML report (every setting, the numbers, the charts,
readable offline: plotly.js is inlined once, ~4.6 MB) and a Python script that recomputes the
page's numbers with ``puffer_core`` and prints them.  The page builds the report's sections and the
script's body (the prior in it by :func:`app_ui.prior.current.prior_source`); this module assembles them
(:func:`html_report`, :func:`python_script`) and offers them (:func:`offer_exports`), built only
when a button is clicked, not on every rerun.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.offline
import streamlit as st

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       padding: 0 1rem; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.6rem; text-align: right; }
th { background: #f6f8fa; } td:first-child, th:first-child { text-align: left; }
.meta { color: #57606a; font-size: 0.85rem; } .note { background: #fff8c5; padding: 0.5rem 0.8rem; }
.scroll { overflow-x: auto; }
"""


@dataclass(frozen=True)
class Section:
    """One part of a report: a heading, then optional text, a chart and a table."""

    heading: str
    text: str = ""
    figure: go.Figure | None = None
    table: pd.DataFrame | None = None
    notes: Sequence[str] = field(default_factory=tuple)


def _library_version() -> str:
    try:
        return version("pufferfish-lab")
    except PackageNotFoundError:
        return "working copy"


def _value(value: Any) -> str:
    """A setting or a cell in words: 6 significant digits, ∞, yes/no, lists as "0.5, 1, 2", rows of a
    matrix separated by ";", a mapping as "user: user_id; time: ts" (never a raw JSON list)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "∞" if value == float("inf") else f"{value:.6g}"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_value(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        separator = "; " if any(isinstance(item, (list, tuple)) for item in value) else ", "
        return separator.join(_value(item) for item in value) if value else "none"
    return str(value)


_EMPHASIS = re.compile(r"(?<![\w*])\*(?!\s)([^*]+?)(?<!\s)\*(?![\w*])")  # *All b*, not b* = 7


def plain(text: str) -> str:
    """A note of the page for a static report: its fact without what to do with the app's controls (which a
    report does not have), and without markdown emphasis."""
    return _EMPHASIS.sub(r"\1", getattr(text, "fact", str(text)).replace("**", ""))


def _settings_table(settings: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(str(name))}</td><td>{html.escape(_value(value))}</td></tr>"
        for name, value in settings.items()
    )
    return f'<div class="scroll"><table><tr><th>setting</th><th>value</th></tr>{rows}</table></div>'


def _table(frame: pd.DataFrame) -> str:
    shown = frame.map(lambda v: _value(v) if isinstance(v, float) else v)
    return f'<div class="scroll">{shown.to_html(index=False, escape=True, border=0)}</div>'


def html_report(title: str, summary: str, settings: Mapping[str, Any], sections: Sequence[Section]) -> str:
    """A self-contained HTML page: the summary, every setting, then each section.

    Charts are interactive and work offline (plotly.js is inlined once, ~4.6 MB); numbers in
    tables keep 6 significant digits and +inf shows as ∞.
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>",
    ]
    if any(s.figure is not None for s in sections):
        parts.append(f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script>')
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts += [
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">Pufferfish Lab ({html.escape(_library_version())}), {stamp}. '
        "The mathematics: docs/math.md in the project's repository.</p>",
        f"<p>{html.escape(plain(summary))}</p>",
        "<h2>Settings</h2>",
        _settings_table(settings),
    ]
    for section in sections:
        parts.append(f"<h2>{html.escape(section.heading)}</h2>")
        if section.text:
            parts.append(f"<p>{html.escape(plain(section.text))}</p>")
        if section.figure is not None:
            # Streamlit's default plotly template holds placeholder colours its front end fills in;
            # a report is read without Streamlit, so it gets a real template.
            figure = go.Figure(section.figure).update_layout(template="plotly_white")
            parts.append(figure.to_html(full_html=False, include_plotlyjs=False, config={"responsive": True}))
        parts += [f'<p class="note">{html.escape(plain(note))}</p>' for note in section.notes]
        if section.table is not None:
            parts.append(_table(section.table))
    parts.append("</body></html>")
    return "\n".join(parts)


NOT_FOUND = (
    "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
    " or run this script from the Pufferfish Lab repository's folder"
)


def python_script(
    title: str, about: Sequence[str], stem: str, imports: Sequence[str], body: str, run: str = ""
) -> str:
    """A script a page offers: a docstring (``title``, the lines of ``about``, how to run it), its imports and body.

    ``imports`` are import lines; those from ``puffer_core`` are tried first, so that a missing
    library stops the script with a sentence saying what to do instead of a traceback.
    """
    own = [line for line in imports if line.startswith(("from puffer_core", "import puffer_core"))]
    other = sorted({"import sys", *(line for line in imports if line not in own)})
    guarded = "".join(f"    {line}\n" for statement in own for line in statement.splitlines())
    how = (
        "Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),"
        f" or from the Pufferfish Lab repository's folder: {run or f'python {stem}.py'}"
    )
    doc = "\n".join([title, "", *about, how])
    return (
        f'"""{doc.replace(chr(34) * 3, chr(39) * 3)}\n"""\n\n'
        + "\n".join(other)
        + "\n\ntry:\n"
        + guarded
        + "except ModuleNotFoundError:\n"
        + f'    sys.exit("{NOT_FOUND}")\n\n'
        + body.rstrip("\n")
        + "\n"
    )


def offer_exports(report: str | Callable[[], str], script: str | Callable[[], str], stem: str, key: str) -> None:
    """Two downloads side by side: ``<stem>-report.html`` and ``<stem>.py`` (neither reruns the page).

    Pass functions returning the HTML and the script: they are then built only when a button is
    clicked (a report is ~4.6 MB: building and hashing it on every rerun would cost tens of ms).
    """
    buttons = st.container(horizontal=True)  # side by side, at the left, on every page (stacked on a phone)
    for text, label, file_name, mime, icon, help_text in (
        (
            report,
            "Download report (HTML)",
            f"{stem}-report.html",
            "text/html",
            ":material/description:",
            "Every setting, the numbers and the charts in one file that opens offline in any browser.",
        ),
        (
            script,
            "Download script (Python)",
            f"{stem}.py",
            "text/x-python",
            ":material/code:",
            f"Recomputes this page's numbers with puffer_core and prints them: `python {stem}.py`.",
        ),
    ):
        buttons.download_button(
            label,
            (lambda text=text: text().encode("utf-8")) if callable(text) else text.encode("utf-8"),
            file_name=file_name,
            mime=mime,
            key=f"{key}_{'report' if file_name.endswith('.html') else 'script'}",
            on_click="ignore",
            icon=icon,
            help=help_text,
        )
