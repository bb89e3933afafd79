""".streamlit/config.toml: usage statistics off and a minimal toolbar, as Streamlit itself reads them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import streamlit.config

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".streamlit" / "config.toml"


def test_every_setting_is_a_streamlit_option() -> None:
    settings = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    names = [f"{section}.{key}" for section, values in settings.items() for key in values]
    known = streamlit.config.get_config_options()
    assert names and all(name in known for name in names), names


def test_streamlit_run_from_the_repository_reads_it() -> None:
    code = (
        "import streamlit.config as c; c.get_config_options(force_reparse=True);"
        " print(c.get_option('browser.gatherUsageStats'), c.get_option('client.toolbarMode'),"
        " c.get_option('server.fileWatcherType'))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "minimal", "none"]  # no inotify flood from a .venv in the repository
