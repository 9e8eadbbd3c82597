"""The probe's honest summary: the seed spread, and sources too close to tell apart called a tie."""

from __future__ import annotations

import math

import pandas as pd


def _spread(a: float, b: float) -> float:
    finite = [v for v in (a, b) if isinstance(v, float) and math.isfinite(v)]
    return max(finite) if finite else float("nan")


def tie_summary(table: pd.DataFrame) -> list[str]:
    """One line per target: the best source, the sources whose F1 is within the seed spread of it (ties),
    and whether the best beats the baseline by more than the spread.

    Two F1s are a tie when they differ by no more than the larger of their seed standard deviations
    (``f1_std``, ``baseline_std``): equal F1s are always a tie, even with no spread over the seeds; with one
    seed no spread is measured and no tie can be called.
    """
    lines = []
    for target, rows in table.groupby("target", sort=True):
        rows = rows[pd.to_numeric(rows["f1"], errors="coerce").notna()].sort_values("f1", ascending=False)
        if rows.empty:
            lines.append(f"{target}: no source was scored")
            continue
        best = rows.iloc[0]
        std = float(best["f1_std"])
        if not math.isfinite(std):
            lines.append(f"{target}: best {best['source']} (F1 {best['f1']:.2f}); one seed, so no spread is "
                         "measured and no difference can be told from noise (use --seeds 3 or more)")
            continue
        ties = [f"{r['source']} {r['f1']:.2f}" for _, r in rows.iloc[1:].iterrows()
                if best["f1"] - r["f1"] <= _spread(std, float(r["f1_std"]))]
        text = f"{target}: best {best['source']} (F1 {best['f1']:.2f} ± {std:.2f} over {int(best['seeds'])} seeds)"
        text += f"; tied with it within the seed spread: {', '.join(ties)}" if ties else "; no tie within the seed spread"
        baseline = float(best["baseline"])
        if math.isfinite(baseline):
            margin = _spread(std, float(best["baseline_std"]))
            verdict = "above" if best["f1"] - baseline > margin else "a tie with"
            text += f"; {verdict} the baseline ({baseline:.2f})"
        lines.append(text)
    return lines
