"""The probe over sources and targets: a baseline and one run per source's vectors, per seed.

Every run's score is stored in the artefact store under the target's split fingerprints, the
source vectors' fingerprint (none for the baseline), the seed, the caps and spaCy's version, so
an interrupted probe resumes where it stopped and a second probe reads everything back. A run that
ended by its epoch cap is reused under any time cap it fitted in; one cut short by the time cap
only under that cap (the ``time_capped`` column counts such runs in each row, baseline included).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from ..corpora.corpus import Corpus
from ..matrix.plan import comparison_size
from ..matrix.workbench import Workbench
from ..utils import pace
from ..utils.errors import SimcoreError, StoreError
from ..utils.store import ArtefactStore, digest
from .config import ProbeCaps
from .data import TargetSplits, cap_sentences, read_split, stored_split
from .vectors import SourceVectors, spacy_vectors

Progress = Callable[[str, float], None]
BASELINE = "(none)"
SAMPLE_SEED = 13  # which training sentences the caps keep: the same for every source and seed
COLUMNS = ["target", "source", "f1", "baseline", "improvement", "f1_std", "baseline_std", "seeds", "caps",
           "f1_runs", "baseline_runs", "vectors_words", "train_sentences", "test_sentences", "seconds", "time_capped",
           "error"]


def _quiet(message: str, fraction: float) -> None:
    pass


def _mean_std(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    return float(np.mean(values)), (float(np.std(values, ddof=1)) if len(values) > 1 else float("nan"))


def _runs_text(values: list[float]) -> str:
    return ";".join(f"{v:.2f}" for v in values)


def seed_list(seeds: int, first: int = 0) -> list[int]:
    if seeds < 1:
        raise SimcoreError("--seeds must be at least 1")
    return [first + i for i in range(seeds)]


def probe(
    sources: Sequence[Corpus],
    targets: Sequence[TargetSplits],
    *,
    workbench: Workbench | None = None,
    caps: ProbeCaps = ProbeCaps(),
    seeds: Sequence[int] = (0,),
    source_tokens: int | None = None,
    progress: Progress = _quiet,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_run: Callable[[dict[str, Any]], None] | None = None,
) -> pd.DataFrame:
    """Train and score every (target, source or baseline, seed); one results row per (target, source).

    A source that cannot be read, or whose vectors cannot be built (a corpus too small, say), gets
    an ``error`` and no F1 in its rows; the baseline and the other sources are still probed. A target
    whose splits cannot be read or trained on gets an ``error`` in each of its rows; the other targets
    are still probed (when none can be, that is an error). The table's ``attrs["failed_sources"]`` and ``attrs["failed_targets"]`` map each
    to why. A store that cannot be written (a full disk) is no corpus's fault and stops the probe.
    """
    from .train import train_and_score  # spaCy loads only when a probe runs

    if not sources or not targets:
        raise SimcoreError("give at least one source and one target")
    bench = workbench or Workbench()
    store = bench.store
    seeds = list(seeds)
    vectors: dict[str, SourceVectors | str] = {}  # a source's vectors, or why it has none
    n_tokens = source_tokens
    if n_tokens is None:
        # the sample the matrix trains WVV's vectors on, so the probe tests those very vectors;
        # a source that cannot be read is left out of that size and fails only its own rows
        sizes = []
        for corpus in sources:
            try:
                sizes.append(bench.size(corpus, progress=progress))
            except StoreError:
                raise
            except SimcoreError as exc:
                vectors[corpus.name] = str(exc)
        n_tokens = comparison_size(sizes, "wvv") if sizes else None
    caps_text = f"{caps.describe()};source_tokens={'none' if n_tokens is None else n_tokens}"
    import spacy

    total = len(targets) * (1 + len(sources)) * len(seeds)
    done = 0
    rows: list[dict[str, Any]] = []
    failed_targets: dict[str, str] = {}

    def source_vectors(corpus: Corpus) -> SourceVectors | str:
        if corpus.name not in vectors:
            assert n_tokens is not None  # None only when every source failed above
            try:
                prepared = bench.source(corpus, n_tokens, 1, progress)[0]
                progress(f"vectors of {corpus.name}", done / total)
                vectors[corpus.name] = spacy_vectors(prepared)
            except StoreError:
                raise
            except SimcoreError as exc:
                vectors[corpus.name] = str(exc)
        return vectors[corpus.name]

    for target in targets:
        first_row, first_run = len(rows), done
        try:
            progress(f"reading {target.name}", done / total)
            train = stored_split(target, "train", caps.train_sentences, SAMPLE_SEED, store)
            dev = stored_split(target, "dev", caps.dev_sentences, SAMPLE_SEED, store) if target.dev else train
            test = cap_sentences(read_split(target, "test"), caps.test_sentences, SAMPLE_SEED)
            test_key = target.fingerprint("test")
            scores: dict[str, list[float]] = {}
            seconds: dict[str, list[float]] = {}
            time_capped: dict[str, int] = {}
            for corpus in [None, *sources]:
                name = BASELINE if corpus is None else corpus.name
                found = None if corpus is None else source_vectors(corpus)
                if isinstance(found, str):
                    done += len(seeds)
                    rows.append(result_row(target.name, name, [], scores.get(BASELINE, []), caps_text, None, train.sentences,
                                     len(test), [], found, time_capped.get(BASELINE, 0)))
                    if on_row:
                        on_row(rows[-1])
                    continue
                for seed in seeds:
                    key = digest("probe-run", train.key, dev.key, test_key, found.key if found else None, seed,
                                 caps.without_time(), spacy.__version__)
                    record = _stored_run(store, key, caps.seconds)
                    if record is None:
                        def step(message: str, fraction: float, _label: str = f"{target.name} · {name} · seed {seed}",
                                 _done: int = done) -> None:
                            progress(f"{_label}: {message}", (_done + fraction) / total)

                        step("training", 0.0)
                        try:
                            result = train_and_score(train=train.path, dev=dev.path, test=test,
                                                     vectors=found.path if found else None, seed=seed, caps=caps,
                                                     progress=step)
                        except (ValueError, KeyError) as exc:  # spaCy's own complaints about the data
                            raise SimcoreError(f"{target.name}: spaCy could not train a tagger ({exc})") from exc
                        record = asdict(result)
                        pace.record(store, "probe-epoch", train.sentences * record["epochs"],
                                    record["seconds"], measure_contention=True)
                        # a run that ended by its epoch cap is the same under any time cap it fits in
                        store.put_json("probe-run", key if result.stopped_by == "epochs" else _timed(key, caps.seconds),
                                       record)
                    scores.setdefault(name, []).append(record["f1"])
                    seconds.setdefault(name, []).append(record["seconds"])
                    time_capped[name] = time_capped.get(name, 0) + (record["stopped_by"] == "time")
                    done += 1
                    if on_run:
                        on_run({"target": target.name, "source": name, "seed": seed, **record})
                    progress(f"{target.name} · {name} · seed {seed}: F1 {record['f1']:.2f}", done / total)
                if corpus is not None:
                    rows.append(result_row(target.name, name, scores[name], scores.get(BASELINE, []), caps_text,
                                     found.words if found else None, train.sentences, len(test), seconds[name], None,
                                     time_capped.get(name, 0) + time_capped.get(BASELINE, 0)))
                    if on_row:
                        on_row(rows[-1])
        except StoreError:
            raise
        except SimcoreError as exc:  # this target's data: it costs only its own rows
            why = str(exc) if str(exc).startswith(f"{target.name}:") else f"{target.name}: {exc}"
            failed_targets[target.name] = why
            recorded = {row["source"] for row in rows[first_row:]}
            for corpus in sources:
                if corpus.name not in recorded:
                    rows.append(result_row(target.name, corpus.name, [], [], caps_text, None, None, None, [],
                                     f"target {why}", 0))
                    if on_row:
                        on_row(rows[-1])
            done = first_run + (1 + len(sources)) * len(seeds)
    if failed_targets and len(failed_targets) == len(targets):  # nothing was probed: that is the run's failure
        raise SimcoreError("; ".join(failed_targets.values()) if len(targets) == 1
                           else "no target could be probed: " + "; ".join(failed_targets.values()))
    progress("done", 1.0)
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.attrs["failed_sources"] = {name: why for name, why in vectors.items() if isinstance(why, str)}
    table.attrs["failed_targets"] = failed_targets
    return table


def _timed(key: str, seconds: float) -> str:
    return digest(key, "time cap", seconds)


def _stored_run(store: ArtefactStore, key: str, seconds: float) -> dict[str, Any] | None:
    """A stored run valid under this time cap: one that ended by its epochs within it, or one cut by this cap."""
    record = store.get_json("probe-run", key)
    if record is not None and record["seconds"] <= seconds:
        return record
    return store.get_json("probe-run", _timed(key, seconds))


def result_row(target: str, source: str, f1s: list[float], baselines: list[float], caps: str, words: int | None,
         train_sentences: int | None, test_sentences: int | None, seconds: list[float], error: str | None,
         time_capped: int) -> dict[str, Any]:
    f1, f1_std = _mean_std(f1s)
    baseline, baseline_std = _mean_std(baselines)
    return {
        "target": target, "source": source, "f1": f1, "baseline": baseline,
        "improvement": f1 - baseline if math.isfinite(f1) and math.isfinite(baseline) else float("nan"),
        "f1_std": f1_std, "baseline_std": baseline_std, "seeds": len(f1s), "caps": caps,
        "f1_runs": _runs_text(f1s), "baseline_runs": _runs_text(baselines), "vectors_words": words,
        "train_sentences": train_sentences, "test_sentences": test_sentences,
        "seconds": float(np.mean(seconds)) if seconds else float("nan"), "time_capped": time_capped, "error": error,
    }
