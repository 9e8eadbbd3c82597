"""Two kept similarity matrices side by side: how the rankings of the sources changed between them.

Only what both have is compared: their shared targets, sources and measures, so a rank means the same
thing on both sides (rank 1 = most similar among the shared sources).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from simcore.analysis.ranking import rank_sources
from simcore.utils.errors import SimcoreError


@dataclass
class Comparison:
    measures: list[str]
    targets: list[str]
    sources: list[str]
    only_a: dict[str, list[str]]  # what the first matrix has and the second lacks (targets, sources, measures)
    only_b: dict[str, list[str]]
    ranking_a: pd.DataFrame
    ranking_b: pd.DataFrame

    def summary(self) -> pd.DataFrame:
        """Per target and measure: each side's first choice, whether it changed, Spearman ρ of the two rankings."""
        rows = []
        for (target, measure), a in self.ranking_a.groupby(["target", "measure"], sort=False):
            b = self.ranking_b[(self.ranking_b["target"] == target) & (self.ranking_b["measure"] == measure)]
            first_a = ", ".join(sorted(a.loc[a["rank"] == 1, "source"]))
            first_b = ", ".join(sorted(b.loc[b["rank"] == 1, "source"]))
            ranks = a.set_index("source")["rank"].to_frame("a").join(b.set_index("source")["rank"].rename("b"))
            rho = (float(stats.spearmanr(ranks["a"], ranks["b"]).statistic)
                   if len(ranks) >= 3 and ranks["a"].nunique() > 1 and ranks["b"].nunique() > 1 else float("nan"))
            rows.append({"target": target, "measure": measure, "first choice (A)": first_a,
                         "first choice (B)": first_b, "first choice changed": first_a != first_b,
                         "sources that moved": int((ranks["a"] != ranks["b"]).sum()), "Spearman ρ": rho})
        return pd.DataFrame(rows)

    def side_by_side(self, target: str, measure: str) -> pd.DataFrame:
        """One target and measure: each source's rank and value in A and B, and how far it moved."""
        def part(ranking: pd.DataFrame) -> pd.DataFrame:
            p = ranking[(ranking["target"] == target) & (ranking["measure"] == measure)]
            return p.set_index("source")[["rank", "value"]]

        a, b = part(self.ranking_a), part(self.ranking_b)
        out = a.reset_index().merge(b.reset_index(), on="source", how="outer", suffixes=(" (A)", " (B)"))
        out["moved"] = [_moved(ra, rb) for ra, rb in zip(out["rank (A)"], out["rank (B)"])]
        return out.sort_values(["rank (A)", "source"]).reset_index(drop=True)[
            ["source", "rank (A)", "rank (B)", "moved", "value (A)", "value (B)"]]


def _moved(rank_a: float, rank_b: float) -> str:
    if not (np.isfinite(rank_a) and np.isfinite(rank_b)):
        return "–"
    step = int(rank_a) - int(rank_b)
    return "=" if step == 0 else (f"▲ {step}" if step > 0 else f"▼ {-step}")


def compare(long_a: pd.DataFrame, long_b: pd.DataFrame) -> Comparison:
    """Rank the sources of both matrices over what they share; SimcoreError when they share nothing."""
    sets = {}
    for column in ("target", "source", "measure"):
        a, b = set(long_a[column].dropna().astype(str)), set(long_b[column].dropna().astype(str))
        sets[column] = (a & b, sorted(a - b), sorted(b - a))
    directions_a = long_a.groupby("measure")["direction"].first()
    measures = [m for m in dict.fromkeys(long_a["measure"]) if m in sets["measure"][0] and directions_a[m] != 0]
    if not measures or not sets["target"][0] or len(sets["source"][0]) < 2:
        raise SimcoreError("the two matrices share no similarity measure, no target or fewer than two sources: "
                           "there are no rankings to compare")

    def shared(long: pd.DataFrame) -> pd.DataFrame:
        return long[long["target"].isin(sets["target"][0]) & long["source"].isin(sets["source"][0])
                    & long["measure"].isin(measures)]

    return Comparison(
        measures=measures, targets=sorted(sets["target"][0]), sources=sorted(sets["source"][0]),
        only_a={k: v[1] for k, v in sets.items() if v[1]}, only_b={k: v[2] for k, v in sets.items() if v[2]},
        ranking_a=rank_sources(shared(long_a), measures), ranking_b=rank_sources(shared(long_b), measures))


def comparable(long_a: pd.DataFrame, long_b: pd.DataFrame) -> bool:
    """Whether two matrices share a target, two sources and a similarity measure (so :func:`compare` has rankings)."""
    def names(long: pd.DataFrame, column: str) -> set[str]:
        return set(long[column].dropna().astype(str))

    similarity = set(long_a.loc[long_a["direction"] != 0, "measure"].astype(str))
    return bool(names(long_a, "target") & names(long_b, "target")) and len(
        names(long_a, "source") & names(long_b, "source")) >= 2 and bool(similarity & names(long_b, "measure"))


def _cells(long: pd.DataFrame) -> set[tuple[str, str, str]]:
    return set(zip(long["target"].astype(str), long["source"].astype(str), long["measure"].astype(str)))


def default_pair(matrices: dict[str, pd.DataFrame]) -> tuple[str, str] | None:
    """The two matrices (older first) that are most alike among those that can be compared: the most
    (target, source, measure) cells in common, so two runs of the same corpora under other options are
    chosen over the newest two, which may share a target and two sources only; the newer pair on a tie.
    None when no two can be compared."""
    names = list(matrices)
    cells = {n: _cells(matrices[n]) for n in names}
    best, shared = None, -1
    for j in range(len(names) - 1, 0, -1):
        for i in range(j - 1, -1, -1):
            common = len(cells[names[i]] & cells[names[j]])
            if common > shared and comparable(matrices[names[i]], matrices[names[j]]):
                best, shared = (names[i], names[j]), common
    return best


NAMED = ("target", "source")


def unmatched_names(long_a: pd.DataFrame, long_b: pd.DataFrame) -> dict[str, tuple[list[str], list[str]]]:
    """Per column (target, source): B's names that A lacks, and A's names that B lacks (what they may stand for).

    A computed matrix and Dai et al.'s Table 3 name the same corpora differently (``news_1bwb`` and ``1BWB``):
    mapping B's names onto A's lets the two be compared.
    """
    out = {}
    for column in NAMED:
        a, b = set(long_a[column].dropna().astype(str)), set(long_b[column].dropna().astype(str))
        if b - a and a - b:
            out[column] = (sorted(b - a), sorted(a - b))
    return out


def renamed(long_b: pd.DataFrame, mapping: dict[str, dict[str, str | None]]) -> pd.DataFrame:
    """B with its target/source names replaced as mapped; where two names map onto one, the first one's rows stay."""
    from dashboard.name_map import apply_mapping

    out = apply_mapping(long_b, mapping)
    return out.drop_duplicates(["target", "source", "measure"], keep="first")
