"""Writing a selection: the kept sentences (text or gzip) and every sentence's score (CSV)."""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..corpora.corpus import Corpus
from ..corpora.notes import ReadNotes
from ..reporting.export import escape_formulas
from ..utils.errors import InvalidArgument, SimcoreError
from ..utils.output_paths import atomic_file, output_error, refuse_overwriting_inputs
from .choosing import CHUNK, Cutoff, ScoreSet, check_chosen, check_flag, kept_mask
from .options import Progress, quiet
from .pool import PoolPosition, pool_units, unit_text


@dataclass
class SelectionResult:
    scores: ScoreSet
    cutoff: Cutoff
    out: Path | None
    scores_csv: Path | None
    keep_duplicates: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.scores, ScoreSet) or not isinstance(self.cutoff, Cutoff):
            raise InvalidArgument("a SelectionResult holds a ScoreSet (from score_pool) and a Cutoff (from choose), "
                                  f"not {type(self.scores).__name__} and {type(self.cutoff).__name__}")
        self.out, self.scores_csv = _output_path("out", self.out), _output_path("scores_csv", self.scores_csv)
        self.keep_duplicates = check_flag("keep_duplicates", self.keep_duplicates)

    def summary(self) -> str:
        c, s = self.cutoff, self.scores
        direction = "at least" if s.higher_kept else "at most"
        lines = [f"kept {c.n_kept:,} of {s.n:,} pool sentences by {s.method} (score {direction} "
                 f"{c.score(s.higher_kept):.6g})"]
        if c.n_kept < c.k:
            lines.append(f"asked for {c.k:,} but only {c.n_eligible:,} sentences could be kept")
        lines.append(f"{c.n_duplicates:,} pool sentences duplicate a target sentence"
                     + (" (kept if chosen)" if self.keep_duplicates else " (excluded)"))
        if c.n_unscored:
            lines.append(f"{c.n_unscored:,} pool sentences could not be scored (no words the method knows)")
        if short := too_short_line(c):
            lines.append(short)
        meta = s.meta
        details = meta.get("details", {})
        if details.get("tagger"):
            lines.append(f"entities counted by {details['tagger']}: {', '.join(details.get('labels', []))}")
        if meta.get("long_lines"):
            lines.append(f"{meta['long_lines']:,} pool lines were longer than {meta['unit_chars']:,} characters and were cut "
                         f"at spaces into {meta['long_pieces']:,} sentences (each scored, kept and written on its own)")
        if details.get("split_lines"):
            lines.append(f"{details['split_lines']:,} pool sentences were longer than the tagger takes at once "
                         "and were tagged in pieces (their counts summed)")
        if details.get("encoder"):
            lines.append(f"encoder: {details['encoder']} on {details.get('device', 'cpu')}")
        for side in ("pool", "target"):  # rows the reader skipped (null Hub rows, blank tokens) are said
            notes = ReadNotes.from_dict(meta.get(f"{side}_notes"))
            if notes:
                lines.append(f"{side} {meta.get(side, '')}: {notes.summary()}")
        lines.append(f"scoring: {meta.get('rate', 0):,.0f} sentences/s "
                     f"(+{meta.get('prepare_seconds', 0):.1f} s preparing models)")
        return "\n".join(lines)


def too_short_line(cutoff: Cutoff) -> str | None:
    """How many scored sentences a minimum length left out, or None when there is no minimum."""
    if cutoff.min_tokens <= 1:
        return None
    return (f"{cutoff.n_short:,} scored pool sentences have fewer than {cutoff.min_tokens:,} tokens "
            "(excluded as too short)")


def _output_path(label: str, path: Any) -> Path | None:
    """``path`` as a Path (None stays None); InvalidArgument unless it is a non-empty path without NUL."""
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip() or "\0" in str(path):
        raise InvalidArgument(f"{label} must be a file path or None, not {path!r}"[:300])
    return Path(path)


def check_outputs(pool: Corpus, target: Corpus, out: Path | str | None, scores_csv: Path | str | None) -> None:
    """Before any work: the outputs are file names that are neither the pool nor the target (nor links to them)."""
    for label, given in (("out", out), ("scores_csv", scores_csv)):
        path = _output_path(label, given)
        if path is None:
            continue
        if Path(path).is_dir():
            raise SimcoreError(f"{path} is a directory; give a file name")
        if not Path(path).parent.exists():
            raise SimcoreError(f"cannot write {path}: the directory {Path(path).parent} does not exist")
    refuse_overwriting_inputs({"out": out, "scores_csv": scores_csv},
                              {"pool": getattr(pool, "path", None), "target": getattr(target, "path", None)})


def write_selection(pool: Corpus, scores: ScoreSet, cutoff: Cutoff, out: Path | str | None,
                    scores_csv: Path | str | None = None, keep_duplicates: bool = False,
                    progress: Progress = quiet) -> None:
    """Stream the pool again: kept sentences to ``out`` (gzip if it ends in .gz), scores to CSV.

    Kept means kept by ``cutoff``, its minimum sentence length included.

    Both are written to temporary files renamed into place at the end: a full disk or an
    interrupted run leaves any earlier output as it was.
    """
    if not isinstance(pool, Corpus):
        raise InvalidArgument(f"the pool must be a simcore Corpus (Corpus.from_path(...)), not {type(pool).__name__}")
    keep_duplicates = check_chosen(scores, cutoff, keep_duplicates)
    if not callable(progress):
        raise InvalidArgument("progress must be a function (message, fraction)")
    out, scores_csv = _output_path("out", out), _output_path("scores_csv", scores_csv)
    for path in (out, scores_csv):
        if path is not None:
            if path.is_dir():
                raise SimcoreError(f"{path} is a directory; give a file name")
            if not path.parent.exists():
                raise SimcoreError(f"cannot write {path}: the directory {path.parent} does not exist")
    refuse_overwriting_inputs({"out": out, "scores_csv": scores_csv}, {"pool": getattr(pool, "path", None)})
    with contextlib.ExitStack() as files:
        raw_out = files.enter_context(atomic_file(out, "wb")) if out else None
        csv_out = files.enter_context(atomic_file(scores_csv, "w", encoding="utf-8", newline="")) if scores_csv else None
        text_out = files.enter_context(_text_out(out, raw_out)) if out and raw_out else None
        try:
            _stream(pool, scores, cutoff, text_out, csv_out, keep_duplicates, progress)
        except OSError as exc:
            raise output_error(exc, out or scores_csv or "the selection") from None
    progress("selection written", 1.0)


def _stream(pool: Corpus, scores: ScoreSet, cutoff: Cutoff, text_out: Any, csv_out: Any, keep_duplicates: bool,
            progress: Progress) -> None:
    values, dups = scores.scores(), scores.duplicates()
    where = PoolPosition()
    n = 0
    if csv_out:
        csv.writer(csv_out).writerow(["index", "score", "kept", "duplicate_of_target", "text"])
    rows: list[tuple[int, float, bool, bool, str]] = []
    for unit in pool_units(pool, where):
        if n % CHUNK == 0:
            kept = kept_mask(scores, cutoff, keep_duplicates, n, min(n + CHUNK, scores.n))
        if n >= scores.n:
            raise SimcoreError(f"{pool.name} has more sentences than the {scores.n:,} these scores are for: give the "
                               "pool they were computed on (or, if it changed, run the selection again)")
        text = unit_text(unit)
        is_kept = bool(kept[n % CHUNK])
        if text_out and is_kept:
            text_out.write(text + "\n")
        if csv_out:
            score = float(values[n])
            rows.append((n, score if math.isfinite(score) else float("nan"), is_kept, bool(dups[n]), text))
            if len(rows) >= 10_000:
                _write_rows(csv_out, rows)
                rows = []
        n += 1
        if n % 50_000 == 0:
            progress(f"writing the selection ({n:,} sentences)", where.value)
    if n < scores.n:
        raise SimcoreError(f"{pool.name} has {n:,} sentences but these scores are for {scores.n:,}: give the pool "
                           "they were computed on (or, if it changed, run the selection again)")
    if csv_out and rows:
        _write_rows(csv_out, rows)


@contextlib.contextmanager
def _text_out(path: Path, raw: Any) -> Iterator[io.TextIOBase]:
    """UTF-8 text over the raw output file, gzip-compressed when its name ends in .gz."""
    inner = gzip.GzipFile(fileobj=raw, mode="wb", filename="") if path.name.lower().endswith(".gz") else None
    text = io.TextIOWrapper(inner if inner is not None else raw, encoding="utf-8", newline="\n")
    try:
        yield text
    finally:
        text.flush()
        text.detach()
        if inner is not None:
            inner.close()


def _write_rows(handle: Any, rows: list[tuple]) -> None:
    table = pd.DataFrame(rows, columns=["index", "score", "kept", "duplicate_of_target", "text"])
    escape_formulas(table).to_csv(handle, header=False, index=False, float_format="%.8g")

