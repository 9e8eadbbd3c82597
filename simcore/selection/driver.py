"""Score every pool unit (stored per fingerprint), choose the kept ones, write them.

The pool streams in batches. Scores go to a file of float64 values (one per pool unit, in pool
order) kept in the artefact store, so choosing another K or fraction reads them back without
scoring again. Pool sentences that are exact duplicates of a target sentence (after
tokenization and lower-casing) are flagged and, by default, never kept. Each unit's token count
is stored too, so a minimum sentence length can be applied when choosing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import Corpus
from ..corpora.notes import ReadNotes
from ..utils.errors import InvalidArgument, SimcoreError
from ..utils.store import ArtefactStore, digest
from .choosing import ScoreSet, check_min_tokens, choose, count_to_keep, default_min_tokens
from .methods.factory import input_identity, make_scorer
from .options import HIGHER_KEPT, Progress, SelectionOptions, quiet
from .output import SelectionResult, check_outputs, write_selection
from .pool import PoolPosition, pool_batches, pool_fingerprint
from .target import Target

_VERSION = 4   # 4: token counts (lens.u32)
_MAX_U32 = 2**32 - 1


def _check_inputs(pool: Any, target: Any, options: Any, store: Any, progress: Any) -> None:
    """The arguments a notebook user passes, checked before any work: simcore's error, never a TypeError."""
    for label, value in (("pool", pool), ("target", target)):
        if not isinstance(value, Corpus):
            raise InvalidArgument(f"the {label} must be a simcore Corpus (Corpus.from_path(...)), "
                                  f"not {type(value).__name__}")
    if not isinstance(options, SelectionOptions):
        raise InvalidArgument(f"options must be SelectionOptions, not {type(options).__name__}")
    if not isinstance(store, ArtefactStore):
        raise InvalidArgument(f"store must be an ArtefactStore, not {type(store).__name__}")
    if not callable(progress):
        raise InvalidArgument("progress must be a function (message, fraction)")


def score_pool(pool: Corpus, target: Corpus, options: SelectionOptions, store: ArtefactStore,
               progress: Progress = quiet) -> ScoreSet:
    """Score every pool unit against the target with ``options.method`` (stored; cached)."""
    _check_inputs(pool, target, options, store, progress)
    started = time.perf_counter()
    progress("reading the target", 0.0)
    prepared = Target(target, store, options)
    pool_fp = pool_fingerprint(pool, options.tokenizer)
    # entities: the tags and label names and the cased text decide the tagger and its labels, not the tokens only
    labels = [prepared.labels_fingerprint()] if options.method == "entities" else []
    key = digest("selection-scores", _VERSION, pool_fp, prepared.fingerprint, prepared.full.fingerprint,
                 options.key_parts(), input_identity(options), *labels)

    def build(out: Path) -> dict[str, Any]:
        scorer = make_scorer(options, pool, pool_fp, prepared, store, progress)
        prepare_s = time.perf_counter() - started
        where = PoolPosition()
        seen = prepared.sentence_set()
        notes = ReadNotes()
        n = 0
        pass_started = time.perf_counter()
        with open(out / "scores.f64", "wb") as scores_file, open(out / "dups.u8", "wb") as dups_file, \
                open(out / "lens.u32", "wb") as lens_file:
            for batch in pool_batches(pool, options.tokenizer, options.batch, where, notes=notes):
                scores = np.asarray(scorer.score(batch), dtype=np.float64)
                empty = np.fromiter((not t for t in batch.tokens), dtype=bool, count=len(batch.tokens))
                scores[empty] = np.nan
                dups = np.fromiter((bool(t) and " ".join(t) in seen for t in batch.tokens), dtype=np.uint8,
                                   count=len(batch.tokens))
                lens = np.fromiter((min(len(t), _MAX_U32) for t in batch.tokens), dtype=np.uint32,
                                   count=len(batch.tokens))
                scores_file.write(scores.tobytes())
                dups_file.write(dups.tobytes())
                lens_file.write(lens.tobytes())
                n += len(batch.texts)
                elapsed = time.perf_counter() - pass_started
                progress(f"{options.method}: scored {n:,} sentences ({n / max(elapsed, 1e-9):,.0f}/s)",
                         where.value)
        if n == 0:
            raise SimcoreError(f"{pool.name}: the pool holds no sentences")
        seconds = time.perf_counter() - pass_started
        details = scorer.details()
        # For entities the NER pass over the pool (stored apart, once per pipeline) is the scoring.
        per_sentence = seconds + details.get("pool_pass_seconds", 0.0)
        return {"n": n, "method": options.method, "options": options.key_parts(),
                "prepare_seconds": prepare_s, "score_seconds": seconds,
                "rate": n / max(per_sentence, 1e-9), "details": details,
                "pool": pool.name, "target": prepared.name, "target_sentences": prepared.sample.n_units,
                "long_lines": where.long_lines, "long_pieces": where.pieces, "unit_chars": where.unit_chars,
                "pool_notes": notes.as_dict(), "target_notes": prepared.full.read_notes.as_dict()}

    path = store.build("selection-scores", key, build)
    meta = store.meta(path)
    return ScoreSet(path, options.method, HIGHER_KEPT[options.method], meta["n"], meta)



def select(pool: Corpus, target: Corpus, options: SelectionOptions, store: ArtefactStore,
           top: int | None = None, fraction: float | None = None, out: Path | str | None = None,
           scores_csv: Path | str | None = None, keep_duplicates: bool = False,
           progress: Progress = quiet, min_tokens: int | None = None) -> SelectionResult:
    """Score, choose and write: what ``python -m simcore select`` does.

    Units with fewer than ``min_tokens`` tokens are never kept (short units get extreme per-token scores);
    None: the method's default (:func:`simcore.selection.choosing.default_min_tokens`: 5 for ppl and xent).
    """
    _check_inputs(pool, target, options, store, progress)
    if min_tokens is None:
        min_tokens = default_min_tokens(options.method)
    if not isinstance(keep_duplicates, bool):
        raise InvalidArgument(f"keep_duplicates must be True or False, not {keep_duplicates!r}"[:200])
    check_min_tokens(min_tokens)
    count_to_keep(1, top, fraction)   # check K or P before any work
    check_outputs(pool, target, out, scores_csv)  # and that no output is an input
    scores = score_pool(pool, target, options, store, progress)
    cutoff = choose(scores, top=top, fraction=fraction, keep_duplicates=keep_duplicates, min_tokens=min_tokens)
    if out is not None or scores_csv is not None:
        write_selection(pool, scores, cutoff, out, scores_csv, keep_duplicates, progress)
    return SelectionResult(scores, cutoff, Path(out) if out else None, Path(scores_csv) if scores_csv else None,
                           keep_duplicates)
