"""Estimates of a job's time before it runs, from what the store already holds and this machine's paces.

:func:`matrix_seconds` counts what a similarity matrix will do (tokenizing, KenLM, skip-gram, tagging, scoring)
that is not stored yet; :func:`probe_seconds` counts what a probe will do: the skip-gram vectors of each source not yet
trained at the probe's sample size (the matrix's WVV trains the same ones), and every tagger run.
The paces are :mod:`simcore.utils.pace`'s (recorded by the steps themselves).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..corpora.corpus import Corpus
from ..measures.wvv import vectors_stored
from ..probe.config import ProbeCaps
from ..probe.data import TargetSplits, read_split, stored_split_key
from ..probe.run import SAMPLE_SEED
from ..utils import pace
from ..utils.errors import SimcoreError, StoreError
from ..utils.store import ArtefactStore, digest
from .plan import comparison_size, plan_matrix
from .workbench import Workbench


def probe_splits(store: ArtefactStore, targets: Sequence[TargetSplits],
                 caps: ProbeCaps = ProbeCaps()) -> pace.ProbeSplits:
    """What the probe will read and tag of ``targets`` under ``caps``: the dev sentences each run
    evaluates and the test sentences it tags (averaged over the targets), and the bytes of the splits
    it reads: the test split every time, train and dev only while their docs are not stored. A target
    whose splits cannot be read counts nothing (the probe fails its rows at once)."""
    dev = test = size = 0
    for target in targets:
        try:
            parts = ["train", "dev"] if target.dev else ["train"]
            missing = [s for s in parts if docs_missing(store, target, s, caps)]
            size += sum(target.corpus(s).size_bytes for s in [*missing, "test"])
            counts = {s: split_sentences(target, s) for s in (parts[-1], "test")}
            dev += capped(counts[parts[-1]], caps.dev_sentences if target.dev else caps.train_sentences)
            test += capped(counts["test"], caps.test_sentences)
        except StoreError:
            raise
        except SimcoreError:
            continue
    n = max(1, len(targets))
    return pace.ProbeSplits(round(dev / n), round(test / n), size)


COUNTED: dict[tuple[str, str, int], int] = {}  # (split path, split, bytes) -> sentences, read once


def split_sentences(target: TargetSplits, split: str) -> int:
    """The split's tagged sentences, read once per file and size (a form's estimate reruns often)."""
    key = (str(getattr(target, split)), split, target.corpus(split).size_bytes)
    if key not in COUNTED:
        COUNTED[key] = len(read_split(target, split))
    return COUNTED[key]


def capped(count: int, limit: int | None) -> int:
    """``count`` sentences under a cap of ``limit`` (None: no cap)."""
    return count if limit is None else min(count, limit)


def docs_missing(store: ArtefactStore, target: TargetSplits, split: str, caps: ProbeCaps) -> bool:
    """Whether the split's spaCy docs under ``caps`` are still to build."""
    limit = caps.dev_sentences if split == "dev" else caps.train_sentences
    return store.get("probe-docs", stored_split_key(target, split, limit, SAMPLE_SEED)) is None


def probe_seconds(bench: Workbench, sources: Sequence[Corpus], *, seeds: int, epochs: int, seconds_cap: float,
                  train_sentences: int | None, source_tokens: int | None = None,
                  targets: int = 1, splits: pace.ProbeSplits = pace.ProbeSplits(),
                  contention: float | None = None) -> pace.ProbeEstimate:
    """The probe's estimate (see :func:`simcore.utils.pace.probe_estimate`) counting only the vectors still to
    train: the sample each source's vectors train on is the probe's (``source_tokens``, else the size
    the matrix compares sources at), drawn here as the probe would draw it (and stored for it).
    ``splits`` (:func:`probe_splits`) counts the targets' reading and tagging; spaCy's import is
    counted when this process has not imported it yet (the probe runs where its estimate is made).
    ``contention``: how much the machine's other work slows it (default:
    :func:`simcore.utils.pace.contention` now)."""
    sizes: dict[str, int] = {}
    for corpus in sources:
        try:
            sizes[corpus.name] = bench.size(corpus)
        except StoreError:
            raise
        except SimcoreError:
            continue  # the probe fails this source's rows at once: no time
    n_tokens = source_tokens or (comparison_size(list(sizes.values()), "wvv") if sizes else 0)
    to_train = []
    for corpus in sources:
        if corpus.name not in sizes:
            continue
        try:
            prepared = bench.source(corpus, n_tokens, 1)[0]
        except StoreError:
            raise
        except SimcoreError:
            continue
        if not vectors_stored(prepared):
            to_train.append(prepared.sample.n_tokens)
    estimate = pace.probe_estimate(bench.store, to_train, seeds=seeds, epochs=epochs, seconds_cap=seconds_cap,
                                   train_sentences=train_sentences, wvv_epochs=bench.options.wvv_epochs,
                                   targets=targets, splits=splits,
                                   startup="spacy" not in sys.modules,
                                   contention=pace.contention() if contention is None
                                   else contention)
    # every source still counts its runs; only the vectors already stored take no time
    runs = (1 + len(sources)) * max(1, seeds) * max(1, targets)
    per_run = estimate.runs / estimate.count if estimate.count else 0.0
    return pace.ProbeEstimate(estimate.vectors, runs * per_run, runs, len(to_train), estimate.measured,
                              estimate.setup, estimate.contention)


BYTES_PER_TOKEN = 5.5  # a corpus not read yet: its tokens guessed from its bytes (English text with markup)


def matrix_seconds(bench: Workbench, sources: Sequence[Corpus], targets: Sequence[Corpus], measures: Sequence[str], *,
                   samples: int = 1, sample_tokens: int | None = None,
                   compute_noise: bool = False, jobs: int = 1,
                   contention: float | None = None) -> pace.MatrixEstimate:
    """A matrix's time before it runs, from this machine's paces, counting only what is not stored yet:
    reading and tokenizing each corpus (bytes), each source sample's KenLM model (PPL, tokens) and skip-gram
    vectors (WVV, tokens × epochs), each target's tagging (TVcC, sentences), and every value not stored.

    No source is tokenized here: one not in the store yet is counted whole from its bytes (every step of it
    to do); a stored one is sized and sampled from the store as the matrix would sample it. Targets (small
    NER sets) are read, so that their sentences are counted. ``contention``: how much the machine's
    other work slows the job (default: :func:`simcore.utils.pace.contention` now)."""
    steps = dict.fromkeys(("start-up", "tokenize", "kenlm", "skipgram", "tagging", "scoring"), 0.0)
    own: list[bool] = []

    def add(step: str, units: float) -> None:
        if units > 0:
            per_second, mine = pace.rate(bench.store, step)
            steps["scoring" if step.startswith("score-") else step] += units / per_second
            own.append(mine)

    def stored(corpus: Corpus) -> bool:
        try:
            return bench.cache.in_store(corpus)
        except SimcoreError:
            return False

    ready = {c.name: stored(c) for c in [*sources, *targets]}
    for corpus in sources:
        if not ready[corpus.name]:
            add("tokenize", corpus.size_bytes)
    sizes = {c.name: (bench.size(c) if ready[c.name] else int(c.size_bytes / BYTES_PER_TOKEN)) for c in sources}
    # targets (NER sets) are small: read here when they are not stored yet, so their sentences are counted
    prepared_targets = {t.name: bench.target(t) for t in targets}
    # the matrix's own plan: its size, and the measures it leaves out as noise at that size
    plan = plan_matrix(sources, sizes, list(measures), sample_tokens=sample_tokens,
                       compute_noise=compute_noise)
    n_tokens = plan.common
    cells = 0
    for measure in measures:
        if measure in plan.skipped:
            continue  # not computed: noise at this size (the matrix says so instead)
        for corpus in sources:
            n = min(n_tokens, sizes[corpus.name])
            prepared = bench.source(corpus, n_tokens, samples) if ready[corpus.name] else None
            for i in range(max(1, samples)):
                p = prepared[i] if prepared else None
                if measure == "ppl" and (p is None or bench.store.get("kenlm", digest(
                        "kenlm", p.sample.fingerprint, bench.options.ppl_order)) is None):
                    add("kenlm", n)
                if measure == "wvv" and (p is None or not vectors_stored(p)):
                    add("skipgram", n * bench.options.wvv_epochs)
            for t in targets:
                target = prepared_targets[t.name]
                if prepared is None or target is None or bench.store.get_json(
                        "cell", bench.cell_key(prepared, target, measure)) is None:
                    cells += 1
                    add(f"score-{measure}", max(1, samples))
        if measure == "tvcc":  # each target tagged once (its parts are stored)
            for t in targets:
                target = prepared_targets[t.name]
                if any(bench.store.get_json("cell", bench.cell_key(
                        bench.source(c, n_tokens, samples), target, "tvcc")) is None
                        for c in sources if ready[c.name]) or not all(ready[c.name] for c in sources):
                    add("tagging", len(target.sentences))
    if cells:
        steps["start-up"] = pace.STARTUP + (pace.TAGGER_STARTUP if "tvcc" in measures else 0.0)
    return pace.MatrixEstimate(steps, cells, bool(own) and all(own), max(1, min(jobs, cells)),
                               pace.contention() if contention is None else contention)
