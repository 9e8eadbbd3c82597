"""Sources compared in pairs, for one target: the long table's rows as arrays, each measure's values
at every size the sources were sampled at, and the outcome of every pair in every bootstrap replicate.

Each pair of sources is compared at the largest sample size both have (the table's size or a rung of
the ladder, :mod:`simcore.matrix.ladder`), so that no comparison mixes sizes. :mod:`simcore.answer.recommendation`
turns the outcomes into the answer.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..measures.lookup import get_measure

_NUMERIC = ("value", "std", "sample_tokens", "source_tokens")


def _text(column: pd.Series) -> np.ndarray:
    """A column as Python strings, a missing value included ('nan'): pandas' string dtype keeps it a float."""
    return np.array([str(v) for v in column.tolist()], dtype=object)


class TargetRows:
    """One target's rows of the long table as plain arrays (pandas per target is too slow for
    10,000 targets): numeric columns converted once, text columns as objects."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        self.columns = columns
        self.source = columns["source"]
        self.measure = columns["measure"]
        self.sources = sorted(set(self.source.tolist()))
        self.measures = list(dict.fromkeys(self.measure.tolist()))
        self._index: dict[str, dict[str, int]] | None = None

    @classmethod
    def split(cls, long: pd.DataFrame) -> list[tuple[str, TargetRows]]:
        columns = {c: long[c].to_numpy(dtype=object) for c in long.columns}
        for c in _NUMERIC:
            if c in long:
                columns[c] = pd.to_numeric(long[c], errors="coerce").to_numpy(float)
        columns["source"] = _text(long["source"])
        columns["measure"] = _text(long["measure"])
        targets = _text(long["target"])
        order = np.argsort(targets, kind="stable")
        names, starts = np.unique(targets[order], return_index=True)
        bounds = list(starts) + [len(order)]
        return [(str(name), cls({c: v[order[bounds[k]:bounds[k + 1]]] for c, v in columns.items()}))
                for k, name in enumerate(names)]

    def has(self, column: str) -> bool:
        return column in self.columns

    def rows(self, measure: str, sources: list[str]) -> np.ndarray:
        """Row index of each source's (first) row for ``measure``; -1 where it has none."""
        if self._index is None:
            self._index = {}
            for i, (m, s) in enumerate(zip(self.measure.tolist(), self.source.tolist())):
                self._index.setdefault(m, {}).setdefault(s, i)
        first = self._index.get(measure, {})
        return np.array([first.get(s, -1) for s in sources], dtype=np.int64)

    def take(self, column: str, rows: np.ndarray) -> np.ndarray:
        """A column at ``rows`` (NaN or None where a row is -1)."""
        values = self.columns[column]
        if values.dtype == float:
            return np.where(rows >= 0, values[np.maximum(rows, 0)], np.nan)
        return np.array([values[r] if r >= 0 else None for r in rows], dtype=object)


@dataclass
class MeasureCells:
    """One carrying measure's values for one target, at every size the sources were sampled at."""

    name: str
    direction: int
    points: np.ndarray  # (sources,) the table's values
    at: dict[int, tuple[np.ndarray, np.ndarray | None]]  # size -> (points (sources,), replicates (R, sources))
    main: list[int | None]  # each source's table size
    settled: np.ndarray  # (sources,) the table cell is at or above the size where rankings settled
    replicated: bool


def measure_cells(part: TargetRows, name: str, sources: list[str]) -> MeasureCells | str:
    """One measure's values over the sources, or why it cannot carry the recommendation."""
    from ..matrix.rows import decode_replicates

    spec = get_measure(name)
    rows = part.rows(name, sources)
    values = part.take("value", rows)
    reliable = part.take("reliable", rows) if part.has("reliable") else np.array([None] * len(sources))
    unreliable = np.array([is_false(r) for r in reliable], dtype=bool)
    tokens = part.take("sample_tokens", rows) if part.has("sample_tokens") else np.full(len(sources), np.nan)
    if spec.noise_when_small and unreliable.any():
        used = int(np.nanmin(tokens)) if np.isfinite(tokens).any() else 0
        return (f"{spec.label} left out: unreliable below {spec.reliable_tokens:,} tokens per source "
                f"({used:,} used)")
    if not np.isfinite(values).any():
        errors = [e for e in part.take("error", rows) if isinstance(e, str) and e] if part.has("error") else []
        return f"{spec.label} has no values" + (f" ({errors[0]})" if errors else "")
    n = len(sources)
    main = [int(t) if math.isfinite(t) else None for t in tokens]
    samples = ([decode_replicates(r) for r in part.take("replicates", rows)] if part.has("replicates")
               else [None] * n)
    if not any(s is not None for s in samples) and part.has("std"):
        samples = _from_std(values, part.take("std", rows))
    ladders = part.take("ladder", rows) if part.has("ladder") else [None] * n
    entries: dict[int, list[tuple[float, np.ndarray | None]]] = {}
    for i in range(n):
        entries.setdefault(main[i] if main[i] is not None else -1, [(math.nan, None)] * n)[i] = (values[i], samples[i])
        for size, (value, reps) in parse_ladder(ladders[i]).items():
            entries.setdefault(size, [(math.nan, None)] * n)[i] = (value, reps)
    present = [r for col in entries.values() for _, r in col if r is not None]
    count = min(len(r) for r in present) if present else 0
    at = {}
    for size, col in entries.items():
        points = np.array([v for v, _ in col], dtype=float)
        reps = (np.column_stack([r[:count] if r is not None else np.full(count, v) for v, r in col])
                if count else None)
        at[size] = (points, reps)
    settled = np.array([t is None or t >= spec.reliable_tokens for t in main]) & ~unreliable
    return MeasureCells(name, spec.direction, values, at, main, settled, bool(count))


def parse_ladder(text: Any) -> dict[int, tuple[float, np.ndarray | None]]:
    """A row's ``ladder`` cell: size -> (value, replicates); {} when empty or unreadable."""
    from ..matrix.rows import decode_replicates

    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    out = {}
    if isinstance(data, dict):
        for size, cell in data.items():
            try:
                value = float(cell["value"])
                out[int(size)] = (value, decode_replicates(cell.get("replicates")))
            except (TypeError, ValueError, KeyError):
                continue
    return out


def is_false(value: Any) -> bool:
    return str(value).strip().lower() == "false"


def is_true(value: Any) -> bool:
    return str(value).strip().lower() == "true"


STD_SEED, STD_DRAWS = 13, 200  # the normal replicates drawn from a table's std (the same for every cell)


def _from_std(values: np.ndarray, std: np.ndarray) -> list[np.ndarray | None]:
    """Normal replicates from the spread over source samples, for tables without bootstrap replicates."""
    rng = np.random.default_rng(STD_SEED)
    return [rng.normal(v, s, STD_DRAWS) if math.isfinite(s) and s > 0 else None for v, s in zip(values, std)]


def std_replicates(values: np.ndarray, std: np.ndarray) -> np.ndarray:
    """What :func:`_from_std` draws, for many targets at once: values and std (..., sources) ->
    replicates (..., STD_DRAWS, sources), a source without a usable std at its value throughout.

    The draws are the same numbers: ``rng.normal(v, s, k)`` is ``v + s * z`` for the generator's next
    ``k`` standard normals, and ``_from_std`` starts a fresh generator for every cell, so the k-th source
    with a usable std always gets the k-th row of one fixed matrix of standard normals.
    """
    usable = np.isfinite(std) & (std > 0)
    z = np.random.default_rng(STD_SEED).standard_normal((values.shape[-1], STD_DRAWS))
    slot = np.maximum(np.cumsum(usable, axis=-1) - 1, 0)
    with np.errstate(invalid="ignore"):
        drawn = values[..., None] + std[..., None] * z[slot]  # (..., sources, draws)
    return np.swapaxes(np.where(usable[..., None], drawn, values[..., None]), -1, -2)


def ranks(values: np.ndarray, direction: int) -> np.ndarray:
    """Ranks along the last axis (1 = most similar; ties share the mean rank, as scipy's rankdata
    'average'; missing values last)."""
    key = np.where(np.isfinite(values), -direction * values, np.inf)
    a, b = key[..., :, None], key[..., None, :]
    return 1 + (b < a).sum(axis=-1) + 0.5 * ((b == a).sum(axis=-1) - 1)


@dataclass
class Pairs:
    """Pairwise outcomes of one measure: outcome[r, i, j] = 1 when source i beats j in replicate r
    (0.5 for a tie or an unfair comparison), at ``size[i, j]`` tokens (-1: size not recorded in the
    table; ``NO_COMMON``: the two were never sampled at one size)."""

    points: np.ndarray  # (sources, sources)
    replicates: np.ndarray | None  # (R, sources, sources)
    size: np.ndarray  # (sources, sources)


NO_COMMON = -2


def compare(values: np.ndarray, direction: int) -> np.ndarray:
    """outcome[..., i, j] for values (..., sources): 1 better, 0.5 equal (or both missing), 0 worse."""
    a, b = values[..., :, None], values[..., None, :]
    finite = np.isfinite(values)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, or two huge values apart
        diff = direction * (a - b)
    # 0.5 + 0.5 * sign: 1, 0.5 or 0 exactly, in fewer passes than nested wheres (replicates x pairs)
    if direction == 0:  # neither way is better (0 * an overflowed difference is NaN: equal too)
        won = np.full(diff.shape, 0.5)
    else:
        won = np.sign(diff)
        won *= 0.5
        won += 0.5
    if finite.all():
        return won
    fa, fb = finite[..., :, None], finite[..., None, :]
    # a missing value loses to a present one; two missing ones are equal
    return np.where(fa & fb, won, 0.5 + 0.5 * (fa.astype(float) - fb))


def pairs_of(m: MeasureCells) -> Pairs:
    """Each pair of sources compared at the largest size both have."""
    n = len(m.points)
    sizes = sorted(m.at)
    present = np.stack([np.isfinite(m.at[z][0]) for z in sizes])  # (sizes, sources)
    common = present[:, :, None] & present[:, None, :]
    level = np.where(common.any(axis=0), (common * np.arange(1, len(sizes) + 1)[:, None, None]).max(axis=0) - 1, -1)
    size = np.where(level >= 0, np.array(sizes, dtype=np.int64)[np.maximum(level, 0)], NO_COMMON)
    np.fill_diagonal(size, NO_COMMON)
    points = np.full((n, n), 0.5)
    reps = None
    count = next((r.shape[0] for _, r in m.at.values() if r is not None), 0) if m.replicated else 0
    if count:
        reps = np.full((count, n, n), 0.5)
    for z, (p, r) in m.at.items():
        mask = size == z
        if not mask.any():
            continue
        points = np.where(mask, compare(p, m.direction), points)
        if reps is not None and r is not None:
            reps = np.where(mask, compare(r, m.direction), reps)
    np.fill_diagonal(points, 0.0)
    if reps is not None:
        reps[:, np.arange(n), np.arange(n)] = 0.0
    return Pairs(points, reps, size)


def first_shares(outcome: np.ndarray) -> np.ndarray:
    """Each source's share of the first place (Copeland count; a tie splits it), along the last axis."""
    score = outcome.sum(axis=-1)
    best = np.isclose(score, score.max(axis=-1, keepdims=True))
    return best / best.sum(axis=-1, keepdims=True)


def by_majority(outcomes: np.ndarray) -> np.ndarray:
    """Measures (first axis) combined per pair by majority, with the mean of the outcomes breaking
    ties between equal Copeland counts: with three measures one outlier cannot move a pair."""
    mean = outcomes.mean(axis=0)
    majority = np.where(mean > 0.5 + 1e-9, 1.0, np.where(mean < 0.5 - 1e-9, 0.0, 0.5))
    n = mean.shape[-1]
    majority[..., np.arange(n), np.arange(n)] = 0.0
    return majority + 1e-3 * mean
