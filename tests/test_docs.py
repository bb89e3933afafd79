"""docs/: every section the code cites exists, every paper key has a reference, links resolve,
and nothing in the product points outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
MATH = DOCS / "math.md"
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".ruff_cache", "screenshots", "node_modules"}
TEXT_SUFFIXES = {".py", ".md", ".ipynb", ".toml", ".txt", ".cfg", ".yml", ".yaml", ".json", ".csv", ""}
SECTIONS = ["1", "2", "2.1", "2.2", "2.3", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
            "17", "17.1", "17.2", "17.3", "17.4", "18", "19", "19.1", "19.2", "19.3", "19.4", "19.5", "19.6"]


def product_files() -> list[Path]:
    """Every text file of the repository (this test excluded: it spells the forbidden strings)."""
    files = []
    for path in REPO.rglob("*"):
        if any(part in SKIP_DIRS for part in path.relative_to(REPO).parts) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES and path != Path(__file__).resolve() and path.stat().st_size < 5_000_000:
            files.append(path)
    return files


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def math_sections() -> list[str]:
    return re.findall(r"^#{2,3} §(\d+(?:\.\d+)?)\.? ", read(MATH), flags=re.MULTILINE)


def test_math_has_exactly_the_numbered_sections_in_order() -> None:
    assert math_sections() == SECTIONS


def test_every_cited_section_exists() -> None:
    have = set(math_sections())
    cited: dict[str, set[str]] = {}
    for path in product_files():
        for run in re.findall(r"docs/math\.md,? ((?:§\d+(?:\.\d+)?(?:\s*(?:[–,-]|and)\s*)?)+)", read(path)):
            for number in re.findall(r"§(\d+(?:\.\d+)?)", run):
                cited.setdefault(number, set()).add(str(path.relative_to(REPO)))
    for path in (MATH, DOCS / "glossary.md"):  # their own cross-references; a paper's sections read "[C] §6.2"
        for number in re.findall(r"(?<!\] )(?<!\]'s )§(\d+(?:\.\d+)*)", read(path)):
            cited.setdefault(number, set()).add(str(path.relative_to(REPO)))
    assert len(cited) > 5
    missing = {n: sorted(where) for n, where in cited.items() if n not in have}
    assert not missing, missing


def test_every_paper_key_has_a_full_reference() -> None:
    references = read(DOCS / "references.md")
    defined = set(re.findall(r"^\*\*\[([A-Z]+)\]\*\*", references, flags=re.MULTILINE))
    assert {"C", "S", "P", "D", "TPL", "GK"} <= defined
    used = set()
    for path in product_files():
        used |= set(re.findall(r"\[(C|S|P|D|TPL|GK)\](?!\()", read(path)))
    assert used and used <= defined, used - defined


@pytest.mark.parametrize("name", ["README.md", "docs/math.md", "docs/references.md", "docs/glossary.md"])
def test_relative_links_resolve(name: str) -> None:
    page = REPO / name
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", read(page)):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{name} links to {target}, which is not in the repository"


def test_nothing_points_outside_the_repository() -> None:
    forbidden = ["MATH" + ".md", "../" + "shared", "shared/" + "seeds", "/work/" + "shared"]
    found = [
        (str(path.relative_to(REPO)), word) for path in product_files() for word in forbidden if word in read(path)
    ]
    assert not found, found


def test_glossary_defines_the_words_the_app_uses() -> None:
    glossary = read(DOCS / "glossary.md")
    for term in ("ε_DP", "ε_puffer", "a(b)", "**b**", "H and L", "Θ", "MQM", "Group DP", "TPL", "Secret pair"):
        assert term in glossary, term
    assert "## The theorems in one line each" in glossary
    for theorem in ("[C] Theorem 2", "[C] Theorem 6.2", "[S] Theorem III.7", "[P] Theorem 9.1"):
        assert theorem in glossary, theorem


def test_references_give_the_theorem_numbers_the_app_cites() -> None:
    references = read(DOCS / "references.md")
    for item in ("Theorem 6.2", "Theorem 2", "Theorem 5.1", "Theorem III.7", "Theorem III.4", "Lemma II.5",
                 "Algorithm 1", "Appendix J", "Theorem 9.1", "Examples 10.1, 10.5", "Tables 2–5", "Appendix D.1, D.2"):
        assert item in references, item
