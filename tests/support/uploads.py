"""Files the app tests upload (AppTest and the browser alike), written here once."""

from __future__ import annotations

# 15 rows: 2 with an empty cell (a state, a user) and 2 repeated exactly; 'zone' is a text column that looks like a
# group (two values, each repeated)
DIRTY = (
    b"user,time,state,zone\n"
    b"u1,1,home,Oslo\nu1,2,work,Oslo\nu1,2,work,Oslo\nu1,3,home,Oslo\nu1,4,,Oslo\n"
    b"u2,1,work,Rome\nu2,2,home,Rome\nu2,3,work,Rome\nu2,3,work,Rome\nu2,4,home,Rome\n"
    b"u3,1,home,Oslo\nu3,2,home,Oslo\n,3,work,Oslo\nu3,4,work,Oslo\nu3,5,home,Oslo\n"
)


def many_states(states: int = 30, users: int = 150, length: int = 40, seed: int = 7) -> bytes:
    """A CSV of ``users`` sequences over ``states`` named states (a sparse, seeded chain): a fitted chain too large
    for a plain link (more than 20 states) that a compressed one still carries exactly."""
    import numpy as np

    rng = np.random.default_rng(seed)
    transition = rng.dirichlet(np.full(states, 0.3), size=states)
    lines = ["user,time,state"]
    for user in range(users):
        state = int(rng.integers(states))
        for step in range(length):
            lines.append(f"u{user},{step},place {state:02d}")
            state = int(rng.choice(states, p=transition[state]))
    return ("\n".join(lines) + "\n").encode()
