"""Estimates of a job's time before it runs, from what the store already holds and this machine's paces.

:func:`probe_seconds` counts what a probe will do: the skip-gram vectors of each source not yet
trained at the probe's sample size (the matrix's WVV trains the same ones), and every tagger run.
The paces are :mod:`simcore.pace`'s (recorded by the steps themselves).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import pace
from .corpus import Corpus
from .errors import SimcoreError, StoreError
from .matrix import Workbench, comparison_size
from .measures.wvv import vectors_stored


def probe_seconds(bench: Workbench, sources: Sequence[Corpus], *, seeds: int, epochs: int, seconds_cap: float,
                  train_sentences: int | None, source_tokens: int | None = None,
                  targets: int = 1) -> pace.ProbeEstimate:
    """The probe's estimate (see :func:`simcore.pace.probe_estimate`) counting only the vectors still to
    train: the sample each source's vectors train on is the probe's (``source_tokens``, else the size
    the matrix compares sources at), drawn here as the probe would draw it (and stored for it)."""
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
                                   targets=targets)
    # every source still counts its runs; only the vectors already stored take no time
    runs = (1 + len(sources)) * max(1, seeds) * max(1, targets)
    per_run = estimate.runs / estimate.count if estimate.count else 0.0
    return pace.ProbeEstimate(estimate.vectors, runs * per_run, runs, len(to_train), estimate.measured)
