"""The similarity matrix: every source × target × measure, as a long table.

:class:`Workbench` ties corpora, the artefact store and the measures together. Each scored cell
(source sample set, target, measure, options) is stored, so adding a target scores only the new
cells and a second run of the same matrix reads everything back.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .corpora.sampling import StreamSamples, sample_source
from .corpus import Corpus, TokenizedCorpus, corpus_name, refuse_system_path, sample_corpus, tokenize_corpus
from .errors import CorpusError, InvalidArgument, SimcoreError, StoreError
from .ladder import DEFAULT_SAMPLE_CAP, LADDER, pair_sizes, size_bias, table_size
from .measures import MeasureOptions, PreparedSource, PreparedTarget, get_measure, parse_measures
from .store import ArtefactStore, digest
from .tokenize import TokenizerOptions
from .uncertainty import centred, interval, pool_samples

DEFAULT_MEASURES = ("tvc", "tvcc", "ppl", "wvv", "jsd", "ttr")
MEMORY_SOURCES = 16  # prepared sources (their loaded models) kept in memory per workbench
MEMORY_TARGETS = 32  # targets (their sentences) kept in memory per workbench
CELL_VERSION = 2  # 2: bootstrap replicates stored with each cell
COLUMNS = ["source", "target", "measure", "value", "std", "ci_low", "ci_high", "n_samples", "sample_tokens",
           "source_tokens", "used_whole", "reliable", "flag", "direction", "oov_rate", "error", "options",
           "replicates", "ladder"]

Progress = Callable[[str, float], None]
MAX_JOBS = 256
STREAM_MIN_BYTES = 50_000_000  # sources this large are sampled in one streaming pass, never tokenized whole
STREAM_SIZES = tuple(r for r in LADDER if r <= DEFAULT_SAMPLE_CAP)  # the sizes such a pass draws (Workbench.size)
PARALLEL_MIN_TOKENS = 2_000_000
# Where the bar stands as processes finish each phase: reading the corpora (when done in processes) up to
# READING_SHARE, drawing samples and preparing the sources up to SCORING_FROM, scoring the rest by cost.
READING_SHARE = 0.1
SCORING_FROM = 0.4
PARALLEL_MIN_BYTES = 20_000_000  # corpora to read, in all, below which reading them in processes does not pay
HEAVY_SCORING = {"wvv"}  # measures whose every cell trains a model: scored in the other processes too  # source-sample tokens over all parts below which processes do not pay
# Rough relative cost of one part (a source sample under a measure, with its targets), for progress.
UNIT_COST = {"emb": 30.0, "wvv": 20.0, "tvcc": 4.0, "ppl": 3.0, "jsd": 2.0, "kl": 2.0, "tvc": 1.0, "ttr": 0.5}


def _quiet(message: str, fraction: float) -> None:
    pass


def corpora_in(directory: Path | str, **options: Any) -> list[Corpus]:
    """Every file or subdirectory of ``directory`` as one corpus named by its stem.

    An entry that cannot be listed (empty, a FIFO) is kept as an unreadable corpus, so that it
    fails only its own cells of a matrix.
    """
    if not isinstance(directory, (str, os.PathLike)):
        raise InvalidArgument(f"corpora_in needs a directory path, not {type(directory).__name__}")
    directory = Path(directory)
    refuse_system_path(directory)
    if not directory.is_dir():
        raise CorpusError(f"{directory} is not a directory")
    try:
        entries = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise CorpusError(f"cannot list {directory} ({exc.strerror or exc})") from exc
    if not entries:
        raise CorpusError(f"{directory} holds no corpora")
    corpora = []
    for p in entries:
        try:
            corpora.append(Corpus.from_path(p, **options))
        except CorpusError as exc:
            corpora.append(Corpus.unreadable(corpus_name(p), p, str(exc)))
    names = [c.name for c in corpora]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise CorpusError(f"{directory}: several entries share the name {', '.join(sorted(duplicates))}")
    return corpora


@dataclass
class CellResult:
    value: float
    std: float
    values: list[float]
    details: dict[str, Any]
    error: str | None = None
    replicates: list[float] | None = None

    def interval(self) -> tuple[float, float]:
        """95% interval: bootstrap replicates where there are some, else mean ± 1.96 std over samples."""
        if self.replicates:
            return interval(self.replicates)
        if math.isfinite(self.std):
            return (self.value - 1.96 * self.std, self.value + 1.96 * self.std)
        return (math.nan, math.nan)


@dataclass
class _UnitResult:
    """What one part gives: the sample's size, why the source or the measure failed, the cells by target."""

    n_tokens: int | None
    source_error: str | None
    measure_error: str | None
    cells: dict[str, CellResult]

    def result(self, target: str, failed: dict[str, str], target_failed: bool) -> CellResult:
        if target_failed:
            return CellResult(math.nan, math.nan, [], {}, failed[f"target {target}"])
        if self.source_error is not None or target not in self.cells:
            return CellResult(math.nan, math.nan, [], {}, self.source_error or self.measure_error or "not computed")
        return self.cells[target]


_WORKER_BENCHES: dict[Any, Workbench] = {}


def _worker_bench(config: tuple[str, TokenizerOptions, MeasureOptions, dict[Any, str]]) -> Workbench:
    """This process's workbench for the parent's store and options (its hashes of the corpora given)."""
    root, tokenizer, options, raw_keys = config
    key = (root, repr(tokenizer), repr(options))
    if key not in _WORKER_BENCHES:
        _WORKER_BENCHES.clear()
        _WORKER_BENCHES[key] = Workbench(ArtefactStore(root), tokenizer, options)
    bench = _WORKER_BENCHES[key]
    bench._known_raw_keys.update(raw_keys)
    return bench


def _sample_in_worker(config: Any, corpus: Corpus, size: int, samples: int) -> None:
    try:
        _worker_bench(config).source(corpus, size, samples)
    except SimcoreError:
        pass  # the unit that needs it says why


def _read_in_worker(config: Any, corpus: Corpus, source: bool, samples: int) -> None:
    """A corpus tokenized (a large source: its pass) into the store; failures are found again by the parent."""
    bench = _worker_bench(config)
    try:
        bench.size(corpus, samples) if source else bench.tokenize(corpus)
    except SimcoreError:
        pass


def _prepare_in_worker(config: Any, corpus: Corpus, name: str, size: int, samples: int) -> None:
    """A source's samples prepared for one measure (stored); failures are found again when scoring."""
    bench = _worker_bench(config)
    try:
        for source in bench.source(corpus, size, samples):
            get_measure(name).prepare(source)
    except SimcoreError:
        pass


def _unit_in_worker(config: Any, corpus: Corpus, name: str, size: int, samples: int,
                    targets: list[Corpus]) -> _UnitResult:
    return _worker_bench(config)._unit(corpus, name, size, samples, targets)


class Workbench:
    """Tokenized corpora, prepared sources and targets, and cached cells, for one option set."""

    def __init__(self, store: ArtefactStore | None = None, tokenizer: TokenizerOptions = TokenizerOptions(),
                 options: MeasureOptions = MeasureOptions()) -> None:
        for label, value, kind in (("store", store, ArtefactStore), ("tokenizer", tokenizer, TokenizerOptions),
                                   ("options", options, MeasureOptions)):
            if value is not None and not isinstance(value, kind):
                raise InvalidArgument(f"Workbench {label} must be a {kind.__name__}, not {type(value).__name__}")
        self.store = store or ArtefactStore()
        self.tokenizer = tokenizer
        self.options = options
        # What is kept in memory is bounded (a shared server sees many uploads); the store keeps the rest.
        self._raw_keys: OrderedDict[tuple[Corpus, tuple[Any, ...]], str] = OrderedDict()
        self._tokenized: OrderedDict[tuple[str, str], TokenizedCorpus] = OrderedDict()
        self._sources: OrderedDict[tuple[str, str, int, int], list[PreparedSource]] = OrderedDict()
        self._targets: OrderedDict[tuple[str, str], PreparedTarget] = OrderedDict()
        self._known_raw_keys: dict[tuple[str, tuple[Any, ...]], str] = {}  # given by a parent process
        self._read_in_processes = False

    def tokenize(self, corpus: Corpus, progress: Progress = _quiet) -> TokenizedCorpus:
        if not isinstance(corpus, Corpus):
            raise InvalidArgument(f"expected a Corpus, not {type(corpus).__name__}")
        raw_key = self._raw_key(corpus)
        return _remember(self._tokenized, (corpus.name, raw_key),
                         lambda: tokenize_corpus(corpus, self.store, self.tokenizer, progress, raw_key=raw_key),
                         limit=256)

    def _raw_key(self, corpus: Corpus) -> str:
        """The corpus's raw fingerprint. Hashing a large corpus's bytes takes seconds: it is done once per
        unchanged set of files."""
        corpus.check_readable()
        try:
            stats = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in corpus.files)
        except OSError as exc:
            raise CorpusError(f"{corpus.name}: cannot read {exc.filename} ({exc.strerror})") from exc
        known = self._known_raw_keys.get((corpus.name, stats))
        return _remember(self._raw_keys, (corpus, stats),
                         lambda: known or corpus.raw_fingerprint(self.tokenizer), limit=256)

    def streams(self, corpus: Corpus) -> bool:
        """Whether a source is sampled in one streaming pass (a large one) instead of being tokenized whole."""
        try:
            return corpus.problem is None and corpus.size_bytes >= STREAM_MIN_BYTES
        except OSError:
            return False

    def stream_samples(self, corpus: Corpus, sizes: Sequence[int], samples: int,
              progress: Progress = _quiet) -> StreamSamples:
        """Every sample of a large source for ``sizes``, read in one pass (remembered in the store)."""
        return sample_source(corpus, sorted(set(sizes)), samples, self.options.seed, self.store, self.tokenizer,
                             progress)

    def size(self, corpus: Corpus, samples: int = 1, progress: Progress = _quiet) -> int:
        """A source's size in tokens. A large source is not tokenized whole: one pass draws its samples
        for the whole ladder, and its size is its whitespace words (never more than its tokens) unless
        it turned out smaller than the ladder's top, when it is the exact count."""
        if not self.streams(corpus):
            return self.tokenize(corpus, progress).n_tokens
        result = self.stream_samples(corpus, STREAM_SIZES, samples, progress)
        top = max(result.samples)
        return result.samples[top][0].n_tokens if top in result.whole else result.words

    def read_notes(self, corpus: Corpus) -> Any:
        """What reading the corpus met (skipped lines, repaired tokens, ...), from its pass or its tokens."""
        if self.streams(corpus):
            return self.stream_samples(corpus, [LADDER[0]], 1).notes
        return self.tokenize(corpus).read_notes

    def source(self, corpus: Corpus, sample_tokens: int, samples: int,
               progress: Progress = _quiet) -> list[PreparedSource]:
        if not _whole(sample_tokens) or not _whole(samples) or sample_tokens < 1 or samples < 1:
            raise InvalidArgument("sample_tokens and samples must be positive whole numbers")
        if self.streams(corpus):
            result = self.stream_samples(corpus, [sample_tokens], samples, progress)
            key = (corpus.name, result.fingerprint, sample_tokens, samples)
            drawn = result.samples[sample_tokens]
        else:
            tokenized = self.tokenize(corpus, progress)
            key = (corpus.name, tokenized.fingerprint, sample_tokens, samples)  # equal bytes, two names: two sources
            drawn = None

        def prepare() -> list[PreparedSource]:
            chosen = drawn or [sample_corpus(tokenized, sample_tokens, i, self.store, self.options.seed)
                               for i in range(samples)]
            return [PreparedSource(s, self.store, self.options, progress) for s in chosen]

        prepared = _remember(self._sources, key, prepare, limit=MEMORY_SOURCES)
        for p in prepared:
            p.progress = progress
        return prepared

    def target(self, corpus: Corpus, progress: Progress = _quiet) -> PreparedTarget:
        tokenized = self.tokenize(corpus, progress)
        return _remember(self._targets, (corpus.name, tokenized.fingerprint),
                         lambda: PreparedTarget(tokenized, self.store, self.options, raw=corpus), limit=MEMORY_TARGETS)

    def default_sample_tokens(self, sources: Sequence[Corpus], measure: str = "ppl",
                              progress: Progress = _quiet) -> int:
        """Tokens per source sample for one measure (see :func:`comparison_size`)."""
        sources = _corpus_list(sources, "sources")
        if not sources:
            raise InvalidArgument("give at least one source")
        return comparison_size([self.size(c, progress=progress) for c in sources], measure)

    def cell(self, sources: list[PreparedSource], target: PreparedTarget, measure_name: str) -> CellResult:
        """One measure for one source (over its samples) and one target; stored once scored."""
        if not isinstance(sources, list) or not sources or not all(isinstance(s, PreparedSource) for s in sources):
            raise InvalidArgument("cell needs the list of prepared source samples that Workbench.source returns")
        if not isinstance(target, PreparedTarget):
            raise InvalidArgument("cell needs the prepared target that Workbench.target returns")
        if not isinstance(measure_name, str):
            raise InvalidArgument("cell needs a measure name such as 'tvc'")
        measure = get_measure(measure_name)
        key = digest("cell", CELL_VERSION, [s.sample.fingerprint for s in sources], target.fingerprint, measure.name,
                     self.options.subset(measure.option_names), self.tokenizer.as_dict(),
                     self.options.bootstrap, self.options.seed)
        record = self.store.get_json("cell", key)
        if record is None:
            scores = []
            for source in sources:
                measure.prepare(source)
                scores.append(measure.score(source, target))
            values = [s.value for s in scores]
            finite = [v for v in values if v is not None and math.isfinite(v)]
            record = {
                "value": float(np.mean(finite)) if finite else float("nan"),
                "std": float(np.std(finite, ddof=1)) if len(finite) > 1 else float("nan"),
                "values": values,
                "details": _mean_details([s.details for s in scores]),
                "replicates": pool_samples([centred(s.replicates, s.value) for s in scores]),
            }
            self.store.put_json("cell", key, record)
        return CellResult(record["value"], record["std"], record["values"], record["details"],
                          replicates=record["replicates"])

    def _unit(self, corpus: Corpus, name: str, size: int, samples: int, targets: list[Corpus],
              progress: Progress = _quiet) -> _UnitResult:
        """One source at one size under one measure: its samples prepared, then every target scored."""
        measure = get_measure(name)
        try:
            prepared = self.source(corpus, size, samples, progress)
        except StoreError:
            raise
        except SimcoreError as exc:
            return _UnitResult(None, str(exc), None, {})
        failure = None
        try:
            for s in prepared:
                progress(f"preparing {measure.label} for {corpus.name} ({size:,} tokens)", 0.0)
                measure.prepare(s)
        except StoreError:
            raise
        except SimcoreError as exc:
            failure = str(exc)
        cells = {}
        for target in targets:
            progress(f"{measure.label}: {corpus.name} → {target.name}", 0.0)
            if failure is not None:
                cells[target.name] = CellResult(math.nan, math.nan, [], {}, failure)
                continue
            try:
                cells[target.name] = self.cell(prepared, self.target(target), name)
            except StoreError:
                raise
            except SimcoreError as exc:
                cells[target.name] = CellResult(math.nan, math.nan, [], {}, str(exc))
        return _UnitResult(prepared[0].sample.n_tokens, None, failure, cells)

    def _run_parallel(self, plan: list[tuple[Corpus, str, int]], samples: int, targets: list[Corpus], jobs: int,
                      progress: Progress, weight: dict[tuple[str, str, int], float], total: float,
                      take: Callable[[Corpus, str, int, _UnitResult], None],
                      side: list[tuple[Callable[..., Any], tuple[Any, ...]]] = ()) -> None:
        """The parts in ``jobs`` processes, each single-threaded and seeded as in one process, so every
        value is the same. Samples are drawn first (each once), then every source is prepared (KenLM
        models, counts, skip-gram vectors: the cold cost), then the cells are scored.

        With at least two targets per process, the targets are split into ``jobs`` groups of about equal
        size and each group is scored in a process of its own: a target's shared work (bootstrap draws,
        n-gram counts, tagging) is done once, in that process, and every process scores every source.
        With fewer targets, the parts (a source at one size under one measure, with every target) go to
        whichever process is free, and the targets' tagging runs beside them."""
        method = "fork" if threading.active_count() == 1 else "spawn"
        config = (str(self.store.root), self.tokenizer, self.options, dict(self._raw_keys_by_name()))
        context = multiprocessing.get_context(method)
        start = READING_SHARE if self._read_in_processes else 0.0
        groups = _target_groups(targets, jobs) if len(targets) >= 2 * jobs else []
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
        pinned = [ProcessPoolExecutor(max_workers=1, mp_context=context) for _ in groups]
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
            # With groups of targets, the targets' tagging (in parts: one large target is tagged by several
            # processes) is done here too, beside the sources' preparation.
            tagging = [pool.submit(function, *args) for function, args in side] if groups else []
            drain({*tagging, *(pool.submit(_prepare_in_worker, config, c, n, z, samples) for c, n, z in plan)},
                  lambda left: f"preparing the sources{' and tagging the targets' if tagging else ''} in {jobs} "
                               f"processes ({len(plan) + len(tagging) - left} of {len(plan) + len(tagging)})",
                  start + 0.05, SCORING_FROM)
            parts: dict[Any, tuple[Corpus, str, int, int]] = {}
            part_weight: dict[Any, float] = {}
            if groups:
                pool.shutdown(wait=True)  # its processes hold prepared sources: free them for the groups'
                for k, group in enumerate(groups):
                    share = sum(_tokens_hint(t) for t in group) / max(1, sum(_tokens_hint(t) for t in targets))
                    for corpus, name, size in plan:
                        future = pinned[k].submit(_unit_in_worker, config, corpus, name, size, samples, group)
                        parts[future] = (corpus, name, size, k)
                        part_weight[future] = weight[(corpus.name, name, size)] * share
            else:
                # The targets' tagging first (the longest pieces; it takes at most half the processes), then
                # the cheap parts (the answer for language models comes in seconds), then the parts that train
                # (WVV) or wait for the tagging (TVcC).
                for function, args in side:
                    pool.submit(function, *args)
                slow = [(c, n, z) for c, n, z in plan
                        if n in HEAVY_SCORING or hasattr(get_measure(n), "background_work")]
                quick = [item for item in plan if item not in slow]
                for batch in (quick, slow):
                    for corpus, name, size in batch:
                        future = pool.submit(_unit_in_worker, config, corpus, name, size, samples, targets)
                        parts[future] = (corpus, name, size, -1)
                        part_weight[future] = weight[(corpus.name, name, size)]
            pieces: dict[tuple[str, str, int], list[_UnitResult]] = {}
            wanted = max(1, len(groups))
            pending = set(parts)
            while pending:
                finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                for future in finished:
                    corpus, name, size, k = parts[future]
                    got = pieces.setdefault((corpus.name, name, size), [])
                    got.append(future.result())
                    done += part_weight[future]
                    if len(got) == wanted:
                        take(corpus, name, size, _merge_units(got))
                left = len(pending)
                progress(f"scoring in {jobs} processes ({len(parts) - left} of {len(parts)} parts done)",
                         SCORING_FROM + (1 - SCORING_FROM) * min(done / total, 1.0))
        except BaseException:
            for executor in (pool, *pinned):
                executor.shutdown(wait=False, cancel_futures=True)
                for process in list(getattr(executor, "_processes", {}).values()):
                    process.terminate()  # the store writes atomically: nothing half-written remains
            raise
        for executor in (pool, *pinned):
            executor.shutdown(wait=True)

    def _tokenize_in_processes(self, sources: list[Corpus], targets: list[Corpus], samples: int, jobs: int,
                               progress: Progress) -> None:
        """Corpora not yet in the store tokenized (large sources: sampled in their pass) in ``jobs``
        processes, largest first; this process then reads them back. Below PARALLEL_MIN_BYTES in all,
        starting the processes costs more than it saves."""
        todo = [(c, role) for role, corpora in (("source", sources), ("target", targets)) for c in corpora
                if c.problem is None and not self._in_store(c)]
        self._read_in_processes = False
        if len(todo) < 2 or sum(_tokens_hint(c) for c, _ in todo) < PARALLEL_MIN_BYTES:
            return
        todo.sort(key=lambda item: _tokens_hint(item[0]), reverse=True)
        method = "fork" if threading.active_count() == 1 else "spawn"
        config = (str(self.store.root), self.tokenizer, self.options, dict(self._raw_keys_by_name()))
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method)) as pool:
            pending = {pool.submit(_read_in_worker, config, c, role == "source", samples) for c, role in todo}
            total = len(pending)
            while pending:
                _, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                progress(f"reading the corpora in {jobs} processes ({total - len(pending)} of {total})",
                         READING_SHARE * (total - len(pending)) / total)
        self._read_in_processes = True

    def _in_store(self, corpus: Corpus) -> bool:
        """Whether the corpus's tokens are stored already (a large source: never, its pass says itself)."""
        if self.streams(corpus):
            return False
        try:
            return self.store.get("tokens", self._raw_key(corpus)) is not None
        except SimcoreError:
            return True  # it fails here, in its own cells

    def _raw_keys_by_name(self) -> dict[tuple[str, tuple[Any, ...]], str]:
        return {(c.name, stats): key for (c, stats), key in self._raw_keys.items()}

    def _not_computed(self, corpus: Corpus, name: str, targets: list[Corpus],
                      target_of: dict[str, PreparedTarget | None], failed: dict[str, str], sizes: dict[str, int],
                      n_tokens: int, samples: int) -> list[dict[str, Any]]:
        """Rows of a measure left out because it is noise at the table's size: empty, and saying why."""
        spec = get_measure(name)
        used = min(n_tokens, sizes[corpus.name]) if corpus.name in sizes else None
        why = (f"{spec.label} not computed: it is noise below {spec.reliable_tokens:,} tokens per source and the "
               f"sources are compared at {n_tokens:,}; compare larger sources (or sub-corpora of "
               f"{spec.reliable_tokens:,} tokens: --sample-tokens), or compute it anyway (--compute-noise; in the "
               f"dashboard, the Similarity form's options: Compute noisy measures too)")
        empty = _UnitResult(used, failed.get(f"source {corpus.name}"), None, {})
        rows = self._rows(corpus, name, targets, target_of, failed, sizes, n_tokens, samples, {n_tokens: empty})
        for row in rows:
            if row["error"] == "not computed":
                row["error"] = None
            row["flag"] = "; ".join(x for x in (row["flag"], why) if x)
            row["reliable"] = False
        return rows

    def _rows(self, corpus: Corpus, name: str, targets: list[Corpus], target_of: dict[str, PreparedTarget | None],
              failed: dict[str, str], sizes: dict[str, int], n_tokens: int, samples: int,
              units: dict[int, _UnitResult]) -> list[dict[str, Any]]:
        """The table's rows of one source under one measure, with the cells at its ladder sizes."""
        measure = get_measure(name)
        main = units[n_tokens]
        used = min(n_tokens, main.n_tokens) if main.n_tokens is not None else None
        flag = size_flag(name, sizes[corpus.name], n_tokens, used) if used is not None else ""
        rows = []
        for target_corpus in targets:
            result = main.result(target_corpus.name, failed, target_of[target_corpus.name] is None)
            ladder = {}
            for size, unit in units.items():
                if size == n_tokens:
                    continue
                other = unit.result(target_corpus.name, failed, target_of[target_corpus.name] is None)
                if math.isfinite(other.value):
                    ladder[str(size)] = {"value": other.value, "replicates": encode_replicates(other.replicates)}
            low, high = result.interval()
            rows.append({
                "source": corpus.name, "target": target_corpus.name, "measure": name,
                "value": result.value, "std": result.std, "ci_low": low, "ci_high": high,
                "n_samples": samples, "sample_tokens": used, "source_tokens": sizes.get(corpus.name),
                "used_whole": sizes[corpus.name] < n_tokens if corpus.name in sizes else None,
                # False only where the measure is noise at this size (WVV below 1M); a measure whose rankings
                # merely settle later (PPL, JSD, TVC below 100k) says so in ``flag``
                "reliable": used is not None and (used >= measure.reliable_tokens or not measure.noise_when_small),
                "flag": flag,
                "direction": measure.direction, "oov_rate": result.details.get("oov_rate"),
                "error": result.error,
                "options": json.dumps(
                    {**self.options.subset(measure.option_names), **self.tokenizer.as_dict(),
                     "seed": self.options.seed, "samples": samples, "sample_tokens": n_tokens,
                     "bootstrap": self.options.bootstrap},
                    sort_keys=True),
                "replicates": encode_replicates(result.replicates),
                "ladder": json.dumps(ladder, sort_keys=True) if ladder else None,
            })
        return rows

    def matrix(
        self,
        sources: Sequence[Corpus],
        targets: Sequence[Corpus],
        measures: Sequence[str] | str = DEFAULT_MEASURES,
        *,
        samples: int = 1,
        sample_tokens: int | None = None,
        progress: Progress = _quiet,
        on_row: Callable[[dict[str, Any]], None] | None = None,
        jobs: int = 1,
        compute_noise: bool = False,
    ) -> pd.DataFrame:
        """Score every source against every target with every measure.

        A measure that is noise at the table's size (WVV below 1M tokens per source) is not computed
        unless ``compute_noise``: its rows are empty and say why.
        ``jobs`` > 1 computes the parts (a source at one size under one measure, with every target)
        in that many processes; every value is the same as with one.

        A measure that fails for one source (its model cannot be built, a program is missing) is
        reported in the row's ``error`` column; every other cell is still computed.
        """
        sources, targets = _corpus_list(sources, "sources"), _corpus_list(targets, "targets")
        if not isinstance(measures, str) and not (isinstance(measures, Sequence)
                                                   and all(isinstance(m, str) for m in measures)):
            raise InvalidArgument("measures must be names such as 'tvc,ppl' or ['tvc', 'ppl']")
        names = parse_measures(measures)
        if not sources or not targets:
            raise SimcoreError("give at least one source and one target")
        if not _whole(samples) or samples < 1:
            raise InvalidArgument("samples must be a whole number of at least 1")
        if sample_tokens is not None and (not _whole(sample_tokens) or sample_tokens < 1):
            raise InvalidArgument("sample_tokens must be a positive whole number (or None for the default)")
        if not callable(progress):
            raise InvalidArgument("progress must be a function (message, fraction)")
        if not _whole(jobs) or not 1 <= jobs <= MAX_JOBS:
            raise InvalidArgument(f"jobs must be a whole number from 1 to {MAX_JOBS}")
        # One corpus that cannot be read fails only its own cells; the rest of the matrix is computed.
        failed: dict[str, str] = {}

        def attempt(role: str, corpus: Corpus, make: Callable[[], Any]) -> Any:
            if f"{role} {corpus.name}" in failed:
                return None
            try:
                return make()
            except StoreError:
                raise  # a full disk or an unusable store is no corpus's fault: it stops the run
            except SimcoreError as exc:
                failed[f"{role} {corpus.name}"] = str(exc)
                return None

        if jobs > 1:
            self._tokenize_in_processes(sources, targets, samples, jobs, progress)
        sizes = {}
        for c in sources:
            size = attempt("source", c, lambda c=c: self.size(c, samples, progress))
            if size is not None:
                sizes[c.name] = size
        common = (sample_tokens or table_size(list(sizes.values()))) if sizes else 1
        # Pairs of sources also meet at the largest size both have (see simcore.ladder).
        extra_sizes = pair_sizes(sizes, common, ladder=sample_tokens is None) if sizes else {}
        target_of = {t.name: attempt("target", t, lambda t=t: self.target(t, progress)) for t in targets}
        prepared_targets = [p for p in target_of.values() if p is not None]
        # Cheap measures first, so that their rows (the answer for language models: PPL, JSD) arrive in
        # seconds; measures with target-side work in another process last, so that work overlaps the rest.
        order = sorted(names, key=lambda n: (hasattr(get_measure(n), "background_work"), UNIT_COST.get(n, 1.0)))

        def ladder_of(corpus: Corpus, name: str) -> list[int]:
            return extra_sizes.get(corpus.name, []) if getattr(get_measure(name), "size_ladder", False) else []

        # A measure that is noise at this size (WVV below 1M tokens) cannot carry the answer: not computed
        # unless asked, since it costs more than all the others together.
        skipped = [n for n in order if not compute_noise and get_measure(n).noise_when_small
                   and common < get_measure(n).reliable_tokens]
        plan = [(c, n, size) for n in order if n not in skipped for c in sources
                for size in [common, *ladder_of(c, n)]]
        weight = {(c.name, n, size): UNIT_COST.get(n, 1.0) * size / common for c, n, size in plan}
        total = sum(weight.values()) or 1.0
        finished: dict[tuple[str, str, int], _UnitResult] = {}
        rows: list[dict[str, Any]] = []
        readable = [t for t in targets if target_of[t.name] is not None]

        def take(corpus: Corpus, name: str, size: int, result: _UnitResult) -> None:
            """Keep a finished unit; once every size of (source, measure) is in, emit its rows."""
            if result.source_error is not None:
                failed.setdefault(f"source {corpus.name}", result.source_error)
            finished[(corpus.name, name, size)] = result
            wanted = [common, *ladder_of(corpus, name)]
            if all((corpus.name, name, z) in finished for z in wanted):
                for row in self._rows(corpus, name, targets, target_of, failed, sizes, common, samples,
                                      {z: finished[(corpus.name, name, z)] for z in wanted}):
                    rows.append(row)
                    if on_row:
                        on_row(row)

        done = 0.0
        # Starting processes costs seconds: small matrices (the bundled sample) run here.
        parallel = jobs > 1 and len(plan) > 1 and sum(size for _, _, size in plan) >= PARALLEL_MIN_TOKENS
        background = None if parallel else _start_background(names, prepared_targets)
        offset = READING_SHARE if self._read_in_processes else 0.0
        try:
            if parallel:
                side = [job for n in names if hasattr(get_measure(n), "background_work")
                        for t in prepared_targets
                        for job in get_measure(n).background_work(t, _taggers(t, prepared_targets, jobs))]
                self._run_parallel(plan, samples, readable, jobs, progress, weight, total, take, side)
            else:
                for corpus, name, size in plan:
                    label = get_measure(name).label
                    at = offset + (1 - offset) * done / total

                    def report(message: str, _fraction: float, at: float = at) -> None:
                        progress(message, at)  # steps inside a part never move the bar back

                    report(f"{label}: {corpus.name} at {size:,} tokens", at)
                    take(corpus, name, size, self._unit(corpus, name, size, samples, readable, report))
                    done += weight[(corpus.name, name, size)]
        finally:
            if background is not None:
                background.shutdown(wait=True, cancel_futures=True)
        for name in skipped:
            for corpus in sources:
                for row in self._not_computed(corpus, name, targets, target_of, failed, sizes, common, samples):
                    rows.append(row)
                    if on_row:
                        on_row(row)
        progress("done", 1.0)
        position = {(c.name, n): i for i, (c, n) in enumerate((c, n) for c in sources for n in names)}
        rows.sort(key=lambda r: position[(r["source"], r["measure"])])
        table = pd.DataFrame(rows, columns=COLUMNS)
        table.attrs["failed_corpora"] = dict(failed)  # "source NAME" / "target NAME" -> why it could not be read
        return table


def _taggers(target: PreparedTarget, targets: list[PreparedTarget], jobs: int) -> int:
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


def _merge_units(units: list[_UnitResult]) -> _UnitResult:
    """One part's results from the processes that scored its groups of targets."""
    first = units[0]
    cells = {name: cell for unit in units for name, cell in unit.cells.items()}
    return _UnitResult(first.n_tokens, first.source_error, first.measure_error, cells)


def _whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _corpus_list(corpora: Any, label: str) -> list[Corpus]:
    """``corpora`` as a list of Corpus with distinct names, or an InvalidArgument saying what is wrong."""
    if isinstance(corpora, (str, bytes, Corpus)) or not isinstance(corpora, Sequence):
        raise InvalidArgument(f"{label} must be a list of Corpus objects (see simcore.corpora_in)")
    wrong = [type(c).__name__ for c in corpora if not isinstance(c, Corpus)]
    if wrong:
        raise InvalidArgument(f"{label} must hold Corpus objects, not {wrong[0]}")
    names = [c.name for c in corpora]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidArgument(f"{label}: several corpora share the name {', '.join(map(repr, twice))}; give each its own name")
    return list(corpora)


def comparison_size(source_tokens: Sequence[int], measure: str = "ppl", cap: int = DEFAULT_SAMPLE_CAP) -> int:
    """Tokens per source sample in the table: the smallest source's size, at most ``cap``
    (:func:`simcore.ladder.table_size`); the same for every measure, so every source is compared at
    one size. Pairs of larger sources also meet at larger sizes (the ``ladder`` column)."""
    return table_size(source_tokens, cap)


def size_flag(measure: str, source_tokens: int, comparison: int, used: int) -> str:
    """What the user must know about the size a cell was computed at ('' when nothing)."""
    notes = []
    if source_tokens < comparison:
        notes.append(f"source used whole: {source_tokens:,} of the {comparison:,} tokens the others are "
                     f"compared at; {size_bias(measure)}")
    spec = get_measure(measure)
    if used < spec.reliable_tokens:
        if spec.noise_when_small:
            notes.append(f"{spec.label} is unreliable below {spec.reliable_tokens:,} tokens ({used:,} used)")
        else:
            notes.append(f"{spec.label} rankings settle from about {spec.reliable_tokens:,} tokens per source "
                         f"({used:,} used)")
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


def _start_background(names: list[str], targets: list[PreparedTarget]) -> Executor | None:
    """Run measures' target-side work (tagging) in one other process while this one scores cells.

    The work writes into the artefact store; when a cell needs the result it takes the store's
    lock on that artefact, so it waits for the other process or, if that failed, builds it itself.
    """
    if (os.cpu_count() or 1) < 2:
        return None
    jobs = []
    for name in names:
        measure = get_measure(name)
        if hasattr(measure, "background_work"):
            jobs += [job for t in targets for job in measure.background_work(t)]
    if not jobs:
        return None
    # fork starts in a fraction of spawn's time, but is only safe while this process has no other thread
    method = "fork" if threading.active_count() == 1 else "spawn"
    executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context(method))
    for function, args in jobs:
        executor.submit(function, *args)
    return executor


def _remember(cache: OrderedDict[Any, Any], key: Any, build: Callable[[], Any], limit: int) -> Any:
    """Least-recently-used memo: the value for ``key``, built if needed; at most ``limit`` kept."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = cache[key] = build()
    while len(cache) > limit:
        cache.popitem(last=False)
    return value


def _mean_details(details: list[dict[str, Any]]) -> dict[str, Any]:
    if not details:
        return {}
    out: dict[str, Any] = {}
    for key, value in details[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers = [d.get(key) for d in details if isinstance(d.get(key), (int, float))]
            out[key] = float(np.mean(numbers))
        else:
            out[key] = value
    return out
