"""Scripts from templates: each exported script is a real Python file in ``app_ui/core/scripts/``, filled in.

A template is a script that runs as it is (``python app_ui/core/scripts/calibrate.py`` recomputes the
page for its default settings) and that ruff checks like any other file.  A page fills it from
the same settings it computed with (:func:`fill`):

- ``doc``: lines of the module docstring that start with a name and a colon (``Prior: …``) get
  the page's words after the colon;
- ``values``: each top-level assignment ``NAME = <value>`` named here gets the page's value,
  written as ``repr`` (a float reads back to the same float), or as given for a :class:`Code`;
- ``blocks``: the lines between ``# <name>`` and ``# </name>`` are replaced by the page's code
  (e.g. the prior: :meth:`puffer_core.priors.kinds.PriorKind.code`);
- ``imports``: names the filled code needs from ``puffer_core``; the ``from puffer_core import``
  statements are then merged into one, sorted as isort does, without the names nothing uses.

The result is parsed before it is returned (a template that cannot be filled is a ValueError),
and the tests run every script a page exports and compare what it prints with the page.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent / "scripts"
LIBRARY = "puffer_core"
LINE = 120  # ruff's line length for this project


@dataclass(frozen=True)
class Code:
    """A value written into a template as this Python source, as it is (e.g. a list laid out one item per line)."""

    text: str


def template(name: str) -> str:
    """The source of template ``name`` (``app_ui/core/scripts/<name>.py``)."""
    return (SCRIPTS / f"{name}.py").read_text(encoding="utf-8")


def _offset(lines: list[str], line: int, column: int) -> int:
    """The character offset of (1-based line, UTF-8 byte column) in the text made of ``lines``."""
    before = sum(len(text) for text in lines[: line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8"))


def _replace(source: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def _doc(source: str, lines: list[str], tree: ast.Module, doc: Mapping[str, str]) -> list[tuple[int, int, str]]:
    if not doc:
        return []
    node = tree.body[0]
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        raise ValueError("the template has no module docstring to fill")
    edits = []
    found = set()
    for number in range(node.lineno, node.end_lineno + 1):
        text = lines[number - 1]
        name = text.split(":", 1)[0]
        if name in doc and ":" in text:
            start = _offset(lines, number, 0)
            edits.append((start, start + len(text.rstrip("\n")), f"{name}: {doc[name]}".replace('"""', "'''")))
            found.add(name)
    if set(doc) - found:
        raise ValueError(f"the template's docstring has no line for {sorted(set(doc) - found)}")
    return edits


def _values(lines: list[str], tree: ast.Module, values: Mapping[str, object]) -> list[tuple[int, int, str]]:
    edits = []
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in values:
                value = values[name]
                text = value.text if isinstance(value, Code) else repr(value)
                start = _offset(lines, node.value.lineno, node.value.col_offset)
                edits.append((start, _offset(lines, node.value.end_lineno, node.value.end_col_offset), text))
                found.add(name)
    if set(values) - found:
        raise ValueError(f"the template assigns no {sorted(set(values) - found)} at its top level")
    return edits


def _blocks(lines: list[str], blocks: Mapping[str, str]) -> list[tuple[int, int, str]]:
    edits = []
    for name, code in blocks.items():
        opening = [i for i, text in enumerate(lines) if text.strip() == f"# <{name}>"]
        closing = [i for i, text in enumerate(lines) if text.strip() == f"# </{name}>"]
        if len(opening) != 1 or len(closing) != 1 or closing[0] < opening[0]:
            raise ValueError(f"the template needs one block '# <{name}>' … '# </{name}>'")
        indent = lines[opening[0]][: len(lines[opening[0]]) - len(lines[opening[0]].lstrip())]
        body = "".join(f"{indent}{line}\n" if line else "\n" for line in code.rstrip("\n").split("\n"))
        start = _offset(lines, opening[0] + 2, 0)
        edits.append((start, _offset(lines, closing[0] + 1, 0), body))
    return edits


def _kind(name: str) -> int:
    """isort's order of names in a ``from … import``: CONSTANTS, then Classes, then functions and variables."""
    if name.isupper() and len(name) > 1:
        return 0
    return 1 if name[:1].isupper() else 2


def _import_line(names: Iterable[str], indent: str) -> str:
    ordered = sorted(set(names), key=lambda name: (_kind(name), name))
    one = f"{indent}from {LIBRARY} import {', '.join(ordered)}"
    if len(one) <= LINE:
        return one + "\n"
    return f"{indent}from {LIBRARY} import (\n" + "".join(f"{indent}    {n},\n" for n in ordered) + f"{indent})\n"


def _tidy_imports(source: str, extra: Iterable[str]) -> str:
    """One ``from puffer_core import`` statement holding the names the script uses (those given in ``extra`` too)."""
    tree = ast.parse(source)
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == LIBRARY and not n.level]
    if not statements:
        return source
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names = {a.name for s in statements for a in s.names} | set(extra)
    lines = source.splitlines(keepends=True)
    first = statements[0]
    indent = lines[first.lineno - 1][: first.col_offset]
    edits = [(_offset(lines, s.lineno, 0), _offset(lines, s.end_lineno + 1, 0), "") for s in statements[1:]]
    kept = [name for name in names if name in used]
    edits.append((_offset(lines, first.lineno, 0), _offset(lines, first.end_lineno + 1, 0), _import_line(kept, indent)))
    return _replace(source, edits)


def fill(
    name: str,
    *,
    doc: Mapping[str, str] | None = None,
    values: Mapping[str, object] | None = None,
    blocks: Mapping[str, str] | None = None,
    imports: Iterable[str] = (),
) -> str:
    """Template ``name`` filled with a page's settings (see the module docstring); ValueError if it cannot be."""
    source = template(name)
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    edits = _doc(source, lines, tree, doc or {}) + _values(lines, tree, values or {}) + _blocks(lines, blocks or {})
    filled = _tidy_imports(_replace(source, edits), imports)
    try:
        ast.parse(filled)
    except SyntaxError as exc:
        raise ValueError(f"the template {name!r} filled is not Python: {exc}") from None
    return filled
