"""The similarity matrix on a cluster: sources prepared and cells scored as Dask tasks.

Every source is tokenized and sampled shard by shard (:mod:`.shards`); then each source sample
gets its n-gram counts, its KenLM model and its skip-gram vectors as separate tasks (so several
sources, and several models of one source, are built at once on several workers); the targets'
slow side work (tagging for TVcC) runs as tasks too; and every cell is scored as a task calling
:meth:`simcore.matrix.corpus_cache.CorpusCache.cell`. The parts are those of the matrix's own plan
(:func:`simcore.matrix.plan.plan_matrix`: the same sizes, the same measures left out as noise). All
of it lands in the shared artefact store, and the table is finally assembled by
:meth:`simcore.matrix.workbench.Workbench.matrix` in the calling process, which finds every artefact
and cell stored: the same table as without a cluster, by construction.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from ..contamination.scan import OverlapOptions, piece_scan
from ..corpora.corpus import Corpus, TokenizedCorpus
from ..matrix.corpus_cache import STREAM_SIZES, CorpusCache
from ..matrix.plan import DEFAULT_MEASURES, plan_matrix
from ..matrix.workbench import Workbench
from ..measures.lookup import get_measure, parse_measures
from ..measures.prepared import PreparedSource
from ..utils.errors import SimcoreError
from .cluster import check_workers, open_client
from .shards import (
    Failed,
    Settings,
    ShardedCorpus,
    Tracker,
    sample_sharded,
    stream_sample_sharded,
    tokenize_sharded,
)

Progress = Callable[[str, float], None]
CLUSTER_SHARE = 0.97  # of the progress bar; the rest is the local assembly from the store
MEMORY_SOURCES = 4  # prepared source samples (their loaded models) kept per worker process


def _quiet(message: str, fraction: float) -> None:
    pass


@functools.lru_cache(maxsize=4)
def _corpus_cache(settings: Settings) -> CorpusCache:
    return CorpusCache(settings.store, settings.tokenizer, settings.options)


_PREPARED: OrderedDict[tuple[str, ...], list[PreparedSource]] = OrderedDict()


def _prepared(settings: Settings, samples: Sequence[TokenizedCorpus]) -> list[PreparedSource]:
    """The source samples with their loaded models, kept for the next task on this worker."""
    key = (settings.store_root, repr(settings.options), *(s.fingerprint for s in samples))
    if key in _PREPARED:
        _PREPARED.move_to_end(key)
    else:
        _PREPARED[key] = [PreparedSource(s, settings.store, settings.options) for s in samples]
        while len(_PREPARED) > MEMORY_SOURCES:
            _PREPARED.popitem(last=False)
    return _PREPARED[key]


def measure_groups(names: Sequence[str]) -> list[tuple[str, ...]]:
    """Measures grouped by preparation task: each model (a measure's ``own_task``) alone, the rest (counts)
    together."""
    shared = tuple(n for n in names if not get_measure(n).own_task)
    return ([shared] if shared else []) + [(n,) for n in names if get_measure(n).own_task]


# Tasks (run on the workers)

def prepare_source(settings: Settings, measures: tuple[str, ...], *samples: TokenizedCorpus) -> dict[str, str]:
    """Build what ``measures`` need from every sample of one source; {measure: error} for those that cannot."""
    failed = next((s for s in samples if isinstance(s, Failed)), None)
    if failed is not None:
        return dict.fromkeys(measures, failed.message)
    errors = {}
    for name in measures:
        try:
            for source in _prepared(settings, samples):
                get_measure(name).prepare(source)
        except SimcoreError as exc:
            errors[name] = str(exc)
    return errors


def target_work(function: Callable[..., Any], args: tuple[Any, ...]) -> str | None:
    """A measure's target-side work (tagging); its result lands in the store."""
    try:
        function(*args)
    except SimcoreError as exc:
        return str(exc)
    return None


def score_cell(settings: Settings, target: Corpus, measure: str, errors: dict[str, str],
               after: list[Any], *samples: TokenizedCorpus) -> str | None:
    """Score (and store) one cell; None, or why it has no value."""
    if measure in errors:
        return errors[measure]
    cache = _corpus_cache(settings)
    try:
        cache.cell(_prepared(settings, samples), cache.target(target), measure)
    except SimcoreError as exc:
        return str(exc)
    return None


# Client side

def cluster_matrix(
    client: Any,
    bench: Workbench,
    sources: Sequence[Corpus],
    targets: Sequence[Corpus],
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    *,
    samples: int = 1,
    sample_tokens: int | None = None,
    progress: Progress = _quiet,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    compute_noise: bool = False,
) -> pd.DataFrame:
    """:meth:`Workbench.matrix` with the work done on the cluster behind ``client``; the same table."""
    names = parse_measures(measures)
    if not sources or not targets:
        raise SimcoreError("give at least one source and one target")
    if samples < 1:
        raise SimcoreError("--samples must be at least 1")
    if sample_tokens is not None and sample_tokens < 1:
        raise SimcoreError("--sample-tokens must be positive")
    settings = Settings(str(bench.store.root.resolve()), bench.tokenizer, bench.options)
    workers = check_workers(client, settings.store_root)
    progress(f"running on {workers} Dask workers", 0.0)
    tracker = Tracker(client, progress, (0.0, CLUSTER_SHARE))
    _run(tracker, bench.cache, settings, list(sources), list(targets), names, samples, sample_tokens,
         compute_noise, bench.overlap_options)

    def local(message: str, fraction: float) -> None:
        progress(message, CLUSTER_SHARE + (1 - CLUSTER_SHARE) * fraction)

    return bench.matrix(sources, targets, names, samples=samples, sample_tokens=sample_tokens, progress=local,
                        on_row=on_row, compute_noise=compute_noise)


def matrix_runner(bench: Any, scheduler: str | None = None, local_workers: int | None = None) -> Callable[..., Any]:
    """``bench.matrix`` itself when no cluster is asked for, else the same call run on the cluster."""
    if not scheduler and not local_workers:
        return bench.matrix

    def run(*matrix_args: Any, **matrix_kwargs: Any) -> Any:
        with open_client(scheduler, local_workers) as client:
            return cluster_matrix(client, bench, *matrix_args, **matrix_kwargs)

    return run


def _run(tracker: Tracker, bench: CorpusCache, settings: Settings, sources: list[Corpus], targets: list[Corpus],
         names: list[str], samples: int, sample_tokens: int | None, compute_noise: bool = False,
         overlap: OverlapOptions | None = None) -> None:
    """Everything but the assembly; a corpus that cannot be read is left to the assembly, which
    reports it exactly as it does without a cluster.

    A large source (:meth:`CorpusCache.streams`) is never tokenized whole: its shards are read by the
    workers in one streaming pass for the ladder :meth:`CorpusCache.size` asks for, which the store
    remembers, so the assembly reads nothing of it again; its samples are the start of that pass's.
    With ``overlap``, the same pass scans it for the targets' n-grams (their indexes built here) and
    stores the overlap, which the assembly reads back.
    """
    streamed = {c.name: c for c in sources if bench.streams(c)}
    scan = piece_scan(bench, targets, overlap) if streamed and overlap is not None else None
    passes = {name: stream_sample_sharded(tracker, settings, c, STREAM_SIZES, samples, scan)
              for name, c in streamed.items()}
    sharded_sources = [tokenize_sharded(tracker, settings, c) for c in sources if c.name not in streamed]
    sharded_targets = [tokenize_sharded(tracker, settings, c) for c in targets]
    readable = [(s, t) for s, t in zip(sharded_sources, tracker.wait([s.joined for s in sharded_sources]))
                if not isinstance(t, Failed)]
    passed = [name for name, r in zip(passes, tracker.wait(list(passes.values()))) if not isinstance(r, Failed)]
    tokens = {s.corpus.name: t.n_tokens for s, t in readable}
    tokens |= {name: bench.size(streamed[name], samples) for name in passed}  # read back from the pass
    if not tokens:
        return
    # the matrix's own plan: the table's size, each source's ladder, the measures left out as noise
    plan = plan_matrix([c for c in sources if c.name in tokens], tokens, names,
                       sample_tokens=sample_tokens, compute_noise=compute_noise)
    names = [n for n in names if n not in plan.skipped]
    sizes_of = {name: plan.samples_of(name) for name in tokens}
    drawn: dict[tuple[str, int], list[Any]] = {}
    for sharded, whole in readable:
        own = sizes_of[sharded.corpus.name]
        part_units = [p.n_units for p in tracker.wait(sharded.parts)] if min(own) < whole.n_tokens else []
        for size in own:
            drawn[sharded.corpus.name, size] = [
                sample_sharded(tracker, settings, sharded, whole, part_units, size, i) for i in range(samples)]
    for name in passed:
        found = bench.stream_samples(streamed[name], sizes_of[name], samples)  # the pass's, read back
        for size in sizes_of[name]:
            drawn[name, size] = list(found.samples[size])
    good_targets = [s for s, t in zip(sharded_targets, tracker.wait([s.joined for s in sharded_targets]))
                    if not isinstance(t, Failed)]
    side_work = _target_work(tracker, bench, names, good_targets)
    cells = []
    for name in tokens:
        for size in sizes_of[name]:
            source_samples = drawn[name, size]
            wanted = plan.measures_at(name, size)
            for group in measure_groups(wanted):
                prepared = tracker.submit("prepare-" + "-".join(group),
                                          f"prepared {'/'.join(group).upper()} for {name}",
                                          prepare_source, settings, group, *source_samples,
                                          priority=int(any(get_measure(n).own_task for n in group)))  # longest first
                for measure in group:
                    for target in good_targets:
                        cells.append(tracker.submit(
                            "score", f"{measure.upper()}: {name} → {target.corpus.name}", score_cell, settings,
                            target.corpus, measure, prepared, side_work.get(measure, []), *source_samples))
    tracker.wait(cells)


def _target_work(tracker: Tracker, bench: CorpusCache, names: list[str],
                 targets: list[ShardedCorpus]) -> dict[str, list[Any]]:
    """Each measure's target-side work (see ``background_work`` in :mod:`simcore.measures`) as tasks."""
    futures: dict[str, list[Any]] = {}
    for name in names:
        measure = get_measure(name)
        if not hasattr(measure, "background_work"):
            continue
        for sharded in targets:
            for job in measure.background_work(bench.target(sharded.corpus)):
                futures.setdefault(name, []).append(
                    tracker.submit("target", f"{measure.label}: prepared {sharded.corpus.name}", target_work, *job))
    return futures
