"""This machine's pace at the slow steps, recorded as they run, for estimates made before a job starts.

Each slow step records how much it did and how long it took (``record``): skip-gram training
(tokens × epochs), a probe's tagger training (sentences × epochs). ``rate`` reads the latest records
of a step back as units a second; before any record, the pace measured on a shared 2-core machine
(``DEFAULTS``). The records are a small JSON-lines file per step under the store's ``pace/`` folder:
nothing else reads them, a torn or foreign line is skipped, and they are kept short.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from .store import ArtefactStore

# Units a second on a shared 2-core machine, recorded by bench/bench_estimates.py (600,000 and 170-250).
DEFAULTS = {
    "skipgram": 500_000.0,  # tokens × epochs a second, one thread (wvv_workers=1)
    # train sentences × epochs a second for the probe's spaCy tagger, its scheduled dev evaluations
    # included as the recorded pace includes them (bench/bench_estimates.py's profile, wetlab_wlp,
    # 300 sentences × 3 epochs, 20 s a run at load 2.5: 45 with evaluations, 70 without)
    "probe-epoch": 60.0,
    # sentences a second a probe's tagger evaluates (the dev split) or tags (the test split): 500 dev
    # sentences in 2.2-2.4 s, 2,813 test sentences in 8.2-11.7 s (same profile)
    "probe-tagging": 250.0,
    # target split bytes a second read and converted to spaCy's docs (2.5 MB in 3.7-5.3 s, same profile)
    "probe-splits": 500_000.0,
    # the matrix's slow steps (bench/bench_matrix.py --estimates on a shared 2-core machine)
    "tokenize": 3_000_000.0,  # corpus bytes a second, read and tokenized into the store
    "kenlm": 65_000.0,  # sample tokens a second, KenLM's lmplz and build_binary (small samples: its start-up)
    "tagging": 1_000.0,  # sentences a second, spaCy's part-of-speech tagging (TVcC's content words)
}
SCORE_DEFAULT = 500.0  # (source, target) scores a second of a measure with no record yet
# Seconds a matrix spends outside its steps: simcore and its worker processes started, and spaCy's tagger
# loaded when TVcC is asked for: spaCy imported with PyTorch (5.4-7.0 s wall, 3.5-4.2 CPU s at load
# 2-5) and its model loaded (about 1 s); the bundled sample's cold matrix took 18 s at load 5, of
# which its steps' records hold about 6 s.
STARTUP = 3.0
TAGGER_STARTUP = 7.0
T = TypeVar("T")
KEEP = 50  # records kept per step
LATEST = 10  # records the rate is read from


def _file(store: ArtefactStore, step: str) -> Path:
    return Path(store.root) / "pace" / f"{step}.jsonl"


PROBE_SECONDS = 0.2  # the spin that measures the machine's contention
CONTENTION_REFRESH = 30.0  # seconds a measured contention is reused in a process
_CONTENTION = [float("-inf"), 1.0]  # when it was last measured (monotonic), its value


def contention() -> float:
    """How many times slower than alone a CPU-bound step runs here now, at least 1: a thread spins
    for 0.2 s and compares the wall time with the CPU time it got, capped by the runnable processes
    per core (the 1-minute load average); measured at most every 30 s in a process. The load average
    alone overstates it on a shared machine, where much of the load is niced work that takes little
    from a job at normal priority (the bundled sample's cold matrix, 8-10 CPU s, took 8.5-14.6 s
    wall at load 3-7.6 beside niced work, and 38 s at load 7.7 beside work at normal priority);
    the spin alone is noisy. An estimate made before a job scales by it; a pace recorded under
    contention is read as the pace alone."""
    now = time.monotonic()
    if now - _CONTENTION[0] < CONTENTION_REFRESH:
        return _CONTENTION[1]
    began, cpu = time.perf_counter(), time.thread_time()
    while time.perf_counter() - began < PROBE_SECONDS:
        pass
    wall, used = time.perf_counter() - began, time.thread_time() - cpu
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):  # no load average here: the spin alone
        load = float("inf")
    _CONTENTION[:] = [now, max(1.0, min(load, wall / max(used, 1e-6)))]
    return _CONTENTION[1]


TIMED_ALONE = 2.0  # a step shorter than this is not worth a contention's spin of its own


def step_contention(seconds: float) -> float:
    """The contention to record a step of ``seconds`` with: measured for a step of 2 s or more (the
    spin costs it at most a tenth), else the one measured in this process in the last 30 s, else 1
    (a cell's scoring, in milliseconds, must not pay a 0.2 s spin)."""
    if seconds >= TIMED_ALONE:
        return contention()
    return _CONTENTION[1] if time.monotonic() - _CONTENTION[0] < CONTENTION_REFRESH else 1.0


def record(store: ArtefactStore | None, step: str, units: float, seconds: float,
           contention: float = 1.0, measure_contention: bool = False) -> None:
    """Note that ``step`` did ``units`` of work in ``seconds``, at ``contention`` (with
    ``measure_contention``: :func:`step_contention`); the rate is read as the pace alone. Never
    raises: an estimate must not stop the work."""
    if store is None or units <= 0 or seconds <= 0:
        return
    if measure_contention:
        contention = step_contention(seconds)
    path = _file(store, step)
    item = {"units": float(units), "seconds": float(seconds)}
    if contention > 1.0:
        item["contention"] = round(float(contention), 3)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text().splitlines()[-(KEEP - 1):] if path.exists() else []
        lines.append(json.dumps(item))
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass  # an estimate is a nicety: a full or read-only store must not stop the work


def recorded(store: ArtefactStore | None, step: str) -> float | None:
    """Units a second over the latest records of ``step`` on this store, or None before any: each
    record's seconds divided by its contention (the pace alone)."""
    if store is None:
        return None
    try:
        lines = _file(store, step).read_text().splitlines()[-LATEST:]
    except OSError:
        return None
    units = seconds = 0.0
    for line in lines:
        try:
            item = json.loads(line)
            slower = max(1.0, float(item.get("contention", 1.0)))
            u, s = float(item["units"]), float(item["seconds"]) / slower
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if u > 0 and s > 0:
            units, seconds = units + u, seconds + s
    return units / seconds if seconds > 0 else None


def rate(store: ArtefactStore | None, step: str) -> tuple[float, bool]:
    """(units a second, whether it is this machine's own): the recorded pace, else the default."""
    found = recorded(store, step)
    return (found, True) if found is not None else (DEFAULTS.get(step, SCORE_DEFAULT), False)


def timed(store: ArtefactStore | None, step: str, units: float, fresh: bool, work: Callable[[], T]) -> T:
    """``work()``, its pace recorded as ``step`` when it really did the work (``fresh``: nothing stored yet)."""
    began = time.perf_counter()
    result = work()
    if fresh:
        record(store, step, units, time.perf_counter() - began, measure_contention=True)
    return result


@dataclass(frozen=True)
class MatrixEstimate:
    """How long a matrix will take, before it runs, by step (seconds), counting only what is not stored."""

    steps: dict[str, float]  # "start-up", "tokenize", "kenlm", "skipgram", "tagging", "scoring"
    cells: int  # (source, target, measure) values still to compute
    measured: bool  # every pace used is this machine's own
    processes: int = 1  # the matrix's parts run in this many processes at once (--jobs)
    contention: float = 1.0  # the machine's load when the estimate was made (:func:`contention`)

    @property
    def seconds(self) -> float:
        """Start-up, then the steps shared out over the processes (each pace is the step's pace
        alone), all slowed by the machine's contention."""
        work = sum(v for k, v in self.steps.items() if k != "start-up")
        alone = self.steps.get("start-up", 0.0) + work / max(1, self.processes)
        return alone * max(1.0, self.contention)

    def text(self, span: Callable[[float], str] = lambda s: f"{s:,.0f} s") -> str:
        if self.cells == 0:
            return "every value is stored already: at once"
        words = {"start-up": "start-up", "tokenize": "reading and tokenizing", "kenlm": "KenLM models", "skipgram": "skip-gram vectors",
                 "tagging": "part-of-speech tagging", "scoring": f"{self.cells} values scored"}
        parts = [f"{words[k]} {span(v)}" for k, v in self.steps.items() if v >= 0.5]
        where = "this machine's pace" if self.measured else "the pace of a 2-core machine"
        if self.contention >= 1.05:
            where += f", {self.contention:.1f} times slower for the other work running now"
        return f"about {span(self.seconds)} ({', '.join(parts)}), at {where}"


# Seconds a probe run spends outside its epochs and its splits' tagging: the pipeline built and the
# vectors loaded (1.2-1.5 s without vectors in the same profile).
RUN_OVERHEAD = 2.0
# Seconds to import spaCy with PyTorch, once per process (5.4-7.0 s wall, 3.5-4.2 CPU s, same profile).
PROBE_STARTUP = 6.0


@dataclass(frozen=True)
class ProbeEstimate:
    """How long a probe will take, before it runs: the sources' skip-gram vectors, then the training runs."""

    vectors: float  # seconds training skip-gram vectors (sources whose vectors are stored take none)
    runs: float  # seconds of tagger training and scoring
    count: int  # training runs
    sources: int  # sources whose vectors are counted
    measured: bool  # both paces are this machine's own
    setup: float = 0.0  # seconds before the runs: spaCy imported, the target's splits read and converted
    contention: float = 1.0  # the machine's load when the estimate was made (:func:`contention`)

    @property
    def seconds(self) -> float:
        return self.setup + self.vectors + self.runs

    def text(self, span: Callable[[float], str] = lambda s: f"{s:,.0f} s") -> str:
        where = "this machine's pace" if self.measured else "the pace of a 2-core machine"
        if self.contention >= 1.05:
            where += f", {self.contention:.1f} times slower for the other work running now"
        return (f"about {span(self.seconds)}: skip-gram vectors for {self.sources} source"
                f"{'s' if self.sources != 1 else ''} (about {span(self.vectors)}) and {self.count} training run"
                f"{'s' if self.count != 1 else ''} (about {span(self.runs)})"
                + (f", spaCy and the target's splits loaded (about {span(self.setup)})" if self.setup >= 0.5
                   else "")
                + f", at {where}; less for vectors and runs already stored")


@dataclass(frozen=True)
class ProbeSplits:
    """What a probe reads and tags of its targets: sentences each run evaluates (dev, after a time cap
    stops it) and tags (test), averaged over the targets, and the split bytes still to read and
    convert (summed over the targets)."""

    dev_sentences: int = 0
    test_sentences: int = 0
    split_bytes: int = 0


def probe_estimate(store: ArtefactStore | None, source_tokens: list[int], *, seeds: int, epochs: int,
                   seconds_cap: float, train_sentences: int | None, wvv_epochs: int = 5,
                   targets: int = 1, splits: ProbeSplits = ProbeSplits(),
                   startup: bool = False, contention: float = 1.0) -> ProbeEstimate:
    """The probe's time from this machine's paces: each source's skip-gram training on its sample
    (``source_tokens``: the sample sizes) and (1 + sources) × seeds × targets tagger runs, plus what
    ``splits`` says is read and tagged, plus spaCy's import when ``startup`` (a process without it).

    A run is its start-up (:data:`RUN_OVERHEAD`), its epochs at the recorded pace (which counts the
    scheduled dev evaluations) or, when those would pass the time cap, the cap and one more dev
    evaluation (the loop stops only then), and the test split tagged. With no train cap (``None``)
    a run is counted at its time cap. ``contention`` (:func:`contention` now) slows every part but
    the time cap, which is wall-clock time: a run it stops takes the cap however slow the
    machine."""
    skipgram, own_vectors = rate(store, "skipgram")
    training_pace, own_runs = rate(store, "probe-epoch")
    tagging, _ = rate(store, "probe-tagging")
    reading, _ = rate(store, "probe-splits")
    slower = max(1.0, float(contention))
    words = sum(max(0, int(n)) * max(1, int(wvv_epochs)) for n in source_tokens)
    vectors = words / skipgram * slower
    count = (1 + len(source_tokens)) * max(1, int(seeds)) * max(1, int(targets))
    capped = float(seconds_cap) + splits.dev_sentences / tagging * slower
    training = capped if train_sentences is None else min(
        capped, int(train_sentences) * max(1, int(epochs)) / training_pace * slower)
    per_run = (RUN_OVERHEAD + splits.test_sentences / tagging) * slower + training
    setup = ((PROBE_STARTUP if startup else 0.0) + splits.split_bytes / reading) * slower
    return ProbeEstimate(vectors, count * per_run, count, len(source_tokens),
                         own_vectors and own_runs, setup, contention)
