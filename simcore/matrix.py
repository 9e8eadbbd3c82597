"""The similarity matrix: every source × target × measure, as a long table.

:class:`Workbench` ties corpora, the artefact store and the measures together: it is the corpus cache
(:mod:`simcore.corpus_cache`: reading, tokenizing, sampling, each scored cell stored) with the table
assembled here, the pairs of sources also compared at larger common sizes (:mod:`simcore.ladder`), and
its parts run in processes by :mod:`simcore.schedule`. Adding a target scores only the new cells and a
second run of the same matrix reads everything back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .contamination.scan import Overlap, OverlapOptions, source_overlaps
from .corpora.lang.cut import (
    CHARACTERS,
    CHARS,
    WORDS,
    cut_of_tokenizer,
    describe_cut,
    tokenizer_for_cut,
)
from .corpus import Corpus
from .corpus_cache import (  # noqa: F401 - the old names stay importable from here (patch them where they live)
    CELL_VERSION,
    MEMORY_SOURCES,
    MEMORY_TARGETS,
    STREAM_MIN_BYTES,
    STREAM_SIZES,
    CellResult,
    CorpusCache,
    Progress,
    UnitResult,
    comparison_size,
    corpora_in,
    corpus_list,
    quiet,
    whole,
)
from .errors import InvalidArgument, SimcoreError, StoreError
from .ladder import pair_sizes, size_bias, table_size
from .measures import PreparedTarget, default_measures, get_measure, parse_measures
from .schedule import (  # noqa: F401 - likewise
    MAX_JOBS,
    PARALLEL_MIN_BYTES,
    PARALLEL_MIN_TOKENS,
    READING_SHARE,
    SCORING_FROM,
    run_parallel,
    start_background,
    taggers,
    tokenize_in_processes,
    worth_processes,
)

DEFAULT_MEASURES = default_measures()  # tvc, tvcc, ppl, wvv, jsd, ttr: each measure's `default`
COLUMNS = ["source", "target", "measure", "value", "std", "ci_low", "ci_high", "n_samples", "sample_tokens",
           "source_tokens", "used_whole", "reliable", "flag", "direction", "oov_rate", "error", "options",
           "replicates", "ladder", "source_language", "target_language", "target_cut", "overlap_test", "overlap_all",
           "overlap_ngram"]


class Workbench(CorpusCache):
    """Tokenized corpora, prepared sources and targets, and cached cells, for one option set; and the table."""

    # the n-gram of the overlap columns (simcore.overlap_pass); None leaves them empty
    overlap_options: OverlapOptions | None = OverlapOptions()
    _overlap_now: dict[tuple[str, str], Overlap] = {}

    def _overlap_columns(self, source: str, target: str) -> dict[str, Any]:
        found = self._overlap_now.get((source, target))
        if found is None:
            return {"overlap_test": math.nan, "overlap_all": math.nan, "overlap_ngram": None}
        return {"overlap_test": found.overlap_test, "overlap_all": found.overlap_all,
                "overlap_ngram": f"{found.n} {found.unit}"}

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
        empty = UnitResult(used, failed.get(f"source {corpus.name}"), None, {})
        rows = self._rows(corpus, name, targets, target_of, failed, sizes, n_tokens, samples, {n_tokens: empty})
        for row in rows:
            if row["error"] == "not computed":
                row["error"] = None
            row["flag"] = "; ".join(x for x in (row["flag"], why) if x)
            row["reliable"] = False
        return rows

    def _rows(self, corpus: Corpus, name: str, targets: list[Corpus], target_of: dict[str, PreparedTarget | None],
              failed: dict[str, str], sizes: dict[str, int], n_tokens: int, samples: int,
              units: dict[int, UnitResult]) -> list[dict[str, Any]]:
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
                "source_language": language_of(corpus), "target_language": language_of(target_corpus),
                "target_cut": describe_cut(cut_of_tokenizer(self.tokenizer)),
                **self._overlap_columns(corpus.name, target_corpus.name),
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

        A measure that fails for one source (its model cannot be built, a program is missing) is
        reported in the row's ``error`` column; every other cell is still computed.
        """
        sources, targets = corpus_list(sources, "sources"), corpus_list(targets, "targets")
        if not isinstance(measures, str) and not (isinstance(measures, Sequence)
                                                   and all(isinstance(m, str) for m in measures)):
            raise InvalidArgument("measures must be names such as 'tvc,ppl' or ['tvc', 'ppl']")
        names = parse_measures(measures)
        if not sources or not targets:
            raise SimcoreError("give at least one source and one target")
        cuts = {t.name: self._target_cut(t, progress) for t in targets}
        if any(cut != WORDS for cut in cuts.values()):
            return self._with_cut_targets(sources, targets, cuts, names, samples=samples,
                                          sample_tokens=sample_tokens, progress=progress,
                                          on_row=on_row, jobs=jobs, compute_noise=compute_noise)
        if not whole(samples) or samples < 1:
            raise InvalidArgument("samples must be a whole number of at least 1")
        if sample_tokens is not None and (not whole(sample_tokens) or sample_tokens < 1):
            raise InvalidArgument("sample_tokens must be a positive whole number (or None for the default)")
        if not callable(progress):
            raise InvalidArgument("progress must be a function (message, fraction)")
        if not whole(jobs) or not 1 <= jobs <= MAX_JOBS:
            raise InvalidArgument(f"jobs must be a whole number from 1 to {MAX_JOBS}")
        shown = [0.0]  # where the bar is: a step after reading in processes reports from there, never back
        told = progress

        def progress(message: str, fraction: float) -> None:
            shown[0] = fraction
            told(message, fraction)

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
            tokenize_in_processes(self, sources, targets, samples, jobs, progress)
        # Which target sentences each source already holds: in the pass that reads the source
        # (simcore.overlap_pass), before its size is asked for, so the pass is the same one.
        self._overlap_now = {}
        if self.overlap_options is not None:
            for c in sources:
                found = attempt("source", c, lambda c=c: source_overlaps(
                    self, c, targets, self.overlap_options,
                    progress if jobs == 1 else (lambda m, f: progress(m, shown[0])), samples))
                for name, result in (found or {}).items():
                    self._overlap_now[(c.name, name)] = result
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
        order = sorted(names, key=lambda n: (hasattr(get_measure(n), "background_work"), get_measure(n).cost))

        def ladder_of(corpus: Corpus, name: str) -> list[int]:
            return extra_sizes.get(corpus.name, []) if get_measure(name).size_ladder else []

        # A measure that is noise at this size (WVV below 1M tokens) cannot carry the answer: not computed
        # unless asked, since it costs more than all the others together.
        skipped = [n for n in order if not compute_noise and get_measure(n).noise_when_small
                   and common < get_measure(n).reliable_tokens]
        plan = [(c, n, size) for n in order if n not in skipped for c in sources
                for size in [common, *ladder_of(c, n)]]
        weight = {(c.name, n, size): get_measure(n).cost * size / common for c, n, size in plan}
        total = sum(weight.values()) or 1.0
        finished: dict[tuple[str, str, int], UnitResult] = {}
        rows: list[dict[str, Any]] = []
        readable = [t for t in targets if target_of[t.name] is not None]

        def take(corpus: Corpus, name: str, size: int, result: UnitResult) -> None:
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
        parallel = worth_processes(jobs, plan)
        background = None if parallel else start_background(names, prepared_targets, jobs)
        offset = READING_SHARE if self._read_in_processes else 0.0
        try:
            if parallel:
                side = [job for n in names if hasattr(get_measure(n), "background_work")
                        for t in prepared_targets
                        for job in get_measure(n).background_work(t, taggers(t, prepared_targets, jobs))]
                run_parallel(self, plan, samples, readable, jobs, progress, weight, total, take, side)
            else:
                for corpus, name, size in plan:
                    label = get_measure(name).label
                    at = offset + (1 - offset) * done / total

                    def report(message: str, _fraction: float, at: float = at) -> None:
                        progress(message, at)  # steps inside a part never move the bar back

                    report(f"{label}: {corpus.name} at {size:,} tokens", at)
                    if background is not None:
                        background.wait_before(name)
                    take(corpus, name, size, self._unit(corpus, name, size, samples, readable, report))
                    done += weight[(corpus.name, name, size)]
        except BaseException:
            if background is not None:
                background.stop()
                background = None
            raise
        finally:
            if background is not None:
                background.close()
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


    def _target_cut(self, target: Corpus, progress: Progress) -> str:
        try:
            return self.target_cut(target, progress)
        except StoreError:
            raise
        except SimcoreError:
            return WORDS  # the target cannot be read: the table says so in its cells

    def _with_cut_targets(self, sources: list[Corpus], targets: list[Corpus], cuts: dict[str, str],
                          names: list[str], *, progress: Progress, **run: Any) -> pd.DataFrame:
        """The table when some targets' rows ask for another cut (:mod:`simcore.corpora.lang.cut`:
        Chinese or Korean NER data tagged one character a row, Vietnamese words joined by '_'): each
        group of targets is scored with its sources cut alike (the same store; every artefact keyed by
        the cut), the other targets as usual, and the tables are one, in the targets' order."""
        groups: dict[str, list[Corpus]] = {}
        for t in targets:
            groups.setdefault(cuts[t.name], []).append(t)
        tables, done = [], 0
        for cut, group in groups.items():
            bench = (self if cut == WORDS
                     else Workbench(self.store, tokenizer_for_cut(self.tokenizer, cut), self.options))
            bench.overlap_options = self.overlap_options
            start, share = done / len(targets), len(group) / len(targets)

            def part(message: str, fraction: float, a: float = start, b: float = share) -> None:
                progress(message, a + fraction * b)

            tables.append(bench.matrix(sources, group, names, progress=part, **run))
            done += len(group)
        failed: dict[str, str] = {}
        for table in tables:
            failed.update(table.attrs.get("failed_corpora", {}))
        order = {t.name: i for i, t in enumerate(targets)}
        position = {(c.name, n): i for i, (c, n) in enumerate((c, n) for c in sources for n in names)}
        table = pd.concat(tables, ignore_index=True)
        table = table.iloc[sorted(range(len(table)), key=lambda i: (position[(table["source"].iat[i], table["measure"].iat[i])],
                                                                     order[table["target"].iat[i]]))]
        table = table.reset_index(drop=True)
        table.attrs["failed_corpora"] = failed
        table.attrs["character_targets"] = [t.name for t in targets
                                            if cuts[t.name] in (CHARS, CHARACTERS)]
        table.attrs["target_cuts"] = {t.name: cuts[t.name] for t in targets}
        return table


def language_of(corpus: Corpus) -> str | None:
    """The corpus's language code for the table (None when it cannot be read: its cells say why)."""
    try:
        return corpus.language_guess().language
    except StoreError:
        raise
    except SimcoreError:
        return None


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
