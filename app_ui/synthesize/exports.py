"""What the Synthesize page hands out: the script that releases the same synthetic table again with puffer_core
(``app_ui/core/scripts/synthesize.py`` filled in) and the report's settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app_ui.core.templates import Code, fill
from app_ui.data.picker import LoadedData
from app_ui.synthesize.settings import SynthesizeSettings


def data_name(loaded: LoadedData) -> tuple[str, ...]:
    """The data as the link names them: ``("builtin", dataset, user column)`` or ``("upload", file name)``."""
    if loaded.dataset is not None:
        return ("builtin", loaded.dataset, str(loaded.columns["user"]))
    return ("upload", loaded.name)


def script(loaded: LoadedData, settings: SynthesizeSettings, by_group: bool | None, length: int = 1) -> str:
    """The page as a Python program: the same data, prior (the chain fitted on them), ε_puffer, noise, model and
    columns; it writes synthetic.csv and prints the plan and the fidelity scores.

    ``by_group``: what the page passed to the library (None: the data have no group column); ``length``: the
    longest sequence (what the chosen secrets are resolved on).
    """
    builtin = loaded.builtin
    if builtin is not None:
        how = f"{builtin.title}, the built-in dataset of puffer_core."
        data = f"data = load_dataset({builtin.name!r}, user={loaded.columns['user']!r})\n"
        run, imports = "python synthesize.py", ["load_dataset"]
    else:
        repair = loaded.repair
        how = f"the file you uploaded, {loaded.name} (the app kept no copy: put the file next to this script)."
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
    noise = (
        "no seed: a real release (OpenDP's noise), a new table every run, not the one you downloaded."
        if settings.real
        else f"seed {settings.seed}: the same noise and the same table as the page (reproducible, not for publishing)."
    )
    return fill(
        "synthesize",
        doc={"Data": how, "Noise": noise, "Run": run},
        values={
            "EPS_PUFFER": float(settings.eps_puffer),
            "SECRETS": Code(settings.secrets.source(length)),  # what is secret (docs/math.md §16)
            "SEED": settings.rng,
            "BY_GROUP": by_group,
            "METHOD": settings.method,
            "COLUMNS": dict(loaded.columns),
            "TOP_K": int(settings.top_k),
            "QUERY": settings.query,
        },
        blocks={"data": data},
        imports=[*imports, *settings.secrets.names()],
    )


def report_settings(loaded: LoadedData, settings: SynthesizeSettings) -> Mapping[str, Any]:
    """The report's settings: the data, then the page's own in words."""
    return {"data": loaded.description, "columns": dict(loaded.columns), **settings.as_dict()}
