"""Generate the SYNTHETIC demo datasets in assets/ (see assets/README.md).

    python assets/make_demo_data.py

Writes ``checkins.csv`` (check-in venue categories of users in 20 countries) and
``activities.csv`` (a day of 5-minute activity labels for participants in 4 age groups).
Both are simulated Markov chains, shaped after the two datasets of [C] §7 (Foursquare
check-ins, Capture-24); no real person's data is in them.  A fixed seed makes the output
identical on every run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20_240_501
HERE = Path(__file__).resolve().parent

CATEGORIES = (
    "Home",
    "Office",
    "Restaurant",
    "Coffee Shop",
    "Train Station",
    "Shopping Mall",
    "Bar",
    "Park",
    "Gym",
    "Hotel",
    "Beach",
    "Museum",
)
# worldwide popularity of each category (same order as CATEGORIES)
POPULARITY = np.array([0.15, 0.13, 0.13, 0.10, 0.09, 0.08, 0.07, 0.06, 0.05, 0.05, 0.05, 0.04])
# each country has one or two categories it favours much more than the rest of the world
COUNTRIES = {
    "Australia": ("Beach", "Coffee Shop"),
    "Brazil": ("Beach", "Bar"),
    "Canada": ("Coffee Shop",),
    "Chile": ("Park",),
    "France": ("Museum", "Restaurant"),
    "Germany": ("Train Station", "Bar"),
    "Indonesia": ("Shopping Mall",),
    "Italy": ("Restaurant", "Museum"),
    "Japan": ("Train Station",),
    "Malaysia": ("Shopping Mall", "Restaurant"),
    "Mexico": ("Restaurant", "Park"),
    "Netherlands": ("Bar", "Park"),
    "Russia": ("Train Station", "Park"),
    "Saudi Arabia": ("Shopping Mall", "Coffee Shop"),
    "South Korea": ("Coffee Shop", "Gym"),
    "Spain": ("Bar", "Beach"),
    "Thailand": ("Hotel", "Beach"),
    "Turkey": ("Coffee Shop", "Shopping Mall"),
    "United Kingdom": ("Bar", "Train Station"),
    "United States": ("Gym", "Office"),
}
N_CHECKIN_USERS = 2_000
CHECKIN_STAY = 0.35  # probability that the next check-in has the same category
CHECKIN_BOOST = 2.2  # how much more a country likes its favourite categories

# the 11 WillettsMET2018 labels of Capture-24 ([C] Appendix D.1)
ACTIVITIES = (
    "bicycling",
    "gym",
    "sitstand+activity",
    "sitstand+lowactivity",
    "sitting",
    "sleep",
    "sports",
    "standing",
    "vehicle",
    "walking",
    "walking+activity",
)
AGE_GROUPS = ("18-29", "30-37", "38-52", "53+")
N_PARTICIPANTS = 150
EPOCHS = 288  # one day at 5-minute resolution
ACTIVITY_STAY = 0.88
# how much of each activity at night, in the morning/evening and during the working day
NIGHT = np.array([0, 0, 0.5, 1, 3, 94, 0, 0.5, 0, 1, 0])
HOME = np.array([1, 1, 14, 18, 30, 6, 1, 6, 8, 10, 5])
DAY = np.array([2, 1, 12, 20, 38, 0.5, 0.5, 8, 6, 9, 3])
AGE_TILT = {
    "18-29": {"bicycling": 2.0, "gym": 2.5, "sports": 2.5, "walking+activity": 1.5, "sleep": 1.1},
    "30-37": {"vehicle": 1.4, "sitstand+activity": 1.3, "walking": 1.2},
    "38-52": {"vehicle": 1.6, "standing": 1.3, "sitting": 1.1},
    "53+": {"sitstand+lowactivity": 1.4, "sitting": 1.2, "sports": 0.4, "gym": 0.5, "bicycling": 0.6},
}


def _simulate(
    rng: np.random.Generator,
    first: np.ndarray,
    jump_to: Callable[[int, np.ndarray], np.ndarray],
    stay: float,
    n_steps: int,
) -> np.ndarray:
    """States of many sticky chains at once, shape (n, n_steps).

    ``first``: each chain's first-state distribution (n, K).  At each step a chain keeps its
    state with probability ``stay``, else draws from ``jump_to(t, current_states)`` (n, K).
    """
    n = first.shape[0]
    states = np.empty((n, n_steps), dtype=np.int64)
    states[:, 0] = _draw(rng, first)
    for t in range(1, n_steps):
        moves = rng.random(n) >= stay
        states[:, t] = np.where(moves, _draw(rng, jump_to(t, states[:, t - 1])), states[:, t - 1])
    return states


def _draw(rng: np.random.Generator, probabilities: np.ndarray) -> np.ndarray:
    cumulative = np.cumsum(probabilities, axis=1)
    u = rng.random((probabilities.shape[0], 1)) * cumulative[:, -1:]
    return (u > cumulative).sum(axis=1)


def make_checkins(rng: np.random.Generator) -> pd.DataFrame:
    """≈2,000 users in 20 countries, a few dozen check-ins each, 12 venue categories."""
    countries = tuple(COUNTRIES)
    k = len(CATEGORIES)
    preference = np.empty((len(countries), k))
    for c, name in enumerate(countries):
        weights = POPULARITY * np.exp(rng.normal(0.0, 0.2, size=k))
        for favourite in COUNTRIES[name]:
            weights[CATEGORIES.index(favourite)] *= CHECKIN_BOOST
        preference[c] = weights / weights.sum()
    # a shared affinity between categories (after the office, a restaurant; after a bar, home …)
    affinity = np.exp(rng.normal(0.0, 0.5, size=(k, k)))
    np.fill_diagonal(affinity, 1.0)

    share = rng.dirichlet(np.full(len(countries), 6.0))
    country = rng.choice(len(countries), size=N_CHECKIN_USERS, p=share)
    lengths = 12 + rng.poisson(24, size=N_CHECKIN_USERS)
    jump = preference[country][:, None, :] * affinity[None, :, :]
    jump /= jump.sum(axis=2, keepdims=True)
    users = np.arange(N_CHECKIN_USERS)
    states = _simulate(rng, preference[country], lambda t, now: jump[users, now], CHECKIN_STAY, int(lengths.max()))

    start = pd.Timestamp("2012-04-03") + pd.to_timedelta(rng.uniform(0, 300, N_CHECKIN_USERS), unit="D")
    gaps = 60 + rng.exponential(1.4 * 86_400, size=states.shape)  # seconds, at least a minute apart
    offsets = np.cumsum(gaps, axis=1) - gaps[:, :1]
    keep = np.arange(states.shape[1])[None, :] < lengths[:, None]
    user_idx, step = np.nonzero(keep)
    times = start.to_numpy()[user_idx] + (offsets[user_idx, step] * 1e6).astype("timedelta64[us]")
    frame = pd.DataFrame(
        {
            "user": [f"u{i + 1:04d}" for i in user_idx],
            "time": pd.Series(times).dt.strftime("%Y-%m-%d %H:%M:%S"),
            "state": np.array(CATEGORIES)[states[user_idx, step]],
            "country": np.array(countries)[country[user_idx]],
        }
    )
    # a real check-in log is ordered by time, not by user
    return frame.iloc[np.argsort(times, kind="stable")].reset_index(drop=True)


def make_activities(rng: np.random.Generator) -> pd.DataFrame:
    """150 participants in 4 age groups, one day each at 5-minute resolution, 11 activities."""
    k = len(ACTIVITIES)
    group = np.repeat(np.arange(len(AGE_GROUPS)), -(-N_PARTICIPANTS // len(AGE_GROUPS)))[:N_PARTICIPANTS]
    rng.shuffle(group)
    hours = np.arange(EPOCHS) * 5 / 60
    profile = np.empty((EPOCHS, k))
    for t, h in enumerate(hours):
        if h < 6.5 or h >= 23:
            profile[t] = NIGHT
        elif 9 <= h < 17:
            profile[t] = DAY
        else:
            profile[t] = HOME
    tilt = np.ones((len(AGE_GROUPS), k))
    for g, name in enumerate(AGE_GROUPS):
        for activity, factor in AGE_TILT[name].items():
            tilt[g, ACTIVITIES.index(activity)] = factor
    # each participant has their own mild taste on top of their age group's
    personal = np.exp(rng.normal(0.0, 0.3, size=(N_PARTICIPANTS, k)))
    targets = profile[:, None, :] * (tilt[group] * personal)[None, :, :]
    targets /= targets.sum(axis=2, keepdims=True)
    states = _simulate(rng, targets[0], lambda t, now: targets[t], ACTIVITY_STAY, EPOCHS)

    day = pd.Timestamp("2014-06-01") + pd.to_timedelta(rng.integers(0, 900, N_PARTICIPANTS), unit="D")
    clock = pd.to_timedelta(np.arange(EPOCHS) * 5, unit="min")
    user_idx = np.repeat(np.arange(N_PARTICIPANTS), EPOCHS)
    step = np.tile(np.arange(EPOCHS), N_PARTICIPANTS)
    times = day.to_numpy()[user_idx] + clock.to_numpy()[step]
    return pd.DataFrame(
        {
            "user": [f"P{i + 1:03d}" for i in user_idx],
            "time": pd.Series(times).dt.strftime("%Y-%m-%d %H:%M"),
            "state": np.array(ACTIVITIES)[states[user_idx, step]],
            "age_group": np.array(AGE_GROUPS)[group[user_idx]],
        }
    )


def main() -> None:
    rng = np.random.default_rng(SEED)
    checkins = make_checkins(rng)
    activities = make_activities(rng)
    for name, frame in (("checkins.csv", checkins), ("activities.csv", activities)):
        path = HERE / name
        frame.to_csv(path, index=False)
        print(f"{name}: {len(frame):,} rows, {frame['user'].nunique():,} users, {path.stat().st_size / 1e6:.2f} MB")
    for name, frame, column in (("checkins", checkins, "country"), ("activities", activities, "age_group")):
        print(f"\n{name}: top 3 per {column} (share of the group's entries; 4th for comparison)")
        for label, part in frame.groupby(column):
            share = part["state"].value_counts(normalize=True)
            top = ", ".join(f"{s} {v:.1%}" for s, v in share.iloc[:3].items())
            print(f"  {label:<15} {top} | 4th: {share.index[3]} {share.iloc[3]:.1%}")


if __name__ == "__main__":
    main()
