"""Reading similarity tables: simcore's long matrix, or a wide table such as the paper's Table 3.

Names are data: a corpus called ``nan``, ``None``, ``NA`` or ``null`` (or a blank name) stays that
name when a table is read, and the apostrophe simcore puts before a name a spreadsheet would run as a
formula is taken off again, so results files that use the real names join on every pair.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InvalidArgument, SimcoreError, TableError
from ..export import unescape_formula
from ..measures import all_measures, get_measure

LONG = ["source", "target", "measure", "value"]
NAME_COLUMNS = {"source", "target", "measure", "chosen", "best", "first", "second", "scope", "corpus", "name"}
MAX_TABLE_BYTES = 2 << 30
_MISSING = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
            "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def to_long(table: pd.DataFrame) -> pd.DataFrame:
    """A long table (source, target, measure, value, direction, ...) from a long or wide one."""
    table = _frame(table, "the similarity table")
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    if table.columns.duplicated().any():
        raise TableError("the table has two columns with the same name; rename one")
    missing = {"source", "target"} - set(table.columns)
    if missing:
        raise TableError(f"the table needs columns source and target (missing: {', '.join(sorted(missing))})")
    if {"measure", "value"} <= set(table.columns):
        long = table.copy()
        long["measure"] = _names(long["measure"]).str.strip().str.lower()
    else:
        present = [m for m in all_measures() if m in table.columns]
        if not present:
            raise TableError(
                "the table has neither measure/value columns nor any measure column "
                f"({', '.join(all_measures())})"
            )
        long = table.melt(id_vars=["source", "target"], value_vars=present, var_name="measure", value_name="value")
    if long.empty:
        raise TableError("the similarity table has no rows (only a header?); compute a matrix first")
    long["source"] = _names(long["source"])
    long["target"] = _names(long["target"])
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    known = set(all_measures())
    long["direction"] = [get_measure(m).direction if m in known else 0 for m in long["measure"]]
    return long.reset_index(drop=True)


def checked_long(long: Any) -> pd.DataFrame:
    """A long matrix given to an analysis, checked and with clean types (names text, values numbers)."""
    frame = _frame(long, "the similarity matrix")
    missing = [c for c in LONG if c not in frame.columns]
    if missing:
        raise TableError(f"the similarity matrix lacks column(s) {', '.join(missing)}; read it with read_matrix")
    if frame.columns.duplicated().any():
        raise TableError("the similarity matrix has two columns with the same name")
    if frame.empty:
        raise TableError("the similarity matrix has no rows; compute a matrix first")
    out = frame.copy()
    for column in ("source", "target"):
        out[column] = _names(out[column])
    out["measure"] = _names(out["measure"]).str.strip().str.lower()
    out["value"] = pd.to_numeric(out["value"], errors="coerce")
    known = set(all_measures())
    computed = pd.Series([get_measure(m).direction if m in known else 0 for m in out["measure"]], index=out.index)
    given = pd.to_numeric(out["direction"], errors="coerce") if "direction" in out else computed
    out["direction"] = given.where(given.isin([-1, 0, 1]), computed).astype(int)
    return out.reset_index(drop=True)


def read_csv_table(path: Path | str) -> pd.DataFrame:
    """A CSV file as a table, or a SimcoreError saying why it cannot be read.

    Only regular files are read (a device, FIFO or endless stream would never end); name columns
    are read as text, so ``nan`` or ``NA`` stay names, while other columns treat them as missing.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path) or "\0" in str(path):
        raise InvalidArgument(f"a table path must be a file path, not {path!r}")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise SimcoreError(f"{path} does not exist") from None
    except OSError as exc:
        raise SimcoreError(f"cannot read {path} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise SimcoreError(f"{path} is a directory; give a CSV file")
    if not stat.S_ISREG(info.st_mode):
        raise SimcoreError(f"{path} is not a regular file (devices, FIFOs and streams are not read); give a CSV file")
    if info.st_size > MAX_TABLE_BYTES:
        raise SimcoreError(f"{path} is {info.st_size / 1e9:.1f} GB, more than a results table can be; give the CSV table")
    try:
        header = pd.read_csv(path, nrows=0, encoding="utf-8-sig")
        columns = list(header.columns)
        names = [c for c in columns if str(c).strip().lower() in NAME_COLUMNS]
        return pd.read_csv(path, encoding="utf-8-sig", dtype={c: str for c in names}, keep_default_na=False,
                           na_values={c: _MISSING for c in columns if c not in names})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError, OverflowError) as exc:
        raise SimcoreError(f"{path} is not a readable CSV table ({_first_line(exc)})") from None
    except OSError as exc:
        raise SimcoreError(f"cannot read {path} ({exc.strerror or exc})") from None


def read_matrix(path: Path | str) -> pd.DataFrame:
    """Read a matrix CSV written by ``simcore matrix`` (or a wide table of measures)."""
    long = to_long(read_csv_table(path))
    for column in ("source", "target"):
        long[column] = long[column].map(unescape_formula)
    return long


def to_wide(long: pd.DataFrame) -> pd.DataFrame:
    """One row per (target, source), one column per measure."""
    long = checked_long(long)
    return long.pivot_table(index=["target", "source"], columns="measure", values="value", aggfunc="first",
                            dropna=False).reset_index()


def measures_in(long: pd.DataFrame, wanted: Sequence[str] | str | None = None, similarity_only: bool = True) -> list[str]:
    """The measures to analyse: ``wanted`` (checked against the table) or every measure in it."""
    known = set(all_measures())
    present = [m for m in dict.fromkeys(long["measure"]) if m in known]
    if wanted is not None:
        if isinstance(wanted, str):
            wanted = wanted.split(",")
        if not isinstance(wanted, Sequence) or not all(isinstance(m, str) for m in wanted):
            raise InvalidArgument("measures must be a list of measure names such as ['tvc', 'ppl'], or None for all")
        wanted = [m.strip().lower() for m in wanted if m.strip()]
    if wanted:
        absent = [m for m in wanted if m not in present]
        if absent:
            raise TableError(f"the table has no values for {', '.join(absent)} "
                             f"(it has {', '.join(present) or 'no known measure'})")
        present = list(dict.fromkeys(wanted))
    if similarity_only:
        kept = [m for m in present if get_measure(m).direction != 0]
        if not kept:
            dropped = ", ".join(present) or "none"
            raise TableError(f"no similarity measure to use (given: {dropped}; ttr describes a source alone and "
                             "ranks nothing); choose e.g. tvc, ppl, wvv or jsd")
        present = kept
    return present


def _frame(table: Any, what: str) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise InvalidArgument(f"{what} must be a pandas DataFrame, not {type(table).__name__}; "
                              "read one with simcore.analysis.read_matrix or read_results")
    return table


def _names(column: pd.Series) -> pd.Series:
    """Names as text: missing values become blank names, numbers their text (1.0 stays '1.0')."""
    return column.map(lambda v: "" if v is None or (isinstance(v, float) and v != v) else str(v)).astype(object)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
