"""Measured training outcomes: what the choice of source did to NER F1 in runs the project made.

The level of an answer ("high", "moderate") measures how often the similarity measures agree across
bootstrap replicates, not how much better the tagger will be. This package says what measured
outcomes showed beside it:

- ``measured.csv`` (written by bench/outcome_tables.py from bench/results/): per pretraining kind
  (``vectors``: simcore's word-vector probe; ``lm``: the masked-LM probe), target and source (the
  baseline is ``(none)``), F1 mean and standard deviation over seeds, the seeds, the sizes and the
  machine. :func:`kind_outcome` reads it per kind: for how many targets the sources' F1 differed by
  more than the seed spread.
- A user's own probe results for a target (:func:`probe_note`): the recommended source's F1 beside
  the best one's and the baseline's, and whether they tie.

Two F1 values tie when they differ by less than ``sqrt(std_a² + std_b²)`` (their seed spreads; the
margin :func:`simcore.analysis.audit.pair_margin` uses with ``tie_f1`` = 0).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

BASELINE = "(none)"
NOT_A_PROMISE = "the level is how firmly the measures agree, not a promise of a better tagger"
MEASURED = Path(__file__).with_name("measured.csv")
COLUMNS = [
    "kind",
    "target",
    "source",
    "seeds",
    "f1",
    "f1_std",
    "source_tokens",
    "train_sentences",
    "test_sentences",
    "device",
    "caps",
]
KIND_NOUN = {"vectors": "word-vector sources", "lm": "sources for language-model pretraining"}
KIND_PROBE = {
    "vectors": "word-vector probe (spaCy NER, skip-gram vectors)",
    "lm": "LM probe (MiniLM masked-LM adaptation, then fine-tuning)",
}


def margin(std_a: float, std_b: float) -> float:
    """The F1 difference below which two results tie: their seed spreads combined (missing: 0)."""
    a = std_a if math.isfinite(std_a) else 0.0
    b = std_b if math.isfinite(std_b) else 0.0
    return math.hypot(a, b)


def summarize(runs: pd.DataFrame, kind: str, **context: Any) -> pd.DataFrame:
    """Per (target, source) of per-seed runs (target, source, seed, f1): seeds, mean F1, spread.

    ``context`` (source_tokens, train_sentences, test_sentences, device, caps) goes on every row.
    """
    grouped = runs.groupby(["target", "source"], sort=True)["f1"]
    table = grouped.agg(
        seeds="count",
        f1="mean",
        f1_std=lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else math.nan,
    ).reset_index()
    table.insert(0, "kind", kind)
    for name in COLUMNS:
        if name not in table.columns:
            table[name] = context.get(name)
    return table[COLUMNS]


def load_measured(path: Path | str | None = None) -> pd.DataFrame:
    """The committed outcome table (``measured.csv``), or an empty one when it is missing."""
    where = Path(path) if path is not None else MEASURED
    if not where.is_file():
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(where)


@dataclass(frozen=True)
class KindOutcome:
    """What measured runs of one pretraining kind showed, over the targets measured."""

    kind: str
    targets: int  # targets measured with at least two sources
    separated: list[str]  # targets whose best and worst source differed by more than the spread
    above_baseline: int  # targets whose best source beat no pretraining by more than the spread
    seeds: int
    source_tokens: int | None
    train_sentences: int | None
    device: str
    picks: int = 0  # targets where the rule's own choice (column rule_choice) was measured
    picks_best: int = 0  # ... and it was the best source or within the seed spread of it
    picks_above: int = 0  # ... and it beat no pretraining by more than the seed spread
    picks_based: int = 0  # ... of those with a no-pretraining baseline measured

    @property
    def matters_little(self) -> bool:
        """The choice of source moved F1 beyond the seed spread for at most half of the targets."""
        return self.targets > 0 and len(self.separated) * 2 <= self.targets

    @property
    def unsupported(self) -> bool:
        """The outcomes do not back a promise: the choice matters little, or the rule's own choice
        was no better than the others (or than no pretraining) for at least half of its targets."""
        weak = self.picks > 0 and self.picks_best * 2 <= self.picks
        weak = weak or (self.picks_based > 0 and self.picks_above * 2 <= self.picks_based)
        return self.matters_little or weak

    def short(self) -> str:
        """For the headline: 'measured outcomes: word-vector sources differed by less than the seed
        spread for 3 of 4 targets (436,635 tokens per source, 5 seeds): the choice matters ...'."""
        ties = self.targets - len(self.separated)
        size = f"{self.source_tokens:,} tokens per source, " if self.source_tokens else ""
        verdict = ("the choice matters little here" if self.matters_little
                   else "the choice mattered for most targets")
        noun = KIND_NOUN.get(self.kind, self.kind)
        text = (f"measured outcomes: {noun} differed by less than the seed spread for {ties} of "
                f"{self.targets} targets ({size}{self.seeds} seeds): {verdict}")
        if self.picks:
            text += (f"; this rule's choice was the best or within the seed spread of it for "
                     f"{self.picks_best} of {self.picks}")
            if self.picks_based:
                text += f", above no pretraining for {self.picks_above} of {self.picks_based}"
        return text

    def sentence(self) -> str:
        """For the reason: the headline's words with the probe, training size, machine, baseline."""
        train = f", {self.train_sentences:,} training sentences" if self.train_sentences else ""
        return (f"{self.short()}; the best source beat no pretraining by more than the seed spread "
                f"for {self.above_baseline} of {self.targets} "
                f"({KIND_PROBE.get(self.kind, self.kind)}{train}, {self.device})")


def _num(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if math.isfinite(number) else None


def _beats(a: pd.Series, b: pd.Series) -> bool:
    """``a``'s F1 is above ``b``'s by more than their seed spread."""
    return float(a["f1"]) - float(b["f1"]) > margin(float(a["f1_std"]), float(b["f1_std"]))


def kind_outcome(table: pd.DataFrame, kind: str) -> KindOutcome | None:
    """Per kind, over the targets of the outcome table; None when it has no such runs.

    A ``rule_choice`` column (1 on the source the recommendation rule chose for that target on the
    matrix of the same samples) adds how the rule's own choices fared.
    """
    part = table[table["kind"] == kind]
    if part.empty:
        return None
    separated, above, targets, picks, picks_best, picks_above, based = [], 0, 0, 0, 0, 0, 0
    for target, group in part.groupby("target", sort=True):
        sources = group[group["source"] != BASELINE]
        if len(sources) < 2:
            continue
        targets += 1
        best = sources.loc[sources["f1"].idxmax()]
        worst = sources.loc[sources["f1"].idxmin()]
        if _beats(best, worst):
            separated.append(str(target))
        base = group[group["source"] == BASELINE]
        above += bool(len(base)) and _beats(best, base.iloc[0])
        if "rule_choice" in sources.columns:
            chosen = sources[pd.to_numeric(sources["rule_choice"], errors="coerce") == 1]
            if len(chosen):
                picks += 1
                picks_best += not _beats(best, chosen.iloc[0])
                based += bool(len(base))
                picks_above += bool(len(base)) and _beats(chosen.iloc[0], base.iloc[0])
    return KindOutcome(kind, targets, separated, int(above), int(part["seeds"].min()),
                       _num(part["source_tokens"].iloc[0]), _num(part["train_sentences"].iloc[0]),
                       str(part["device"].iloc[0]), picks, int(picks_best), int(picks_above), based)


def shipped_outcome(kind: str) -> KindOutcome | None:
    """:func:`kind_outcome` of the committed table (:data:`MEASURED`), worked out once per kind
    and version of the file: every answer quotes it (reading and summing it again took most of an
    answer's time on a small matrix)."""
    try:
        stat = MEASURED.stat()
    except OSError:
        return None
    return _shipped_outcome(str(MEASURED), stat.st_mtime_ns, stat.st_size, kind)


@functools.lru_cache(maxsize=16)
def _shipped_outcome(path: str, mtime_ns: int, size: int, kind: str) -> KindOutcome | None:
    table = load_measured(path)
    return kind_outcome(table, kind) if len(table) else None


def _f1(row: pd.Series) -> str:
    std = float(row.get("f1_std", math.nan))
    return f"{float(row['f1']):.2f}" + (f" ± {std:.2f}" if math.isfinite(std) else "")


def probe_note(results: pd.DataFrame | None, rec: Any) -> tuple[str, bool] | None:
    """(sentence, tie) from a user's probe results (target, source, f1 [, f1_std, baseline,
    baseline_std, seeds]) for the recommended source of ``rec``; None when they do not cover it."""
    if (
        results is None
        or not {"target", "source", "f1"} <= set(results.columns)
        or not rec.recommended
    ):
        return None
    part = results[
        (results["target"] == rec.target) & pd.to_numeric(results["f1"], errors="coerce").notna()
    ]
    part = part.assign(f1=pd.to_numeric(part["f1"], errors="coerce"))
    if "f1_std" in part.columns:
        part = part.assign(f1_std=pd.to_numeric(part["f1_std"], errors="coerce"))
    chosen = part[part["source"] == rec.recommended[0]]
    if chosen.empty:
        return None
    mine = chosen.iloc[0]
    best = part.loc[part["f1"].idxmax()]
    seeds = (
        f", {int(mine['seeds'])} seeds"
        if "seeds" in part.columns and pd.notna(mine.get("seeds"))
        else ""
    )
    text = f"your probe{seeds}: {rec.recommended[0]} F1 {_f1(mine)}"
    tie = False
    if best["source"] != mine["source"]:
        text += f", best {best['source']} {_f1(best)}"
        tie = best["f1"] - mine["f1"] <= margin(
            float(best.get("f1_std", math.nan)), float(mine.get("f1_std", math.nan))
        )
        text += (
            ": a tie within the seed spread"
            if tie
            else f": {best['source']} did better by more than the seed spread"
        )
    if "baseline" in part.columns and pd.notna(mine.get("baseline")):
        base_std = (
            float(mine.get("baseline_std", math.nan))
            if "baseline_std" in part.columns
            else math.nan
        )
        base = float(mine["baseline"])
        text += f"; no pretraining {base:.2f}" + (
            f" ± {base_std:.2f}" if math.isfinite(base_std) else ""
        )
        if abs(float(mine["f1"]) - base) <= margin(float(mine.get("f1_std", math.nan)), base_std):
            text += f" (a tie with {rec.recommended[0]})"
            tie = True
    return text, tie


def with_outcomes(
    recommendations: list[Any],
    *,
    measured: pd.DataFrame | None = None,
    probe_results: pd.DataFrame | None = None,
) -> list[Any]:
    """The answers (:class:`simcore.answer.recommendation.Recommendation`, which calls this: typed ``Any`` so
    that this module does not import it back) with what measured outcomes say for their kind and the
    user's probe beside each."""
    kinds = set(r.pretraining for r in recommendations)
    if measured is None:
        summary = {kind: shipped_outcome(kind) for kind in kinds}
    else:
        summary = {kind: kind_outcome(measured, kind) for kind in kinds} if len(measured) else {}
    out = []
    for rec in recommendations:
        kind = summary.get(rec.pretraining)
        measured_note = kind is not None and rec.level in ("high", "moderate")
        probe = probe_note(probe_results, rec)
        if not measured_note and probe is None:
            out.append(rec)
            continue
        heads = ([kind.short()] if measured_note and kind is not None else []) + (
            [probe[0]] if probe else []
        )
        whys = ([kind.sentence()] if measured_note and kind is not None else []) + (
            [probe[0]] if probe else []
        )
        if (measured_note and kind is not None and kind.unsupported) or (
            probe is not None and probe[1]
        ):
            heads.append(NOT_A_PROMISE)
        out.append(
            replace(rec, outcome="; ".join(heads), reason=f"{rec.reason}; {'; '.join(whys)}")
        )
    return out
