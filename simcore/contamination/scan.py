"""Overlap of every source with every target, computed where the source is read, stored per fingerprint.

A source tokenized whole (a small one) is scanned in its stored tokens (what its one read wrote);
a large source is scanned inside its streaming pass (:func:`simcore.corpora.sampling.sample_source`
with the scanner watching every unit), so the source is read once. Only when that pass is already
remembered from an earlier run and a new target comes is the source read again, by the scanner
alone. Each (source, target) result is stored under both fingerprints, the n-gram and the
tokenizer options, like any other artefact: a second run reads it back.

When the pass runs in pieces in other processes (``--jobs``) or on Dask workers, each piece's task
scans its units (:class:`PieceScan`, :func:`piece_scanner`), the hits are merged by union, and the
results are stored under the pass's fingerprint (:func:`store_scan`): :func:`source_overlaps` then
reads them back instead of reading the source again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import Corpus, unit_tokenizer
from ..corpora.sampling import remembered_pass, sample_source
from ..corpora.tokenize import TokenizerOptions
from ..matrix.corpus_cache import STREAM_SIZES
from ..utils.errors import SimcoreError, StoreError
from ..utils.store import ArtefactStore, digest
from .ngrams import (
    MIN_CHARS_CUT,
    MIN_WORDS,
    OVERLAP_CHAR_NGRAM,
    OVERLAP_NGRAM,
    OVERLAP_VERSION,
    Scanner,
    ScanTargets,
    TargetIndex,
    target_sentences,
)

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class OverlapOptions:
    """The n-gram of the overlap: words, or characters for a target cut into characters."""

    ngram: int = OVERLAP_NGRAM
    char_ngram: int = OVERLAP_CHAR_NGRAM

    def n_for(self, chars: bool) -> tuple[int, int]:
        return (self.char_ngram, MIN_CHARS_CUT) if chars else (self.ngram, MIN_WORDS)


@dataclass(frozen=True)
class Overlap:
    """One (source, target) pair: the shares of target sentences the source holds."""

    overlap_test: float  # NaN when the target has no test split
    overlap_all: float
    test_held: int
    held: int
    test_sentences: int
    sentences: int
    n: int
    unit: str  # "words" or "characters"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def target_index(cache: Any, target: Corpus, options: OverlapOptions) -> TargetIndex:
    """A target's n-gram hashes (kept in memory per target and options)."""
    chars = cache.tokenizer.chars
    n, min_words = options.n_for(chars)
    memo = cache.__dict__.setdefault("_overlap_indexes", {})
    key = (target.name, cache.raw_key(target), n, min_words, chars)
    if key not in memo:
        memo[key] = TargetIndex.build(target.name, target_sentences(target, cache.tokenizer), n, min_words)
    return memo[key]


def _key(source_fingerprint: str, target_fingerprint: str, index: TargetIndex,
         tokenizer: TokenizerOptions) -> str:
    return digest("overlap", OVERLAP_VERSION, source_fingerprint, target_fingerprint, index.n, index.min_words,
                  tokenizer.as_dict())


def _readable_indexes(cache: Any, targets: Sequence[Corpus],
                      options: OverlapOptions) -> tuple[dict[str, TargetIndex], dict[str, str]]:
    """The index and the fingerprint of each target that can be read (the others' cells say why)."""
    indexes: dict[str, TargetIndex] = {}
    target_prints: dict[str, str] = {}
    for t in targets:
        try:
            indexes[t.name] = target_index(cache, t, options)
            target_prints[t.name] = cache.tokenize(t).fingerprint
        except StoreError:
            raise
        except SimcoreError:
            continue
    return indexes, target_prints


def _result(index: TargetIndex, hits: set[int], chars: bool) -> Overlap:
    test, share, test_held, held = index.shares(hits)
    return Overlap(test, share, test_held, held, sum(index.is_test), len(index.is_test), index.n,
                   "characters" if chars else "words")


def source_overlaps(cache: Any, source: Corpus, targets: Sequence[Corpus], options: OverlapOptions = OverlapOptions(),
                    progress: Progress = lambda m, f: None, samples: int = 1) -> dict[str, Overlap]:
    """Overlap of ``source`` with each readable target (by name); stored, read back when stored.
    ``samples``: the sample count of the matrix, so a large source's pass here is the one it remembers."""
    indexes, target_prints = _readable_indexes(cache, targets, options)
    if not indexes:
        return {}
    streams = cache.streams(source)
    if streams:
        remembered = remembered_pass(source, STREAM_SIZES, samples, cache.options.seed, cache.store, cache.tokenizer)
        fingerprint = remembered.fingerprint if remembered is not None else None
    else:
        fingerprint = cache.tokenize(source, progress).fingerprint
    out: dict[str, Overlap] = {}
    missing = []
    for name, index in indexes.items():
        record = (cache.store.get_json("overlap", _key(fingerprint, target_prints[name], index, cache.tokenizer))
                  if fingerprint else None)
        if record is not None:
            out[name] = Overlap(**{**record, "overlap_test": _num(record["overlap_test"]),
                                   "overlap_all": _num(record["overlap_all"])})
        else:
            missing.append(name)
    if not missing:
        return out
    scanner = Scanner([indexes[m] for m in missing],
                      unit_tokenizer(source.segmenter(), cache.tokenizer) if streams else str.split)
    progress(f"overlap of {source.name} with {', '.join(missing)}", 0.0)
    if streams and fingerprint is None:  # the pass that samples the source, with the scanner watching
        fingerprint = sample_source(source, STREAM_SIZES, samples, cache.options.seed, cache.store, cache.tokenizer,
                                    progress, watch=scanner.watch).fingerprint
    elif streams:  # the pass was remembered before these targets came: the scanner reads on its own
        for _unit in scanner.watch(source.units(progress)):
            pass
    else:
        with open(cache.tokenize(source).tokens_file, encoding="utf-8") as lines:
            for _ in scanner.watch(line.rstrip("\n") for line in lines):
                pass
    hits = scanner.result()
    for name in missing:
        out[name] = _put(cache.store, cache.tokenizer, fingerprint, target_prints[name], indexes[name], hits)
    return out


def _put(store: ArtefactStore, tokenizer: TokenizerOptions, fingerprint: str, target_print: str,
         index: TargetIndex, hits: set[int]) -> Overlap:
    """One pair's result from the keys the source holds, stored under both fingerprints."""
    result = _result(index, hits, tokenizer.chars)
    store.put_json("overlap", _key(fingerprint, target_print, index, tokenizer),
                   {**result.as_dict(), "overlap_test": _json(result.overlap_test),
                    "overlap_all": _json(result.overlap_all)})
    return result


@dataclass(frozen=True)
class PieceScan:
    """What the pieces of a large source's pass need to scan for its targets in other processes (it
    pickles): the scanner's tables (:class:`~simcore.contamination.ngrams.ScanTargets`, not the
    targets' sentences), the targets' fingerprints, and the tokenizer options of the run. The
    sentences, which only :func:`store_scan` needs, are in the store under ``key``."""

    targets: ScanTargets
    target_prints: tuple[str, ...]
    tokenizer: TokenizerOptions
    key: str  # names the scan: in a process's memo of scanners, and the sentences in the store


_SENTENCES: dict[str, list[TargetIndex]] = {}  # key -> the targets' sentences, in this process


def piece_scan(cache: Any, targets: Sequence[Corpus], options: OverlapOptions) -> PieceScan | None:
    """What the pieces of a source's pass need to scan for ``targets`` (those that can be read; the
    targets are tokenized here if they are not yet); None when none can be read. The targets'
    sentences go to the store, for :func:`store_scan` wherever it runs."""
    indexes, prints = _readable_indexes(cache, targets, options)
    if not indexes:
        return None
    names = list(indexes)
    key = digest("piece-scan", OVERLAP_VERSION, [prints[n] for n in names],
                 [(indexes[n].n, indexes[n].min_words) for n in names], cache.tokenizer.as_dict())
    chosen = [indexes[n] for n in names]
    cache.store.build(SENTENCES_KIND, key, lambda folder: _write_sentences(folder, chosen))
    _SENTENCES.clear()  # one scan at a time
    _SENTENCES[key] = chosen
    return PieceScan(ScanTargets.of(chosen), tuple(prints[n] for n in names), cache.tokenizer, key)


SENTENCES_KIND = "overlap-targets"


def _write_sentences(folder: Path, indexes: Sequence[TargetIndex]) -> dict[str, Any]:
    """Each target's sentences as their keys (flat, and where each sentence starts), test flags."""
    arrays = {}
    for k, index in enumerate(indexes):
        flat = [key for keys in index.sentence_keys for key in keys]
        arrays[f"keys{k}"] = np.array(flat, dtype=np.uint64)
        sizes = [len(keys) for keys in index.sentence_keys]
        arrays[f"cut{k}"] = np.cumsum([0, *sizes], dtype=np.int64)
        arrays[f"test{k}"] = np.array(index.is_test, dtype=np.bool_)
    np.savez(folder / "sentences.npz", **arrays)
    return {"targets": [[i.name, i.n, i.min_words] for i in indexes]}


def _read_sentences(store: ArtefactStore, key: str) -> list[TargetIndex]:
    """The targets' sentences :func:`piece_scan` stored (as indexes holding only them)."""
    if key in _SENTENCES:
        return _SENTENCES[key]
    path = store.get(SENTENCES_KIND, key)
    if path is None:
        raise StoreError(f"the overlap scan's targets ({key[:12]}) are missing from the store "
                         f"{store.root}; run the matrix again")
    out = []
    with np.load(path / "sentences.npz") as arrays:
        for k, (name, n, min_words) in enumerate(store.meta(path)["targets"]):
            keys, cut = arrays[f"keys{k}"].tolist(), arrays[f"cut{k}"].tolist()
            sentences = [tuple(keys[a:b]) for a, b in zip(cut[:-1], cut[1:])]
            out.append(TargetIndex(name, n, min_words, sentences, arrays[f"test{k}"].tolist()))
    _SENTENCES.clear()
    _SENTENCES[key] = out
    return out


_SCANNERS: dict[tuple[str, str, str], Scanner] = {}


def piece_scanner(scan: PieceScan, source: Corpus) -> Scanner:
    """A scanner for one piece of ``source``, its ``hits`` empty; its tables are built once a process."""
    key = (scan.key, source.name, source.segmenter().name)
    if key not in _SCANNERS:
        _SCANNERS.clear()  # one scan at a time: the tables are large
        _SCANNERS[key] = Scanner(scan.targets, unit_tokenizer(source.segmenter(), scan.tokenizer))
    scanner = _SCANNERS[key]
    scanner.flush()  # a piece that failed may have left units in the batch
    scanner.hits = set()
    return scanner


def store_scan(store: ArtefactStore, scan: PieceScan, fingerprint: str, hits: set[int]) -> None:
    """The overlap of a source whose pass (fingerprint ``fingerprint``) was read in pieces, from the
    union of the pieces' hits: stored as :func:`source_overlaps` stores it, so it reads it back."""
    for index, target_print in zip(_read_sentences(store, scan.key), scan.target_prints):
        _put(store, scan.tokenizer, fingerprint, target_print, index, hits)


def _json(value: float) -> float | None:
    return None if math.isnan(value) else value


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)
