"""Sharded corpora on a cluster: each file read, tokenized, fingerprinted and sampled as a task.

A source given as a directory or a glob of many (plain or compressed) files is tokenized file by
file on the workers; the parts are joined, in file order, into the same tokenized corpus (bytes,
fingerprint, store key) that :func:`simcore.corpora.corpus.tokenize_corpus` makes in one process. A
sample is chosen from the lengths of all units with the seed alone (:func:`simcore.corpora.corpus.sample_units`),
each shard writes its chosen units, and the pieces are joined into what
:func:`simcore.corpora.corpus.sample_corpus` makes: the same sample however many workers run.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..contamination.scan import PieceScan, piece_scanner, store_scan
from ..corpora.corpus import (
    Corpus,
    TokenizedCorpus,
    join_parts,
    join_sample,
    sample_part,
    sample_units,
    tokenize_part,
)
from ..corpora.globbing import glob_files
from ..corpora.listing import MAX_FILES
from ..corpora.remote import is_url, location
from ..corpora.remote_corpora import corpus_from_url_glob
from ..corpora.sampling import (
    Candidates,
    StreamSamples,
    draw_samples,
    pieces,
    remember_pass,
    shard_candidates,
)
from ..corpora.tokenize import TokenizerOptions
from ..measures.options import MeasureOptions
from ..utils.errors import CorpusError, SimcoreError
from ..utils.store import ArtefactStore, digest
from .cluster import one_line

Progress = Callable[[str, float], None]
RETRIES = 1  # for exceptions other than simcore's own; a lost worker's task is rescheduled by Dask itself


@dataclass(frozen=True)
class Settings:
    """What every task needs to rebuild the caller's workbench on a worker (small and picklable)."""

    store_root: str
    tokenizer: TokenizerOptions = TokenizerOptions()
    options: MeasureOptions = MeasureOptions()

    @property
    def store(self) -> ArtefactStore:
        return _store(self.store_root)


@functools.lru_cache(maxsize=8)
def _store(root: str) -> ArtefactStore:
    return ArtefactStore(root)


@dataclass(frozen=True)
class Failed:
    """A task's result when the input is at fault: returned, not raised, so Dask does not retry it."""

    message: str


def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        failed = next((a for a in args if isinstance(a, Failed)), None)
        if failed is not None:
            return failed
        try:
            return function(*args, **kwargs)
        except SimcoreError as exc:
            return Failed(str(exc))
    return run


def corpus_from_glob(pattern: str, name: str | None = None, **options: Any) -> Corpus:
    """One corpus made of every file matching a glob (``**`` included), in sorted order, each file once
    (links that loop, or lead into /proc, are caught: see :mod:`simcore.corpora.globbing`)."""
    storage_options = options.pop("storage_options", None)
    if is_url(pattern) and not isinstance(location(pattern), Path):  # s3://bucket/crawl/part-*.zst and the like
        return corpus_from_url_glob(pattern, name, storage_options, **options)
    if is_url(pattern):
        pattern = str(location(pattern))
    files = glob_files(pattern, MAX_FILES)
    if not files:
        raise CorpusError(f"no files match {pattern}")
    for f in files:
        if f.stat().st_size == 0:
            raise CorpusError(f"{name or pattern}: {f.name} is empty")
    parent = Path(os.path.commonpath([f.parent for f in files]))
    return Corpus(name=name or parent.name, path=parent, files=tuple(files), **options)


def add_source_glob_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source-glob", action="append", default=[], metavar="NAME=GLOB",
                        help="one more source made of every file matching GLOB (quote it), e.g. "
                             "crawl='/data/crawl/part-*.gz'; repeatable")


def with_glob_sources(sources: list[Corpus], specs: Sequence[str], **options: Any) -> list[Corpus]:
    """``sources`` and one corpus per ``NAME=GLOB``; names must stay unique."""
    out = list(sources)
    for spec in specs:
        name, sep, pattern = spec.partition("=")
        if not sep or not name.strip() or not pattern.strip():
            raise CorpusError(f"--source-glob {spec!r}: write NAME=GLOB, e.g. crawl='/data/crawl/part-*.gz'")
        out.append(corpus_from_glob(pattern.strip(), name=name.strip(), **options))
    names = [c.name for c in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise CorpusError(f"several sources share the name {', '.join(duplicates)}")
    return out


# Tasks (run on the workers). Each returns a small picklable value; the text stays in the store.

@_guarded
def tokenize_shard(settings: Settings, corpus: Corpus, file: Path) -> TokenizedCorpus:
    return tokenize_part(corpus, file, settings.store, settings.tokenizer)


@_guarded
def fingerprint_corpus(settings: Settings, corpus: Corpus) -> str:
    return corpus.raw_fingerprint(settings.tokenizer)


@_guarded
def join_shards(settings: Settings, corpus: Corpus, raw_key: str, *parts: TokenizedCorpus) -> TokenizedCorpus:
    return join_parts(corpus, list(parts), settings.store, settings.tokenizer, raw_key)


@_guarded
def plan_sample(tokenized: TokenizedCorpus, part_units: list[int], n_tokens: int, index: int,
                seed: int) -> list[np.ndarray]:
    """The chosen units of each part (indices within the part)."""
    keep = sample_units(tokenized.lengths(), n_tokens, index, seed)
    bounds = np.concatenate([[0], np.cumsum(part_units)]).astype(np.int64)
    return [np.flatnonzero(keep[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


@_guarded
def pick(plan: list[np.ndarray], position: int) -> np.ndarray:
    return plan[position]


@_guarded
def sample_shard(settings: Settings, part: TokenizedCorpus, position: int, rows: np.ndarray,
                 key: str) -> TokenizedCorpus:
    return sample_part(part, position, rows, key, settings.store)


@_guarded
def join_sample_shards(settings: Settings, tokenized: TokenizedCorpus, n_tokens: int, index: int,
                       *parts: TokenizedCorpus) -> TokenizedCorpus:
    return join_sample(tokenized, list(parts), n_tokens, index, settings.store, settings.options.seed)


# The one-pass sample (simcore.corpora.sampling) on the cluster: the shards (and byte ranges of large
# plain files) read once, in a few tasks per worker, the
# candidates merged in a tree (never more than MERGE_FAN_IN at once on one worker), then drawn.

MERGE_FAN_IN = 4
# Pieces are read in this many tasks per worker (consecutive pieces together): each task sends back at
# most the largest sample's units, so what crosses the network is bounded by the workers, not the shards.
TASKS_PER_WORKER = 2


@dataclass
class Scanned:
    """Some pieces' candidates, with the target keys their units hold (the overlap scanned in the same
    read; empty when no scan was asked for)."""

    found: Candidates
    hits: set[int] = field(default_factory=set)


@_guarded
def shard_candidates_task(corpus: Corpus, work: list[tuple[Path, int, int]], target: int, samples: int,
                          seed: int, scan: PieceScan | None = None) -> Scanned:
    """Several pieces read in turn into one set of candidates: what leaves the worker is at most the
    largest sample's worth of units, however many pieces it read; with ``scan``, each unit is also
    tested for the targets' n-grams on the way."""
    merged = Candidates(target, samples, seed)
    scanner = piece_scanner(scan, corpus) if scan is not None else None
    for file, start, end in work:
        merged.merge(shard_candidates(corpus, file, target, samples, seed, span=(start, end),
                                      watch=scanner.watch if scanner is not None else None))
    return Scanned(merged, scanner.result() if scanner is not None else set())


@_guarded
def merge_candidates(*parts: Scanned) -> Scanned:
    """Parts in file order merged: what one process reading those files in turn keeps (hits: the union)."""
    first = parts[0].found
    merged = Scanned(Candidates(first.target, first.samples, first.seed))
    for part in parts:
        merged.found.merge(part.found)
        merged.hits |= part.hits
    return merged


@_guarded
def draw_stream_samples(settings: Settings, corpus: Corpus, sizes: tuple[int, ...],
                        scanned: Scanned, scan: PieceScan | None = None) -> StreamSamples:
    """The samples drawn from the merged candidates and the pass remembered; with ``scan``, the overlap
    of the source with its targets stored under the pass's fingerprint (so nothing reads it again)."""
    found = scanned.found
    result = draw_samples(corpus, found, sizes, settings.store, settings.tokenizer)
    remember_pass(corpus, result, found.samples, found.seed, settings.store, settings.tokenizer)
    if scan is not None:
        store_scan(settings.store, scan, result.fingerprint, scanned.hits)
    return result


def stream_sample_sharded(tracker: Tracker, settings: Settings, corpus: Corpus, sizes: Sequence[int],
                          samples: int, scan: PieceScan | None = None) -> Any:
    """Submit the one-pass sample of ``corpus`` (a future of :class:`StreamSamples`, or of Failed); with
    ``scan``, its overlap with the targets is scanned in the same read and stored."""
    sizes = tuple(sorted(set(sizes)))
    seed = settings.options.seed
    work = pieces(corpus)  # a large plain file in line-aligned byte ranges, as one process reads it
    workers = max(1, len(tracker.client.scheduler_info().get("workers", {})))
    groups = min(len(work), TASKS_PER_WORKER * workers)
    bounds = [len(work) * g // groups for g in range(groups + 1)]
    level = [tracker.submit("candidates", f"read {corpus.name} pieces {a + 1}-{b} of {len(work)}",
                            shard_candidates_task, corpus, work[a:b], sizes[-1], samples, seed, scan)
             for a, b in zip(bounds[:-1], bounds[1:])]
    while len(level) > 1:
        level = [tracker.submit("merge", f"merged {corpus.name} candidates", merge_candidates,
                                *level[i:i + MERGE_FAN_IN]) for i in range(0, len(level), MERGE_FAN_IN)]
    return tracker.submit("draw", f"drew the samples of {corpus.name}", draw_stream_samples,
                          settings, corpus, sizes, level[0], scan)


def sample_source_on_cluster(client: Any, settings: Settings, corpus: Corpus, sizes: Sequence[int], samples: int,
                             progress: Progress | None = None) -> StreamSamples:
    """:func:`simcore.corpora.sampling.sample_source` with its shards read by the cluster's workers:
    the same artefacts, byte for byte, as one process makes."""
    tracker = Tracker(client, progress or (lambda message, fraction: None))
    result = tracker.wait([stream_sample_sharded(tracker, settings, corpus, sizes, samples)])[0]
    if isinstance(result, Failed):
        raise CorpusError(result.message)
    return result


# Client side: submitting the tasks, and following them.

@dataclass
class Tracker:
    """Submits tasks with a stage name and reports (message, fraction) as they finish."""

    client: Any
    progress: Progress
    span: tuple[float, float] = (0.0, 1.0)
    futures: list[Any] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)

    def submit(self, stage: str, label: str, function: Callable[..., Any], *args: Any, priority: int = 0) -> Any:
        future = self.client.submit(function, *args, key=f"simcore-{stage}-{uuid.uuid4().hex}", retries=RETRIES,
                                    priority=priority)
        self.futures.append(future)
        self.labels[future.key] = label
        return future

    def wait(self, wanted: Sequence[Any]) -> list[Any]:
        """Results of ``wanted``, reporting every task that finishes meanwhile."""
        from distributed import wait

        while True:
            for future in self.futures:
                if future.done() and future.key not in self.reported:
                    self.reported.add(future.key)
                    low, high = self.span
                    self.progress(self.labels[future.key], low + (high - low) * len(self.reported) / len(self.futures))
            # Only the cluster's own failures become a SimcoreError; the progress callback's exceptions
            # (a user's Cancel) pass through untouched.
            if all(f.done() for f in wanted):
                try:
                    return self.client.gather(list(wanted))
                except Exception as exc:  # a task given up on (its worker killed too often), a lost scheduler
                    raise SimcoreError(f"the Dask cluster failed: {one_line(exc)}") from exc
            pending = [f for f in self.futures if not f.done()]
            try:
                wait(pending, timeout=0.5, return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            except Exception as exc:
                raise SimcoreError(f"the Dask cluster failed: {one_line(exc)}") from exc
            time.sleep(0.01)


@dataclass
class ShardedCorpus:
    """A corpus whose files are being tokenized as tasks: the parts and the joined whole (futures)."""

    corpus: Corpus
    parts: list[Any]
    joined: Any


def tokenize_sharded(tracker: Tracker, settings: Settings, corpus: Corpus) -> ShardedCorpus:
    """Submit one task per file, one that fingerprints the raw bytes, and one that joins them."""
    n = len(corpus.files)
    parts = [tracker.submit("tokenize", f"tokenized {corpus.name} shard {i + 1}/{n}", tokenize_shard,
                            settings, corpus, f) for i, f in enumerate(corpus.files)]
    raw_key = tracker.submit("fingerprint", f"fingerprinted {corpus.name}", fingerprint_corpus, settings, corpus)
    joined = tracker.submit("join", f"joined the {n} shards of {corpus.name}", join_shards,
                            settings, corpus, raw_key, *parts)
    return ShardedCorpus(corpus, parts, joined)


def sample_sharded(tracker: Tracker, settings: Settings, sharded: ShardedCorpus, tokenized: TokenizedCorpus,
                   part_units: list[int], n_tokens: int, index: int) -> Any:
    """Submit the tasks that draw sub-corpus ``index``; the joined sample (a future), or the corpus itself."""
    if n_tokens >= tokenized.n_tokens:
        return sharded.joined
    seed = settings.options.seed
    key = digest("sample", tokenized.fingerprint, n_tokens, index, seed)
    name = sharded.corpus.name
    plan = tracker.submit("sample-plan", f"chose sample {index + 1} of {name}", plan_sample,
                          tokenized, part_units, n_tokens, index, seed)
    pieces = []
    for position, part in enumerate(sharded.parts):
        rows = tracker.submit("sample-rows", f"sample {index + 1} of {name}", pick, plan, position)
        pieces.append(tracker.submit("sample", f"sampled {name} shard {position + 1}/{len(sharded.parts)}",
                                     sample_shard, settings, part, position, rows, key))
    return tracker.submit("sample-join", f"joined sample {index + 1} of {name}", join_sample_shards,
                          settings, tokenized, n_tokens, index, *pieces)
