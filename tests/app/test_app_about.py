"""About the math under AppTest: docs/ shown in the app, no link that cannot resolve, every cited paper reachable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app_ui.core.docs import in_app, papers
from tests.app.conftest import errors, open_page, problems
from tests.support.apptest import AppTest

REPO = Path(__file__).resolve().parents[2]
ABOUT = "app_pages/about.py"
LINK = re.compile(r"\]\(([^)\s]+)\)")
KEYS = re.compile(r"\[(C|S|P|D|TPL)\](?!\()")


def _texts(at: AppTest) -> list[str]:
    """Everything the page writes as markdown or captions (expanders included)."""
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def _page_links(at: AppTest) -> list[tuple[str, str]]:
    return [(p.proto.label, p.proto.page) for p in at.get("page_link")]


@pytest.fixture(scope="module")
def about() -> AppTest:
    at = open_page(ABOUT)
    assert not problems(at) and not errors(at)
    return at


def test_the_glossary_and_the_theorems_are_on_the_page(about: AppTest) -> None:
    text = "\n".join(_texts(about))
    for term in ("ε_DP (per-entry differential privacy)", "ε_puffer (Pufferfish privacy)", "**b**", "a(b)", "Θ"):
        assert term in text, term
    for term in ("MQM (Markov Quilt Mechanism)", "**Group DP**", "The theorems in one line each"):
        assert term in text, term
    # each theorem in one line, with its source
    for line in ("[C] Theorem 6.2 (composition)", "[S] Theorem III.4", "[S] Theorem III.7", "[P] Theorem 9.1"):
        assert line in text, line


def test_every_section_of_the_math_reference_is_there(about: AppTest) -> None:
    labels = [e.label for e in about.expander]
    numbered = [re.match(r"§(\d+)\. ", label) for label in labels]
    in_math = [int(n) for n in re.findall(r"^## §(\d+)\. ", (REPO / "docs" / "math.md").read_text(encoding="utf-8"),
                                          re.M)]
    assert in_math == list(range(1, len(in_math) + 1)) and len(in_math) >= 19  # through §19, synthetic sequences
    assert [int(m.group(1)) for m in numbered if m] == in_math
    assert "Departures from the papers, and choices they leave open" in labels
    math = (REPO / "docs" / "math.md").read_text(encoding="utf-8")
    text = "\n".join(_texts(about))
    # a sentence of §2.1 and one of §4, word for word
    for needle in ("**Why this is exact.**", "Theorem 6.2"):
        assert needle in math and needle in text


def test_full_references_of_every_paper_key(about: AppTest) -> None:
    text = "\n".join(_texts(about))
    for key, detail in {
        "C": "arXiv:2602.02718",
        "S": "Allerton",
        "P": "ACM Transactions on Database",
        "D": "arXiv:2408.12010",
        "TPL": "doi:10.1109/ICDE.2017.132",
    }.items():
        assert f"**[{key}]**" in text and detail in text, key


def test_no_link_on_the_page_points_at_a_file(about: AppTest) -> None:
    anchors = {h.proto.anchor for h in about.header}
    assert anchors == {"glossary", "math", "references"}
    targets = [t for text in _texts(about) for t in LINK.findall(text)]
    assert targets  # the docs' links are still links…
    for target in targets:  # …to a part of this page or to the web, never to a file Streamlit cannot serve
        assert target.startswith("#") and target[1:] in anchors or "://" in target, target
    text = "\n".join(_texts(about))
    assert "MATH" + ".md" not in text and "../" + "shared" not in text


@pytest.mark.parametrize("path", ["app_pages/home.py", "app_pages/plan.py", "app_pages/classroom.py", ABOUT])
def test_every_cited_paper_is_reachable_from_the_page(path: str) -> None:
    at = open_page(path)
    assert not problems(at) and not errors(at)
    texts = _texts(at)
    assert not any("MATH" + ".md" in t or "../" + "shared" in t for t in texts)
    if path == ABOUT:
        return  # the references themselves are on the page
    assert ("About the math", "about") in _page_links(at)
    footer = next(c.value for c in at.caption if c.value.startswith(("Papers cited on this page", "The papers")))
    cited = {key for text in texts for key in KEYS.findall(text)}
    assert cited  # every page cites something
    for key in cited:
        assert re.search(rf"\[{key}\] \w+.*?\*[^*]+\* \(\d{{4}}\)", footer), (key, footer)


def test_home_links_to_the_about_page_and_names_no_missing_file() -> None:
    at = open_page("app_pages/home.py")
    assert ("**About the math**", "about") in _page_links(at)
    text = "\n".join(_texts(at))
    assert "MATH" + ".md" not in text
    at.switch_page(ABOUT).run()
    assert not problems(at) and at.title[0].value == "About the math"


def test_links_between_the_docs_become_links_within_the_page() -> None:
    text = "See [`math.md`](math.md), [refs](references.md#the-papers), [code](../tests/support/brute.py), [web](https://x.org)."
    assert in_app(text) == (
        "See [`math.md`](#math), [refs](#references), code (`tests/support/brute.py` in the repository),"
        " [web](https://x.org)."
    )
    assert in_app("## §2. Title\n### §2.1 Sub") == "### §2. Title\n#### §2.1 Sub"  # under the page's own headings


def test_every_paper_key_has_a_short_reference_with_its_year() -> None:
    references = (REPO / "docs" / "references.md").read_text(encoding="utf-8")
    keys = set(re.findall(r"^\*\*\[([A-Z]+)\]\*\*", references, flags=re.MULTILINE))
    short = papers()
    assert set(short) == keys and {"C", "S", "P", "D", "TPL"} <= keys
    assert short["S"] == "Song & Chaudhuri, *Composition Properties of Inferential Privacy for Time-Series Data* (2017)"
    assert short["C"].endswith("(2026)") and short["D"].endswith("(2024)")  # not the digits of arXiv numbers
