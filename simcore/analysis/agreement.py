"""Agreement between measures on pairwise comparisons (Dai et al. 2019, section 7.1).

For each target and each unordered pair of sources taken in alphabetical order, each measure
answers "is the first source more similar?". Fleiss' kappa is taken across measures over all
these items; Cohen's kappa for each pair of measures.

An item resting on a cell computed below the size at which its measure is reliable (the matrix's
``reliable`` column) is left out unless asked for: one noisy value would otherwise count as a
measure's firm answer. The result says how many items and cells were left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from ..answer.flags import unreliable
from ..utils.errors import InvalidArgument, SimcoreError
from .tables import checked_long, measures_in


def comparisons(long: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """One row per (target, first source, second source), a boolean column per measure.

    A source takes part for a target when it has a value under one of ``measures`` there; an
    answer is None where either source lacks a value. Each target's pairs are compared at once
    (numpy over the pairs): one lookup per cell took most of the Ranking page's first open.
    """
    return _compared(checked_long(long), measures)


def _compared(long: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """:func:`comparisons` of a matrix already checked (checked_long)."""
    part = long[long["measure"].isin(measures)]
    names = list(dict.fromkeys(measures))  # a measure named twice gives the same column twice
    # the first value of each cell, as a pivot of each target would take it; cells without one go
    cells = part.groupby(["target", "source", "measure"], sort=True)["value"].first().dropna()
    directions = part.groupby(["target", "measure"], sort=True)["direction"].first()
    targets, firsts, seconds = [], [], []
    answers: list[list[np.ndarray]] = [[] for _ in names]
    columns = pd.Index(names)
    for target, group in cells.groupby(level="target", sort=True):
        sources = sorted(group.index.unique(level="source"))
        if len(sources) < 2:
            continue
        values = np.full((len(sources), len(names)), np.nan)
        values[pd.Index(sources).get_indexer(group.index.get_level_values("source")),
               columns.get_indexer(group.index.get_level_values("measure"))] = group.to_numpy(float)
        signs = directions.loc[target]
        sign = np.zeros(len(names), dtype=np.int64)
        present = columns.get_indexer(signs.index)
        sign[present[present >= 0]] = signs.to_numpy()[present >= 0]
        first, second = np.triu_indices(len(sources), 1)  # the order of combinations(sources, 2)
        a, b = values[first], values[second]
        with np.errstate(invalid="ignore"):  # inf * 0 compares False, as one value at a time did
            more = a * sign > b * sign
        known = ~np.isnan(a) & ~np.isnan(b)
        for k in range(len(names)):
            answers[k].append(np.where(known[:, k], more[:, k], None))
        targets += [target] * len(first)
        firsts += [sources[i] for i in first]
        seconds += [sources[j] for j in second]
    header = ["target", "first", "second", *measures]
    if not targets:
        return pd.DataFrame([], columns=header)
    data: dict[str, list[object]] = {"target": targets, "first": firsts, "second": seconds}
    for name, parts in zip(names, answers):
        data[name] = np.concatenate(parts).tolist()  # True/False/None: a bool column when no None
    frame = pd.DataFrame(data, columns=["target", "first", "second", *names])
    return frame if len(names) == len(measures) else frame[header]


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa of an items × categories table of rater counts (equal raters per item)."""
    try:
        counts = np.asarray(counts, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument("Fleiss' kappa needs a table of counts (items × categories) of numbers") from None
    if counts.ndim != 2 or not np.isfinite(counts).all() or (counts < 0).any():
        raise InvalidArgument("Fleiss' kappa needs a 2-D table of non-negative counts (items × categories)")
    n_items = counts.shape[0]
    raters = counts.sum(axis=1)
    if n_items == 0 or not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise SimcoreError("Fleiss' kappa needs at least one item and the same number (≥ 2) of raters per item")
    n = raters[0]
    p_items = ((counts * (counts - 1)).sum(axis=1)) / (n * (n - 1))
    p_bar = p_items.mean()
    p_cat = counts.sum(axis=0) / (n_items * n)
    p_e = (p_cat ** 2).sum()
    return float("nan") if p_e == 1 else float((p_bar - p_e) / (1 - p_e))


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two raters' boolean answers."""
    try:
        a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    except (TypeError, ValueError):
        raise InvalidArgument("Cohen's kappa needs two lists of yes/no answers") from None
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise InvalidArgument("Cohen's kappa needs two non-empty lists of answers of the same length")
    observed = float(np.mean(a == b))
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return float("nan") if expected == 1 else (observed - expected) / (1 - expected)


@dataclass
class AgreementResult:
    measures: list[str]
    fleiss: float
    cohen: pd.DataFrame
    items: pd.DataFrame
    left_out: int = 0  # comparisons left out because one of their cells is unreliable
    unreliable_cells: int = 0  # cells of the chosen measures marked unreliable in the matrix
    included_unreliable: bool = False
    dropped: list[str] = field(default_factory=list)  # measures unreliable for every cell, left out whole

    @property
    def left_out_note(self) -> str:
        """One line on what the kappa leaves out ('' when nothing)."""
        if self.dropped:
            gone = ", ".join(self.dropped)
            rest = f"; {self.left_out} further comparison(s) left out" if self.left_out else ""
            return (f"{gone} left out: every one of its values was computed below the size at which it is "
                    f"reliable (kappa over {', '.join(self.measures)}){rest}")
        if not self.unreliable_cells:
            return ""
        if self.included_unreliable:
            return (f"{self.unreliable_cells} unreliable cell(s) are included: values computed below the size at "
                    "which their measure is reliable count like the others")
        return (f"{self.left_out} comparison(s) left out: they rest on one of {self.unreliable_cells} cell(s) "
                "computed below the size at which their measure is reliable")

    @property
    def disagreements(self) -> pd.DataFrame:
        """The items on which the measures' answers differ (each measure answers True or False)."""
        answers = self.items[self.measures]
        cells = answers.to_numpy()
        if cells.dtype == bool or all(isinstance(v, (bool, np.bool_)) for v in cells.ravel().tolist()):
            yes = cells.astype(bool)
            differ = yes.any(axis=1) & ~yes.all(axis=1)  # nunique(axis=1) > 1, not row by row
        else:
            differ = (answers.nunique(axis=1) > 1).to_numpy()
        return self.items[differ].reset_index(drop=True)


def unreliable_pairs(long: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """(target, source) pairs with an unreliable cell under one of ``measures``, and how many such cells."""
    part = long[long["measure"].isin(measures)]
    bad = part[unreliable(part).to_numpy()]
    return bad.groupby(["target", "source"], as_index=False).size()


def _describe(long: pd.DataFrame, measures: list[str]) -> str:
    """'wvv: 3 sources (news, tweets, …)' for each measure with unreliable cells."""
    part = long[long["measure"].isin(measures)]
    bad = part[unreliable(part).to_numpy()]
    out = []
    for measure, group in bad.groupby("measure", sort=False):
        names = sorted(group["source"].unique())
        out.append(f"{measure}: {len(names)} source(s) ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
    return "; ".join(out)


def agreement(long: pd.DataFrame, measures: list[str] | None = None,
              include_unreliable: bool = False) -> AgreementResult:
    """Fleiss' kappa across measures, Cohen's kappa per pair, and the comparison items.

    Comparisons involving a cell marked unreliable are left out unless ``include_unreliable``;
    ``left_out`` and ``unreliable_cells`` of the result count them.
    """
    if not isinstance(include_unreliable, (bool, np.bool_)):
        raise InvalidArgument("include_unreliable must be True or False")
    long = checked_long(long)
    names = measures_in(long, measures)
    if len(names) < 2:
        raise SimcoreError("agreement needs at least two similarity measures")
    dropped = []
    if not include_unreliable:
        part = long[long["measure"].isin(names)]
        all_bad = unreliable(part).groupby(part["measure"]).all()
        dropped = [n for n in names if all_bad.get(n, False)]
        if dropped and len(names) - len(dropped) >= 2:
            names = [n for n in names if n not in dropped]
        else:
            dropped = []
    items = _compared(long, names)  # long is checked above
    complete = items.dropna(subset=names)
    if complete.empty:
        raise SimcoreError("no comparison has values for every chosen measure")
    bad = unreliable_pairs(long, names)
    cells, left_out = int(bad["size"].sum()) if len(bad) else 0, 0
    if cells and not include_unreliable:
        pairs = set(zip(bad["target"], bad["source"]))
        rests = np.array([(t, a) in pairs or (t, b) in pairs
                          for t, a, b in zip(complete["target"], complete["first"], complete["second"])], dtype=bool)
        left_out = int(rests.sum())
        if rests.all():
            raise SimcoreError(
                f"every one of the {len(complete)} comparisons rests on a value computed below the size at which "
                f"its measure is reliable ({_describe(long, names)}); compare larger sources, leave such a measure out, "
                "or include the unreliable values (include_unreliable=True; --include-unreliable on the command line)")
        complete = complete[~rests]
    answers = complete[names].astype(bool).to_numpy()
    yes = answers.sum(axis=1)
    fleiss = fleiss_kappa(np.column_stack([yes, len(names) - yes]))
    cohen = pd.DataFrame(
        [{"measure_a": x, "measure_b": y, "kappa": cohen_kappa(complete[x].astype(bool), complete[y].astype(bool))}
         for x, y in combinations(names, 2)]
    )
    return AgreementResult(names, fleiss, cohen, complete.reset_index(drop=True), left_out=left_out,
                           unreliable_cells=cells, included_unreliable=bool(include_unreliable and cells),
                           dropped=dropped)
