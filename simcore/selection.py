"""Sentence selection: the pool sentences most useful for continued pretraining toward a target.

A large unlabeled *pool* (domain-level corpus) is scored one sentence at a time against a small
*target* (task-level corpus) by one of four methods (the selective pretraining paper and its
perplexity baseline; see :mod:`simcore.selection_methods`):

- ``cosine``: cosine similarity of the sentence's embedding to the mean target embedding;
- ``ppl``: perplexity under a KenLM model of the target (lower kept);
- ``xent``: Moore-Lewis cross-entropy difference, target model minus pool model (lower kept);
- ``entities``: number of entities a spaCy NER pipeline finds in the sentence (higher kept).

The pool streams in batches. Scores go to a file of float64 values (one per pool unit, in pool
order) kept in the artefact store, so choosing another K or fraction reads them back without
scoring again. Choosing the top K keeps a running heap of K (key, index) pairs; choosing a
fraction finds the cut-off in the score file by histogram refinement, with memory bounded by a
chunk of scores. A second streaming pass over the pool writes the kept sentences and, if asked,
every sentence's score. Pool sentences that are exact duplicates of a target sentence (after
tokenization and lower-casing) are flagged and, by default, never kept.
"""

from __future__ import annotations

import csv
import gzip
import heapq
import io
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .corpus import Corpus, TokenizedCorpus, sample_corpus, tokenize_corpus
from .errors import SimcoreError
from .export import escape_formulas
from .store import ArtefactStore, digest
from .tokenize import TokenizerOptions, normalise, tokenize

Progress = Callable[[str, float], None]

METHODS = ("cosine", "ppl", "xent", "entities")
HIGHER_KEPT = {"cosine": True, "ppl": False, "xent": False, "entities": True}
DESCRIPTIONS = {
    "cosine": "cosine similarity of the sentence embedding to the mean target embedding (higher kept)",
    "ppl": "perplexity under a KenLM model of the target (lower kept)",
    "xent": "Moore-Lewis cross-entropy difference, target model minus pool model (lower kept)",
    "entities": "number of entities a spaCy NER pipeline finds in the sentence (higher kept)",
}
_VERSION = 2
_CHUNK = 1 << 20          # scores read per chunk when choosing and writing
_IN_MEMORY = 1 << 21      # candidates gathered in memory once the cut-off range is this small
_BINS = 4096


def _quiet(message: str, fraction: float) -> None:
    pass


@dataclass(frozen=True)
class SelectionOptions:
    """How pool sentences are scored. Only the options a method reads enter its cache key."""

    method: str = "cosine"
    pool_sample: int = 100_000        # pool sentences for the pool-side models (word2vec, xent, labels)
    target_tokens: int | None = None  # use a sample of the target of about this many tokens
    order: int = 3                    # KenLM order (ppl, xent)
    memory: str = "1G"                # KenLM estimation memory
    dims: int = 100                   # word2vec (cosine)
    window: int = 5
    min_count: int = 2
    epochs: int = 5
    workers: int = 2
    encoder: str | None = None        # local sentence-transformers model directory (cosine)
    pipeline: str | None = None       # spaCy pipeline directory (entities); default the bundled one
    entity_labels: str = "auto"       # auto (types over-represented in the target) | all | L1,L2
    seed: int = 13
    batch: int = 2000
    lowercase: bool = True

    _METHOD_KEYS = {
        "cosine": ("pool_sample", "dims", "window", "min_count", "epochs", "encoder", "seed"),
        "ppl": ("order",),
        "xent": ("pool_sample", "order", "seed"),
        "entities": ("pool_sample", "pipeline", "entity_labels", "seed"),
    }

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise SimcoreError(f"unknown selection method {self.method!r}; choose from {', '.join(METHODS)}")
        for name in ("pool_sample", "order", "dims", "window", "min_count", "epochs", "workers", "batch"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SimcoreError(f"{name.replace('_', ' ')} must be a whole number of at least 1, not {value!r}")
        if self.target_tokens is not None and self.target_tokens < 1:
            raise SimcoreError("the target sample must have at least 1 token")

    @property
    def tokenizer(self) -> TokenizerOptions:
        return TokenizerOptions(lowercase=self.lowercase)

    def key_parts(self) -> dict[str, Any]:
        values = asdict(self)
        return {k: values[k] for k in self._METHOD_KEYS[self.method]} | {
            "method": self.method, "target_tokens": self.target_tokens, "lowercase": self.lowercase}


# --------------------------------------------------------------------------- the pool stream

@dataclass
class Batch:
    """Consecutive pool units: their first index, original texts and normalised tokens."""

    start: int
    texts: list[str]
    tokens: list[list[str]]


def unit_text(unit: str | list[str]) -> str:
    """A pool unit as one line of original text (line breaks inside it become spaces)."""
    if isinstance(unit, str):
        return " ".join(part.strip() for part in unit.splitlines() if part.strip())
    return " ".join(unit)


def unit_tokens(unit: str | list[str], options: TokenizerOptions) -> list[str]:
    if isinstance(unit, str):
        return tokenize(unit, options)
    return [normalise(t, options) for t in unit]


class _Fraction:
    """The reading position of a pool, updated by Corpus.units' progress callback."""

    def __init__(self) -> None:
        self.value = 0.0

    def __call__(self, message: str, fraction: float) -> None:
        self.value = fraction


def pool_batches(pool: Corpus, options: TokenizerOptions, size: int, where: _Fraction | None = None) -> Iterator[Batch]:
    texts: list[str] = []
    tokens: list[list[str]] = []
    start = 0
    for unit in pool.units(where or _quiet):
        texts.append(unit_text(unit))
        tokens.append(unit_tokens(unit, options))
        if len(texts) >= size:
            yield Batch(start, texts, tokens)
            start += len(texts)
            texts, tokens = [], []
    if texts:
        yield Batch(start, texts, tokens)


def pool_fingerprint(pool: Corpus, options: TokenizerOptions) -> str:
    return digest("selection-pool", pool.raw_fingerprint(options))


def pool_sample(pool: Corpus, fingerprint: str, store: ArtefactStore, n: int, seed: int,
                progress: Progress = _quiet) -> Path:
    """A uniform random sample of ``n`` pool units (reservoir sampling, pool order kept).

    The stored artefact holds ``text.txt`` (original text, one unit a line, for NER) and
    ``index.npy`` (each line's position in the pool); callers tokenize it as they need. Reading the pool for it does not tokenize anything.
    """
    key = digest("selection-pool-sample", fingerprint, n, seed)

    def build(out: Path) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        reservoir: list[tuple[int, str]] = []
        where = _Fraction()
        count = 0
        # Algorithm L (Li 1994): skip ahead geometrically once the reservoir is full.
        w = math.exp(math.log(rng.random()) / n)
        next_pick = n + int(math.log(rng.random()) / math.log(1 - w)) if w < 1 else n
        for i, unit in enumerate(pool.units(where)):
            count = i + 1
            if i < n:
                reservoir.append((i, unit_text(unit)))
            elif i == next_pick:
                reservoir[int(rng.integers(n))] = (i, unit_text(unit))
                w *= math.exp(math.log(rng.random()) / n)
                next_pick += 1 + (int(math.log(rng.random()) / math.log(1 - w)) if w < 1 else 0)
            if i % 50_000 == 0:
                progress(f"sampling the pool ({count:,} sentences read)", where.value)
        reservoir.sort()
        with open(out / "text.txt", "w", encoding="utf-8") as f:
            for _, text in reservoir:
                f.write(text + "\n")
        np.save(out / "index.npy", np.asarray([i for i, _ in reservoir], dtype=np.int64))
        return {"n": len(reservoir), "pool_units": count}

    return store.build("selection-pool-sample", key, build) / "text.txt"


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


# --------------------------------------------------------------------------- the target

class Target:
    """The target (task-level) corpus: tokenized, optionally sampled, with its sentence set."""

    def __init__(self, corpus: Corpus, store: ArtefactStore, options: SelectionOptions,
                 progress: Progress = _quiet) -> None:
        self.corpus = corpus
        self.full: TokenizedCorpus = tokenize_corpus(corpus, store, options.tokenizer, progress)
        self.sample: TokenizedCorpus = (
            sample_corpus(self.full, options.target_tokens, 0, store, options.seed)
            if options.target_tokens else self.full)
        self._sentences: set[str] | None = None

    @property
    def name(self) -> str:
        return self.corpus.name

    @property
    def fingerprint(self) -> str:
        return self.sample.fingerprint

    def sentence_set(self) -> set[str]:
        """Every target sentence (of the whole target, not only the sample), normalised."""
        if self._sentences is None:
            with open(self.full.tokens_file, encoding="utf-8") as f:
                self._sentences = {line.rstrip("\n") for line in f}
        return self._sentences

    def raw_texts(self, limit: int) -> list[str]:
        """Up to ``limit`` target units as original (cased) text, spread over the target."""
        texts = [unit_text(u) for u in self.corpus.units()]
        if len(texts) > limit:
            keep = np.random.default_rng(13).choice(len(texts), limit, replace=False)
            texts = [texts[i] for i in sorted(keep)]
        return texts


# --------------------------------------------------------------------------- scoring

@dataclass
class ScoreSet:
    """Scores of every pool unit (pool order), with duplicate flags and run details."""

    path: Path
    method: str
    higher_kept: bool
    n: int
    meta: dict[str, Any] = field(default_factory=dict)

    def scores(self) -> np.ndarray:
        if self.n == 0:
            return np.zeros(0)
        return np.memmap(self.path / "scores.f64", dtype=np.float64, mode="r", shape=(self.n,))

    def duplicates(self) -> np.ndarray:
        if self.n == 0:
            return np.zeros(0, dtype=bool)
        return np.memmap(self.path / "dups.u8", dtype=np.uint8, mode="r", shape=(self.n,))


def score_pool(pool: Corpus, target: Corpus, options: SelectionOptions, store: ArtefactStore,
               progress: Progress = _quiet) -> ScoreSet:
    """Score every pool unit against the target with ``options.method`` (stored; cached)."""
    from .selection_methods import make_scorer

    started = time.perf_counter()
    progress("reading the target", 0.0)
    prepared = Target(target, store, options)
    pool_fp = pool_fingerprint(pool, options.tokenizer)
    key = digest("selection-scores", _VERSION, pool_fp, prepared.fingerprint, prepared.full.fingerprint,
                 options.key_parts())

    def build(out: Path) -> dict[str, Any]:
        scorer = make_scorer(options, pool, pool_fp, prepared, store, progress)
        prepare_s = time.perf_counter() - started
        where = _Fraction()
        seen = prepared.sentence_set()
        n = 0
        pass_started = time.perf_counter()
        with open(out / "scores.f64", "wb") as scores_file, open(out / "dups.u8", "wb") as dups_file:
            for batch in pool_batches(pool, options.tokenizer, options.batch, where):
                scores = np.asarray(scorer.score(batch), dtype=np.float64)
                empty = np.fromiter((not t for t in batch.tokens), dtype=bool, count=len(batch.tokens))
                scores[empty] = np.nan
                dups = np.fromiter((bool(t) and " ".join(t) in seen for t in batch.tokens), dtype=np.uint8,
                                   count=len(batch.tokens))
                scores_file.write(scores.tobytes())
                dups_file.write(dups.tobytes())
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
                "pool": pool.name, "target": prepared.name, "target_sentences": prepared.sample.n_units}

    path = store.build("selection-scores", key, build)
    meta = store.meta(path)
    return ScoreSet(path, options.method, HIGHER_KEPT[options.method], meta["n"], meta)


# --------------------------------------------------------------------------- choosing

@dataclass(frozen=True)
class Cutoff:
    """Kept: eligible units whose (key, index) is at most (key, index) of the cut-off.

    The key is the score for methods where lower is kept and minus the score otherwise, so ties
    are broken by pool order (earlier kept first).
    """

    key: float
    index: int
    n_kept: int
    n_eligible: int
    n_duplicates: int
    n_unscored: int
    k: int

    def score(self, higher_kept: bool) -> float:
        return -self.key if higher_kept else self.key


def _chunks(scores: ScoreSet, keep_duplicates: bool, chunk: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(start, keys, eligible) for consecutive chunks of the score file."""
    values, dups = scores.scores(), scores.duplicates()
    sign = -1.0 if scores.higher_kept else 1.0
    for start in range(0, scores.n, chunk):
        keys = sign * np.asarray(values[start:start + chunk], dtype=np.float64)
        eligible = np.isfinite(keys)
        if not keep_duplicates:
            eligible &= np.asarray(dups[start:start + chunk]) == 0
        yield start, keys, eligible


def count_to_keep(n: int, top: int | None = None, fraction: float | None = None) -> int:
    """K from --top or --fraction (a fraction of all pool units, rounded, at least 1)."""
    if (top is None) == (fraction is None):
        raise SimcoreError("give either a number of sentences to keep (top K) or a fraction, not both")
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
            raise SimcoreError(f"top K must be a whole number of at least 1, not {top!r}")
        return int(top)
    if not isinstance(fraction, int | float) or not math.isfinite(fraction) or not 0 < fraction <= 1:
        hint = f" (for {fraction:g}% give {fraction / 100:g})" if isinstance(fraction, int | float) and 1 < fraction <= 100 else ""
        raise SimcoreError(f"the fraction must be above 0 and at most 1, not {fraction!r}{hint}")
    return max(1, int(math.floor(fraction * n + 0.5)))


def choose(scores: ScoreSet, top: int | None = None, fraction: float | None = None,
           keep_duplicates: bool = False, chunk: int = _CHUNK, in_memory: int = _IN_MEMORY) -> Cutoff:
    """The cut-off keeping the best K eligible units (top K: a heap; a fraction: the score file)."""
    k = count_to_keep(scores.n, top, fraction)
    n_eligible = n_dups = n_unscored = 0
    for start, keys, _ in _chunks(scores, True, chunk):
        finite = np.isfinite(keys)
        n_unscored += int((~finite).sum())
        dups = np.asarray(scores.duplicates()[start:start + len(keys)]) != 0
        n_dups += int((dups & finite).sum())
        n_eligible += int((finite & (keep_duplicates | ~dups)).sum())
    kept = min(k, n_eligible)
    if kept == 0:
        raise SimcoreError("no pool sentence can be kept: every one is unscored or a duplicate of the target")
    if top is not None:
        key, index = _heap_cutoff(scores, kept, keep_duplicates, chunk)
    else:
        key, index = _histogram_cutoff(scores, kept, keep_duplicates, chunk, in_memory)
    return Cutoff(key, index, kept, n_eligible, n_dups, n_unscored, k)


def _heap_cutoff(scores: ScoreSet, k: int, keep_duplicates: bool, chunk: int) -> tuple[float, int]:
    """The k-th smallest (key, index): a running max-heap of the k best pairs seen so far."""
    heap: list[tuple[float, int]] = []   # (-key, -index): the root is the worst pair kept
    for start, keys, eligible in _chunks(scores, keep_duplicates, chunk):
        candidates = np.flatnonzero(eligible)
        if len(heap) >= k:
            worst = -heap[0][0]
            candidates = candidates[keys[candidates] <= worst]
        for i in candidates.tolist():
            item = (-float(keys[i]), -(start + i))
            if len(heap) < k:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
    return -heap[0][0], -heap[0][1]


def _histogram_cutoff(scores: ScoreSet, k: int, keep_duplicates: bool, chunk: int,
                      in_memory: int) -> tuple[float, int]:
    """The k-th smallest (key, index) with memory bounded by a chunk, refining a histogram."""
    levels: list[tuple[float, float, int]] = []   # (low, high, bin) restrictions so far
    below = 0                                      # eligible pairs known to come before the range

    def in_range(keys: np.ndarray, eligible: np.ndarray) -> np.ndarray:
        mask = eligible.copy()
        for low, high, b in levels:
            mask &= _bin_of(keys, low, high) == b
        return mask

    while True:
        count, low, high = 0, math.inf, -math.inf
        for _, keys, eligible in _chunks(scores, keep_duplicates, chunk):
            mask = in_range(keys, eligible)
            if mask.any():
                count += int(mask.sum())
                low, high = min(low, float(keys[mask].min())), max(high, float(keys[mask].max()))
        rank = k - below   # 1-based rank of the cut-off within the range
        if count <= in_memory or low == high:
            return _rank_in_range(scores, keep_duplicates, chunk, in_range, rank, count <= in_memory)
        histogram = np.zeros(_BINS, dtype=np.int64)
        for _, keys, eligible in _chunks(scores, keep_duplicates, chunk):
            mask = in_range(keys, eligible)
            histogram += np.bincount(_bin_of(keys[mask], low, high), minlength=_BINS)
        cumulative = np.cumsum(histogram)
        b = int(np.searchsorted(cumulative, rank))
        below += int(cumulative[b - 1]) if b > 0 else 0
        levels.append((low, high, b))


def _bin_of(keys: np.ndarray, low: float, high: float) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (keys - low) / (high - low) * _BINS
    return np.clip(np.nan_to_num(scaled, nan=-1.0, posinf=_BINS, neginf=-1.0), -1, _BINS - 1).astype(np.int64)


def _rank_in_range(scores: ScoreSet, keep_duplicates: bool, chunk: int, in_range: Callable,
                   rank: int, gather: bool) -> tuple[float, int]:
    if gather:
        keys_in, index_in = [], []
        for start, keys, eligible in _chunks(scores, keep_duplicates, chunk):
            where = np.flatnonzero(in_range(keys, eligible))
            keys_in.append(keys[where])
            index_in.append(where + start)
        all_keys, all_index = np.concatenate(keys_in), np.concatenate(index_in)
        order = np.lexsort((all_index, all_keys))
        pick = order[rank - 1]
        return float(all_keys[pick]), int(all_index[pick])
    # Every key in the range is equal: the cut-off is the rank-th of them in pool order.
    seen = 0
    for start, keys, eligible in _chunks(scores, keep_duplicates, chunk):
        where = np.flatnonzero(in_range(keys, eligible))
        if seen + len(where) >= rank:
            i = int(where[rank - seen - 1])
            return float(keys[i]), start + i
        seen += len(where)
    raise AssertionError("rank beyond the range")  # pragma: no cover


def kept_mask(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool, start: int, stop: int) -> np.ndarray:
    """Which units in [start, stop) are kept."""
    sign = -1.0 if scores.higher_kept else 1.0
    keys = sign * np.asarray(scores.scores()[start:stop], dtype=np.float64)
    eligible = np.isfinite(keys)
    if not keep_duplicates:
        eligible &= np.asarray(scores.duplicates()[start:stop]) == 0
    index = np.arange(start, stop)
    return eligible & ((keys < cutoff.key) | ((keys == cutoff.key) & (index <= cutoff.index)))


def kept_indices(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool = False) -> np.ndarray:
    """Indices of the kept units (for comparing selections; K integers)."""
    parts = [np.flatnonzero(kept_mask(scores, cutoff, keep_duplicates, s, min(s + _CHUNK, scores.n))) + s
             for s in range(0, scores.n, _CHUNK)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """|A ∩ B| / |A ∪ B| of two selections given as index arrays."""
    union = np.union1d(a, b).size
    return float(np.intersect1d(a, b).size / union) if union else 1.0


# --------------------------------------------------------------------------- writing

@dataclass
class SelectionResult:
    scores: ScoreSet
    cutoff: Cutoff
    out: Path | None
    scores_csv: Path | None
    keep_duplicates: bool = False

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
        meta = s.meta
        lines.append(f"scoring: {meta.get('rate', 0):,.0f} sentences/s "
                     f"(+{meta.get('prepare_seconds', 0):.1f} s preparing models)")
        return "\n".join(lines)


def write_selection(pool: Corpus, scores: ScoreSet, cutoff: Cutoff, out: Path | str | None,
                    scores_csv: Path | str | None = None, keep_duplicates: bool = False,
                    progress: Progress = _quiet) -> None:
    """Stream the pool again: kept sentences to ``out`` (gzip if it ends in .gz), scores to CSV."""
    out = Path(out) if out is not None else None
    scores_csv = Path(scores_csv) if scores_csv is not None else None
    for path in (out, scores_csv):
        if path is not None:
            if path.is_dir():
                raise SimcoreError(f"{path} is a directory; give a file name")
            if not path.parent.exists():
                raise SimcoreError(f"cannot write {path}: the directory {path.parent} does not exist")
    values, dups = scores.scores(), scores.duplicates()
    where = _Fraction()
    n = 0
    try:
        text_out = _open_out(out) if out else None
        csv_out = open(scores_csv, "w", encoding="utf-8", newline="") if scores_csv else None
    except OSError as exc:
        raise SimcoreError(f"cannot write the selection: {exc.strerror} ({exc.filename})") from exc
    try:
        if csv_out:
            csv.writer(csv_out).writerow(["index", "score", "kept", "duplicate_of_target", "text"])
        for unit in pool.units(where):
            if n % _CHUNK == 0:
                kept = kept_mask(scores, cutoff, keep_duplicates, n, min(n + _CHUNK, scores.n))
                rows: list[tuple[int, float, bool, bool, str]] = []
            if n >= scores.n:
                raise SimcoreError(f"{pool.name} changed while it was being selected from; run again")
            text = unit_text(unit)
            is_kept = bool(kept[n % _CHUNK])
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
        if csv_out and rows:
            _write_rows(csv_out, rows)
    except OSError as exc:
        raise SimcoreError(f"cannot write the selection: {exc}") from exc
    finally:
        if text_out:
            text_out.close()
        if csv_out:
            csv_out.close()
    progress("selection written", 1.0)


def _open_out(path: Path) -> io.TextIOBase:
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "wb"), encoding="utf-8")
    return open(path, "w", encoding="utf-8")


def _write_rows(handle: Any, rows: list[tuple]) -> None:
    table = pd.DataFrame(rows, columns=["index", "score", "kept", "duplicate_of_target", "text"])
    escape_formulas(table).to_csv(handle, header=False, index=False, float_format="%.8g")


def select(pool: Corpus, target: Corpus, options: SelectionOptions, store: ArtefactStore,
           top: int | None = None, fraction: float | None = None, out: Path | str | None = None,
           scores_csv: Path | str | None = None, keep_duplicates: bool = False,
           progress: Progress = _quiet) -> SelectionResult:
    """Score, choose and write: what ``python -m simcore select`` does."""
    count_to_keep(1, top, fraction)   # check K or P before any work
    scores = score_pool(pool, target, options, store, progress)
    cutoff = choose(scores, top=top, fraction=fraction, keep_duplicates=keep_duplicates)
    if out is not None or scores_csv is not None:
        write_selection(pool, scores, cutoff, out, scores_csv, keep_duplicates, progress)
    return SelectionResult(scores, cutoff, Path(out) if out else None, Path(scores_csv) if scores_csv else None,
                           keep_duplicates)


def with_method(options: SelectionOptions, method: str) -> SelectionOptions:
    return replace(options, method=method)
