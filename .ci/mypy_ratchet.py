"""mypy on puffer_core, held to a ratchet: per module, at most the errors .ci/mypy_ratchet.json allows.

A module not in the file must be clean (the mechanisms and accounting packages are); a module with fewer errors
than allowed passes and is named, so that its count can be lowered in the file (counts only ever shrink).
Run: python .ci/mypy_ratchet.py  (exit 1 when a module has more errors than allowed).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RATCHET = ROOT / ".ci" / "mypy_ratchet.json"
ERROR = re.compile(r"^(puffer_core/\S+\.py):\d+: error:")


def counts(output: str) -> Counter[str]:
    """Errors per module path in mypy's output."""
    return Counter(m.group(1) for line in output.splitlines() if (m := ERROR.match(line)))


def main() -> int:
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if run.returncode not in (0, 1) or "error: " in run.stderr:
        print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
        return 2
    found = counts(run.stdout)
    allowed: dict[str, int] = json.loads(RATCHET.read_text(encoding="utf-8"))
    over = {path: n for path, n in found.items() if n > allowed.get(path, 0)}
    under = {path: (found.get(path, 0), n) for path, n in allowed.items() if found.get(path, 0) < n}
    for path, n in sorted(over.items()):
        print(f"{path}: {n} mypy errors, at most {allowed.get(path, 0)} allowed")
        print("\n".join(line for line in run.stdout.splitlines() if line.startswith(path + ":")))
    for path, (n, limit) in sorted(under.items()):
        print(f"{path}: {n} mypy errors, {limit} allowed — lower its count in .ci/mypy_ratchet.json")
    print(f"mypy: {sum(found.values())} errors in {len(found)} modules; {sum(allowed.values())} allowed")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
