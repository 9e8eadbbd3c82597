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

from .utils.store import ArtefactStore

# Units a second on a shared 2-core machine, recorded by bench/bench_estimates.py (600,000 and 170-250).
DEFAULTS = {
    "skipgram": 500_000.0,  # tokens × epochs a second, one thread (wvv_workers=1)
    "probe-epoch": 150.0,  # train sentences × epochs a second for the probe's spaCy tagger
    # the matrix's slow steps (bench/bench_matrix.py --estimates on a shared 2-core machine)
    "tokenize": 3_000_000.0,  # corpus bytes a second, read and tokenized into the store
    "kenlm": 65_000.0,  # sample tokens a second, KenLM's lmplz and build_binary (small samples: its start-up)
    "tagging": 1_000.0,  # sentences a second, spaCy's part-of-speech tagging (TVcC's content words)
}
SCORE_DEFAULT = 500.0  # (source, target) scores a second of a measure with no record yet
# Seconds a matrix spends outside its steps: simcore and its worker processes started, and spaCy's tagger
# loaded when TVcC is asked for (the bundled sample: about 6 s in all, under 1 s of it in the steps).
STARTUP = 3.0
TAGGER_STARTUP = 2.0
T = TypeVar("T")
KEEP = 50  # records kept per step
LATEST = 10  # records the rate is read from


def _file(store: ArtefactStore, step: str) -> Path:
    return Path(store.root) / "pace" / f"{step}.jsonl"


def record(store: ArtefactStore | None, step: str, units: float, seconds: float) -> None:
    """Note that ``step`` did ``units`` of work in ``seconds`` (never raises: an estimate must not stop the work)."""
    if store is None or units <= 0 or seconds <= 0:
        return
    path = _file(store, step)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text().splitlines()[-(KEEP - 1):] if path.exists() else []
        lines.append(json.dumps({"units": float(units), "seconds": float(seconds)}))
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass  # an estimate is a nicety: a full or read-only store must not stop the work


def recorded(store: ArtefactStore | None, step: str) -> float | None:
    """Units a second over the latest records of ``step`` on this store, or None before any."""
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
            u, s = float(item["units"]), float(item["seconds"])
        except (ValueError, KeyError, TypeError):
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
        record(store, step, units, time.perf_counter() - began)
    return result


@dataclass(frozen=True)
class MatrixEstimate:
    """How long a matrix will take, before it runs, by step (seconds), counting only what is not stored."""

    steps: dict[str, float]  # "start-up", "tokenize", "kenlm", "skipgram", "tagging", "scoring"
    cells: int  # (source, target, measure) values still to compute
    measured: bool  # every pace used is this machine's own
    processes: int = 1  # the matrix's parts run in this many processes at once (--jobs)

    @property
    def seconds(self) -> float:
        """Start-up, then the steps shared out over the processes (each pace was recorded in a process
        that shared the machine the same way, so the steps' sum over the processes is the wall time)."""
        work = sum(v for k, v in self.steps.items() if k != "start-up")
        return self.steps.get("start-up", 0.0) + work / max(1, self.processes)

    def text(self, span: Callable[[float], str] = lambda s: f"{s:,.0f} s") -> str:
        if self.cells == 0:
            return "every value is stored already: at once"
        words = {"start-up": "start-up", "tokenize": "reading and tokenizing", "kenlm": "KenLM models", "skipgram": "skip-gram vectors",
                 "tagging": "part-of-speech tagging", "scoring": f"{self.cells} values scored"}
        parts = [f"{words[k]} {span(v)}" for k, v in self.steps.items() if v >= 0.5]
        where = "this machine's pace" if self.measured else "the pace of a 2-core machine"
        return f"about {span(self.seconds)} ({', '.join(parts)}), at {where}"


RUN_OVERHEAD = 5.0  # seconds a probe run spends outside its epochs (spaCy and the vectors loaded, test scored)


@dataclass(frozen=True)
class ProbeEstimate:
    """How long a probe will take, before it runs: the sources' skip-gram vectors, then the training runs."""

    vectors: float  # seconds training skip-gram vectors (sources whose vectors are stored take none)
    runs: float  # seconds of tagger training and scoring
    count: int  # training runs
    sources: int  # sources whose vectors are counted
    measured: bool  # both paces are this machine's own

    @property
    def seconds(self) -> float:
        return self.vectors + self.runs

    def text(self, span: Callable[[float], str] = lambda s: f"{s:,.0f} s") -> str:
        where = "this machine's pace" if self.measured else "the pace of a 2-core machine"
        return (f"about {span(self.seconds)}: skip-gram vectors for {self.sources} source"
                f"{'s' if self.sources != 1 else ''} (about {span(self.vectors)}) and {self.count} training run"
                f"{'s' if self.count != 1 else ''} (about {span(self.runs)}), at {where}; less for vectors and "
                "runs already stored")


def probe_estimate(store: ArtefactStore | None, source_tokens: list[int], *, seeds: int, epochs: int,
                   seconds_cap: float, train_sentences: int | None, wvv_epochs: int = 5,
                   targets: int = 1) -> ProbeEstimate:
    """The probe's time from this machine's paces: each source's skip-gram training on its sample
    (``source_tokens``: the sample sizes) and (1 + sources) × seeds × targets tagger runs, each the
    shorter of its epochs at the recorded pace and its time cap, plus its start-up. With no train cap
    (``None``) a run is counted at its time cap."""
    skipgram, own_vectors = rate(store, "skipgram")
    tagging, own_runs = rate(store, "probe-epoch")
    vectors = sum(max(0, int(n)) * max(1, int(wvv_epochs)) for n in source_tokens) / skipgram
    count = (1 + len(source_tokens)) * max(1, int(seeds)) * max(1, int(targets))
    training = float(seconds_cap) if train_sentences is None else min(
        float(seconds_cap), int(train_sentences) * max(1, int(epochs)) / tagging)
    return ProbeEstimate(vectors, count * (training + RUN_OVERHEAD), count, len(source_tokens),
                         own_vectors and own_runs)
