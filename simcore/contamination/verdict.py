"""What the answer says about a source that already holds the target's test sentences.

Every similarity measure rewards a source that contains target sentences, so a contaminated source
tends to win; pretraining on it inflates the test F1 a practitioner reports. Above a threshold (1%
of the test sentences by default; all sentences for a target without a test split) the answer's
reason says so first, and a "high" level becomes "moderate": the level never reads high for a
contaminated source without that sentence beside it. Kept apart from the levels' own wording
(:mod:`simcore.answer.recommendation`) so either can change alone.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pandas as pd

from ..utils.errors import InvalidArgument

OVERLAP_THRESHOLD = 0.01  # share of the test sentences a source may hold before the answer warns
HELD = "⚑ holds test text"  # the mark on a contaminated cell (heatmaps, report)
CONTAMINATED = "#b00020"  # its colour


def check_threshold(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidArgument(f"the overlap threshold must be a share from 0 to 1, not {value!r}"[:200])
    return float(value)


def overlaps(long: pd.DataFrame, target: str) -> dict[str, tuple[float, bool, str]]:
    """Per source of ``target``: (share held, whether it is of the test split, the n-gram in words)."""
    if "overlap_all" not in long.columns:
        return {}
    part = long[long["target"] == target]
    out: dict[str, tuple[float, bool, str]] = {}
    for source, rows in part.groupby("source", sort=False):
        test = (pd.to_numeric(rows["overlap_test"], errors="coerce").dropna() if "overlap_test" in rows
                else pd.Series(dtype=float))
        every = pd.to_numeric(rows["overlap_all"], errors="coerce").dropna()
        gram = rows["overlap_ngram"].dropna() if "overlap_ngram" in rows else pd.Series(dtype=object)
        n = str(gram.iloc[0]) if len(gram) else "13 words"
        if len(test):
            out[str(source)] = (float(test.iloc[0]), True, n)
        elif len(every):
            out[str(source)] = (float(every.iloc[0]), False, n)
    return out


def sentence(source: str, share: float, test: bool, ngram: str) -> str:
    """'nsmc_reviews holds 9.3% of your test sentences (13-word overlap): ...'."""
    count, unit = (ngram.split(" ", 1) + ["words"])[:2]
    gram = f"{count}-{unit.rstrip('s')}"
    which = "test sentences" if test else "sentences (the target has no test split)"
    return (f"{source} holds {share:.1%} of your {which} ({gram} overlap): pretraining on it would inflate your "
            f"test F1; decontaminate it first (`simcore decontaminate`)")


def contaminated(long: pd.DataFrame, target: str, threshold: float = OVERLAP_THRESHOLD) -> dict[str, str]:
    """The sources of ``target`` at or above the threshold, each with its sentence."""
    return {s: sentence(s, share, test, n) for s, (share, test, n) in overlaps(long, target).items()
            if math.isfinite(share) and share >= threshold and share > 0}


def with_overlap(recommendations: list[Any], long: pd.DataFrame, threshold: float = OVERLAP_THRESHOLD) -> list[Any]:
    """The answers with the contamination clause: the recommended source's sentence first in the
    reason (and "high" capped at "moderate"), every contaminated source in the flags."""
    threshold = check_threshold(threshold)
    out = []
    for rec in recommendations:
        found = contaminated(long, rec.target, threshold)
        if not found:
            out.append(rec)
            continue
        flags = [*rec.flags, *(found[s] for s in found if s not in rec.recommended)]
        named = [found[s] for s in rec.recommended if s in found]
        if not named:
            out.append(replace(rec, flags=flags))
            continue
        level, capped = rec.level, ""
        if rec.level == "high":
            level, capped = "moderate", " The measures' agreement would say high; capped at moderate, since they " \
                                        "reward a source for holding the target's own sentences."
        reason = "; ".join(named) + "." + capped + (" " + rec.reason if rec.reason else "")
        out.append(replace(rec, level=level, reason=reason, flags=[*named, *flags]))
    return out


def overlap_notes(long: pd.DataFrame, threshold: float = OVERLAP_THRESHOLD) -> list[str]:
    """One line per contaminated (source, target) pair, for the CLI: 'T: S holds 9.3% of ...'."""
    if "target" not in long.columns:
        return []
    return [f"{target}: {line}" for target in dict.fromkeys(long["target"])
            for line in contaminated(long, str(target), threshold).values()]


OVERLAP_COLUMNS = ["target", "source", "overlap_test", "overlap_all", "overlap_ngram", "contaminated"]


def overlap_table(long: pd.DataFrame, threshold: float = OVERLAP_THRESHOLD) -> pd.DataFrame:
    """One row per (target, source) with overlap columns: the shares held, the n-gram and whether the
    share of test sentences (of all sentences, without a test split) reaches ``threshold``; most first."""
    if "overlap_all" not in long.columns or not len(long):
        return pd.DataFrame(columns=OVERLAP_COLUMNS)
    rows = long.drop_duplicates(["target", "source"]).copy()
    for column in ("overlap_test", "overlap_all"):
        rows[column] = pd.to_numeric(rows[column], errors="coerce") if column in rows else math.nan
    if "overlap_ngram" not in rows:
        rows["overlap_ngram"] = None
    rows = rows[rows["overlap_all"].notna()]
    decisive = rows["overlap_test"].where(rows["overlap_test"].notna(), rows["overlap_all"])
    rows["contaminated"] = (decisive >= threshold) & (decisive > 0)
    rows = rows.assign(_key=decisive).sort_values(["target", "_key", "source"], ascending=[True, False, True])
    return rows[OVERLAP_COLUMNS].reset_index(drop=True)


def overlap_grid(part: pd.DataFrame, sources: list[str], targets: list[str],
                 threshold: float = OVERLAP_THRESHOLD) -> tuple[list[list[str]], list[list[bool]]]:
    """For a heatmap: per cell the overlap in words ('' when unknown) and whether it is contaminated."""
    table = overlap_table(part, threshold)
    text = [["" for _ in targets] for _ in sources]
    bad = [[False for _ in targets] for _ in sources]
    row = {s: i for i, s in enumerate(sources)}
    column = {t: j for j, t in enumerate(targets)}
    for r in table.itertuples(index=False):
        if r.source not in row or r.target not in column:
            continue
        count, _, unit = str(r.overlap_ngram).partition(" ")
        gram = f" ({count}-{unit.rstrip('s')} n-grams)" if isinstance(r.overlap_ngram, str) and unit else ""
        test = (f"{r.overlap_test:.1%} of the test sentences, " if r.overlap_test == r.overlap_test else
                "no test split; ")
        text[row[r.source]][column[r.target]] = f"holds {test}{r.overlap_all:.1%} of all{gram}"
        bad[row[r.source]][column[r.target]] = bool(r.contaminated)
    return text, bad
