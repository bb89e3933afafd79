"""The built-in datasets: each loads like an upload, has its documented shape, and states its source and licence."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from puffer_core import DATASETS, get_dataset, load_dataset, load_sequences

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "assets" / "README.md").read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("`", ""))


CASES = [(name, user) for name, d in DATASETS.items() for user in d.user_choices]


@pytest.mark.parametrize("name, user", CASES)
def test_each_dataset_loads_with_its_documented_shape(name, user):
    record = get_dataset(name)
    data = load_dataset(name, user)
    raw = pd.read_csv(record.path)
    assert data.n_entries == record.rows == len(raw)
    assert data.n_states == record.states == raw[record.state].nunique()
    assert data.n_users == record.users[user] == raw[user].nunique()
    assert data.group_column == record.group
    assert data.groups is not None and len(data.groups) == raw[record.group].nunique()
    # the upload path: the same file as raw bytes, as Streamlit hands it over, gives the same sequences
    uploaded = load_sequences(record.path.read_bytes(), **record.columns(user))
    np.testing.assert_array_equal(uploaded.codes, data.codes)
    np.testing.assert_array_equal(uploaded.offsets, data.offsets)
    assert uploaded.states == data.states


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_dataset_states_source_and_licence_here_and_in_the_assets_readme(name):
    record = get_dataset(name)
    for text in (record.title, record.description, record.source, record.licence):
        assert isinstance(text, str) and len(text) > 10
    assert record.file in README
    if record.synthetic:
        assert "synthetic" in record.title.lower() and "no real person" in record.source
    else:
        assert "real" in record.title.lower()
        flat = _flat(README)
        for phrase in ("Public domain", "NOAA", "vega_datasets", "MIT licence", "0.9.0"):
            assert phrase in record.licence + record.source
            assert phrase in flat, phrase


def test_seattle_weather_is_the_real_series_cut_into_months_years_and_seasons():
    frame = pd.read_csv(get_dataset("seattle-weather").path, dtype=str)
    dates = pd.to_datetime(frame["date"], format="%Y-%m-%d")
    assert dates.iloc[0] == pd.Timestamp("2012-01-01") and dates.iloc[-1] == pd.Timestamp("2015-12-31")
    assert (dates.diff().dropna() == pd.Timedelta(days=1)).all()  # every day once, in order
    assert sorted(frame["weather"].unique()) == ["drizzle", "fog", "rain", "snow", "sun"]
    assert (frame["month"] == dates.dt.strftime("%Y-%m")).all()
    assert (frame["year"] == dates.dt.strftime("%Y")).all()
    season = {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring"}
    season |= {6: "summer", 7: "summer", 8: "summer", 9: "autumn", 10: "autumn", 11: "autumn"}
    assert (frame["season"] == dates.dt.month.map(season)).all()
    months = load_dataset("seattle-weather", "month")
    assert months.lengths.min() == 28 and months.max_length == 31
    years = load_dataset("seattle-weather", "year")
    assert sorted(years.lengths.tolist()) == [365, 365, 365, 366]


def test_seattle_weather_matches_its_source_package_byte_for_byte():
    if importlib.util.find_spec("vega_datasets") is None:
        pytest.fail("vega_datasets is pinned in requirements-dev.txt; install it to check the asset's provenance")
    spec = importlib.util.spec_from_file_location("make_seattle_weather", ROOT / "assets" / "make_seattle_weather.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rebuilt = script.build(script.source_frame()).to_csv(index=False, lineterminator="\n")
    assert rebuilt.encode() == get_dataset("seattle-weather").path.read_bytes()
    from vega_datasets import local_data

    original = pd.read_csv(local_data.seattle_weather.filepath)
    assert len(original) == 1461
    description = local_data.seattle_weather.description
    assert "public-domain" in description and "NOAA" in description
    ours = pd.read_csv(get_dataset("seattle-weather").path)
    for column in ("precipitation", "temp_max", "temp_min", "wind", "weather"):
        assert ours[column].tolist() == original[column].tolist()


def test_unknown_names_and_user_columns_are_refused():
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*seattle-weather"):
        load_dataset("nope")
    with pytest.raises(ValueError, match="not a user column.*month, year"):
        load_dataset("seattle-weather", user="season")
    assert get_dataset("seattle-weather").user == "month"
