"""Every column of a matrix CSV gets every bad kind of value: each is refused on the way in with one
line naming the file, the column, the row and the value (never "internal error"), or, where the
column may be empty, read and used by every command.

Generated: a well-formed matrix with every column simcore writes (``simcore.matrix.rows.COLUMNS``), then
one cell replaced at a time by each hostile kind, run through read_matrix and, rotating, through
rank, recommend, agreement, correlate and regret on the command line.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import random
from pathlib import Path

import pandas as pd
import pytest

from simcore.analysis.tables import BOOLEAN_COLUMNS, NUMBER_COLUMNS, TEXT_COLUMNS, read_matrix
from simcore.cli import main as cli
from simcore.matrix.rows import COLUMNS
from simcore.utils.errors import TableError

SOURCES, TARGETS = ["news", "wiki", "tweets"], ["conll", "wetlab"]
MEASURES = {"tvc": 1, "ppl": -1, "jsd": -1, "ttr": 0}
BAD = ["abc", "", " ", "inf", "-inf", "1e400", "-1e400", "-5", "1e30", "2.5", "0x10", "nan", "9" * 400, "True",
       "1 2", "名前", "=1+1", "\x1b[31m"]


def _cell(rng: random.Random, measure: str, column: str) -> str:
    value = {"tvc": rng.uniform(20, 90), "ppl": rng.uniform(100, 900), "jsd": rng.uniform(0.1, 0.6),
             "ttr": rng.uniform(0.01, 0.3)}[measure]
    return {
        "value": f"{value:.6g}", "std": f"{value / 50:.4g}", "ci_low": f"{value * 0.95:.6g}",
        "ci_high": f"{value * 1.05:.6g}", "n_samples": "1", "sample_tokens": "2000", "source_tokens": "5000",
        "used_whole": "False", "reliable": "True", "flag": "", "direction": str(MEASURES[measure]),
        "oov_rate": "0.1", "error": "", "options": json.dumps({"seed": 13}),
        "replicates": " ".join(f"{value * rng.uniform(0.9, 1.1):.6g}" for _ in range(20)),
        "ladder": "", "overlap_test": "0.0125", "overlap_all": "0.003", "overlap_ngram": "13 words",
    }.get(column, "")


def _rows(seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    rows = [list(COLUMNS)]
    for target in TARGETS:
        for source in SOURCES:
            for measure in MEASURES:
                rows.append([{"source": source, "target": target, "measure": measure}.get(c) or _cell(rng, measure, c)
                             for c in COLUMNS])
    return rows


def _write(path: Path, rows: list[list[str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue()


def _must_refuse(column: str, bad: str, measure: str) -> bool:
    """The oracle: what the documented rules (numbers finite and in range, booleans, replicates) refuse."""
    from simcore.analysis.tables import measure_range

    text = bad.strip()
    empty = text.lower() in ("", "nan")
    if column == "measure":
        return not text
    if column in BOOLEAN_COLUMNS:
        return not empty and text.lower() not in ("true", "false", "1", "0", "yes", "no")
    if column == "replicates":
        try:
            return not empty and not all(math.isfinite(float(v)) for v in text.split())
        except ValueError:
            return True
    if column == "ladder":  # a JSON object: size -> {"value": finite number, "replicates": numbers or null}
        if empty:
            return False
        try:
            data = json.loads(text)
            return not (isinstance(data, dict) and all(
                k.isdigit() and int(k) > 0 and isinstance(e, dict) and type(e.get("value")) in (int, float)
                and math.isfinite(e["value"]) for k, e in data.items()))
        except ValueError:
            return True
    if column not in NUMBER_COLUMNS:
        return False
    low, high, whole, needed = NUMBER_COLUMNS[column]
    if empty:
        return needed
    try:
        number = float(text)
    except ValueError:
        return True
    if text.lower().startswith(("0x", "-0x")) or not math.isfinite(number):
        return True
    if column == "value":
        low, high = measure_range(measure)
    return not low <= number <= high or (whole and number != int(number))


def test_every_column_gets_every_bad_kind(tmp_path):
    base = _rows(7)
    results = _write(tmp_path / "results.csv", [["target", "source", "f1", "baseline"]]
                     + [[t, s, str(60 + i), "55"] for i, (t, s) in enumerate((t, s) for t in TARGETS for s in SOURCES)])
    commands = ["rank", "recommend", "agreement", "correlate", "regret"]
    refused, read, problems = 0, 0, []
    case = 0
    for column in COLUMNS:
        if column in ("source", "target"):
            continue  # names: any text is a name (tests of names with control characters cover them)
        index = COLUMNS.index(column)
        for bad in BAD:
            rows = [list(r) for r in base]
            row = 1 + (case * 5) % (len(rows) - 1)
            rows[row][index] = bad
            path = _write(tmp_path / f"m{case}.csv", rows)
            expected = _must_refuse(column, bad, rows[row][COLUMNS.index("measure")])
            accepted = False
            try:
                read_matrix(path)
            except TableError as exc:
                refused += 1
                message = str(exc)
                if "\n" in message or str(path) not in message or f"row {row}" not in message:
                    problems.append((column, bad, f"not one line naming the file and row {row}: {message!r}"))
                elif column not in message:
                    problems.append((column, bad, f"does not name the column: {message!r}"))
                elif not expected:
                    problems.append((column, bad, f"refused a good value: {message!r}"))
            except Exception as exc:  # noqa: BLE001
                problems.append((column, bad, f"{type(exc).__name__}: {exc}"))
            else:
                read += 1
                accepted = True
                if expected:
                    problems.append((column, bad, "accepted"))
            if (accepted is False and case % 10) or (accepted and column in TEXT_COLUMNS and case % 4):
                case += 1
                continue  # refused by read_matrix, the first thing every command does: a sample suffices
            command = commands[case % len(commands)]
            argv = [command, "--matrix", str(path)]
            if command in ("correlate", "regret"):
                argv += ["--results", str(results)]
            if command == "agreement":
                argv += ["--measures", "tvc,ppl,jsd"]
            code, err = _run(argv)
            if code not in (0, 2) or "internal error" in err or "Traceback" in err:
                problems.append((column, bad, f"{command}: exit {code}: {err[-300:]}"))
            case += 1
    print(f"\n{case} bad cells over {len(COLUMNS) - 2} columns: {refused} refused, {read} read")
    assert not problems, f"{len(problems)} problems, e.g. {[(c, b[:20], p[:200]) for c, b, p in problems[:5]]}"
    assert refused > case // 2


def test_a_good_matrix_reads_back_and_duplicates_are_handled(tmp_path):
    rows = _rows(3)
    long = read_matrix(_write(tmp_path / "m.csv", rows))
    assert len(long) == len(rows) - 1 and long["value"].notna().all()
    same = read_matrix(_write(tmp_path / "same.csv", rows + [rows[1]]))
    assert len(same) == len(rows) - 1 and same.attrs["dropped_duplicates"] == 1
    other = list(rows[1])
    other[COLUMNS.index("value")] = "99"
    with pytest.raises(TableError, match=r"rows 1 and 25 give source 'news', target 'conll', measure tvc two "
                                         r"different values"):
        read_matrix(_write(tmp_path / "conflict.csv", rows + [other]))
    code, err = _run(["rank", "--matrix", str(tmp_path / "conflict.csv")])
    assert code == 2 and err.count("\n") == 1 and "two different values" in err


def _with_ladder(tmp_path: Path, cell: str, replicates: str = "") -> Path:
    rows = _rows(7)
    header = rows[0]
    rows[1][header.index("ladder")] = cell
    rows[1][header.index("replicates")] = replicates
    return _write(tmp_path / "m.csv", rows)


@pytest.mark.parametrize("command", ["recommend", "rank"])
def test_a_deeply_nested_ladder_is_refused_in_one_line(tmp_path, command):
    path = _with_ladder(tmp_path, '{"1000": ' * 100_000 + "1" + "}" * 100_000)
    with pytest.raises(TableError, match="row 1: the JSON is nested too deeply"):
        read_matrix(path)
    code, err = _run([command, "--matrix", str(path)])
    assert code == 2 and err.startswith("simcore: error: ") and len(err.strip().splitlines()) == 1, err
    assert "nested too deeply" in err and "internal error" not in err


@pytest.mark.parametrize("column", ["ladder", "replicates"])
def test_a_cell_of_millions_of_replicates_is_refused_on_the_way_in(tmp_path, column):
    many = " ".join(["0.5"] * 3_000_000)
    path = (_with_ladder(tmp_path, json.dumps({"1000": {"value": 0.5, "replicates": many}})) if column == "ladder"
            else _with_ladder(tmp_path, "", many))
    with pytest.raises(TableError, match=f"column {column}, row 1: 3,000,000 replicates in one cell, more than"):
        read_matrix(path)


def test_a_matrix_with_one_ladder_cell_in_many_rows_reads_without_a_warning(tmp_path):
    import warnings

    rows = [["source", "target", "measure", "value", "ladder"]]
    rows += [[s, f"t{t}", "tvc", "0.5", ""] for t in range(10_000) for s in SOURCES[:2]]
    rows[-1][-1] = json.dumps({"1000": {"value": 0.4, "replicates": None}})
    path = _write(tmp_path / "big.csv", rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        long = read_matrix(path)
    assert len(long) == 20_000


def test_a_bad_ladder_cell_among_many_good_ones_is_named_by_its_row():
    """The ladder's replicates are checked in one parse for the whole column; a bad one still names its row."""
    from simcore.analysis.tables import _check_ladder
    from simcore.utils.errors import TableError

    good = json.dumps({"10000": {"value": 1.5, "replicates": "1.4 1.6"}, "20000": {"value": 1.2, "replicates": None}})
    cells = [good] * 40
    _check_ladder(pd.Series(cells, dtype=object), "m.csv")  # every cell fine: no error
    cells[27] = json.dumps({"10000": {"value": 1.5, "replicates": "1.4 inf"}})
    with pytest.raises(TableError, match=r"column ladder, row 28:"):
        _check_ladder(pd.Series(cells, dtype=object), "m.csv")
    cells[27] = good
    cells[33] = json.dumps({"10000": {"value": 1.5, "replicates": "1.4 x"}})
    with pytest.raises(TableError, match=r"column ladder, row 34:"):
        _check_ladder(pd.Series(cells, dtype=object), "m.csv")
