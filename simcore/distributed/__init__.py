"""simcore on a Dask cluster: sharded sources, sources prepared on many workers, the same numbers.

- :mod:`.cluster` connects to a scheduler (``--scheduler``/``SIMCORE_SCHEDULER``) or starts a
  local cluster (``--local-cluster N``) and checks that every worker can reach the store.
- :mod:`.shards` reads, tokenizes, fingerprints and samples each file of a corpus as a task and
  joins the parts into exactly the artefacts the single-process path makes.
- :mod:`.prepare` prepares every source (counts, KenLM, skip-gram) and scores every cell as tasks,
  then assembles the matrix with :meth:`simcore.matrix.workbench.Workbench.matrix` from the store.

Dask is imported only when a cluster is asked for, so the single-process path does not pay for it.
"""
