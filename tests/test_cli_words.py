"""`puffer simulate` speaks its own options (issue 29): a missing column or an ambiguous date column is answered
with --user/--time-format, not the library's user=…, and suggests the file's columns named like the roles (the
upload page's guess); a top-k query that cannot fail is never the default."""

from __future__ import annotations

from pathlib import Path

from puffer_core.__main__ import main
from puffer_core.data.columns import guess_columns, guess_group, likely_columns


def _run(tmp_path: Path, csv: str, *extra: str) -> int:
    data = tmp_path / "data.csv"
    data.write_text(csv, encoding="utf-8")
    return main(["simulate", "--data", str(data), "--out", str(tmp_path / "out.csv"), "--trials", "5", *extra])


def test_a_missing_column_names_the_option(tmp_path: Path, capsys) -> None:  # noqa: ANN001 - pytest's capsys
    assert _run(tmp_path, "who,time,state\nu1,1,A\nu1,2,B\n") == 2
    err = capsys.readouterr().err
    assert "--user" in err and "user=" not in err


def test_an_ambiguous_date_names_the_time_format_option(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    csv = "user,time,state\nu1,01/05/2024,A\nu1,02/05/2024,B\nu2,01/05/2024,B\nu2,03/05/2024,A\n"
    assert _run(tmp_path, csv) == 2
    err = capsys.readouterr().err
    assert "--time-format '%d/%m/%Y'" in err and "time_format=" not in err


THREE = "user,time,state\n" + "".join(
    f"u{u},{t},{'abc'[(u * 7 + t * t) % 3]}\n" for u in range(30) for t in range(8)
)


def test_three_states_lower_the_default_k_and_say_why(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert _run(tmp_path, THREE) == 0
    out = capsys.readouterr()
    assert "top-k uses k = 2" in out.err and "every mechanism would score 1" in out.err
    assert "HitRate@2" in out.out


def test_a_chosen_k_that_cannot_fail_is_explained(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert _run(tmp_path, THREE, "--k", "3") == 0
    err = capsys.readouterr().err
    assert "warning: with k = 3 and 3 states" in err and "Hit Rate@3 is 1 for every mechanism" in err


def test_a_row_off_by_less_than_six_digits_show_says_by_how_much() -> None:
    from puffer_core.validation import PROBABILITY_TOLERANCE, row_problems

    (problem,) = row_problems([[0.5, 0.5 + 2e-9], [0.25, 0.75]], ["a", "b"])
    assert problem.startswith("row 'a' sums to 1.000000002 (1 + 2e-09")  # not "sums to 1; rows must sum to 1"
    assert f"the tolerance is {PROBABILITY_TOLERANCE:g}" in problem
    assert row_problems([[0.5, 0.45]]) == ["row 1 sums to 0.95; rows must sum to 1"]


RENAMED = "participant,timestamp,activity,region\n" + "".join(
    f"p{u},{t},{'xyz'[(u + t * t) % 3]},{'NS'[u % 2]}\n" for u in range(12) for t in range(6)
)


def _data(tmp_path: Path, csv: str = RENAMED) -> str:
    data = tmp_path / "renamed.csv"
    data.write_text(csv, encoding="utf-8")
    return str(data)


def test_a_missing_column_lists_the_file_s_columns_and_suggests_the_likely_ones(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    # prior reads through DuckDB (load_stats), ladder through the pandas reader (load_sequences): both say it
    for command in (["prior", "--quiet"], ["ladder"]):
        assert main([*command, "--data", _data(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "'participant', 'timestamp', 'activity', 'region'" in err, err  # the file's columns
        assert "--user 'participant', --time 'timestamp', --state 'activity'" in err, err  # named like the roles
        assert "user=" not in err and "--group 'region'" not in err  # no group was asked for
    assert main(["prior", "--quiet", "--data", _data(tmp_path), "--user", "participant", "--group", "grp"]) == 2
    err = capsys.readouterr().err
    assert "likely ones are --time 'timestamp', --state 'activity', --group 'region'" in err, err
    assert "--user 'participant'" not in err  # given and found: not suggested again
    # the suggestion, followed, is accepted
    chosen = ["--user", "participant", "--time", "timestamp", "--state", "activity", "--group", "region"]
    assert main(["prior", "--quiet", "--data", _data(tmp_path), *chosen]) == 0


def test_no_suggestion_when_no_column_is_named_like_the_role(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    csv = "a,b,c\n" + "".join(f"{u},{t},{t % 2}\n" for u in range(3) for t in range(3))
    assert main(["prior", "--quiet", "--data", _data(tmp_path, csv)]) == 2
    err = capsys.readouterr().err
    assert "its columns are 'a', 'b', 'c'." in err and "likely" not in err, err


def test_the_guesses_the_upload_page_starts_from() -> None:
    columns = ["Region", "ts", "UserID", "venue", "extra"]
    assert guess_columns(columns) == {"user": 2, "time": 1, "state": 3}  # by name, whatever the case
    assert guess_group(columns, [2, 1, 3]) == 0 and guess_group(columns, [0]) is None
    assert guess_columns(["a", "b"]) == {"user": 0, "time": 1, "state": 0}  # no name: the first free column
    assert likely_columns(["a", "b", "c"], {"user": "user"}) == {}  # a free column is not "likely"
    assert likely_columns(["id", "t", "state"], {"user": "t", "time": "time"}) == {}  # 't' is the user here
