"""Regenerate assets/seattle-weather.csv from the vega_datasets package (REAL data; see assets/README.md).

    python -m pip install vega_datasets==0.9.0   # also in requirements-dev.txt
    python assets/make_seattle_weather.py

Reads ``seattle-weather.csv`` as shipped inside the ``vega_datasets`` wheel (daily weather in
Seattle 2012–2015, public-domain NOAA data; no network access), keeps every original column
and value, and adds three columns so the file loads like an upload through ``load_sequences``:
``month`` (``2012-01``) and ``year`` (``2012``) to use as the user column — one sequence per
month (28–31 days) or per year (365–366 days) — and ``season`` (meteorological: December–February
winter, March–May spring, June–August summer, September–November autumn) as the group column.
The output is identical on every run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "seattle-weather.csv"
SEASONS = {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring",
           6: "summer", 7: "summer", 8: "summer", 9: "autumn", 10: "autumn", 11: "autumn"}  # fmt: skip
COLUMNS = ["date", "weather", "month", "year", "season", "precipitation", "temp_max", "temp_min", "wind"]


def source_frame() -> pd.DataFrame:
    """The file exactly as vega_datasets ships it (read as text, no parsing)."""
    from vega_datasets import local_data

    return pd.read_csv(local_data.seattle_weather.filepath, dtype=str, keep_default_na=False)


def build(raw: pd.DataFrame) -> pd.DataFrame:
    """The asset: ISO dates, the original columns, and month, year and season columns."""
    date = pd.to_datetime(raw["date"], format="%Y/%m/%d")
    out = raw.assign(
        date=date.dt.strftime("%Y-%m-%d"),
        month=date.dt.strftime("%Y-%m"),
        year=date.dt.strftime("%Y"),
        season=date.dt.month.map(SEASONS),
    )
    return out[COLUMNS].sort_values("date", kind="stable").reset_index(drop=True)


def main() -> None:
    frame = build(source_frame())
    frame.to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT.name}: {len(frame):,} days, {frame['date'].iloc[0]} to {frame['date'].iloc[-1]}")
    print(frame["weather"].value_counts().to_string())
    print(pd.crosstab(frame["year"], frame["weather"]).to_string())


if __name__ == "__main__":
    main()
