"""AppTest, with the installed Streamlit components found once per process.

Each new ``AppTest`` scans the metadata of every installed distribution for Streamlit components before its first
run (``streamlit.components.v2.manifest_scanner.scan_component_manifests``, about 0.7 s here, a quarter of a typical
page test).  The installed packages do not change while the tests run, so the scan's result is kept for the process;
the running app server scans once at start, as always.
"""

from __future__ import annotations

from functools import cache

from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
    manifest_scanner.scan_component_manifests = cache(manifest_scanner.scan_component_manifests)

__all__ = ["AppTest"]
