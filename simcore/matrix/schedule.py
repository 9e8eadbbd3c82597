"""Running a matrix's plan: its parts (a source at one size under one measure, with every target) in this
process, or spread over processes, each single-threaded and seeded as in one process, so every value
is the same (the Dask runner, :mod:`simcore.distributed.prepare`, reads the same plan).

:func:`run_parts` takes the plan (:mod:`simcore.matrix.plan`) and the corpus cache
(:mod:`simcore.matrix.corpus_cache`) and hands each finished part to a callback. In processes, samples
are drawn first, then the sources are prepared, then the cells are scored; the targets' tagging runs
beside them. Each worker process keeps one :class:`~simcore.matrix.corpus_cache.CorpusCache` on the
parent's artefact store.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, replace
from typing import Any

from ..contamination.scan import OverlapOptions, PieceScan, piece_scan, piece_scanner, store_scan
from ..corpora.corpus import Corpus
from ..corpora.sampling import Candidates, Piece, draw_samples, pieces, remember_pass, remembered_pass, shard_candidates
from ..measures.lookup import get_measure
from ..measures.prepared import PreparedTarget
from ..utils.errors import SimcoreError
from ..utils.lifecycle import process_pool, stop_pool
from .corpus_cache import STREAM_SIZES, CorpusCache, Progress, UnitResult, WorkerConfig
from .plan import Part, Plan

MAX_JOBS = 256
PARALLEL_MIN_TOKENS = 2_000_000  # source-sample tokens over all parts below which processes do not pay
# Where the bar stands as processes finish each phase: reading the corpora (when done in processes) up to
# READING_SHARE, drawing samples and preparing the sources up to SCORING_FROM, scoring the rest by cost.
READING_SHARE = 0.1
SCORING_FROM = 0.4
PARALLEL_MIN_BYTES = 20_000_000  # corpora to read, in all, below which reading them in processes does not pay


def worth_processes(jobs: int, plan: list[Part]) -> bool:
    """Whether the parts run in processes: starting them costs seconds, so small matrices (the bundled
    sample) run in this one."""
    return jobs > 1 and len(plan) > 1 and sum(size for _, _, size in plan) >= PARALLEL_MIN_TOKENS


Take = Callable[[Corpus, str, int, UnitResult], None]  # what a runner does with each finished part


def run_parts(cache: CorpusCache, plan: Plan, samples: int, targets: list[Corpus],
              prepared: list[PreparedTarget], jobs: int, progress: Progress, take: Take,
              start: float = 0.0) -> None:
    """Every part of ``plan`` scored against ``targets`` (those that could be read; ``prepared`` are
    theirs), each handed to ``take`` as it finishes: in ``jobs`` processes when that pays
    (:func:`worth_processes`), else here with the targets' tagging beside it in other processes.
    The bar starts at ``start`` (past the reading, when the corpora were read in processes)."""
    names = plan.measures
    # the parts whose every cell is stored (a target whose work was done when it was added, a second
    # run): read here first, without starting a process or loading a model
    stored = [p for p in plan.parts if cache.unit_stored(p[0], p[1], p[2], samples, targets)]
    if stored:
        for corpus, name, size in stored:
            take(corpus, name, size, cache.unit(corpus, name, size, samples, targets))
        rest = [p for p in plan.parts if p not in stored]
        weight = {(c.name, n, z): plan.weight[(c.name, n, z)] for c, n, z in rest}
        plan = replace(plan, parts=rest, weight=weight)
        if not rest:
            return
    if worth_processes(jobs, plan.parts):
        side = [job for n in names if hasattr(get_measure(n), "background_work") for t in prepared
                for job in get_measure(n).background_work(t, taggers(t, prepared, jobs))]
        run_parallel(cache, plan, samples, targets, jobs, progress, take, side, start)
        return
    background = start_background(names, prepared, jobs)
    done, total = 0.0, plan.total
    try:
        for corpus, name, size in plan.parts:
            at = start + (1 - start) * done / total

            def report(message: str, _fraction: float, at: float = at) -> None:
                progress(message, at)  # steps inside a part never move the bar back

            report(f"{get_measure(name).label}: {corpus.name} at {size:,} tokens", at)
            if background is not None:
                background.wait_before(name)
            take(corpus, name, size, cache.unit(corpus, name, size, samples, targets, report))
            done += plan.weight[(corpus.name, name, size)]
    except BaseException:
        if background is not None:
            background.stop()
            background = None
        raise
    finally:
        if background is not None:
            background.close()


_WORKER_CACHES: dict[Any, CorpusCache] = {}


def _worker_cache(config: WorkerConfig) -> CorpusCache:
    """This process's corpus cache for the parent's store and options (its hashes of the corpora given)."""
    root, tokenizer, options, raw_keys, stream_min_bytes = config
    key = (root, repr(tokenizer), repr(options), stream_min_bytes)
    if key not in _WORKER_CACHES:
        _WORKER_CACHES.clear()
        _WORKER_CACHES[key] = CorpusCache.from_worker_config(config)
    cache = _WORKER_CACHES[key]
    cache.know_raw_keys(raw_keys)
    return cache


def _sample_in_worker(config: WorkerConfig, corpus: Corpus, size: int, samples: int) -> None:
    try:
        _worker_cache(config).source(corpus, size, samples)
    except SimcoreError:
        pass  # the unit that needs it says why


def _read_in_worker(config: WorkerConfig, corpus: Corpus, source: bool, samples: int) -> None:
    """A corpus tokenized (a large source: its pass) into the store; failures are found again by the parent."""
    cache = _worker_cache(config)
    try:
        cache.size(corpus, samples) if source else cache.tokenize(corpus)
    except SimcoreError:
        pass


def _piece_in_worker(corpus: Corpus, piece: Piece, target: int, samples: int, seed: int,
                     ceilings: list[int] | None,
                     scan: PieceScan | None = None) -> tuple[Candidates, set[int]] | None:
    """One piece of a large source's streaming pass (a shard, or a byte range of a large file), with the
    target keys its units hold when ``scan`` is given (the overlap scanned in the same read); None when it
    cannot be read (the source's pass is then left to the parent, which says why)."""
    file, start, end = piece
    scanner = piece_scanner(scan, corpus) if scan is not None else None
    try:
        found = shard_candidates(corpus, file, target, samples, seed, span=(start, end), ceilings=ceilings,
                                 watch=scanner.watch if scanner is not None else None)
    except SimcoreError:
        return None
    return found, (scanner.result() if scanner is not None else set())


def _pass_in_worker(config: WorkerConfig, corpus: Corpus, piece: Piece, target: int, samples: int, seed: int,
                    scan: PieceScan | None = None) -> tuple[str, set[int]] | None:
    """A pass of a single piece (one compressed file) read and drawn in one task: what
    :func:`_piece_in_worker` and :func:`_draw_in_worker` do, without sending its 600k kept units to
    the parent and back; its fingerprint and hits (None when it failed: the parent reads it
    again)."""
    found = _piece_in_worker(corpus, piece, target, samples, seed, None, scan)
    if found is None:
        return None
    merged = Candidates(target, samples, seed)
    merged.merge(found[0])
    fingerprint = _draw_in_worker(config, corpus, merged, samples)
    return None if fingerprint is None else (fingerprint, found[1])


def _draw_in_worker(config: WorkerConfig, corpus: Corpus, found: Candidates, samples: int) -> str | None:
    """A pass's merged candidates tokenized into the ladder's samples and remembered, as sample_source does;
    the pass's fingerprint (None when it failed)."""
    cache = _worker_cache(config)
    try:
        result = draw_samples(corpus, found, STREAM_SIZES, cache.store, cache.tokenizer)
        remember_pass(corpus, result, samples, cache.options.seed, cache.store, cache.tokenizer)
    except SimcoreError:
        return None
    return result.fingerprint


def _prepare_in_worker(config: WorkerConfig, corpus: Corpus, name: str, size: int, samples: int) -> None:
    """A source's samples prepared for one measure (stored); failures are found again when scoring."""
    cache = _worker_cache(config)
    try:
        for source in cache.source(corpus, size, samples):
            get_measure(name).prepare(source)
    except SimcoreError:
        pass


def _unit_in_worker(config: WorkerConfig, corpus: Corpus, name: str, size: int, samples: int,
                    targets: list[Corpus]) -> UnitResult:
    return _worker_cache(config).unit(corpus, name, size, samples, targets)


def run_parallel(cache: CorpusCache, matrix_plan: Plan, samples: int, targets: list[Corpus], jobs: int,
                 progress: Progress, take: Take, side: list[tuple[Callable[..., Any], tuple[Any, ...]]] = (),
                 start: float = 0.0) -> None:
    """The parts in ``jobs`` processes, each single-threaded and seeded as in one process, so every
    value is the same. Samples are drawn first (each once), then every source is prepared (KenLM
    models, counts, skip-gram vectors: the cold cost) and the cells are scored.

    With at least two targets per process, the targets are split into ``jobs`` groups of about equal
    size and each group is scored in a process of its own: a target's shared work (bootstrap draws,
    n-gram counts, tagging) is done once, in that process, and every process scores every source.
    With fewer targets, the parts (a source at one size under one measure, with every target; one part
    per target for a measure whose every cell trains a model, WVV) go to whichever process is free as
    soon as their source is prepared for their measure, and the targets' tagging runs beside them."""
    method = "fork" if threading.active_count() == 1 else "spawn"
    plan, weight, total = matrix_plan.parts, matrix_plan.weight, matrix_plan.total
    config = cache.worker_config()
    groups = _target_groups(targets, jobs) if len(targets) >= 2 * jobs else []
    pool = process_pool(jobs, method)
    pinned = [process_pool(1, method) for _ in groups]
    done = 0.0

    def drain(pending: set[Any], message: Callable[[int], str], low: float, high: float) -> None:
        """Wait for a phase's tasks; the bar moves from ``low`` to ``high`` as they finish."""
        count = len(pending)
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
            # every second, so that a Cancel is seen at once
            progress(message(len(pending)), low + (high - low) * (count - len(pending)) / max(1, count))

    try:
        sizes = list(dict.fromkeys((c, z) for c, _, z in plan))
        drain({pool.submit(_sample_in_worker, config, c, z, samples) for c, z in sizes},
              lambda left: f"drawing samples ({len(sizes) - left} of {len(sizes)})", start, start + 0.05)
        parts: dict[Any, tuple[Corpus, str, int, int]] = {}
        part_weight: dict[Any, float] = {}
        expected: dict[tuple[str, str, int], int] = {}  # futures per (source, measure, size): its targets' parts
        prepares: dict[Any, tuple[Corpus, str, int]] = {}
        if groups:
            # the targets' tagging (in parts: one large target is tagged by several processes) is done
            # here too, beside the sources' preparation
            tagging = [pool.submit(function, *args) for function, args in side]
            drain({*tagging, *(pool.submit(_prepare_in_worker, config, c, n, z, samples) for c, n, z in plan)},
                  lambda left: f"preparing the sources{' and tagging the targets' if tagging else ''} in {jobs} "
                               f"processes ({len(plan) + len(tagging) - left} of {len(plan) + len(tagging)})",
                  start + 0.05, SCORING_FROM)
            pool.shutdown(wait=True)  # its processes hold prepared sources: free them for the groups'
            for k, group in enumerate(groups):
                share = sum(_tokens_hint(t) for t in group) / max(1, sum(_tokens_hint(t) for t in targets))
                for corpus, name, size in plan:
                    future = pinned[k].submit(_unit_in_worker, config, corpus, name, size, samples, group)
                    parts[future] = (corpus, name, size, k)
                    part_weight[future] = weight[(corpus.name, name, size)] * share
        else:
            # Each source prepared for each measure, cheap measures first (the answer for language models
            # comes in seconds), then the ones that train (WVV) or wait for the tagging (TVcC); the targets'
            # tagging beside them (it takes at most half the processes). No phase waits for another: a
            # part is scored as soon as its source is prepared, so one long preparation (a skip-gram
            # model) holds up only its own parts.
            slow = [(c, n, z) for c, n, z in plan
                    if get_measure(n).heavy_scoring or hasattr(get_measure(n), "background_work")]
            quick = [item for item in plan if item not in slow]
            prepares = {pool.submit(_prepare_in_worker, config, c, n, z, samples): (c, n, z) for c, n, z in quick + slow}
            for function, args in side:
                pool.submit(function, *args)
        # a measure whose every cell trains a model: one part per target, so no part holds them all
        chunks_of = {(c.name, n, z): [[t] for t in targets] if get_measure(n).heavy_scoring else [targets] for c, n, z in plan}
        n_parts = len(parts) or sum(len(chunks) for chunks in chunks_of.values())
        n_prepares = len(prepares)
        pieces: dict[tuple[str, str, int], list[UnitResult]] = {}
        wanted = max(1, len(groups))
        pending = set(parts) | set(prepares)
        scored = 0
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                if future in prepares:
                    future.result()
                    corpus, name, size = prepares.pop(future)
                    chunks = chunks_of[(corpus.name, name, size)]
                    expected[(corpus.name, name, size)] = len(chunks)
                    for chunk in chunks:
                        part = pool.submit(_unit_in_worker, config, corpus, name, size, samples, chunk)
                        parts[part] = (corpus, name, size, -1)
                        part_weight[part] = weight[(corpus.name, name, size)] * len(chunk) / max(1, len(targets))
                        pending.add(part)
                    continue
                corpus, name, size, k = parts[future]
                got = pieces.setdefault((corpus.name, name, size), [])
                got.append(future.result())
                done += part_weight[future]
                scored += 1
                if len(got) == expected.get((corpus.name, name, size), wanted):
                    take(corpus, name, size, _merge_units(got))
            if prepares:
                ready = n_prepares - len(prepares)
                progress(f"preparing the sources in {jobs} processes ({ready} of {n_prepares}), scoring beside "
                         f"them ({scored} of {n_parts} parts done)",
                         start + 0.05 + (SCORING_FROM - start - 0.05) * ready / n_prepares)
            else:
                progress(f"scoring in {jobs} processes ({scored} of {n_parts} parts done)",
                         SCORING_FROM + (1 - SCORING_FROM) * min(done / total, 1.0))
    except BaseException:
        for executor in (pool, *pinned):
            stop_pool(executor)  # the store writes atomically: nothing half-written remains
        raise
    for executor in (pool, *pinned):
        executor.shutdown(wait=True)


PASS_IN_FLIGHT = 2  # pieces of a pass per process submitted at once: the later ones get the bounds merged meanwhile


class _Pass:
    """A large source's streaming pass split into its pieces, merged here as they come back."""

    def __init__(self, corpus: Corpus, samples: int, seed: int) -> None:
        self.corpus, self.samples, self.seed = corpus, samples, seed
        self.todo: list[Piece] = pieces(corpus)
        self.left = len(self.todo)
        self.merged = Candidates(max(STREAM_SIZES), samples, seed)
        self.hits: set[int] = set()  # the target keys the pieces read so far hold
        self.failed = False

    def task(self, scan: PieceScan | None) -> tuple[Any, ...]:
        return (self.corpus, self.todo.pop(0), max(STREAM_SIZES), self.samples, self.seed, self.merged.bounds(),
                scan)

    def take(self, found: tuple[Candidates, set[int]] | None) -> bool:
        """Merge one piece's candidates and hits; whether the pass is complete (and every piece was read)."""
        self.left -= 1
        if found is None:
            self.failed = True
        elif not self.failed:
            self.merged.merge(found[0])
            self.hits |= found[1]
        return self.left == 0 and not self.failed


def tokenize_in_processes(cache: CorpusCache, sources: list[Corpus], targets: list[Corpus], samples: int, jobs: int,
                          progress: Progress, overlap: OverlapOptions | None = None) -> bool:
    """Corpora not yet in the store tokenized in ``jobs`` processes, largest first; a large source's pass
    in pieces (each shard or byte range a task of its own, merged here, then its samples drawn in a
    process), so one big source keeps every process busy. This process then reads them back. Below
    PARALLEL_MIN_BYTES in all, starting the processes costs more than it saves. Whether it read them.

    With ``overlap``, the pieces also scan their units for the targets' n-grams (the targets are then
    tokenized here first) and the overlap is stored under the pass's fingerprint, so
    :func:`simcore.contamination.scan.source_overlaps` does not read the source again."""
    todo = [(c, role) for role, corpora in (("source", sources), ("target", targets)) for c in corpora
            if c.problem is None and not cache.in_store(c)]
    if sum(_tokens_hint(c) for c, _ in todo) < PARALLEL_MIN_BYTES:
        return False
    seed = cache.options.seed
    passes, whole = [], []
    for c, role in todo:
        if role == "source" and cache.streams(c):
            try:
                if remembered_pass(c, STREAM_SIZES, samples, seed, cache.store, cache.tokenizer) is not None:
                    continue
                passes.append(_Pass(c, samples, seed))
                continue
            except (SimcoreError, OSError):
                pass  # read whole below, where its error is found and kept
        whole.append((c, role))
    if len(whole) + sum(p.left for p in passes) < 2:
        return False
    # the targets' indexes, built here (a target not yet in the store is tokenized here for it)
    scan = piece_scan(cache, targets, overlap) if passes and overlap is not None else None
    whole.sort(key=lambda item: _tokens_hint(item[0]), reverse=True)
    method = "fork" if threading.active_count() == 1 else "spawn"
    config = cache.worker_config()
    pool = process_pool(jobs, method)
    try:
        pending: dict[Any, _Pass | None] = {pool.submit(_read_in_worker, config, c, role == "source", samples): None
                                            for c, role in whole}
        drawing: dict[Any, _Pass] = {}  # each pass's draw: its fingerprint comes back
        whole_passes: set[Any] = set()  # a pass of one piece, read and drawn in one task
        total = len(pending) + sum(p.left + 1 for p in passes)  # every piece, and each pass's draw
        queue = [p for p in passes for _ in range(p.left)]  # source by source: a pass's bound falls soonest

        def submit() -> None:
            while queue and len(pending) < PASS_IN_FLIGHT * jobs:
                owner = queue.pop(0)
                if owner.left == 1 and len(owner.todo) == 1:
                    future = pool.submit(_pass_in_worker, config, *owner.task(scan)[:-2], scan)
                    whole_passes.add(future)
                else:
                    future = pool.submit(_piece_in_worker, *owner.task(scan))
                pending[future] = owner

        finished = 0
        submit()
        while pending:
            done, _ = wait(set(pending), timeout=1.0, return_when=FIRST_COMPLETED)
            for future in done:
                owner = pending.pop(future)
                finished += 1
                if future in whole_passes:
                    finished += 1  # its draw too
                    drawn = future.result()
                    if drawn is not None and scan is not None:
                        store_scan(cache.store, scan, *drawn)
                elif future in drawing:
                    fingerprint = future.result()
                    if fingerprint is not None and scan is not None:
                        store_scan(cache.store, scan, fingerprint, drawing.pop(future).hits)
                elif owner is not None and owner.take(future.result()):
                    draw = pool.submit(_draw_in_worker, config, owner.corpus, owner.merged, samples)
                    pending[draw] = None
                    drawing[draw] = owner
            submit()
            progress(f"reading the corpora in {jobs} processes ({finished} of {total} parts)",
                     READING_SHARE * finished / total)
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return True


def taggers(target: PreparedTarget, targets: list[PreparedTarget], jobs: int) -> int:
    """Processes to tag one target in: its share of all the targets' tokens, of ``jobs`` processes when the
    targets are split in groups (tagging is then all that runs beside the sources' preparation), of half
    of them when the parts run beside it (the other half scores the cheap measures meanwhile)."""
    budget = jobs if len(targets) >= 2 * jobs else jobs // 2
    share = target.tokenized.n_tokens / max(1, sum(t.tokenized.n_tokens for t in targets))
    return max(1, round(budget * share))


def _tokens_hint(corpus: Corpus) -> int:
    """A corpus's size in bytes, to balance groups of targets (0 when it cannot be read)."""
    try:
        return corpus.size_bytes
    except OSError:
        return 0


def _target_groups(targets: list[Corpus], jobs: int) -> list[list[Corpus]]:
    """``targets`` split into ``jobs`` groups of about equal size (largest first onto the lightest group),
    each kept in the order given."""
    groups: list[list[Corpus]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for target in sorted(targets, key=_tokens_hint, reverse=True):
        k = loads.index(min(loads))
        groups[k].append(target)
        loads[k] += _tokens_hint(target)
    order = {t.name: i for i, t in enumerate(targets)}
    return [sorted(g, key=lambda t: order[t.name]) for g in groups if g]


def _merge_units(units: list[UnitResult]) -> UnitResult:
    """One part's results from the processes that scored its groups of targets."""
    first = units[0]
    cells = {name: cell for unit in units for name, cell in unit.cells.items()}
    return UnitResult(first.n_tokens, first.source_error, first.measure_error, cells)


BACKGROUND_SPLIT_TOKENS = 40_000  # a target at least this large is tagged by several processes at once


@dataclass
class Background:
    """Target-side work running in other processes while this one scores cells (see :func:`start_background`)."""

    executor: Executor
    futures: list[Future[Any]]
    measures: frozenset[str]

    def wait_before(self, name: str) -> None:
        """Wait for the work before scoring measure ``name`` if that measure's cells need it: the cells would
        otherwise tag the parts no process has reached yet themselves, loading the tagger here as well (a
        failed job is not raised: its cells build what it left, under the store's lock)."""
        if name in self.measures:
            wait(self.futures)

    def stop(self) -> None:
        """Stop now (Ctrl-C, SIGTERM, a failure): the work is not waited for."""
        stop_pool(self.executor)

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)


def start_background(names: list[str], targets: list[PreparedTarget], jobs: int = 1) -> Background | None:
    """Run measures' target-side work (tagging) in other processes while this one scores cells: one, or
    for a large target up to ``jobs`` (at most the cores), each tagging its share of the target's parts
    (each loads the tagger, so a small target is tagged by one). The parts' union is the whole target's
    tagging, so the values are the same however many processes share it.

    The work writes into the artefact store; when a cell needs the result it takes the store's
    lock on that artefact, so it waits for the other processes or, if they failed, builds it itself.
    """
    cores = os.cpu_count() or 1
    if cores < 2:
        return None
    processes = max(1, min(jobs, cores))
    work, measures = [], set()
    for name in names:
        measure = get_measure(name)
        if hasattr(measure, "background_work"):
            jobs_of = [job for t in targets for job in measure.background_work(
                t, processes if t.tokenized.n_tokens >= BACKGROUND_SPLIT_TOKENS else 1)]
            work += jobs_of
            if jobs_of:
                measures.add(name)
    if not work:
        return None
    # fork starts in a fraction of spawn's time, but is only safe while this process has no other thread
    method = "fork" if threading.active_count() == 1 else "spawn"
    executor = process_pool(min(processes, len(work)), method)
    futures = [executor.submit(function, *args) for function, args in work]
    return Background(executor, futures, frozenset(measures))
