"""The project's math reference inside the app: docs/glossary.md, docs/math.md and docs/references.md.

The About the math page (``app_pages/about.py``) shows the three files; every other page cites
papers by key ([C], [S], …) and ends with :func:`show_sources`, which names the papers it cites
and links to that page, so every citation a user sees leads to something in the repository.
Relative links between the files (``[math.md](math.md)``) do not resolve inside Streamlit:
:func:`in_app` points them at the part of the About page that shows the linked file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

import streamlit as st

from app_ui import ROOT, page_path

DOCS = ROOT / "docs"
# the file → the anchor of the part of the About page that shows it
ANCHORS: dict[str, str] = {"glossary.md": "glossary", "math.md": "math", "references.md": "references"}
ABOUT = "about"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_YEAR = re.compile(r"(?<![\d.:])(?:19|20)\d\d(?!\d|\.\d)")
_REFERENCE = re.compile(r"^\*\*\[([A-Z]+)\]\*\*\s+(.+?)\.\s+\*(.+?)\*", flags=re.MULTILINE)


@st.cache_data(show_spinner=False, max_entries=16)
def _read(name: str, stamp: float) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def read_doc(name: str) -> str:
    """The text of ``docs/<name>`` (re-read when the file changes)."""
    path = DOCS / name
    return _read(name, path.stat().st_mtime)


def doc_body(name: str) -> str:
    """The text of ``docs/<name>`` under its title (the page shows its own heading instead)."""
    preamble, parts = sections(read_doc(name), level=1)
    return parts[0][1] if parts else preamble


def in_app(text: str) -> str:
    """Markdown for the About page: links to the three docs point at the part of the page showing them.

    Links to web addresses stay; a link to any other file of the repository becomes its path as
    text; headings go one level down (the page's own headings are above them).
    """

    def replace(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if "://" in target or target.startswith(("mailto:", "#")):
            return match.group(0)
        file = target.split("#", 1)[0]
        if file in ANCHORS:
            return f"[{label}](#{ANCHORS[file]})"
        return f"{label} (`{posixpath.normpath('docs/' + file)}` in the repository)"

    lines = [("#" + line if re.match(r"#{1,5} ", line) else line) for line in _LINK.sub(replace, text).splitlines()]
    return "\n".join(lines)


def sections(text: str, level: int = 2) -> tuple[str, list[tuple[str, str]]]:
    """The text before the first heading of ``level`` and each (heading, body) after it."""
    marker = "#" * level + " "
    preamble: list[str] = []
    parts: list[tuple[str, list[str]]] = []
    fence = False
    for line in text.splitlines():
        fence ^= line.startswith("```")
        if not fence and line.startswith(marker):
            parts.append((line[len(marker) :].strip(), []))
        elif parts:
            parts[-1][1].append(line)
        else:
            preamble.append(line)
    return "\n".join(preamble).strip(), [(heading, "\n".join(body).strip()) for heading, body in parts]


def _author(name: str) -> str:
    return name.strip().split()[-1]


def papers() -> dict[str, str]:
    """Each paper key with a short reference: "[S] Song & Chaudhuri, *Composition Properties of …* (2017)"."""
    text = read_doc("references.md")
    out = {}
    for key, authors, title in _REFERENCE.findall(text):
        names = [a for a in re.sub(r"\s*\([^)]*\)", "", authors).split(",") if a.strip()]
        who = _author(names[0]) + (f" & {_author(names[1])}" if len(names) == 2 else " et al." if names else "")
        entry = text.split(title, 1)[1].split("**[", 1)[0]
        year = _YEAR.search(entry)  # the first year after the title (not the digits of an arXiv number)
        out[key] = f"{who}, *{title.rstrip('.')}*" + (f" ({year.group(0)})" if year else "")
    return out


def show_sources(keys: Iterable[str], lead: str = "Papers cited on this page") -> None:
    """Name the papers a page cites and link to the About the math page, where they are listed in full."""
    known = papers()
    cited = [f"[{key}] {known[key]}" for key in keys if key in known]
    st.divider()
    text = f"{lead}: " + "; ".join(cited) + ". " if cited else ""
    st.caption(text + "Their full references, the glossary and every formula (docs/math.md) are on the page:")
    st.page_link(page_path(ABOUT), label="About the math", icon=":material/menu_book:")


def math_section(number: int) -> tuple[str, str]:
    """The heading and the body of section §``number`` of docs/math.md (for the App's "mathematics" expanders)."""
    _, parts = sections(doc_body("math.md"))
    for heading, body in parts:
        if heading.startswith(f"§{number}."):
            return heading, body.removesuffix("---").strip()
    raise KeyError(f"docs/math.md has no section §{number}")


def show_math(*numbers: int, lead: str = "The mathematics") -> None:
    """The sections of docs/math.md behind a step, one click away (an expander), after its plain words."""
    with st.expander(f"{lead}: docs/math.md {', '.join(f'§{n}' for n in numbers)}", icon=":material/function:"):
        for number in numbers:
            heading, body = math_section(number)
            st.markdown(f"#### {heading}")
            st.markdown(in_app(body))
