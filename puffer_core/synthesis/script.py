"""A synthetic release as Python: the lines an exported script runs to do it again (docs/math.md §19).

:func:`synthesis_source` returns ``(imports, code)`` in the form the prior kinds' ``source`` give
(:mod:`puffer_core.priors.kinds`): the names to import from ``puffer_core`` and code that, given variables holding
the data and the prior, synthesizes with the same settings, prints the privacy event and the notes, and prints
the fidelity scores.  With a seed the script gives the same table and the same numbers; without one (a real
release) it makes a new release, and says so.
"""

from __future__ import annotations

import keyword

from ..validation import InvalidParameter, check_choice, check_eps, check_whole
from .fidelity import QUERIES
from .model import METHODS
from .privacy import GUARANTEES, CountAccuracy


def synthesis_source(
    *,
    data: str = "data",
    prior: str = "prior",
    eps_puffer: float | None = None,
    accuracy: CountAccuracy | None = None,
    seed: int | None = None,
    guarantee: str = "pufferfish",
    by_group: bool | None = None,
    method: str = "projection",
    min_group_users: int = 2,
    if_no_signal: str = "refuse",
    out: str | None = None,
    top_k: int = 3,
    query: str = "visits",
    name: str = "result",
) -> tuple[tuple[str, ...], str]:
    """``(imports, code)``: the synthesis of :func:`~puffer_core.synthesis.synthesize.synthesize` with these settings.

    ``data`` and ``prior`` name the script's variables holding the data (Sequences, SequenceStats or ChainCounts)
    and the prior (None fits it on the data); the code binds ``name`` to the :class:`Synthesis` and ``scores`` to
    the fidelity scores.
    """
    if (eps_puffer is None) == (accuracy is None):
        raise ValueError("give either eps_puffer or accuracy, not both")
    check_choice("guarantee", guarantee, GUARANTEES)
    check_choice("method", method, METHODS)
    check_choice("query", query, QUERIES)
    if seed is not None:
        seed = check_whole("seed", seed, minimum=0)
    for label, variable in (("data", data), ("prior", prior), ("name", name)):
        if not isinstance(variable, str) or not variable.isidentifier() or keyword.iskeyword(variable):
            raise InvalidParameter(f"{label} must name a Python variable of the script (e.g. 'data'); got {variable!r}")
    if out is not None and not isinstance(out, str):
        raise InvalidParameter(f"out must be a file path (a string) or None; got {type(out).__name__}")
    imports = ["synthesize"]
    if accuracy is not None:
        imports.append("CountAccuracy")
        target = (f"accuracy=CountAccuracy(alpha={float(accuracy.alpha)!r}, beta={float(accuracy.beta)!r},"
                  f" joint={accuracy.joint!r})")
    else:
        target = repr(check_eps("ε_puffer", eps_puffer))
    where = "the table stays in memory" if out is None else f"streamed to {out!r}"
    how = (f"seed {int(seed)}: the same noise and the same table every time (reproducible, not for publishing)"
           if seed is not None else "no seed: a real release, drawn by OpenDP, different every time")
    code = (
        f"# synthetic sequences (docs/math.md §19); {how}; {where}\n"
        f"{name} = synthesize(\n"
        f"    {data}, {prior}, {target}, rng={seed!r}, guarantee={guarantee!r}, by_group={by_group!r},\n"
        f"    method={method!r}, min_group_users={int(min_group_users)}, if_no_signal={if_no_signal!r},"
        f" out={out!r},\n"
        ")\n"
        f"print({name}.event.describe())\n"
        f"for note in {name}.notes:\n"
        "    print('note:', note.message)\n"
        f"scores = {name}.fidelity(top_k={int(top_k)}, query={query!r}).scores()  # real against synthetic\n"
        "print(scores.round(4).to_string(index=False))\n"
    )
    return tuple(imports), code
