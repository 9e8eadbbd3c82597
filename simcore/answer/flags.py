"""Which cells of a long matrix carry a warning, and why: the ``flag``, ``used_whole`` and ``reliable``
columns written by :class:`simcore.matrix.workbench.Workbench`, read the same way by the heatmaps, the ranking
grids, the HTML report and the agreement analysis.

A cell is *unreliable* when its ``reliable`` column says False (computed below the size at which the
measure's rankings settle); it is *flagged* when its ``flag`` text is not empty (for example a
source used whole, smaller than the size the others were compared at). A table without these
columns (the paper's Table 3, a hand-made matrix) has no marked cell.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

FALSE_TEXT = {"false", "0", "no"}
TRUE_TEXT = {"true", "1", "yes"}


def _says(column: pd.Series, words: set[str]) -> pd.Series:
    """True where a boolean-ish column (bool, 0/1, or its text read back from a CSV) is one of ``words``."""
    return column.map(lambda v: v is not None and v == v and str(v).strip().lower() in words).astype(bool)


def unreliable(long: pd.DataFrame) -> pd.Series:
    """True for cells whose ``reliable`` column is False; missing or unknown values count as reliable."""
    if "reliable" not in long:
        return pd.Series(False, index=long.index)
    return _says(long["reliable"], FALSE_TEXT)


def used_whole(long: pd.DataFrame) -> pd.Series:
    """True for cells whose source was used whole (smaller than the size the others were compared at)."""
    if "used_whole" not in long:
        return pd.Series(False, index=long.index)
    return _says(long["used_whole"], TRUE_TEXT)


def flag_text(long: pd.DataFrame) -> pd.Series:
    """The ``flag`` column as text ('' where there is none)."""
    if "flag" not in long:
        return pd.Series("", index=long.index, dtype=object)
    return long["flag"].map(lambda v: "" if v is None or v != v else str(v).strip()).astype(object)


def marked(long: pd.DataFrame) -> pd.Series:
    """True for cells a reader must not compare like the others: flagged or unreliable."""
    return (flag_text(long) != "") | unreliable(long) | used_whole(long)


def why(long: pd.DataFrame) -> pd.Series:
    """One line per cell saying why it is marked ('' for an unmarked cell)."""
    text = flag_text(long)
    bad, whole = unreliable(long), used_whole(long)
    out = []
    for note, is_bad, is_whole in zip(text, bad, whole):
        if note:
            out.append(note)
        elif is_bad:
            out.append("computed below the size at which this measure is reliable")
        elif is_whole:
            out.append("source used whole, smaller than the size the others were compared at")
        else:
            out.append("")
    return pd.Series(out, index=long.index, dtype=object)


def grids(part: pd.DataFrame, sources: list[str], targets: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """For one measure's rows: a sources × targets grid of marks (bool) and one of reasons (text)."""
    marks = np.zeros((len(sources), len(targets)), dtype=bool)
    reasons = np.full((len(sources), len(targets)), "", dtype=object)
    row = {s: i for i, s in enumerate(sources)}
    column = {t: j for j, t in enumerate(targets)}
    for source, target, mark, reason in zip(part["source"], part["target"], marked(part), why(part)):
        if source in row and target in column and mark:
            marks[row[source], column[target]] = True
            reasons[row[source], column[target]] = reason
    return marks, reasons


def out_of_scale(values: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """The marked cells left out of their column's colour scale: every marked cell of a column that
    also holds an unmarked value. A column of marked values only is shaded among them (they were
    taken on the same footing) and stays marked."""
    values = np.asarray(values, dtype=float)
    keep = ~marks & np.isfinite(values)
    return marks & keep.any(axis=0, keepdims=True)
