"""Run a page's exported script as ``python <name> <args>`` run in ``folder`` would, but in this process.

A new interpreter per script costs about 2 s here (Python, numpy, scipy, pandas and puffer_core imported again),
more than most scripts' own work; the page tests run dozens.  In this process the script still runs as
``__main__`` from its own file, with its own globals, its arguments in ``sys.argv`` and ``folder`` as the working
folder, and everything it prints is returned; a script that fails fails the test with its traceback.  Scripts run
by a new interpreter outside the repository, against the installed wheel only, are checked by ``.ci/installed.py``
(every page's script) and ``tests/app/test_exports.py`` (the message when puffer_core is missing).
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path


def run_script(source: str | bytes, folder: Path, name: str = "script.py", args: Sequence[str] = ()) -> str:
    """Write ``source`` to ``folder/name`` and run it there as the main program: what it printed."""
    path = folder / name
    if isinstance(source, bytes):
        path.write_bytes(source)
    else:
        path.write_text(source, encoding="utf-8")
    printed = io.StringIO()
    argv, cwd = sys.argv, os.getcwd()
    sys.argv = [str(path), *args]
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise AssertionError(f"{name} exited with {exc.code!r}; it printed:\n{printed.getvalue()[-3000:]}") from exc
    finally:
        sys.argv = argv
        os.chdir(cwd)
    return printed.getvalue()
