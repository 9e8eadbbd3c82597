"""Sentence selection: the pool sentences most useful for continued pretraining toward a target.

A large unlabeled *pool* (domain-level corpus) is scored one sentence at a time against a small
*target* (task-level corpus) by one of the methods in :mod:`simcore.selection.methods` (the
selective pretraining paper and its perplexity baseline), the scores are stored, and the best
top K or fraction is kept. Modules, each importing only those listed before it:

- ``options``: the method and its options; ``pool`` and ``target``: reading the two corpora;
- ``choosing``: stored scores and the bounded-memory cut-off; ``output``: writing a selection;
- ``methods``: one scorer per module; ``driver``: score, choose, write;
- ``view`` (what the page shows); the ``select`` command is :mod:`simcore.cli.select_command`.

What ``__all__`` lists is part of the public library: each function checks its arguments and raises
only simcore's own errors (InvalidArgument for a wrong kind or range), which tests/test_public_api.py fuzzes.
"""

from __future__ import annotations

from .choosing import Cutoff, ScoreSet, choose, count_to_keep, jaccard, kept_indices, kept_mask
from .driver import score_pool, select
from .options import DESCRIPTIONS, HIGHER_KEPT, METHODS, SelectionOptions, with_method
from .output import SelectionResult, write_selection

__all__ = ["DESCRIPTIONS", "HIGHER_KEPT", "METHODS", "Cutoff", "ScoreSet", "SelectionOptions", "SelectionResult",
           "choose", "count_to_keep", "jaccard", "kept_indices", "kept_mask", "score_pool", "select",
           "with_method", "write_selection"]
