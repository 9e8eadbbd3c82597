"""The Sentence selection page's score histogram, on an axis the bulk of the scores fills.

Perplexities have a long tail (a few pool sentences score 18,000 where most score 50-500): a linear axis
to the maximum squashes everything into one bar. The bins here span the 0.5th to 99th percentile;
scores beyond fall into the first or last bin, which the tooltip marks as open-ended.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from simcore.selection.choosing import Cutoff, ScoreSet, kept_mask

_CHUNK = 1 << 20


def clipped_histogram(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool, bins: int = 40,
                      low_q: float = 0.005, high_q: float = 0.99) -> pd.DataFrame:
    """Counts of kept and dropped units per bin: columns low, high, kept, count, range (text)."""
    values = np.asarray(scores.scores(), dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return pd.DataFrame(columns=["low", "high", "kept", "count", "range"])
    low, high = (float(v) for v in np.quantile(finite, [low_q, high_q]))
    cut = cutoff.score(scores.higher_kept)
    if np.isfinite(cut):  # the cut-off stays on the axis
        low, high = min(low, cut), max(high, cut)
    if high <= low:
        high = low + 1.0
    edges = np.linspace(low, high, bins + 1)
    counts = {True: np.zeros(bins, dtype=np.int64), False: np.zeros(bins, dtype=np.int64)}
    for start in range(0, scores.n, _CHUNK):
        stop = min(start + _CHUNK, scores.n)
        part = values[start:stop]
        kept = kept_mask(scores, cutoff, keep_duplicates, start, stop)
        ok = np.isfinite(part)
        which = np.clip(np.searchsorted(edges, part[ok], side="right") - 1, 0, bins - 1)
        for flag in (True, False):
            counts[flag] += np.bincount(which[kept[ok] == flag], minlength=bins)
    below, above = bool((finite < low).any()), bool((finite > high).any())

    def text(i: int) -> str:
        a, b = f"{edges[i]:.4g}", f"{edges[i + 1]:.4g}"
        if i == 0 and below:
            return f"up to {b}"
        if i == bins - 1 and above:
            return f"{a} or more"
        return f"{a} – {b}"

    rows = [{"low": edges[i], "high": edges[i + 1], "kept": "kept" if flag else "dropped",
             "count": int(counts[flag][i]), "range": text(i)} for flag in (True, False) for i in range(bins)]
    return pd.DataFrame(rows)


XENT_NOTE = (
    "What xent rewards: a sentence scores low (and is kept) when the target's language model predicts its words "
    "better than a model of the pool does, per word (Moore and Lewis 2010; checked against KenLM's own `query`). "
    "Both models see only the target's vocabulary (its words seen twice or more); every other word is one "
    "`[oov]` token. So a specialised word the target never uses counts against a sentence exactly like slang, "
    "while everyday words the target shares (*do not*, *your*, *mix*) count for it; and a per-word average over "
    "a few words varies most, so short sentences crowd both ends of the ranking. Expect xent to find the target's "
    "phrasing (imperatives, short instructions) rather than its field; cosine or entities follow the field more "
    "closely (on wet-lab protocols, cosine's top 10% held 74% biomedical or clinical sentences, xent's 51%, "
    "against a pool share of 40%).")


def method_note(method: str) -> str | None:
    """What a scoring method rewards, where that may surprise (xent keeps everyday short sentences)."""
    return XENT_NOTE if method == "xent" else None


def short_selection_warning(kept_lengths: list[int], pool_mean: float, method: str = "") -> str | None:
    """A warning when the kept sentences are much shorter than the pool's (PPL favours "Fun," he said.).

    The advice names xent only when xent is not the method that was run.
    """
    if not kept_lengths or not np.isfinite(pool_mean) or pool_mean <= 0:
        return None
    median = float(np.median(kept_lengths))
    if median < 0.5 * pool_mean or median <= 4:
        if method == "xent":
            advice = ("xent's per-word difference varies most over a few words, so short sentences reach both "
                      "ends; consider a minimum length (Options: Shortest sentence kept), or cosine or entities.")
        else:
            advice = ("Perplexity-style scores favour short sentences; consider xent (cross-entropy difference), "
                      "a minimum length (Options: Shortest sentence kept), or another method.")
        return (f"The kept sentences are short: the best kept examples have a median of {median:.0f} tokens, the "
                f"pool a mean of {pool_mean:.1f}. " + advice)
    return None
