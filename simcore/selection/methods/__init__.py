"""The sentence scorers, one module each, and :func:`make_scorer` (in ``factory``) which picks one.

Each scorer is made once per run (its models come from the artefact store, built on first use)
and then scores the pool batch by batch: ``score(batch) -> array`` with one value per unit, and
``details() -> dict`` says what it used.
"""

from __future__ import annotations

from .factory import input_identity, make_scorer

__all__ = ["input_identity", "make_scorer"]
