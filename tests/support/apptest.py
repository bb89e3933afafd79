"""AppTest, without three costs that do not depend on the test: a component scan, recompiling, and busy waiting.

- Each new ``AppTest`` scans the metadata of every installed distribution for Streamlit components before its first
  run (``streamlit.components.v2.manifest_scanner.scan_component_manifests``, about 0.3 s of CPU here).  The
  installed packages do not change while the tests run, so the scan's result is kept for the process; the running
  app server scans once at start, as always.
- Each *run* of an ``AppTest`` builds a new script runner with an empty ``ScriptCache``, so the app's script and
  the page's were parsed, rewritten for "magic" and compiled again every run (10–25 ms a page).  The code is kept
  for the process, per file and its modification time: a file that changes is compiled again.
- AppTest waits for a run to end by waking every millisecond to look at the runner's events; the wait here sleeps
  until the runner says it has shut down (the same event it looks for), and fails after the same timeout.
"""

from __future__ import annotations

import os
import threading
from functools import cache
from typing import Any

from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, local_script_runner

if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
    manifest_scanner.scan_component_manifests = cache(manifest_scanner.scan_component_manifests)

_compiled: dict[tuple[str, int, bool], Any] = {}
_compile_one = ScriptCache.get_bytecode


def _get_bytecode(self: ScriptCache, script_path: str) -> Any:
    path = os.path.abspath(script_path)
    key = (path, os.stat(path).st_mtime_ns, bool(config.get_option("runner.magicEnabled")))
    if key not in _compiled:
        _compiled[key] = _compile_one(self, path)
    return _compiled[key]


def _wait_for_the_run(runner: Any, timeout: float = 3) -> None:
    """``require_widgets_deltas`` without its polling: wait for the runner's SHUTDOWN event, up to ``timeout``."""
    ended = threading.Event()

    def seen(sender: Any, event: ScriptRunnerEvent, **_: Any) -> None:
        if event == ScriptRunnerEvent.SHUTDOWN:
            ended.set()

    runner.on_event.connect(seen, weak=False)
    try:
        if not runner.script_stopped():  # it may have ended before the receiver was connected
            ended.wait(timeout)
    finally:
        runner.on_event.disconnect(seen)
    if not (ended.is_set() or runner.script_stopped()):
        runner.request_stop()
        runner.join()
        raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


if ScriptCache.get_bytecode is not _get_bytecode and ScriptCache.get_bytecode.__name__ == "get_bytecode":
    ScriptCache.get_bytecode = _get_bytecode  # type: ignore[method-assign]
local_script_runner.require_widgets_deltas = _wait_for_the_run

__all__ = ["AppTest"]
