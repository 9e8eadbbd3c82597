"""The similarity matrix: every source × target × measure, planned, prepared, run and written.

Modules, each importing only those listed before it:

- ``corpus_cache``: :class:`CorpusCache`, corpora read, tokenized, sampled and prepared once, every
  scored cell stored (and ``corpora_in``, a folder's corpora);
- ``plan``: :func:`plan_matrix`, which parts a matrix runs (a source at one size under one measure),
  at which sizes, in which order, which measures are left out as noise, and what each part weighs;
- ``schedule``: :func:`run_parts`, the plan's parts run here or across processes;
- ``rows``: the table's rows and columns as the parts finish;
- ``workbench``: :class:`Workbench`, which holds a corpus cache and makes the table;
- ``ahead``: :func:`prepare_target`, a new target's work done before its matrix, stored for it.

The Dask runner (:mod:`simcore.distributed.prepare`) and the estimates (:mod:`simcore.matrix.estimates`)
read the same plan. Import each name from the module that defines it.
"""
