"""``puffer synth`` (puffer_core/synthesis/cli.py), in process: the table, the report, one seed one table, refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from puffer_core.__main__ import main
from puffer_core.synthesis.sources import load_chain_counts
from puffer_core.synthesis.synthesize import synthesize

ROOT = Path(__file__).resolve().parents[1]
WEATHER = ROOT / "assets" / "seattle-weather.csv"
COLUMNS = ["--user", "month", "--time", "date", "--state", "weather", "--group", "season"]


def test_synth_writes_the_table_and_the_report(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out, report = tmp_path / "synthetic.parquet", tmp_path / "report.json"
    code = main(["synth", "--data", str(WEATHER), *COLUMNS, "--eps", "5", "--seed", "3", "--out", str(out),
                 "--report", str(report)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "ε_puffer = 5" in printed and "1,461 rows of 48 synthetic users" in printed
    table = pd.read_parquet(out)
    assert list(table.columns) == ["month", "date", "weather", "season"] and len(table) == 1461
    # the library with the same seed on the same counts writes the same table
    counts = load_chain_counts(WEATHER, user="month", time="date", state="weather", group="season")
    again = synthesize(counts, None, 5.0, rng=3).table
    assert table.astype(str).equals(again.astype(str))
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["release"]["event"]["eps_puffer"] == pytest.approx(5.0)
    assert written["release"]["noise"]["drawn_by"] == "numpy" and written["fidelity"][0]["group"] == "all"
    assert len(written["release"]["transitions"]) == 4  # one matrix per season


def test_synth_with_a_target_accuracy_and_a_prior_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    prior = tmp_path / "prior.csv"
    assert main(["prior", "--data", str(WEATHER), "--user", "month", "--time", "date", "--state", "weather",
                 "--out", str(prior), "--quiet"]) == 0
    out = tmp_path / "synthetic.csv"
    assert main(["synth", "--data", str(WEATHER), *COLUMNS[:6], "--alpha", "30", "--prior", str(prior),
                 "--out", str(out), "--quiet"]) == 0  # no --seed: a real release (OpenDP)
    assert len(pd.read_csv(out)) == 1461


@pytest.mark.parametrize(("extra", "message"), [
    (["--eps", "0.1"], "not even one row"),
    (["--eps", "1", "--alpha", "3"], "give --eps .* or --alpha"),
    (["--eps", "5", "--prior", "missing.csv"], "cannot read the prior"),
])
def test_synth_refuses_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture, extra: list[str],
                                            message: str) -> None:
    code = main(["synth", "--data", str(WEATHER), *COLUMNS, *extra, "--out", str(tmp_path / "s.parquet"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert re.search(message, err)
