"""The similarity matrix: every source × target × measure, as a long table.

:class:`Workbench` ties corpora, the artefact store and the measures together. It holds a
corpus cache (:mod:`simcore.matrix.corpus_cache`: reading, tokenizing, sampling, each scored cell
stored); a matrix is planned (:mod:`simcore.matrix.plan`: the parts, the sizes sources are
compared at), run (:mod:`simcore.matrix.schedule`: here or in processes) and written row by row
(:mod:`simcore.matrix.rows`). Adding a target scores only the new cells and a second run of the same
matrix reads everything back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from ..contamination.scan import Overlap, OverlapOptions, source_overlaps
from ..corpora.corpus import Corpus, TokenizedCorpus
from ..corpora.lang.cut import CHARACTERS, CHARS, WORDS, tokenizer_for_cut
from ..corpora.tokenize import TokenizerOptions
from ..measures.options import MeasureOptions
from ..measures.prepared import PreparedSource, PreparedTarget
from ..utils.errors import InvalidArgument, SimcoreError, StoreError
from ..utils.store import ArtefactStore
from .corpus_cache import CellResult, CorpusCache, Progress, quiet
from .plan import DEFAULT_MEASURES, checked_request, plan_matrix
from .rows import Rows
from .schedule import MAX_JOBS, READING_SHARE, run_parts, tokenize_in_processes


class Workbench:
    """Tokenized corpora, prepared sources and targets, and cached cells, for one option set; and
    the table.

    What a corpus becomes (tokens, samples, prepared sources and targets, cells) is its
    :class:`~simcore.matrix.corpus_cache.CorpusCache`, ``cache``; the methods below hand on to it.
    """

    def __init__(self, store: ArtefactStore | None = None,
                 tokenizer: TokenizerOptions = TokenizerOptions(),
                 options: MeasureOptions = MeasureOptions()) -> None:
        self.cache = CorpusCache(store, tokenizer, options)
        # the n-gram of the overlap columns (simcore.contamination.scan); None leaves them empty
        self.overlap_options: OverlapOptions | None = OverlapOptions()

    @property
    def store(self) -> ArtefactStore:
        return self.cache.store

    @property
    def tokenizer(self) -> TokenizerOptions:
        return self.cache.tokenizer

    @property
    def options(self) -> MeasureOptions:
        return self.cache.options

    def tokenize(self, corpus: Corpus, progress: Progress = quiet) -> TokenizedCorpus:
        """The corpus tokenized (stored once)."""
        return self.cache.tokenize(corpus, progress)

    def size(self, corpus: Corpus, samples: int = 1, progress: Progress = quiet) -> int:
        """A source's size in tokens (see :meth:`CorpusCache.size`)."""
        return self.cache.size(corpus, samples, progress)

    def source(self, corpus: Corpus, sample_tokens: int, samples: int,
               progress: Progress = quiet) -> list[PreparedSource]:
        """A source's samples of ``sample_tokens`` tokens, prepared for the measures."""
        return self.cache.source(corpus, sample_tokens, samples, progress)

    def target(self, corpus: Corpus, progress: Progress = quiet) -> PreparedTarget:
        """A target prepared for the measures."""
        return self.cache.target(corpus, progress)

    def cell(self, sources: list[PreparedSource], target: PreparedTarget,
             measure_name: str) -> CellResult:
        """One measure for one source (over its samples) and one target; stored once scored."""
        return self.cache.cell(sources, target, measure_name)

    def cell_key(self, sources: list[PreparedSource], target: PreparedTarget,
                 measure_name: str) -> str:
        """The store key of a cell."""
        return self.cache.cell_key(sources, target, measure_name)

    def raw_key(self, corpus: Corpus) -> str:
        """The corpus's raw fingerprint (what a stored artefact of its own text is keyed by)."""
        return self.cache.raw_key(corpus)

    def streams(self, corpus: Corpus) -> bool:
        """Whether a source is sampled in one streaming pass (a large one), not tokenized whole."""
        return self.cache.streams(corpus)

    def stream_samples(self, corpus: Corpus, sizes: Sequence[int], samples: int,
                       progress: Progress = quiet) -> Any:
        """Every sample of a large source for ``sizes``, read in one pass (remembered)."""
        return self.cache.stream_samples(corpus, sizes, samples, progress)

    def read_notes(self, corpus: Corpus, samples: int = 1) -> Any:
        """What reading the corpus met (skipped lines, repaired tokens, ...)."""
        return self.cache.read_notes(corpus, samples)

    def target_cut(self, corpus: Corpus, progress: Progress = quiet) -> str:
        """How a target's own rows cut both sides (see :meth:`CorpusCache.target_cut`)."""
        return self.cache.target_cut(corpus, progress)

    def cut_into_characters(self, corpus: Corpus, progress: Progress = quiet) -> bool:
        """Whether a target's own tokens are characters of a script written without spaces."""
        return self.cache.cut_into_characters(corpus, progress)

    def default_sample_tokens(self, sources: Sequence[Corpus], measure: str = "ppl",
                              progress: Progress = quiet) -> int:
        """Tokens per source sample (:func:`simcore.matrix.plan.comparison_size`)."""
        return self.cache.default_sample_tokens(sources, measure, progress)

    def matrix(
        self,
        sources: Sequence[Corpus],
        targets: Sequence[Corpus],
        measures: Sequence[str] | str = DEFAULT_MEASURES,
        *,
        samples: int = 1,
        sample_tokens: int | None = None,
        progress: Progress = quiet,
        on_row: Callable[[dict[str, Any]], None] | None = None,
        jobs: int = 1,
        compute_noise: bool = False,
    ) -> pd.DataFrame:
        """Score every source against every target with every measure.

        A measure that is noise at the table's size (WVV below 1M tokens per source) is not computed
        unless ``compute_noise``: its rows are empty and say why.
        ``jobs`` > 1 computes the parts (a source at one size under one measure, with every target)
        in that many processes; every value is the same as with one.

        A corpus that cannot be read, or a measure that fails for one source (its model cannot be
        built, a program is missing), is reported in the row's ``error`` column; every other cell is
        still computed. The table's ``attrs`` hold ``failed_corpora`` ("source NAME" or "target
        NAME": why it could not be read) and ``read_notes`` (the same keys: what reading the others
        skipped or repaired, in one line).
        """
        sources, targets, names = checked_request(
            sources, targets, measures, samples=samples, sample_tokens=sample_tokens, jobs=jobs,
            max_jobs=MAX_JOBS)
        if not callable(progress):
            raise InvalidArgument("progress must be a function (message, fraction)")
        run = {"samples": samples, "sample_tokens": sample_tokens, "on_row": on_row, "jobs": jobs,
               "compute_noise": compute_noise}
        cuts = {t.name: self._target_cut(t, progress) for t in targets}
        if any(cut != WORDS for cut in cuts.values()):
            return self._with_cut_targets(sources, targets, cuts, names, progress=progress, **run)
        return self._table(sources, targets, names, Bar(progress), **run)

    def _table(self, sources: list[Corpus], targets: list[Corpus], names: list[str],
               progress: Bar, *, samples: int, sample_tokens: int | None,
               on_row: Callable[[dict[str, Any]], None] | None, jobs: int,
               compute_noise: bool) -> pd.DataFrame:
        """The table of targets whose rows are cut as this workbench cuts its corpora."""
        cache = self.cache
        failed: dict[str, str] = {}  # one corpus that cannot be read fails only its own cells
        read = jobs > 1 and tokenize_in_processes(cache, sources, targets, samples, jobs, progress,
                                                  self.overlap_options)
        overlaps = self._overlaps(sources, targets, samples, failed,
                                  progress if jobs == 1 else progress.hold)
        sizes = {c.name: size for c in sources if (size := attempt(
            failed, "source", c, lambda c=c: cache.size(c, samples, progress))) is not None}
        plan = plan_matrix(sources, sizes, names, sample_tokens=sample_tokens,
                           compute_noise=compute_noise)
        target_of = {t.name: attempt(failed, "target", t, lambda t=t: cache.target(t, progress))
                     for t in targets}
        rows = Rows(plan, targets, target_of, failed, samples=samples, options=self.options,
                    tokenizer=self.tokenizer, overlaps=overlaps, on_row=on_row)
        readable = [t for t in targets if target_of[t.name] is not None]
        run_parts(cache, plan, samples, readable, [target_of[t.name] for t in readable], jobs,
                  progress, rows.take, READING_SHARE if read else 0.0)
        rows.skipped()
        progress("done", 1.0)
        table = rows.table()
        table.attrs["read_notes"] = self._read_notes(sources, targets, failed, samples)
        return table

    def _overlaps(self, sources: list[Corpus], targets: list[Corpus], samples: int,
                  failed: dict[str, str], progress: Progress) -> dict[tuple[str, str], Overlap]:
        """Which target sentences each source already holds, by (source, target): counted in the
        pass that reads the source (:mod:`simcore.contamination.scan`), before its size is asked for, so
        the pass is the same one."""
        found: dict[tuple[str, str], Overlap] = {}
        if self.overlap_options is None:
            return found
        for c in sources:
            by_target = attempt(failed, "source", c, lambda c=c: source_overlaps(
                self.cache, c, targets, self.overlap_options, progress, samples))
            for name, result in (by_target or {}).items():
                found[(c.name, name)] = result
        return found

    def _read_notes(self, sources: list[Corpus], targets: list[Corpus], failed: dict[str, str],
                    samples: int) -> dict[str, str]:
        """What reading met in each corpus that could be read, where it skipped or repaired
        something: its ``ReadNotes`` in one line, keyed as ``failed`` (plain text, so that the
        table's ``attrs`` stay serialisable)."""
        notes: dict[str, str] = {}
        for role, corpora in (("source", sources), ("target", targets)):
            for c in corpora:
                if c.problem is not None or {f"source {c.name}", f"target {c.name}"} & set(failed):
                    continue
                found = attempt({}, role, c, lambda c=c, role=role: (
                    self.cache.read_notes(c, samples) if role == "source"
                    else self.cache.tokenize(c).read_notes))  # read already: from the store
                if found:
                    notes[f"{role} {c.name}"] = found.summary()
        return notes

    def _target_cut(self, target: Corpus, progress: Progress) -> str:
        try:
            return self.cache.target_cut(target, progress)
        except StoreError:
            raise
        except SimcoreError:
            return WORDS  # the target cannot be read: the table says so in its cells

    def _with_cut_targets(self, sources: list[Corpus], targets: list[Corpus], cuts: dict[str, str],
                          names: list[str], *, progress: Progress, **run: Any) -> pd.DataFrame:
        """The table when some targets' rows ask for another cut (:mod:`simcore.corpora.lang.cut`:
        Chinese or Korean NER data tagged one character a row, Vietnamese words joined by '_'): each
        group of targets is scored with its sources cut alike (the same store; every artefact keyed
        by the cut), the other targets as usual, and the tables are one, in the targets' order."""
        groups: dict[str, list[Corpus]] = {}
        for t in targets:
            groups.setdefault(cuts[t.name], []).append(t)
        tables, done = [], 0
        for cut, group in groups.items():
            bench = (self if cut == WORDS else
                     Workbench(self.store, tokenizer_for_cut(self.tokenizer, cut), self.options))
            bench.overlap_options = self.overlap_options
            start, share = done / len(targets), len(group) / len(targets)

            def part(message: str, fraction: float, a: float = start, b: float = share) -> None:
                progress(message, a + fraction * b)

            tables.append(bench.matrix(sources, group, names, progress=part, **run))
            done += len(group)
        failed: dict[str, str] = {}
        notes: dict[str, str] = {}
        for table in tables:
            failed.update(table.attrs.get("failed_corpora", {}))
            for key, found in table.attrs.get("read_notes", {}).items():
                notes.setdefault(key, found)  # a source is read in each group: the first's notes
        order = {t.name: i for i, t in enumerate(targets)}
        position = {(c.name, n): i
                    for i, (c, n) in enumerate((c, n) for c in sources for n in names)}
        table = pd.concat(tables, ignore_index=True)
        table = table.iloc[sorted(range(len(table)), key=lambda i: (
            position[(table["source"].iat[i], table["measure"].iat[i])],
            order[table["target"].iat[i]]))]
        table = table.reset_index(drop=True)
        table.attrs["failed_corpora"] = failed
        table.attrs["read_notes"] = notes
        table.attrs["character_targets"] = [t.name for t in targets
                                            if cuts[t.name] in (CHARS, CHARACTERS)]
        table.attrs["target_cuts"] = {t.name: cuts[t.name] for t in targets}
        return table


def attempt(failed: dict[str, str], role: str, corpus: Corpus, make: Callable[[], Any]) -> Any:
    """``make()``, or None when the corpus cannot be read (why is kept in ``failed`` under "ROLE
    NAME", and a corpus that failed once is not tried again). A full disk or an unusable store is
    no corpus's fault: it stops the run."""
    if f"{role} {corpus.name}" in failed:
        return None
    try:
        return make()
    except StoreError:
        raise
    except SimcoreError as exc:
        failed[f"{role} {corpus.name}"] = str(exc)
        return None


class Bar:
    """A progress callback that remembers where the bar stands, so that a step may report without
    moving it (:meth:`hold`)."""

    def __init__(self, told: Progress) -> None:
        self.told, self.at = told, 0.0

    def __call__(self, message: str, fraction: float) -> None:
        self.at = fraction
        self.told(message, fraction)

    def hold(self, message: str, _fraction: float) -> None:
        self(message, self.at)
