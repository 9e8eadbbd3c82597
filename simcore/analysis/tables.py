"""Reading similarity tables: simcore's long matrix, or a wide table such as the paper's Table 3."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import SimcoreError
from ..measures import all_measures, get_measure

LONG = ["source", "target", "measure", "value"]


def to_long(table: pd.DataFrame) -> pd.DataFrame:
    """A long table (source, target, measure, value, direction, ...) from a long or wide one."""
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    missing = {"source", "target"} - set(table.columns)
    if missing:
        raise SimcoreError(f"the table needs columns source and target (missing: {', '.join(sorted(missing))})")
    if {"measure", "value"} <= set(table.columns):
        long = table.copy()
        long["measure"] = long["measure"].astype(str).str.lower()
    else:
        present = [m for m in all_measures() if m in table.columns]
        if not present:
            raise SimcoreError(
                "the table has neither measure/value columns nor any measure column "
                f"({', '.join(all_measures())})"
            )
        long = table.melt(id_vars=["source", "target"], value_vars=present, var_name="measure", value_name="value")
    long["source"] = long["source"].astype(str)
    long["target"] = long["target"].astype(str)
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    long["direction"] = [get_measure(m).direction if m in all_measures() else 0 for m in long["measure"]]
    return long.reset_index(drop=True)


def read_csv_table(path: Path | str) -> pd.DataFrame:
    """A CSV file as a table, or a SimcoreError saying why it cannot be read."""
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise SimcoreError(f"{path} does not exist") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SimcoreError(f"{path} is not a readable CSV table ({exc})") from None


def read_matrix(path: Path | str) -> pd.DataFrame:
    """Read a matrix CSV written by ``simcore matrix`` (or a wide table of measures)."""
    return to_long(read_csv_table(path))


def to_wide(long: pd.DataFrame) -> pd.DataFrame:
    """One row per (target, source), one column per measure."""
    return long.pivot_table(index=["target", "source"], columns="measure", values="value", aggfunc="first").reset_index()


def measures_in(long: pd.DataFrame, wanted: list[str] | None = None, similarity_only: bool = True) -> list[str]:
    present = list(dict.fromkeys(long["measure"]))
    if wanted:
        absent = [m for m in wanted if m not in present]
        if absent:
            raise SimcoreError(f"the table has no values for {', '.join(absent)} (it has {', '.join(present)})")
        present = wanted
    if similarity_only:
        present = [m for m in present if get_measure(m).direction != 0]
    return present
