"""A new target's work done ahead of its matrix: what depends on the target alone, and the per-pair
work that is slow, against sources already prepared, stored so that the matrix reuses it.

The dashboard starts :func:`prepare_target` when a target is added (``dashboard.target_job``); by
the time the user has chosen sources and pressed Compute, the target is tagged for TVcC, its
overlap with each source is counted, and WVV's further training on it is done for every source
whose skip-gram vectors are stored. Everything lands in the artefact store under the keys a
matrix looks up (the same functions build it), so a matrix run afterwards (the dashboard's, or
``simcore matrix`` on the same store) builds nothing new for the target and gives the same
values.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Any

from ..contamination.scan import OverlapOptions, source_overlaps
from ..corpora.corpus import Corpus
from ..corpora.lang.cut import WORDS, tokenizer_for_cut
from ..measures.lookup import get_measure
from ..measures.tvcc import target_content_words
from ..measures.wvv import vector_sets, vectors_stored
from ..utils.errors import SimcoreError, StoreError
from ..utils.lifecycle import process_pool, stop_pool
from .corpus_cache import CorpusCache, Progress, WorkerConfig, quiet
from .plan import DEFAULT_MEASURES, plan_matrix
from .schedule import run_parts

TAGGED, VECTORS = "tvcc", "wvv"  # the measures whose slow work is done ahead


@dataclass
class AheadReport:
    """What :func:`prepare_target` did for one target: whether it was tagged, the sources whose
    overlap and WVV vectors are stored for it, and why the others were left to the matrix."""

    target: str
    tagged: bool = False
    overlaps: list[str] = field(default_factory=list)
    vectors: list[str] = field(default_factory=list)
    left: dict[str, str] = field(default_factory=dict)  # source -> why its WVV was not done ahead
    cells: int = 0  # cells scored ahead (with ``cells``)

    def summary(self) -> str:
        """One line for a progress message or a log."""
        parts = [
            "tagged" if self.tagged else "not tagged (not needed)",
            f"overlap with {len(self.overlaps)} source(s)",
            f"WVV trained against {len(self.vectors)} source(s)",
        ]
        if self.cells:
            parts.append(f"{self.cells} part(s) of cells scored")
        return f"{self.target}: " + ", ".join(parts)


def _cache_of(config: WorkerConfig) -> CorpusCache:
    """A corpus cache on the parent's store and options, given the corpora's hashes it found."""
    return CorpusCache.from_worker_config(config)


def _vectors_in_worker(
    config: WorkerConfig, source: Corpus, size: int, samples: int, target: Corpus
) -> None:
    """WVV's further training of every sample of ``source`` on ``target``, stored
    (``vector_sets``)."""
    cache = _cache_of(config)
    prepared = cache.target(target)
    for sample in cache.source(source, size, samples):
        vector_sets(sample, prepared)


def _overlaps_in_worker(
    config: WorkerConfig, sources: list[Corpus], target: Corpus, samples: int
) -> None:
    """The overlap of each source with ``target``, stored
    (:func:`simcore.contamination.scan.source_overlaps`): in one task, so that the target's
    n-gram index is built once (its cache keeps it)."""
    cache = _cache_of(config)
    for source in sources:
        _attempt(source_overlaps, (cache, source, [target], OverlapOptions()), {"samples": samples})


def prepare_target(
    cache: CorpusCache,
    target: Corpus,
    sources: Sequence[Corpus],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    samples: int = 1,
    sample_tokens: int | None = None,
    compute_noise: bool = False,
    jobs: int = 1,
    cells: bool = False,
    progress: Progress = quiet,
) -> AheadReport:
    """Store ``target``'s own work and its slow work against ``sources`` for a matrix of these
    choices.

    The target is tokenized and, for TVcC, tagged (in parts, by up to ``jobs`` processes); its
    overlap with each source is counted; and for WVV (when the plan computes it: sources of at
    least 1M tokens, or ``compute_noise``) the source's vectors are trained further on the target
    for every source whose vectors are stored already (a source not yet prepared is left to the
    matrix, which trains its vectors first). A source that cannot be read is left out (the matrix
    says why). With ``cells``, every cell of these choices is then scored and stored too (the
    matrix's own parts, run by :func:`simcore.matrix.schedule.run_parts`), except WVV's against
    the sources left out: a matrix of the same choices afterwards only reads. Nothing here
    changes a value: the same functions build the same artefacts as the matrix would.
    """
    report = AheadReport(target.name)
    progress(f"reading {target.name}", 0.0)
    try:
        cut = cache.target_cut(target)
    except StoreError:
        raise
    except SimcoreError:
        cut = WORDS  # it cannot be read: found again below
    if cut != WORDS:  # both sides cut as the target's rows say, as the matrix does (same store)
        cache = cache.with_tokenizer(tokenizer_for_cut(cache.tokenizer, cut))
    prepared = cache.target(target)
    sizes: dict[str, int] = {}
    for source in sources:
        try:
            sizes[source.name] = cache.size(source, samples)
        except StoreError:
            raise
        except SimcoreError as exc:
            report.left[source.name] = str(exc)
    readable = [s for s in sources if s.name in sizes]
    plan = plan_matrix(
        readable, sizes, list(measures), sample_tokens=sample_tokens, compute_noise=compute_noise
    )
    computed = [n for n in plan.order if n not in plan.skipped]
    config = cache.worker_config()
    vectors: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = []
    if VECTORS in computed:
        for source in readable:
            why = _not_ready(cache, source, plan.sizes_of(source.name, VECTORS), samples)
            if why:
                report.left[source.name] = why
                continue
            vectors += [
                ("vectors", _vectors_in_worker, (config, source, size, samples, target))
                for size in plan.sizes_of(source.name, VECTORS)
            ]
    tasks: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = []
    if TAGGED in computed:
        # in parts over the processes only when nothing else keeps them busy: each loads the tagger
        background = get_measure(TAGGED).background_work(prepared, 1 if vectors else max(1, jobs))
        tasks += [("tagging", function, args) for function, args in background]
    if readable:
        tasks.append(("overlaps", _overlaps_in_worker, (config, readable, target, samples)))
    tasks += vectors
    _run(tasks, jobs, progress)
    report.overlaps = [s.name for s in readable]
    report.vectors = sorted({args[1].name for kind, _, args in tasks if kind == "vectors"})
    if TAGGED in computed:
        progress(f"content words of {target.name}", 0.95)
        try:
            # the union of the parts, stored: what every TVcC cell reads
            target_content_words(prepared)
            report.tagged = True
        except StoreError:
            raise
        except SimcoreError:
            pass  # no way to find content words in this language: the cells say so
    if cells:
        plan.parts = [
            (c, n, z) for c, n, z in plan.parts if not (n == VECTORS and c.name in report.left)
        ]
        run_parts(cache, plan, samples, [target], [prepared], jobs, progress, _ignore)
        report.cells = len(plan.parts)
    progress(report.summary(), 1.0)
    return report


def _ignore(*_: Any) -> None:
    """A finished part: its cells are in the store, which is all that is wanted here."""


def _not_ready(cache: CorpusCache, source: Corpus, sizes: list[int], samples: int) -> str | None:
    """Why WVV cannot be trained ahead against ``source`` (None when it can): its vectors are not
    stored."""
    try:
        for size in sizes:
            if not all(vectors_stored(s) for s in cache.source(source, size, samples)):
                return "its word vectors are not trained yet (the matrix trains them first)"
    except StoreError:
        raise
    except SimcoreError as exc:
        return str(exc)
    return None


def _run(
    tasks: list[tuple[str, Callable[..., Any], tuple[Any, ...]]], jobs: int, progress: Progress
) -> None:
    """The tasks in ``jobs`` processes (here, one after another, when ``jobs`` is 1), in order; a
    task that fails is left to the matrix, which builds what it needs and says why it cannot."""
    if not tasks:
        return
    if jobs <= 1:
        for k, (kind, function, args) in enumerate(tasks):
            progress(f"{kind} ({k + 1} of {len(tasks)})", 0.05 + 0.9 * k / len(tasks))
            _attempt(function, args)
        return
    method = "fork" if threading.active_count() == 1 else "spawn"
    pool = process_pool(min(jobs, len(tasks)), method)
    try:
        pending = {pool.submit(_attempt, function, args) for _, function, args in tasks}
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()  # a full disk or an unusable store stops the work
            done = len(tasks) - len(pending)
            progress(
                f"tagging, overlaps and word vectors in {jobs} processes ({done} of {len(tasks)})",
                0.05 + 0.9 * done / len(tasks),
            )
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _attempt(
    function: Callable[..., Any], args: tuple[Any, ...], keywords: dict[str, Any] | None = None
) -> None:
    """``function(*args, **keywords)``; a failure of the corpus (not of the store) is left to the
    matrix."""
    try:
        function(*args, **(keywords or {}))
    except StoreError:
        raise
    except SimcoreError:
        pass
