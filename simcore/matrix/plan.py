"""A matrix's plan: which parts run, at which sizes, in which order, and which measures are left
out.

Every runner reads the same plan (the serial and the parallel one in :mod:`simcore.matrix.schedule`,
the Dask one in :mod:`simcore.distributed.prepare`, the estimate in :mod:`simcore.matrix.estimates`), so
the size and noise rules are stated once, here. A part is a source at one size under one measure,
with every target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..corpora.corpus import Corpus
from ..measures.lookup import default_measures, get_measure, parse_measures
from ..utils.errors import InvalidArgument, SimcoreError
from .corpus_cache import corpus_list, whole
from .ladder import DEFAULT_SAMPLE_CAP, pair_sizes, table_size

DEFAULT_MEASURES = default_measures()  # tvc, tvcc, ppl, wvv, jsd, ttr: each measure's `default`

Part = tuple[Corpus, str, int]  # a source, a measure, a sample size


def comparison_size(source_tokens: Sequence[int], measure: str = "ppl",
                    cap: int = DEFAULT_SAMPLE_CAP) -> int:
    """Tokens per source sample in the table: the smallest source's size, at most ``cap``
    (:func:`simcore.matrix.ladder.table_size`); the same for every measure, so every source is compared at
    one size. Pairs of larger sources also meet at larger sizes (the ``ladder`` column)."""
    return table_size(source_tokens, cap)


def checked_request(sources: Any, targets: Any, measures: Any, *, samples: Any = 1,
                    sample_tokens: Any = None, jobs: Any = 1,
                    max_jobs: int | None = None) -> tuple[list[Corpus], list[Corpus], list[str]]:
    """A matrix's arguments checked (one line saying what is wrong): the sources, the targets and
    the measures' names."""
    sources, targets = corpus_list(sources, "sources"), corpus_list(targets, "targets")
    if not isinstance(measures, str) and not (isinstance(measures, Sequence)
                                               and all(isinstance(m, str) for m in measures)):
        raise InvalidArgument("measures must be names such as 'tvc,ppl' or ['tvc', 'ppl']")
    names = parse_measures(measures)
    if not sources or not targets:
        raise SimcoreError("give at least one source and one target")
    if not whole(samples) or samples < 1:
        raise InvalidArgument("samples must be a whole number of at least 1")
    if sample_tokens is not None and (not whole(sample_tokens) or sample_tokens < 1):
        raise InvalidArgument(
            "sample_tokens must be a positive whole number (or None for the default)")
    if max_jobs is not None and (not whole(jobs) or not 1 <= jobs <= max_jobs):
        raise InvalidArgument(f"jobs must be a whole number from 1 to {max_jobs}")
    return sources, targets, names


@dataclass
class Plan:
    """The parts of one matrix and what they weigh (see :func:`plan_matrix`)."""

    sources: list[Corpus]
    measures: list[str]  # as asked: the table's order
    sizes: dict[str, int]  # tokens of each source that could be read
    common: int  # the size every source is compared at in the table
    ladders: dict[str, list[int]]  # each source's larger sizes, where pairs meet (simcore.matrix.ladder)
    order: list[str]  # the measures computed, cheap first
    skipped: list[str]  # measures that are noise at ``common``, not computed
    parts: list[Part] = field(default_factory=list)
    weight: dict[tuple[str, str, int], float] = field(default_factory=dict)  # a part's share

    @property
    def total(self) -> float:
        return sum(self.weight.values()) or 1.0

    def sizes_of(self, source: str, measure: str) -> list[int]:
        """The sizes a source is sampled at for a measure: the table's, then its ladder's when the
        measure is compared on the ladder."""
        ladder = self.ladders.get(source, []) if get_measure(measure).size_ladder else []
        return [self.common, *ladder]

    def measures_at(self, source: str, size: int) -> list[str]:
        """The measures computed on a source's sample of ``size`` tokens, in the table's order."""
        return [n for n in self.measures
                if n not in self.skipped and size in self.sizes_of(source, n)]

    def samples_of(self, source: str) -> list[int]:
        """Every size a source is sampled at, the table's first."""
        return list(dict.fromkeys(z for n in self.order if n not in self.skipped
                                  for z in self.sizes_of(source, n))) or [self.common]


def plan_matrix(sources: Sequence[Corpus], sizes: Mapping[str, int], measures: Sequence[str], *,
                sample_tokens: int | None = None, compute_noise: bool = False) -> Plan:
    """The plan for ``sources`` whose ``sizes`` (tokens) are known: a source missing from ``sizes``
    cannot be read, and its parts (at the table's size) fail on their own.

    Every source is compared at one size (``sample_tokens``, else the smallest source's); pairs of
    sources also meet at the largest size both have, unless the size was chosen. Cheap measures come
    first, so that their rows arrive in seconds; measures with target-side work in another process
    last, so that work overlaps the rest. A measure that is noise at the table's size (WVV below 1M
    tokens) cannot carry the answer: not computed unless ``compute_noise``, since it costs more than
    all the others together.
    """
    sizes = dict(sizes)
    common = (sample_tokens or comparison_size(list(sizes.values()))) if sizes else 1
    ladders = pair_sizes(sizes, common, ladder=sample_tokens is None) if sizes else {}
    order = sorted(measures, key=lambda n: (hasattr(get_measure(n), "background_work"),
                                            get_measure(n).cost))
    skipped = [n for n in order if not compute_noise and get_measure(n).noise_when_small
               and common < get_measure(n).reliable_tokens]
    plan = Plan(list(sources), list(measures), sizes, common, ladders, order, skipped)
    plan.parts = [(c, n, size) for n in order if n not in skipped for c in plan.sources
                  for size in plan.sizes_of(c.name, n)]
    plan.weight = {(c.name, n, size): get_measure(n).cost * size / common
                   for c, n, size in plan.parts}
    return plan
