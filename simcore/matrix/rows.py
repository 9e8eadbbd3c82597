"""The matrix's rows: one per source × target × measure, with its interval, size, flags and ladder.

:class:`Rows` takes each part's result as a runner finishes it (:mod:`simcore.matrix.schedule`) and,
once every size of a source under a measure is in, writes that source's rows; the table it returns
carries in ``attrs`` the corpora that could not be read and what reading the others met.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..contamination.scan import Overlap
from ..corpora.corpus import Corpus
from ..corpora.lang.cut import cut_of_tokenizer, describe_cut
from ..corpora.tokenize import TokenizerOptions
from ..measures.lookup import get_measure
from ..measures.options import MeasureOptions
from ..measures.prepared import PreparedTarget
from ..utils.errors import SimcoreError, StoreError
from .corpus_cache import UnitResult
from .ladder import size_bias
from .plan import Plan

COLUMNS = ["source", "target", "measure", "value", "std", "ci_low", "ci_high", "n_samples",
           "sample_tokens", "source_tokens", "used_whole", "reliable", "flag", "direction",
           "oov_rate", "error", "options", "replicates", "ladder", "source_language",
           "target_language", "target_cut", "overlap_test", "overlap_all", "overlap_ngram"]


class Rows:
    """The rows of one matrix as its parts finish (``take``), in the table's order at the end
    (``table``)."""

    def __init__(self, plan: Plan, targets: list[Corpus],
                 target_of: dict[str, PreparedTarget | None], failed: dict[str, str], *,
                 samples: int, options: MeasureOptions, tokenizer: TokenizerOptions,
                 overlaps: dict[tuple[str, str], Overlap],
                 on_row: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.plan, self.targets, self.target_of, self.failed = plan, targets, target_of, failed
        self.samples, self.options, self.tokenizer = samples, options, tokenizer
        self.overlaps, self.on_row = overlaps, on_row
        self.rows: list[dict[str, Any]] = []
        self.finished: dict[tuple[str, str, int], UnitResult] = {}

    def take(self, corpus: Corpus, name: str, size: int, result: UnitResult) -> None:
        """Keep a finished part; once every size of (source, measure) is in, emit its rows."""
        if result.source_error is not None:
            self.failed.setdefault(f"source {corpus.name}", result.source_error)
        self.finished[(corpus.name, name, size)] = result
        wanted = self.plan.sizes_of(corpus.name, name)
        if all((corpus.name, name, z) in self.finished for z in wanted):
            units = {z: self.finished[(corpus.name, name, z)] for z in wanted}
            self.emit(self.of(corpus, name, units))

    def emit(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.rows.append(row)
            if self.on_row:
                self.on_row(row)

    def skipped(self) -> None:
        """The rows of the measures the plan leaves out as noise: empty, and saying why."""
        for name in self.plan.skipped:
            for corpus in self.plan.sources:
                self.emit(self.not_computed(corpus, name))

    def table(self) -> pd.DataFrame:
        """The rows in the table's order: sources as given, each with its measures as asked."""
        sources, names = self.plan.sources, self.plan.measures
        position = {(c.name, n): i
                    for i, (c, n) in enumerate((c, n) for c in sources for n in names)}
        self.rows.sort(key=lambda r: position[(r["source"], r["measure"])])
        table = pd.DataFrame(self.rows, columns=COLUMNS)
        # "source NAME" / "target NAME" -> why it could not be read
        table.attrs["failed_corpora"] = dict(self.failed)
        return table

    def not_computed(self, corpus: Corpus, name: str) -> list[dict[str, Any]]:
        """Rows of a measure left out because it is noise at the table's size: empty, saying why."""
        spec, n_tokens = get_measure(name), self.plan.common
        sizes = self.plan.sizes
        used = min(n_tokens, sizes[corpus.name]) if corpus.name in sizes else None
        why = (f"{spec.label} not computed: it is noise below {spec.reliable_tokens:,} tokens per "
               f"source and the sources are compared at {n_tokens:,}; compare larger sources (or "
               f"sub-corpora of {spec.reliable_tokens:,} tokens: --sample-tokens), or compute it "
               f"anyway (--compute-noise; in the dashboard, the Similarity form's options: Compute "
               f"noisy measures too)")
        empty = UnitResult(used, self.failed.get(f"source {corpus.name}"), None, {})
        rows = self.of(corpus, name, {n_tokens: empty})
        for row in rows:
            if row["error"] == "not computed":
                row["error"] = None
            row["flag"] = "; ".join(x for x in (row["flag"], why) if x)
            row["reliable"] = False
        return rows

    def of(self, corpus: Corpus, name: str, units: dict[int, UnitResult]) -> list[dict[str, Any]]:
        """The table's rows of one source under one measure, with the cells at its ladder sizes."""
        measure, sizes, n_tokens = get_measure(name), self.plan.sizes, self.plan.common
        failed = self.failed
        main = units[n_tokens]
        used = min(n_tokens, main.n_tokens) if main.n_tokens is not None else None
        flag = size_flag(name, sizes[corpus.name], n_tokens, used) if used is not None else ""
        options = json.dumps(
            {**self.options.subset(measure.option_names), **self.tokenizer.as_dict(),
             "seed": self.options.seed, "samples": self.samples, "sample_tokens": n_tokens,
             "bootstrap": self.options.bootstrap},
            sort_keys=True)
        rows = []
        for target_corpus in self.targets:
            unread = self.target_of[target_corpus.name] is None
            result = main.result(target_corpus.name, failed, unread)
            ladder = {}
            for size, unit in units.items():
                if size == n_tokens:
                    continue
                other = unit.result(target_corpus.name, failed, unread)
                if math.isfinite(other.value):
                    ladder[str(size)] = {"value": other.value,
                                         "replicates": encode_replicates(other.replicates)}
            low, high = result.interval()
            rows.append({
                "source": corpus.name, "target": target_corpus.name, "measure": name,
                "value": result.value, "std": result.std, "ci_low": low, "ci_high": high,
                "n_samples": self.samples, "sample_tokens": used,
                "source_tokens": sizes.get(corpus.name),
                "used_whole": sizes[corpus.name] < n_tokens if corpus.name in sizes else None,
                # False only where the measure is noise at this size (WVV below 1M); a measure whose
                # rankings merely settle later (PPL, JSD, TVC below 100k) says so in ``flag``
                "reliable": used is not None and (used >= measure.reliable_tokens
                                                  or not measure.noise_when_small),
                "flag": flag,
                "direction": measure.direction, "oov_rate": result.details.get("oov_rate"),
                "error": result.error,
                "options": options,
                "replicates": encode_replicates(result.replicates),
                "ladder": json.dumps(ladder, sort_keys=True) if ladder else None,
                "source_language": language_of(corpus),
                "target_language": language_of(target_corpus),
                "target_cut": describe_cut(cut_of_tokenizer(self.tokenizer)),
                **overlap_columns(self.overlaps.get((corpus.name, target_corpus.name))),
            })
        return rows


def overlap_columns(found: Overlap | None) -> dict[str, Any]:
    """The overlap columns of a cell (empty when the overlap was not counted)."""
    if found is None:
        return {"overlap_test": math.nan, "overlap_all": math.nan, "overlap_ngram": None}
    return {"overlap_test": found.overlap_test, "overlap_all": found.overlap_all,
            "overlap_ngram": f"{found.n} {found.unit}"}


def language_of(corpus: Corpus) -> str | None:
    """The corpus's language code for the table (None when it cannot be read: its cells say why)."""
    try:
        return corpus.language_guess().language
    except StoreError:
        raise
    except SimcoreError:
        return None


def size_flag(measure: str, source_tokens: int, comparison: int, used: int) -> str:
    """What the user must know about the size a cell was computed at ('' when nothing)."""
    notes = []
    if source_tokens < comparison:
        notes.append(f"source used whole: {source_tokens:,} of the {comparison:,} tokens the "
                     f"others are compared at; {size_bias(measure)}")
    spec = get_measure(measure)
    if used < spec.reliable_tokens:
        if spec.noise_when_small:
            notes.append(f"{spec.label} is unreliable below {spec.reliable_tokens:,} tokens "
                         f"({used:,} used)")
        else:
            notes.append(f"{spec.label} rankings settle from about {spec.reliable_tokens:,} tokens "
                         f"per source ({used:,} used)")
    return "; ".join(notes)


def encode_replicates(replicates: Sequence[float] | None) -> str | None:
    """Replicates as a compact space-separated text cell (6 significant digits)."""
    if not replicates:
        return None
    return " ".join(f"{v:.6g}" for v in replicates)


def decode_replicates(text: Any) -> np.ndarray | None:
    """The inverse of :func:`encode_replicates`; None for an empty or missing cell."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return np.array(text.split(), dtype=float)
    except ValueError:
        return None
