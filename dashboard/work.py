"""The work of the dashboard's jobs, as module-level functions a child process can run.

:mod:`dashboard.jobs` starts each in a fresh interpreter (``functools.partial`` of these, pickled),
so this module imports no Streamlit: the child loads only simcore and what the work needs. Each
opens simcore's on-disk store itself; artefacts built here are the ones the pages read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from simcore.corpora.corpus import Corpus
from simcore.corpora.tokenize import TokenizerOptions
from simcore.distributed.cluster import scheduler_from_env
from simcore.distributed.prepare import matrix_runner
from simcore.matrix.estimates import probe_seconds, probe_splits
from simcore.matrix.workbench import Workbench
from simcore.measures.options import MeasureOptions
from simcore.probe.config import ProbeCaps
from simcore.probe.data import TargetSplits
from simcore.probe.run import probe as run_probe
from simcore.selection.choosing import choose
from simcore.selection.driver import score_pool
from simcore.selection.options import SelectionOptions
from simcore.utils.store import ArtefactStore


def matrix(task: Any, root: str, options: dict[str, Any], tokenizer: dict[str, Any], sources: list[Corpus],
           targets: list[Corpus], measures: list[str], samples: int, sample_tokens: int | None,
           compute_noise: bool = False) -> pd.DataFrame:
    """The long similarity matrix of these corpora, each finished cell reported as a row."""
    bench = Workbench(ArtefactStore(root), tokenizer=TokenizerOptions(**tokenizer),
                      options=MeasureOptions.from_dict(options))
    scheduler = scheduler_from_env()
    parallel = {} if scheduler else {"jobs": os.cpu_count() or 1}  # parts in processes of their own
    return matrix_runner(bench, scheduler)(  # on the Dask cluster when one is set
        sources, targets, measures, samples=samples, sample_tokens=sample_tokens, compute_noise=compute_noise,
        progress=task.progress, on_row=lambda row: (task.check(), task.partial.append(row)), **parallel)


def selection(task: Any, root: str, pool: Corpus, target: Corpus, options: SelectionOptions, top: int | None,
              fraction: float | None, keep_duplicates: bool, min_tokens: int = 1) -> dict[str, Any]:
    """Pool scores and the cut-off of a sentence selection, for the Sentence selection page."""
    scores = score_pool(pool, target, options, ArtefactStore(Path(root)), task.progress)
    cutoff = choose(scores, top=top, fraction=fraction, keep_duplicates=keep_duplicates, min_tokens=min_tokens)
    return {"pool": pool, "scores": scores, "cutoff": cutoff, "keep_duplicates": keep_duplicates,
            "method": options.method, "target": target.name}


def probe(task: Any, root: str, sources: list[Corpus], target: TargetSplits, caps: ProbeCaps, seeds: list[int],
          source_tokens: int | None, columns: list[str]) -> pd.DataFrame:
    """The NER probe's results table; each finished training run is reported as a row (``columns``)."""

    def on_run(run: dict[str, Any]) -> None:
        task.partial.append({k: run[k] for k in columns})
        task.check()  # Cancel lands between runs (and inside a run, at its next progress report)

    bench = Workbench(ArtefactStore(root))
    task.progress("sizing the sources and their vectors' samples", 0.0)
    # what is left to do, now that the store can be asked (vectors trained for the matrix are reused)
    task.expect(probe_seconds(bench, sources, seeds=len(seeds), epochs=caps.epochs, seconds_cap=caps.seconds,
                              train_sentences=caps.train_sentences, source_tokens=source_tokens,
                              splits=probe_splits(bench.store, [target], caps)).seconds)
    return run_probe(sources, [target], workbench=bench, caps=caps, seeds=seeds,
                     source_tokens=source_tokens, progress=task.progress, on_run=on_run)


# The LM probe's refusal in the words of the NER probe page's form (not the command line's flags).
FORM_NAMES = {"lm_tokens": "“LM tokens per source”", "train_sentences": "“Train sentences”", "seeds": "“Seeds”",
              "sources": "the sources chosen", "max_minutes": "“Refuse plans over (min)”",
              "force": "tick “Language model: run even if the plan is longer than the limit”"}


def probe_lm(task: Any, root: str, sources: list[Corpus], target: TargetSplits, caps: Any, seeds: list[int],
             model: str | None, max_minutes: float, force: bool, plan_only: bool, columns: list[str]) -> Any:
    """The LM probe: planned first (the plan is the result when ``plan_only``), refused over ``max_minutes``
    unless ``force``, then run; each finished fine-tuning run is reported as a row (``columns``)."""
    from simcore.probe.lm import plan_lm_probe

    planned = plan_lm_probe(sources, [target], workbench=Workbench(ArtefactStore(root)), caps=caps, seeds=seeds,
                            model=model, progress=task.progress)
    if plan_only:
        return planned.plan.describe()
    planned.plan.check(max_minutes, force, names=FORM_NAMES)

    def on_run(run: dict[str, Any]) -> None:
        task.partial.append({k: run[k] for k in columns})
        task.check()

    return planned.run(task.progress, on_run=on_run)


def decontamination(task: Any, root: str, source: Corpus, target: Corpus, test_only: bool) -> dict[str, Any]:
    """A source's clean copy (simcore.contamination.decontaminate), kept in the store, for the Corpora page."""
    from simcore.contamination.decontaminate import stored_copy

    path, report = stored_copy(source, target, ArtefactStore(Path(root)), test_only=test_only, progress=task.progress)
    return {"path": str(path), "report": report, "source": source.name, "target": target.name}


def target_ahead(task: Any, root: str, target: Corpus, sources: list[Corpus]) -> str:
    """A newly added target's own work, its slow work against the loaded sources and then its
    cells, for the default choices of the Similarity form (simcore.matrix.ahead), stored for Compute
    to reuse; one line on what was done."""
    from simcore.matrix.ahead import prepare_target

    bench = Workbench(ArtefactStore(root))  # the form's default options and tokenizer
    return prepare_target(bench.cache, target, sources, jobs=os.cpu_count() or 1, cells=True,
                          progress=task.progress).summary()
