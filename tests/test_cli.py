"""``python -m puffer_core``: results on the demo data, clean errors.

The first test runs the command in a subprocess, as a user types it; the others call its ``main`` in this
process (the same code path without a new interpreter's start-up, about 2 s each).  ``.ci/installed.py`` runs
every command again from the installed wheel, outside the repository.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from puffer_core.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
CHECKINS = ROOT / "assets" / "checkins.csv"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "puffer_core", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _main(capsys: pytest.CaptureFixture, *args: str) -> subprocess.CompletedProcess:
    """``main(args)`` in this process, with what it printed, shaped as ``_run``'s result."""
    status = main(list(args))
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), status, captured.out, captured.err)


def test_simulate_on_the_demo_checkins(tmp_path):
    out, ledger, settings = tmp_path / "results.csv", tmp_path / "ledger.csv", tmp_path / "settings.json"
    done = _run(
        "simulate", "--data", str(CHECKINS), "--group", "country", "--eps", "1,2", "--trials", "20",
        "--releases", "2", "--seed", "7", "--out", str(out), "--ledger", str(ledger), "--settings", str(settings),
    )
    assert done.returncode == 0, done.stderr
    assert "HitRate@3" in done.stdout and "[ 100%] done" in done.stderr
    metrics = pd.read_csv(out)
    assert set(metrics["mechanism"]) == {"pufferfish_exponential", "mqm", "group_dp_exponential", "group_dp_laplace"}
    assert set(metrics["eps_puffer"]) == {1.0, 2.0} and set(metrics["release"]) == {1, 2}
    assert metrics["trials"].eq(20).all()
    book = pd.read_csv(ledger)
    assert {"cumulative_eps_puffer", "naive_sum", "group_dp"} <= set(book.columns)
    assert len(book) == 4 * 2 * 2
    saved = json.loads(settings.read_text(encoding="utf-8"))
    assert saved["rng"] == {"seed": 7} and saved["data"]["group column"] == "country"


def test_histogram_query_quietly(tmp_path, capsys):
    out = tmp_path / "h.csv"
    done = _main(capsys,
        "simulate", "--data", str(CHECKINS), "--query", "histogram", "--mechanisms", "pufferfish_laplace,mqm",
        "--eps", "2", "--trials", "10", "--release-mode", "windows", "--releases", "2", "--out", str(out), "--quiet",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
    assert set(pd.read_csv(out)["metric"]) == {"L1", "L1 expected"}


@pytest.mark.parametrize(
    "content,expected",
    [
        (b"user,time,state\nu1,1,a\nu1,2,b\nu1,2,a\n", "repeat a (user, time) pair"),
        (b"id;when;what\n1;2;3\n", "no user column"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "not a text"),
        (b"", "empty"),
    ],
    ids=["duplicate-time", "wrong-columns", "binary", "empty"],
)
def test_malformed_csv_gives_a_clean_error(tmp_path, capsys, content, expected):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content)
    done = _main(capsys, "simulate", "--data", str(bad), "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and expected in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--group", "Country"], "did you mean 'country'"),
        (["--k", "20"], "k must be between"),
        (["--trials", "1"], "trials"),
        (["--eps", "1,-2"], "positive"),
        (["--seed", "-3"], "seed"),
        (["--query", "histogram", "--mechanisms", "pufferfish_exponential"], "ranking"),
    ],
)
def test_bad_options_give_a_clean_error(tmp_path, capsys, args, expected):
    """In-process (same code path as the subprocess, without its start-up time)."""
    status = main(["simulate", "--data", str(CHECKINS), "--out", str(tmp_path / "x.csv"), "--quiet", *args])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("error: ") and expected in err


@pytest.mark.parametrize(
    "args,expected",
    [
        (["simulate", "--out", "x.csv"], "--data"),
        (["simulate", "--data", "x.csv", "--out", "y.csv", "--mechanisms", "foo"], "unknown mechanism"),
        (["simulate", "--data", "x.csv", "--out", "y.csv", "--eps", "a,b"], "numbers separated by commas"),
        (["fit"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(capsys, args, expected):
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    assert expected in capsys.readouterr().err


def test_missing_file_and_unwritable_output(tmp_path, capsys):
    done = _main(capsys, "simulate", "--data", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 2 and "does not exist" in done.stderr
    done = _main(capsys, "simulate", "--data", str(CHECKINS), "--trials", "2", "--eps", "1", "--quiet",
                "--out", str(tmp_path / "missing-dir" / "x.csv"))
    assert done.returncode == 2 and "cannot write" in done.stderr and "Traceback" not in done.stderr


def _two_state_csv(path: Path) -> Path:
    """12 users × 20 entries over two states ("home", "work"), written without the library."""
    lines = ["user,time,state"]
    for user in range(12):
        for t in range(20):
            lines.append(f"u{user},{t},{'home' if (t // (2 + user % 3)) % 2 == 0 else 'work'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_default_k_is_capped_at_the_number_of_states(tmp_path, capsys):
    data, out, settings = _two_state_csv(tmp_path / "two.csv"), tmp_path / "r.csv", tmp_path / "s.json"
    status = main(["simulate", "--data", str(data), "--eps", "1", "--trials", "5", "--out", str(out),
                   "--settings", str(settings)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    # with K = 2 states a top-2 list holds every state (it cannot fail), so the default is k = 1 (issue 29)
    assert "note: the data has only 2 states, so top-k uses k = 1 instead of the default 3" in captured.err
    assert "HitRate@1" in captured.out
    assert json.loads(settings.read_text(encoding="utf-8"))["k"] == 1
    assert {"Acc@1", "HitRate@1"} <= set(pd.read_csv(out)["metric"])
    assert not any(m.endswith(("@2", "@3")) for m in pd.read_csv(out)["metric"])


def test_capping_is_silent_when_quiet_or_not_needed(tmp_path, capsys):
    data = _two_state_csv(tmp_path / "two.csv")
    assert main(["simulate", "--data", str(data), "--eps", "1", "--trials", "5", "--quiet",
                 "--out", str(tmp_path / "q.csv")]) == 0
    assert capsys.readouterr().err == ""
    assert main(["simulate", "--data", str(data), "--query", "histogram", "--mechanisms", "pufferfish_laplace",
                 "--eps", "1", "--trials", "5", "--out", str(tmp_path / "h.csv")]) == 0
    assert "note:" not in capsys.readouterr().err  # k plays no part in a histogram
    assert main(["simulate", "--data", str(CHECKINS), "--eps", "1", "--trials", "5", "--out",
                 str(tmp_path / "c.csv")]) == 0
    assert "note:" not in capsys.readouterr().err  # the demo data has more than 3 states


def test_an_explicit_k_is_never_changed(tmp_path, capsys):
    data = _two_state_csv(tmp_path / "two.csv")
    status = main(["simulate", "--data", str(data), "--k", "3", "--quiet", "--out", str(tmp_path / "x.csv")])
    assert status == 2
    assert "k must be between" in capsys.readouterr().err


def test_simulate_aggregating_with_duckdb_gives_the_same_results(tmp_path):
    rows, sql = tmp_path / "rows.csv", tmp_path / "sql.csv"
    common = ["--data", str(CHECKINS), "--group", "country", "--eps", "1", "--trials", "10", "--seed", "3",
              "--release-mode", "windows", "--releases", "3", "--quiet"]
    assert main(["simulate", *common, "--out", str(rows)]) == 0
    assert main(["simulate", *common, "--engine", "duckdb", "--out", str(sql)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(rows), pd.read_csv(sql))


def test_prior_from_a_glob_writes_the_matrix_and_the_counts(tmp_path, capsys):
    frame = pd.read_csv(CHECKINS)
    for i, part in enumerate((frame.iloc[: len(frame) // 2], frame.iloc[len(frame) // 2 :])):
        part.to_parquet(tmp_path / f"part-{i}.parquet")
    out, stats = tmp_path / "matrix.csv", tmp_path / "stats.json"
    done = _main(capsys, "prior", "--data", str(tmp_path / "part-*.parquet"), "--group", "country", "--out", str(out),
                "--stats", str(stats))
    assert done.returncode == 0, done.stderr
    assert "users: 2,000" in done.stdout and "[ 100%] done" in done.stderr
    from puffer_core.data.readers import load_sequences
    from puffer_core.priors.fitting import fit_markov_chain

    expected = fit_markov_chain(load_sequences(CHECKINS, group="country"))
    written = pd.read_csv(out, index_col=0)
    assert list(written.columns) == list(expected.labels)
    assert (written.to_numpy() == expected.transition).all()
    assert json.loads(stats.read_text(encoding="utf-8"))["summary"]["entries"] == 71_861
    bad = _main(capsys, "prior", "--data", str(tmp_path / "nothing-*.parquet"))
    assert bad.returncode == 2 and "error: no file matches" in bad.stderr and "Traceback" not in bad.stderr
def test_the_ladder_command_prints_attack_exact_and_every_bound_in_order(capsys: pytest.CaptureFixture) -> None:
    from puffer_core import MarkovChainPrior
    from puffer_core.tightness import ladder_row

    done = _main(capsys, "ladder", "--matrix", "0.9,0.1;0.2,0.8", "--length", "6", "--eps", "0.5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].split("\t") == ["release", "attack", "exact", "TPL", "[C]", "group DP", "in order"]
    row = ladder_row(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6), "stream_rr", 0.5)
    first = lines[1].split("\t")
    assert first[0] == "stream_rr" and float(first[1]) == float(f"{row.lower:.6g}") and first[-1] == "True"
    bad = _main(capsys, "ladder", "--matrix", "0.9,0.1;0.2", "--length", "6")
    assert bad.returncode == 2 and "must be square" in bad.stderr and "Traceback" not in bad.stderr


def test_an_endless_input_gives_a_clean_error_not_a_memory_error(tmp_path, capsys, monkeypatch):
    """The CLI on /dev/zero read the whole stream, then failed with MemoryError and a traceback."""
    import os

    from puffer_core.data import readers

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this system")
    monkeypatch.setattr(readers, "MAX_BYTES", 1 << 20)
    status = main(["simulate", "--data", "/dev/zero", "--out", str(tmp_path / "x.csv"), "--quiet"])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "larger than" in err and "Traceback" not in err
