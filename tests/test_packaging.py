"""The package as pip installs it: every subpackage listed in pyproject.toml, the datasets shipped as package data."""

from __future__ import annotations

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
