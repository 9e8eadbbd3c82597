"""Reading similarity tables: simcore's long matrix, or a wide table such as the paper's Table 3.

Names are data: a corpus called ``nan``, ``None``, ``NA`` or ``null`` (or a blank name) stays that
name when a table is read, and the apostrophe simcore puts before a name a spreadsheet would run as a
formula is taken off again, so results files that use the real names join on every pair.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..measures.lookup import all_measures, get_measure
from ..reporting.export import unescape_formula
from ..utils.errors import InvalidArgument, SimcoreError, TableError

LONG = ["source", "target", "measure", "value"]
NAME_COLUMNS = {"source", "target", "measure", "chosen", "best", "first", "second", "scope", "corpus", "name"}
MAX_TABLE_BYTES = 2 << 30
MAX_REPLICATES = 100_000  # bootstrap replicates one cell may hold (simcore writes a few hundred)
_MISSING = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
            "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
_MISSING_LOWER = {m.lower() for m in _MISSING}


def to_long(table: pd.DataFrame, where: str = "the similarity table") -> pd.DataFrame:
    """A long table (source, target, measure, value, direction, ...) from a long or wide one.

    Every column simcore knows is checked on the way in (see :func:`validate_columns`): a bad cell
    is a TableError naming ``where``, the column, the row and the value, never a value made up.
    Rows repeating a (source, target, measure) are kept once when they agree and refused when not.
    """
    table = as_frame(table, "the similarity table")
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    if table.columns.duplicated().any():
        raise TableError(f"{where} has two columns with the same name; rename one")
    missing = {"source", "target"} - set(table.columns)
    if missing:
        raise TableError(f"{where} needs columns source and target (missing: {', '.join(sorted(missing))})")
    if {"measure", "value"} <= set(table.columns):
        long = validate_columns(table.reset_index(drop=True), where)
        long["measure"] = name_text(long["measure"]).str.strip().str.lower()
        blank = long.index[long["measure"] == ""]
        if len(blank):
            raise TableError(f"{where}: column measure, row {blank[0] + 1}: the measure is empty")
    else:
        present = [m for m in all_measures() if m in table.columns]
        if not present:
            raise TableError(
                f"{where} has neither measure/value columns nor any measure column "
                f"({', '.join(all_measures())})"
            )
        wide = validate_columns(table.reset_index(drop=True), where, present)
        wide["_row"] = np.arange(1, len(wide) + 1)
        long = wide.melt(id_vars=["source", "target", "_row"], value_vars=present, var_name="measure",
                         value_name="value")
    if long.empty:
        raise TableError(f"{where} has no rows (only a header?); compute a matrix first")
    long["source"] = name_text(long["source"])
    long["target"] = name_text(long["target"])
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    if "_row" not in long:
        long["_row"] = np.arange(1, len(long) + 1)
    long = _without_duplicates(long, where).drop(columns="_row")
    long["direction"] = _directions(long["measure"])
    return long.reset_index(drop=True)


# Columns of simcore's matrix CSV that hold numbers: (lowest, highest, whole number, needed where a value is).
NUMBER_COLUMNS: dict[str, tuple[float, float, bool, bool]] = {
    "value": (-math.inf, math.inf, False, False),
    "std": (0.0, math.inf, False, False),
    "ci_low": (-math.inf, math.inf, False, False),
    "ci_high": (-math.inf, math.inf, False, False),
    "n_samples": (1, 1_000_000, True, True),
    "sample_tokens": (0, 10**15, True, True),
    "source_tokens": (0, 10**15, True, True),
    "oov_rate": (0.0, 1.0, False, False),
    "overlap_test": (0.0, 1.0, False, False),  # shares of target sentences the source holds (simcore.contamination.ngrams)
    "overlap_all": (0.0, 1.0, False, False),
    "direction": (-1, 1, True, False),
}
BOOLEAN_COLUMNS = ("used_whole", "reliable")
# ladder: parsed by simcore.answer.recommendation
TEXT_COLUMNS = ("flag", "error", "options", "replicates", "ladder", "overlap_ngram")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}



def measure_range(name: str) -> tuple[float, float]:
    """The values a measure can take (its ``value_range``; a value outside is a broken table, not a
    measurement); any number for a name not registered."""
    return get_measure(name).value_range if name in all_measures() else (-math.inf, math.inf)

def validate_columns(table: pd.DataFrame, where: str = "the similarity table",
                     measure_columns: Sequence[str] = ()) -> pd.DataFrame:
    """A copy of ``table`` with every known column checked and typed, or a TableError for the first bad cell.

    Numbers must be numbers, finite and in range; whole-number columns whole; true/false columns
    true or false; replicates space-separated numbers. The message names ``where``, the column, the
    row (1 = the first row after the header) and the value. ``measure_columns`` are a wide table's
    measure columns, checked as values of those measures.
    """
    out = table.copy()
    value_present = None
    if "value" in out:
        out["value"] = _numbers(out["value"], "value", where)
        value_present = out["value"].notna()
    for column, (low, high, whole, needed) in NUMBER_COLUMNS.items():
        if column not in out or column == "value":
            continue
        numbers = _numbers(out[column], column, where)
        _in_range(numbers, column, where, low, high, whole)
        if needed and value_present is not None:
            lacking = numbers.isna() & value_present
            if lacking.any():
                row = int(lacking.to_numpy().nonzero()[0][0])
                raise TableError(f"{where}: column {column}, row {row + 1}: empty, but the row has a value; "
                                 f"give the {column.replace('_', ' ')}")
        out[column] = numbers
    if "value" in out and "measure" in out:
        measure = name_text(out["measure"]).str.strip().str.lower()
        for name in all_measures():
            low, high = measure_range(name)
            part = out["value"].where(measure == name)
            _in_range(part, "value", where, low, high, False, f" for {name}")
    for name in measure_columns:
        numbers = _numbers(out[name], name, where)
        _in_range(numbers, name, where, *measure_range(name), False)
        out[name] = numbers
    for column in BOOLEAN_COLUMNS:
        if column in out:
            out[column] = _booleans(out[column], column, where)
    for column in TEXT_COLUMNS:
        if column in out:
            values = out[column]
            if values.dtype == object and values.map(type).isin([str]).all():
                continue  # text as read from a CSV: nothing to convert
            out[column] = values.map(lambda v: None if v is None or (isinstance(v, float) and v != v) else str(v))
    if "replicates" in out:
        _check_replicates(out["replicates"], where)
    if "ladder" in out:
        _check_ladder(out["ladder"], where)
    return out


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _numbers(column: pd.Series, name: str, where: str) -> pd.Series:
    """A column as floats; a cell that is neither empty nor a finite number is a TableError."""
    if pd.api.types.is_bool_dtype(column):
        bad = np.ones(len(column), dtype=bool)
        numbers = column
    elif pd.api.types.is_numeric_dtype(column):
        numbers = column.astype(float)
        bad = np.isinf(numbers.to_numpy())
    else:
        numbers = _to_floats(column)
        text = column.astype(str).str.strip().str.lower()
        empty = column.isna().to_numpy() | text.isin(_MISSING_LOWER).to_numpy()
        bad = (numbers.isna().to_numpy() & ~empty) | np.isinf(numbers.to_numpy())
    if not bad.any():
        return numbers
    row = int(bad.nonzero()[0][0])
    value = column.iloc[row]
    what = "is not finite" if _looks_infinite(value) else "is not a number"
    raise TableError(f"{where}: column {name}, row {row + 1}: {_show(value)} {what}")


def _to_floats(column: pd.Series) -> pd.Series:
    """Numbers of a text column as floats, NaN where a cell is no number (an integer of 400 digits is inf)."""
    try:
        return pd.to_numeric(column, errors="coerce").astype(float)
    except (OverflowError, ValueError, TypeError):
        return column.map(_one_float).astype(float)


def _one_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
    except OverflowError:
        return math.inf


def _looks_infinite(value: Any) -> bool:
    try:
        return math.isinf(float(value))
    except (TypeError, ValueError, OverflowError):
        return False


def _in_range(numbers: pd.Series, name: str, where: str, low: float, high: float, whole: bool,
              which: str = "") -> None:
    values = numbers.to_numpy(dtype=float, na_value=math.nan)
    with np.errstate(invalid="ignore"):
        bad = (values < low) | (values > high)
        if whole:
            bad |= np.isfinite(values) & (values != np.floor(values))
    if bad.any():
        row = int(bad.nonzero()[0][0])
        kind = "a whole number " if whole else ""
        span = (f"from {_bound(low)} to {_bound(high)}" if math.isfinite(low) and math.isfinite(high)
                else f"at least {_bound(low)}" if math.isfinite(low) else f"at most {_bound(high)}")
        raise TableError(f"{where}: column {name}, row {row + 1}: {values[row]:g} is out of range{which} "
                         f"(must be {kind}{span})")


def _bound(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def _booleans(column: pd.Series, name: str, where: str) -> pd.Series:
    """A true/false column (True, False, 1, 0, yes, no or empty), or a TableError for another value."""
    if pd.api.types.is_bool_dtype(column):
        return column.astype(object)
    text = column.astype(str).str.strip().str.lower()
    empty = column.isna() | text.isin(_MISSING_LOWER)
    true, false = text.isin(_TRUE), text.isin(_FALSE)
    bad = ~(empty | true | false)
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise TableError(f"{where}: column {name}, row {row + 1}: {_show(column.iloc[row])} is not True or False")
    return pd.Series(np.where(empty, None, true.to_numpy()), index=column.index, dtype=object)


def _check_replicates(column: pd.Series, where: str) -> None:
    """Each cell empty or finite numbers separated by spaces (what simcore.matrix.rows.encode_replicates writes).

    Checked for the whole column at once (characters, then one parse of every number); only when
    that fails is the first bad cell looked for, to name it.
    """
    text = column.dropna().astype(str)
    plain = text.str.fullmatch(r"[-+0-9.eE \t]*")  # no nan, inf or other words
    widths = text.str.count(r"[^ \t]+") if plain.all() else None
    if widths is not None and (widths.empty or widths.max() == 0):
        return
    if widths is not None and widths.max() > MAX_REPLICATES:
        row = int(column.index.get_loc(widths.idxmax()))
        raise TableError(f"{where}: column replicates, row {row + 1}: {int(widths.max()):,} replicates in one cell, "
                         f"more than the {MAX_REPLICATES:,} simcore reads (a bootstrap draws a few hundred)")
    if widths is not None:
        try:  # pandas' C parser reads the numbers of every cell at once; shorter rows are padded with NaN
            numbers = pd.read_csv(io.StringIO("\n".join(text)), sep=r"\s+", header=None,
                                  names=range(int(widths.max())), dtype=float).to_numpy()
            if not np.isinf(numbers).any() and np.isfinite(numbers).sum() == int(widths.sum()):
                return
        except (ValueError, OverflowError, pd.errors.ParserError, pd.errors.EmptyDataError):
            pass
    for label, cell in text.items():
        try:
            ok = all(math.isfinite(float(v)) for v in cell.split())
        except (ValueError, OverflowError):
            ok = False
        if not ok:
            row = int(column.index.get_loc(label))
            raise TableError(f"{where}: column replicates, row {row + 1}: {_show(cell)} is not a list of "
                             "finite numbers separated by spaces")


def _check_ladder(column: pd.Series, where: str) -> None:
    """Each cell empty or what simcore.matrix.rows writes: a JSON object from a sample size in tokens to
    {"value": a finite number, "replicates": numbers separated by spaces, or null}.

    The replicates of every cell are checked together, in one parse (one per cell took a second or more
    on a matrix of 270 values, each time a workspace was opened); only when that fails is each cell's
    checked, to name the first bad one."""

    def refuse(label: Any, cell: Any) -> TableError:
        row = int(column.index.get_loc(label))
        return TableError(f"{where}: column ladder, row {row + 1}: {_show(cell)} is not a sample size ladder "
                          '(a JSON object such as {"10000": {"value": 1.5, "replicates": "1.4 1.6"}})')

    replicates: dict[Any, tuple[Any, list[str]]] = {}
    for label, cell in column.dropna().items():
        if not str(cell).strip():
            continue
        try:
            data = json.loads(cell)
            ok = isinstance(data, dict) and all(
                size.isdigit() and int(size) > 0 and isinstance(entry, dict)
                and isinstance(entry.get("value"), (int, float)) and not isinstance(entry.get("value"), bool)
                and math.isfinite(entry["value"])
                and (entry.get("replicates") is None or isinstance(entry["replicates"], str))
                for size, entry in data.items())
        except RecursionError:
            row = int(column.index.get_loc(label))
            raise TableError(f"{where}: column ladder, row {row + 1}: the JSON is nested too deeply to be a sample "
                             "size ladder") from None
        except (ValueError, TypeError, OverflowError):
            ok = False
        if not ok:
            raise refuse(label, cell)
        replicates[label] = (cell, [e["replicates"] for e in data.values() if e.get("replicates")])
    try:
        _check_replicates(pd.Series([r for _, rs in replicates.values() for r in rs], dtype=object), where)
        return
    except TableError:
        pass
    for label, (cell, cells) in replicates.items():
        try:
            _check_replicates(pd.Series(cells, dtype=object), where)
        except TableError as exc:
            if "more than the" in str(exc):  # too many replicates: said as such, not as a malformed ladder
                row = int(column.index.get_loc(label))
                raise TableError(f"{where}: column ladder, row {row + 1}: "
                                 f"{str(exc).partition('row 1: ')[2]}") from None
            raise refuse(label, cell) from None


def _without_duplicates(long: pd.DataFrame, where: str) -> pd.DataFrame:
    """Rows repeating a (source, target, measure): kept once when their values agree, else a TableError."""
    key = ["source", "target", "measure"]
    repeated = long.duplicated(key, keep=False)
    if not repeated.any():
        return long
    part = long[repeated]
    spread = part.groupby(key, sort=False)["value"].agg(lambda v: v.nunique(dropna=False))
    conflicting = spread[spread > 1]
    if len(conflicting):
        source, target, measure = conflicting.index[0]
        rows = part[(part["source"] == source) & (part["target"] == target) & (part["measure"] == measure)]
        numbers = [int(i) for i in rows["_row"].iloc[:2]]
        values = ", ".join(f"{v:g}" for v in rows["value"].iloc[:2])
        raise TableError(f"{where}: rows {numbers[0]} and {numbers[1]} give source {_show(source)}, target "
                         f"{_show(target)}, measure {measure} two different values ({values}); keep one")
    kept = long.drop_duplicates(key, keep="first").copy()
    kept.attrs["dropped_duplicates"] = int(len(long) - len(kept))
    return kept


def checked_long(long: Any) -> pd.DataFrame:
    """A long matrix given to an analysis, checked and with clean types (names text, values numbers)."""
    frame = as_frame(long, "the similarity matrix")
    missing = [c for c in LONG if c not in frame.columns]
    if missing:
        raise TableError(f"the similarity matrix lacks column(s) {', '.join(missing)}; read it with read_matrix")
    if frame.columns.duplicated().any():
        raise TableError("the similarity matrix has two columns with the same name")
    if frame.empty:
        raise TableError("the similarity matrix has no rows; compute a matrix first")
    out = frame.copy()
    for column in ("source", "target"):
        out[column] = name_text(out[column])
    out["measure"] = name_text(out["measure"]).str.strip().str.lower()
    out["value"] = pd.to_numeric(out["value"], errors="coerce")
    computed = _directions(out["measure"])
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
                           low_memory=False,  # one pass over each column: no DtypeWarning on a mixed column
                           na_values={c: _MISSING for c in columns if c not in names})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError, OverflowError) as exc:
        raise SimcoreError(f"{path} is not a readable CSV table ({_first_line(exc)})") from None
    except OSError as exc:
        raise SimcoreError(f"cannot read {path} ({exc.strerror or exc})") from None


def read_matrix(path: Path | str) -> pd.DataFrame:
    """Read a matrix CSV written by ``simcore matrix`` (or a wide table of measures), every column checked."""
    long = to_long(read_csv_table(path), where=str(path))
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


def as_frame(table: Any, what: str) -> pd.DataFrame:
    """``table`` when it is a DataFrame, else an InvalidArgument naming ``what`` and how to read one."""
    if not isinstance(table, pd.DataFrame):
        raise InvalidArgument(f"{what} must be a pandas DataFrame, not {type(table).__name__}; "
                              "read one with simcore.analysis.read_matrix or read_results")
    return table


def _directions(measures: pd.Series) -> pd.Series:
    """Each row's measure direction (+1 higher is more similar, -1 lower, 0 neither or unknown)."""
    known = set(all_measures())
    direction = {m: get_measure(m).direction if m in known else 0 for m in measures.unique()}
    return measures.map(direction).astype(int)


def name_text(column: pd.Series) -> pd.Series:
    """Names as text: missing values become blank names, numbers their text (1.0 stays '1.0')."""
    return column.map(lambda v: "" if v is None or (isinstance(v, float) and v != v) else str(v)).astype(object)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
