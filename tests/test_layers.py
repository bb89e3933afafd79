"""The layering ARCHITECTURE.md describes, checked on the source: thin pages, a library that never draws,
no private names taken across the library's modules, no import cycle inside it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "puffer_core"
MAX_PAGE_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for path in LIBRARY.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str]]:
    """(module imported, name taken from it or "") for every import of a library module in ``path``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    out.append((f"{target}.{alias.name}", ""))
                elif target in modules:
                    out.append((target, alias.name))
        elif isinstance(node, ast.Import):
            out += [(alias.name, "") for alias in node.names if alias.name in modules]
    return out


def test_no_page_is_longer_than_400_lines() -> None:
    lines = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "app_pages").glob("*.py")}
    long = {name: n for name, n in lines.items() if n > MAX_PAGE_LINES}
    assert not long, f"pages over {MAX_PAGE_LINES} lines (move their views into app_ui): {long}"


def test_the_library_never_imports_the_app_or_streamlit() -> None:
    for path in LIBRARY.rglob("*.py"):
        if path.name == "widgets.py":  # the Jupyter widgets: ipywidgets, never streamlit
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
        bad = [n for n in names if n.split(".")[0] in {"streamlit", "app_ui", "app_pages", "app"}]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_no_module_of_the_library_takes_another_ones_private_names() -> None:
    modules = _modules()
    taken = {
        (name, target, what)
        for name, path in modules.items()
        for target, what in _imports(name, path, modules)
        if what.startswith("_") and target != name
    }
    assert not taken, f"private names imported across modules: {sorted(taken)}"


def test_no_import_cycle_inside_the_library() -> None:
    modules = _modules()
    edges = {name: {t for t, _ in _imports(name, path, modules) if t != name} for name, path in modules.items()}

    def package_of(a: str, b: str) -> bool:  # a package importing its own submodule (a re-export) is not a cycle
        return b.startswith(a + ".")

    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if package_of(node, nxt) or package_of(nxt, node):
                continue
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(modules):
        if start not in state:
            visit(start, [start])
    assert not cycles, "import cycles: " + "; ".join(" → ".join(c) for c in cycles)


def _package(module: str) -> str:
    """The library's package (or top-level module) a module belongs to: puffer_core.stream.tpl → stream."""
    return module.split(".")[1]


def _package_edges() -> dict[str, set[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name == "puffer_core":  # the root __init__ re-exports every package: it sits above them all
            continue
        for target, _ in _imports(name, path, modules):
            if target != "puffer_core" and _package(target) != _package(name):
                edges.setdefault(_package(name), set()).add(_package(target))
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    return cycles


# tests that still take private names of a module other helpers are rewriting (issues 31 and 34): only shrinks
PRIVATE_IMPORTS_ALLOWED = {("tests/test_gaussian.py", "puffer_core.engine.gaussian")}


def test_tests_import_no_private_names() -> None:
    """A test calls what the library offers; a private helper worth testing is made public first."""
    taken = set()
    for path in (ROOT / "tests").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in {
                "puffer_core", "app_ui", "app_pages", "benchmarks"
            }:
                private = [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    taken.add((str(path.relative_to(ROOT)), node.module))
    assert taken <= PRIVATE_IMPORTS_ALLOWED, sorted(taken - PRIVATE_IMPORTS_ALLOWED)


def test_the_library_s_packages_form_a_dag() -> None:
    """Package level too (ARCHITECTURE.md): accounting → engine and priors, mechanisms → accounting, stream →
    accounting, and never back; a module may import another package's module only where no path leads back."""
    edges = _package_edges()
    cycles = _cycles(edges)
    assert not cycles, "package cycles: " + "; ".join(" → ".join(c) for c in cycles)
    assert {"engine", "priors"} <= edges["accounting"] and "accounting" in edges["mechanisms"]
    assert "accounting" in edges["stream"]


def test_the_package_check_finds_a_cycle() -> None:
    """The check bites: an edge back from accounting to mechanisms closes a cycle."""
    edges = _package_edges()
    edges["accounting"] = edges["accounting"] | {"mechanisms"}
    assert any({"accounting", "mechanisms"} <= set(c) for c in _cycles(edges))


# the app_ui rooms every page may use; the others belong to one page family (or the guided paths) each
SHARED_APP_ROOMS = {"core", "prior", "data", "secrets"}


def _app_imports(path: Path) -> set[str]:
    """The app_ui modules (dotted, without the "app_ui." prefix) that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = {n.module.removeprefix("app_ui.") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
           and n.module.startswith("app_ui.")}
    out |= {a.name.removeprefix("app_ui.") for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
            if a.name.startswith("app_ui.")}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level], f"{path}: relative import"
    return out


def test_app_ui_is_rooms_and_shared_rooms_import_no_page_room() -> None:
    app_ui = ROOT / "app_ui"
    assert not [p.name for p in app_ui.glob("*.py") if p.name != "__init__.py"], "app_ui's modules live in rooms"
    rooms = {p.parent.name for p in app_ui.glob("*/__init__.py")}
    assert SHARED_APP_ROOMS <= rooms
    for room in SHARED_APP_ROOMS:
        for path in (app_ui / room).glob("*.py"):
            if path.name == "warm.py":  # warm imports every module on purpose, to load them at start
                continue
            bad = {m for m in _app_imports(path) if m.split(".")[0] not in SHARED_APP_ROOMS}
            assert not bad, f"{path.relative_to(ROOT)} imports the page module(s) {sorted(bad)}: pages use shared rooms"


def test_the_attacker_and_the_audits_import_no_bound_they_check() -> None:
    """An empirical lower bound or an exact truth that shared code with a bound would prove nothing about it."""
    modules = _modules()
    bounds = ("puffer_core.stream.tpl", "puffer_core.stream.bounds", "puffer_core.engine", "puffer_core.accounting")
    checkers = [name for name in modules if name.startswith(("puffer_core.attacks", "puffer_core.audit"))]
    assert checkers
    for name in checkers:
        taken = [t for t, _ in _imports(name, modules[name], modules) if t.startswith(bounds)]
        assert not taken, f"{name} imports {taken}: what it checks"


def test_the_attack_page_s_views_do_not_import_the_streams_page_s() -> None:
    """app_ui/attack/ reads the stream bounds and releases from the library registries, not from app_ui/streams/."""
    for path in (ROOT / "app_ui" / "attack").glob("*.py"):
        assert not [m for m in _app_imports(path) if m.startswith("streams")], path


# Θ ("a prior or a list of priors") is normalised by as_theta/theta_or_none in priors/models.py, and
# probabilities, whole numbers and distributions are checked in validation.py: nowhere else.
HOMES = {LIBRARY / "priors" / "models.py", LIBRARY / "validation.py"}
HOMELESS = {
    "a sum compared with 1 within a tolerance": r"abs\([^\n]*-\s*1(\.0)?\)\s*(<|>)",
    "np.allclose/np.isclose over a sum": r"(allclose|isclose)\([^\n]*sum",
    "an inlined check_whole": r"isinstance\(\s*\w+\s*,\s*bool\s*\)\s+or\s+not\s+isinstance",
    "a normaliser of a prior or a list of priors": (
        r"def\s+_?as_(chain_)?priors\b|all\(isinstance\(\w+,\s*MarkovChainPrior\)"
        r"|isinstance\(\w+,\s*MarkovChainPrior\)\s+else\s+list\("
    ),
}


def _product_sources() -> list[Path]:
    """The library, the shared app modules, the pages and the app's entry points."""
    return sorted(
        [*LIBRARY.rglob("*.py"), *(ROOT / "app_ui").rglob("*.py"), *(ROOT / "app_pages").glob("*.py")]
        + [ROOT / "app.py", ROOT / "streamlit_app.py"]
    )


def test_no_normaliser_or_probability_check_outside_their_homes() -> None:
    found = []
    for path in _product_sources():
        if path in HOMES:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for what, pattern in HOMELESS.items():
                if re.search(pattern, line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}")
    assert not found, "use as_theta/theta_or_none (priors/models.py) or validation.py instead:\n" + "\n".join(found)


def test_the_homeless_patterns_still_find_what_they_are_for() -> None:
    """The patterns above, on the lines they were written against (so that a typo cannot make the test vacuous)."""
    caught = [
        "    if abs(arr.sum() - 1.0) > 1e-9:",
        "    if abs(sums[worst] - 1) > PROBABILITY_TOLERANCE:",
        "    assert np.allclose(m.sum(axis=1), 1.0)",
        "        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:",
        "def _as_chain_priors(prior):",
        "def as_chain_priors(prior):",
        "def _as_priors(prior_or_priors):",
        "    if isinstance(prior, (list, tuple)) and all(isinstance(p, MarkovChainPrior) for p in prior):",
        "    priors = [prior_or_priors] if isinstance(prior_or_priors, MarkovChainPrior) else list(prior_or_priors)",
    ]
    missed = [line for line in caught if not any(re.search(p, line) for p in HOMELESS.values())]
    assert not missed, missed
    assert not any(re.search(p, "    total = float(math.fsum(array.ravel()))") for p in HOMELESS.values())
