"""The package as pip installs it: every subpackage listed in pyproject.toml, the datasets shipped as package data,
every third-party module the library imports declared as a dependency (or, for the optional modules, an extra).

`.ci/installed.py` checks the same from the other side: the wheel installed with its declared dependencies only."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

from puffer_core.data.datasets import ASSETS, DATASETS

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_and_the_datasets_are_installed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    folders = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "puffer_core").rglob("__init__.py")
    }
    assert folders <= listed, f"add {sorted(folders - listed)} to [tool.setuptools] packages in pyproject.toml"
    assert config["tool"]["setuptools"]["package-dir"]["puffer_core.assets"] == "assets"
    shipped = config["tool"]["setuptools"]["package-data"]["puffer_core.assets"]
    assert "*.csv" in shipped
    assert all((ASSETS / d.file).is_file() and d.file.endswith(".csv") for d in DATASETS.values())
    assert config["project"]["scripts"]["puffer"] == "puffer_core.__main__:main"


# modules only an extra brings: the notebook widgets ([notebook]) and the Spark engine ([spark])
OPTIONAL = {
    "puffer_core/widgets.py": "notebook",
    "puffer_core/data/spark_engine.py": "spark",
    "puffer_core/synthesis/cli.py": "spark",  # `puffer synth --engine spark` imports it only then
}
IMPORT_NAMES = {"pyarrow": "pyarrow", "opendp": "opendp"}  # import name → distribution, where they differ


def _distribution(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement)[0].lower().replace("-", "_")


def test_every_module_the_library_imports_is_declared() -> None:
    """A dependency missing from pyproject.toml passes every test here (requirements.txt installed it) and breaks
    `pip install .` for users: threadpoolctl was such a one."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {_distribution(d) for d in meta["dependencies"]}
    extras = {name: {_distribution(d) for d in deps} for name, deps in meta["optional-dependencies"].items()}
    missing = []
    for path in sorted((ROOT / "puffer_core").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        allowed = base | extras.get(OPTIONAL.get(relative, ""), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "puffer_core":
                    continue
                if IMPORT_NAMES.get(top, top).lower() not in allowed:
                    missing.append(f"{relative}: {top}")
    assert not missing, "declare these in pyproject.toml (dependencies, or the extra of that module): " + ", ".join(
        sorted(set(missing))
    )
