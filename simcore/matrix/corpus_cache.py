"""Preparing corpora for a matrix: read, tokenized, sampled and prepared once, and every scored cell stored.

:class:`CorpusCache` keeps, for one option set, the tokenized corpora, the prepared source samples and
targets (a bounded number in memory, the rest in the artefact store) and scores one cell, or one part (a
source at one size under one measure, with every target). A :class:`~simcore.matrix.workbench.Workbench`
holds one; :mod:`simcore.matrix.schedule` runs parts on it, here or in other processes (each with a
cache of its own on the same store).
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import (
    Corpus,
    TokenizedCorpus,
    corpus_name,
    sample_corpus,
    sample_drawn,
    tokenize_corpus,
)
from ..corpora.lang.cut import CHARS, WORDS, detect_cut
from ..corpora.lang.scripts import NO_SPACE_SCRIPTS
from ..corpora.lang.segment import is_char_tokenized
from ..corpora.listing import corpus_entries
from ..corpora.remote import RemoteFile, is_url, location
from ..corpora.remote_corpora import corpora_in_url
from ..corpora.sampling import StreamSamples, sample_source
from ..corpora.tokenize import TokenizerOptions
from ..measures.lookup import get_measure
from ..measures.options import MeasureOptions
from ..measures.prepared import PreparedSource, PreparedTarget
from ..measures.uncertainty import centred, interval, pool_samples
from ..utils import pace
from ..utils.errors import CorpusError, InvalidArgument, SimcoreError, StoreError
from ..utils.store import ArtefactStore, digest
from ..utils.versions import measure_versions
from .ladder import DEFAULT_SAMPLE_CAP, LADDER, table_size

MEMORY_SOURCES = 16  # prepared sources (their loaded models) kept in memory per workbench
MEMORY_TARGETS = 32  # targets (their sentences) kept in memory per workbench
CUT_UNITS = 5_000  # units of a target read to tell how its rows are cut
CHARACTER_SCRIPTS = NO_SPACE_SCRIPTS  # a target in these scripts may be tokenized one character a token
CELL_VERSION = 2  # 2: bootstrap replicates stored with each cell

Progress = Callable[[str, float], None]
STREAM_MIN_BYTES = 50_000_000  # sources this large are sampled in one streaming pass, never tokenized whole
# (store root, tokenizer, options, raw fingerprints by name, STREAM_MIN_BYTES): CorpusCache.worker_config
WorkerConfig = tuple[str, TokenizerOptions, MeasureOptions, dict[Any, str], int]
STREAM_SIZES = tuple(r for r in LADDER if r <= DEFAULT_SAMPLE_CAP)  # the sizes such a pass draws (Workbench.size)


def quiet(message: str, fraction: float) -> None:
    pass


def corpora_in(directory: Path | str, **options: Any) -> list[Corpus]:
    """Every file or subdirectory of ``directory`` as one corpus named by its stem.

    An entry that cannot be listed (empty, a FIFO) is kept as an unreadable corpus, so that it
    fails only its own cells of a matrix.
    """
    if not isinstance(directory, (str, os.PathLike)):
        raise InvalidArgument(f"corpora_in needs a directory path, not {type(directory).__name__}")
    if is_url(directory):  # s3://, https://, hf://, ...: listed once (simcore.corpora.remote_corpora)
        where = location(directory, options.get("storage_options"))
        if isinstance(where, RemoteFile):
            return corpora_in_url(where.url, where.options, **{k: v for k, v in options.items()
                                                                if k != "storage_options"})
        directory = where
    corpora = []
    for p in corpus_entries(Path(directory)):  # the one rule (simcore.corpora.listing)
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
class UnitResult:
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


class CorpusCache:
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
        self._cuts: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._sources: OrderedDict[tuple[str, str, int, int], list[PreparedSource]] = OrderedDict()
        self._targets: OrderedDict[tuple[str, str], PreparedTarget] = OrderedDict()
        self._known_raw_keys: dict[tuple[str, tuple[Any, ...]], str] = {}  # given by a parent process
        self._stream_min_bytes: int | None = None  # None: STREAM_MIN_BYTES; a worker gets its parent's

    def tokenize(self, corpus: Corpus, progress: Progress = quiet) -> TokenizedCorpus:
        if not isinstance(corpus, Corpus):
            raise InvalidArgument(f"expected a Corpus, not {type(corpus).__name__}")
        raw_key = self._raw_key(corpus)
        return _remember(self._tokenized, (corpus.name, raw_key), lambda: pace.timed(  # tokenizing's pace, bytes a second
            self.store, "tokenize", corpus.size_bytes, not self.store.path("tokens", raw_key).is_dir(),
            lambda: tokenize_corpus(corpus, self.store, self.tokenizer, progress, raw_key=raw_key)), limit=256)

    def raw_key(self, corpus: Corpus) -> str:
        """The corpus's raw fingerprint (what a stored artefact of its own text is keyed by)."""
        return self._raw_key(corpus)

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
            return corpus.problem is None and corpus.size_bytes >= self.stream_min_bytes()
        except OSError:
            return False

    def stream_min_bytes(self) -> int:
        """The size from which a source streams (:meth:`streams`)."""
        return STREAM_MIN_BYTES if self._stream_min_bytes is None else self._stream_min_bytes

    def stream_samples(self, corpus: Corpus, sizes: Sequence[int], samples: int,
              progress: Progress = quiet) -> StreamSamples:
        """Every sample of a large source for ``sizes``, read in one pass (remembered in the store)."""
        return sample_source(corpus, sorted(set(sizes)), samples, self.options.seed, self.store, self.tokenizer,
                             progress)

    def size(self, corpus: Corpus, samples: int = 1, progress: Progress = quiet) -> int:
        """A source's size in tokens. A large source is not tokenized whole: one pass draws its samples
        for the whole ladder, and its size is its whitespace words (never more than its tokens) unless
        it turned out smaller than the ladder's top, when it is the exact count."""
        if not self.streams(corpus):
            return self.tokenize(corpus, progress).n_tokens
        result = self.stream_samples(corpus, STREAM_SIZES, samples, progress)
        top = max(result.samples)
        return result.samples[top][0].n_tokens if top in result.whole else result.words

    def read_notes(self, corpus: Corpus, samples: int = 1) -> Any:
        """What reading the corpus met (skipped lines, repaired tokens, ...), from its pass (the one that
        drew ``samples`` samples) or its tokens."""
        if self.streams(corpus):
            return self.stream_samples(corpus, [LADDER[0]], samples).notes
        return self.tokenize(corpus).read_notes

    def source(self, corpus: Corpus, sample_tokens: int, samples: int,
               progress: Progress = quiet) -> list[PreparedSource]:
        if not whole(sample_tokens) or not whole(samples) or sample_tokens < 1 or samples < 1:
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
            language = corpus.language_guess().working_language
            return [PreparedSource(s, self.store, self.options, progress, language=language) for s in chosen]

        prepared = _remember(self._sources, key, prepare, limit=MEMORY_SOURCES)
        for p in prepared:
            p.progress = progress
        return prepared

    def target(self, corpus: Corpus, progress: Progress = quiet) -> PreparedTarget:
        tokenized = self.tokenize(corpus, progress)
        return _remember(self._targets, (corpus.name, tokenized.fingerprint),
                         lambda: PreparedTarget(tokenized, self.store, self.options, raw=corpus,
                                                language=corpus.language_guess().working_language), limit=MEMORY_TARGETS)

    def cut_into_characters(self, corpus: Corpus, progress: Progress = quiet) -> bool:
        """Whether a target's own tokens are characters of a script written without spaces (a Chinese
        NER set tokenized one character a token): then its sources are cut into characters too."""
        if self.tokenizer.chars or corpus.language_guess().script not in CHARACTER_SCRIPTS:
            return False
        return is_char_tokenized(self.tokenize(corpus, progress).sentences())

    def target_cut(self, corpus: Corpus, progress: Progress = quiet) -> str:
        """How a target's own rows cut both sides (:mod:`simcore.corpora.lang.cut`): ``"chars"`` for
        characters of a script without spaces, else what
        :func:`~simcore.corpora.lang.cut.detect_cut` finds in its first units read with their space
        rows (``"words"`` for raw text, or when this workbench's tokenizer already cuts otherwise)."""
        if self.tokenizer.chars or self.tokenizer.cut:
            return WORDS
        if self.cut_into_characters(corpus, progress):
            return CHARS
        guess = corpus.language_guess()
        if guess.script in CHARACTER_SCRIPTS:
            return WORDS
        units = itertools.islice(corpus.units(keep_spaces=True), CUT_UNITS)
        lists = (u for u in units if not isinstance(u, str))
        return _remember(self._cuts, (corpus.name, self._raw_key(corpus)),
                         lambda: detect_cut(lists, guess.working_language), limit=256)

    def default_sample_tokens(self, sources: Sequence[Corpus], measure: str = "ppl",
                              progress: Progress = quiet) -> int:
        """Tokens per source sample for one measure (:func:`simcore.matrix.plan.comparison_size`)."""
        sources = corpus_list(sources, "sources")
        if not sources:
            raise InvalidArgument("give at least one source")
        return table_size([self.size(c, progress=progress) for c in sources])  # the same for every measure

    def cell(self, sources: list[PreparedSource], target: PreparedTarget, measure_name: str) -> CellResult:
        """One measure for one source (over its samples) and one target; stored once scored."""
        if not isinstance(sources, list) or not sources or not all(isinstance(s, PreparedSource) for s in sources):
            raise InvalidArgument("cell needs the list of prepared source samples that Workbench.source returns")
        if not isinstance(target, PreparedTarget):
            raise InvalidArgument("cell needs the prepared target that Workbench.target returns")
        if not isinstance(measure_name, str):
            raise InvalidArgument("cell needs a measure name such as 'tvc'")
        measure = get_measure(measure_name)
        key = self.cell_key(sources, target, measure_name)
        record = self.store.get_json("cell", key)
        if record is None:
            scores = []
            for source in sources:
                measure.prepare(source)
                measure.prepare_target(target)  # its tagging has its own pace, not the scoring's
                began = time.perf_counter()
                scores.append(measure.score(source, target))
                pace.record(self.store, f"score-{measure.name}", 1, time.perf_counter() - began,
                            measure_contention=True)
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

    def cell_key(self, sources: list[PreparedSource], target: PreparedTarget, measure_name: str) -> str:
        """The store key of a cell (what is stored already is not computed again, nor counted in an estimate)."""
        measure = get_measure(measure_name)
        # The languages choose how content words are found (TVcC) whatever the tokens: a pre-tokenized target
        # read as Japanese is not the English one. Only said when one is not English (older keys stay valid).
        languages = [target.language, *(s.language for s in sources)]
        extra = [] if all(lang == "en" for lang in languages) else [{"languages": languages}]
        versions = measure_versions(measure.name)  # the model that tags (TVcC) or trains (WVV)
        extra += [{"versions": versions}] if versions else []
        return digest("cell", CELL_VERSION, [s.sample.fingerprint for s in sources], target.fingerprint, measure.name,
                      self.options.subset(measure.option_names), self.tokenizer.as_dict(), self.options.bootstrap,
                      self.options.seed, *extra)

    def unit(self, corpus: Corpus, name: str, size: int, samples: int, targets: list[Corpus],
             progress: Progress = quiet) -> UnitResult:
        """One source at one size under one measure: its samples prepared, then every target scored."""
        measure = get_measure(name)
        try:
            prepared = self.source(corpus, size, samples, progress)
        except StoreError:
            raise
        except SimcoreError as exc:
            return UnitResult(None, str(exc), None, {})
        failure = None
        try:
            # all stored: scoring only reads, nothing need be loaded
            if not self.cells_stored(prepared, targets, name):
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
        return UnitResult(prepared[0].sample.n_tokens, None, failure, cells)

    def cells_stored(self, prepared: list[PreparedSource], targets: list[Corpus],
                     name: str) -> bool:
        """Whether the cells of these source samples with every target under measure ``name`` are
        all stored (a target that cannot be read: not)."""
        try:
            return all(self.store.get("cell", self.cell_key(prepared, self.target(t), name))
                       is not None for t in targets)
        except StoreError:
            raise
        except SimcoreError:
            return False

    def unit_stored(self, corpus: Corpus, name: str, size: int, samples: int,
                    targets: list[Corpus]) -> bool:
        """Whether scoring a part (a source at one size under one measure, with every target) would
        only read stored cells: then it needs no process, no model and no counts."""
        try:
            if self.streams(corpus) and size not in STREAM_SIZES:
                return False  # its samples would need a pass of their own: left to the part
            if not self.streams(corpus):  # a sample not drawn yet has no cell: do not draw it here
                tokenized = self.tokenize(corpus)
                seed = self.options.seed
                if not all(sample_drawn(tokenized, size, i, self.store, seed) for i in range(samples)):
                    return False
            return self.cells_stored(self.source(corpus, size, samples), targets, name)
        except StoreError:
            raise
        except SimcoreError:
            return False

    def in_store(self, corpus: Corpus) -> bool:
        """Whether the corpus's tokens are stored already (a large source: never, its pass says itself)."""
        if self.streams(corpus):
            return False
        try:
            return self.store.get("tokens", self._raw_key(corpus)) is not None
        except SimcoreError:
            return True  # it fails here, in its own cells

    def raw_keys_by_name(self) -> dict[tuple[str, tuple[Any, ...]], str]:
        """The raw fingerprints found so far, by corpus name and file stats: what another process is given
        (:meth:`know_raw_keys`) so that it does not hash the same bytes again."""
        return {(c.name, stats): key for (c, stats), key in self._raw_keys.items()}

    def know_raw_keys(self, keys: dict[tuple[str, tuple[Any, ...]], str]) -> None:
        """Take the raw fingerprints another process found (:meth:`raw_keys_by_name`)."""
        self._known_raw_keys.update(keys)

    def worker_config(self) -> WorkerConfig:
        """What a worker process needs to make this cache again (:meth:`from_worker_config`): the store,
        the options, the raw fingerprints found so far, and the size from which a source streams, so
        that a worker decides how to sample a source as this process does, whatever its own
        module's defaults (a spawned worker imports them afresh)."""
        return (str(self.store.root), self.tokenizer, self.options, self.raw_keys_by_name(),
                self.stream_min_bytes())

    def with_tokenizer(self, tokenizer: TokenizerOptions) -> CorpusCache:
        """A cache on the same store and options that cuts with ``tokenizer``, deciding which sources
        stream as this one does."""
        cache = CorpusCache(self.store, tokenizer, self.options)
        cache._stream_min_bytes = self._stream_min_bytes
        return cache

    @classmethod
    def from_worker_config(cls, config: WorkerConfig) -> CorpusCache:
        root, tokenizer, options, raw_keys, stream_min_bytes = config
        cache = cls(ArtefactStore(root), tokenizer, options)
        cache.know_raw_keys(raw_keys)
        cache._stream_min_bytes = stream_min_bytes
        return cache


def whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def corpus_list(corpora: Any, label: str) -> list[Corpus]:
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
