"""What the Sentence selection page shows, computed with bounded memory from stored scores.

The score distribution as a histogram, examples of kept and dropped sentences (their texts read
back by streaming the pool once), and the selection files, stored so a download is built once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..corpora.corpus import Corpus
from ..utils.store import ArtefactStore, digest
from .choosing import CHUNK, Cutoff, ScoreSet, kept_mask
from .output import write_selection
from .pool import pool_units, unit_text


def score_histogram(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool, bins: int = 40) -> pd.DataFrame:
    """Counts of kept and dropped units per score bin: columns low, high, kept, count."""
    values = scores.scores()
    low, high = np.inf, -np.inf
    for start in range(0, scores.n, CHUNK):
        part = np.asarray(values[start:start + CHUNK])
        part = part[np.isfinite(part)]
        if part.size:
            low, high = min(low, float(part.min())), max(high, float(part.max()))
    if not np.isfinite(low):
        return pd.DataFrame(columns=["low", "high", "kept", "count"])
    if high == low:
        high = low + 1.0
    edges = np.linspace(low, high, bins + 1)
    counts = {True: np.zeros(bins, dtype=np.int64), False: np.zeros(bins, dtype=np.int64)}
    for start in range(0, scores.n, CHUNK):
        stop = min(start + CHUNK, scores.n)
        part = np.asarray(values[start:stop])
        kept = kept_mask(scores, cutoff, keep_duplicates, start, stop)
        finite = np.isfinite(part)
        which = np.clip(np.searchsorted(edges, part[finite], side="right") - 1, 0, bins - 1)
        for flag in (True, False):
            counts[flag] += np.bincount(which[kept[finite] == flag], minlength=bins)
    rows = [{"low": edges[i], "high": edges[i + 1], "kept": "kept" if flag else "dropped", "count": int(counts[flag][i])}
            for flag in (True, False) for i in range(bins)]
    return pd.DataFrame(rows)


KEPT_GROUPS = ("best kept", "last kept")  # example groups drawn from the kept units (the others from the dropped)


def example_indices(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool, n: int = 8) -> dict[str, list[int]]:
    """Indices of the best kept, the last kept, the first dropped and the worst scored units."""
    sign = -1.0 if scores.higher_kept else 1.0
    best: list[tuple[float, int]] = []
    worst: list[tuple[float, int]] = []
    near_kept: list[tuple[float, int]] = []
    near_dropped: list[tuple[float, int]] = []
    values = scores.scores()
    for start in range(0, scores.n, CHUNK):
        stop = min(start + CHUNK, scores.n)
        keys = sign * np.asarray(values[start:stop])
        kept = kept_mask(scores, cutoff, keep_duplicates, start, stop)
        finite = np.isfinite(keys)
        index = np.arange(start, stop)
        for pool, mask, take_low in ((best, kept, True), (near_kept, kept, False),
                                     (near_dropped, finite & ~kept, True), (worst, finite & ~kept, False)):
            order = np.argsort(keys[mask] if take_low else -keys[mask], kind="stable")[:n]
            pool.extend(zip(keys[mask][order].tolist(), index[mask][order].tolist()))
    pick = {
        "best kept": sorted(best)[:n],
        "last kept": sorted(near_kept, reverse=True)[:n],
        "first dropped": sorted(near_dropped)[:n],
        "worst": sorted(worst, reverse=True)[:n],
    }
    return {name: [i for _, i in pairs] for name, pairs in pick.items()}


def texts_at(pool: Corpus, indices: set[int] | list[int]) -> dict[int, str]:
    """The original text of the pool units at ``indices`` (one streaming pass)."""
    wanted = set(int(i) for i in indices)
    found: dict[int, str] = {}
    if not wanted:
        return found
    last = max(wanted)
    for i, unit in enumerate(pool_units(pool)):
        if i in wanted:
            found[i] = unit_text(unit)
        if i >= last:
            break
    return found


def examples_table(pool: Corpus, scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool, n: int = 8) -> pd.DataFrame:
    """Rows (group, index, score, duplicate_of_target, tokens, left_out, text) for the page's example tables.

    ``left_out`` says why a unit was not kept: a duplicate of the target, under the minimum length, or
    its score (empty for kept units): the first dropped are often the best scored of the first two kinds.
    """
    groups = example_indices(scores, cutoff, keep_duplicates, n)
    texts = texts_at(pool, {i for ids in groups.values() for i in ids})
    values, dups = scores.scores(), scores.duplicates()
    lengths = scores.lengths() if cutoff.min_tokens > 1 else None
    rows = []
    for group, ids in groups.items():
        for i in ids:
            tokens = int(lengths[i]) if lengths is not None else None
            why = "" if group in KEPT_GROUPS else _left_out(bool(dups[i]) and not keep_duplicates, tokens, cutoff)
            rows.append({"group": group, "index": i, "score": float(values[i]), "duplicate_of_target": bool(dups[i]),
                         "tokens": tokens, "left_out": why, "text": texts.get(i, "")})
    return pd.DataFrame(rows, columns=["group", "index", "score", "duplicate_of_target", "tokens", "left_out", "text"])


def _left_out(duplicate: bool, tokens: int | None, cutoff: Cutoff) -> str:
    """Why a scored unit was not kept: a duplicate of the target, shorter than the minimum, or its score."""
    if duplicate:
        return "duplicate of the target"
    if tokens is not None and tokens < cutoff.min_tokens:
        return f"under {cutoff.min_tokens:,} tokens"
    return "score"


def selection_files(pool: Corpus, scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool,
                    store: ArtefactStore, progress: Any = None) -> tuple[Path, Path]:
    """(SELECTED.txt.gz, SCORES.csv) for this selection, written once into the store."""
    key = digest("selection-output", scores.path.name, cutoff.key, cutoff.index, cutoff.n_kept, keep_duplicates,
                 cutoff.min_tokens)

    def build(out: Path) -> dict[str, Any]:
        kwargs = {"progress": progress} if progress else {}
        write_selection(pool, scores, cutoff, out / "SELECTED.txt.gz", out / "SCORES.csv", keep_duplicates, **kwargs)
        return {"n_kept": cutoff.n_kept}

    path = store.build("selection-output", key, build)
    return path / "SELECTED.txt.gz", path / "SCORES.csv"
