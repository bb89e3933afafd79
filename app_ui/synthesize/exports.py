"""What the Synthesize page hands out: the script that releases the same synthetic table again with puffer_core
(``app_ui/core/scripts/synthesize.py`` filled in, its synthesis written by the library's
:func:`~puffer_core.synthesis.script.synthesis_source`) and the report's settings and sections.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from app_ui.core.templates import LINE, fill
from app_ui.data.picker import LoadedData
from app_ui.synthesize.settings import SynthesizeSettings
from puffer_core.synthesis.script import synthesis_source

OUT = "synthetic.csv"  # where the script writes the synthetic table


def data_name(loaded: LoadedData) -> tuple[str, ...]:
    """The data as the link names them: ``("builtin", dataset, user column)`` or ``("upload", file name)``."""
    if loaded.dataset is not None:
        return ("builtin", loaded.dataset, str(loaded.columns["user"]))
    return ("upload", loaded.name)


def _wrapped(code: str) -> str:
    """The code with any comment line longer than the project's line length wrapped (a script is checked by ruff)."""
    out = []
    for line in code.split("\n"):
        if line.lstrip().startswith("#") and len(line) > LINE:
            indent = line[: len(line) - len(line.lstrip())]
            out += textwrap.wrap(line.lstrip()[1:].strip(), LINE - len(indent) - 2, initial_indent=f"{indent}# ",
                                 subsequent_indent=f"{indent}# ")
        else:
            out.append(line)
    return "\n".join(out)


def script(loaded: LoadedData, settings: SynthesizeSettings, by_group: bool | None) -> str:
    """The page as a Python program: the same data, prior (the fitted chain), ε_puffer, noise and model.

    ``by_group``: what the page passed to the library (None: the data have no group column).
    """
    builtin = loaded.builtin
    if builtin is not None:
        how = f"{builtin.title}. {builtin.source}"
        data = f"data = load_dataset({builtin.name!r}, user={loaded.columns['user']!r})\n"
        run, imports = "python synthesize.py", ["load_dataset"]
    else:
        repair = loaded.repair
        how = f"the file you uploaded, {loaded.name} (the app kept no copy: put the file next to this script)"
        options = {
            **loaded.columns,
            "drop_missing": bool(repair and repair.drop_missing),
            "drop_duplicates": bool(repair and repair.drop_duplicates),
        }
        data = (
            f"DATA = sys.argv[1] if len(sys.argv) > 1 else {loaded.name!r}\n"
            "data = load_sequences(DATA, " + ", ".join(f"{key}={value!r}" for key, value in options.items()) + ")\n"
        )
        run, imports = f"python synthesize.py [path to {loaded.name}]", ["load_sequences"]
    names, code = synthesis_source(
        eps_puffer=settings.eps_puffer, seed=settings.rng, by_group=by_group, method=settings.method,
        out=OUT, top_k=settings.top_k, query=settings.query,
    )
    noise = (
        "no seed: a real release (OpenDP's noise), a new table every run; the page's table is the one you downloaded"
        if settings.real
        else f"seed {settings.seed}: the same noise and the same table as the page (reproducible, not for publishing)"
    )
    return fill(
        "synthesize",
        doc={"Data": how, "Noise": noise, "Run": run},
        blocks={"data": data, "synthesis": _wrapped(code)},
        imports=[*imports, *names],
    )


def report_settings(loaded: LoadedData, settings: SynthesizeSettings) -> Mapping[str, Any]:
    """The report's settings: the data, then the page's own in words."""
    return {"data": loaded.description, "columns": dict(loaded.columns), **settings.as_dict()}
