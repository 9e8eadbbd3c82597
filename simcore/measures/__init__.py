"""The similarity measures, behind a small registry; this package's names, re-exported.

Modules, each importing only those listed before it:

- ``options``: :class:`MeasureOptions`, every option of every measure;
- ``counts``: hashed n-gram counts, streamed (the basis of TVC, TVcC, TTR and JSD);
- ``prepared``: :class:`PreparedSource`, :class:`PreparedTarget` and the :class:`Score` a measure gives;
- ``registry``: what a measure is (:class:`Measure`, a base declaring everything about a measure:
  unit, direction, cost, family, default, settling size, size bias...) and the registry;
- one module per measure (``tvc``, ``tvcc``, ``ppl``, ``wvv``, ``jsd``, ``ttr``, ``kl``, ``emb``);
- ``lookup``: the measures by name, importing the built-in ones on first use; the defaults and the
  families that carry each answer.

Adding a measure is one module (a :class:`Measure` subclass, then ``register(...)``) and one name in
``lookup.BUILTIN``; see CONTRIBUTING.md.

``uncertainty`` (the bootstrap over the target's sentences) sits between ``prepared`` and the
measure modules.
"""

from __future__ import annotations

from .lookup import all_measures, cost, default_measures, explained, family, get_measure, parse_measures
from .options import DEFAULT_REPLICATES, MeasureOptions
from .prepared import PreparedSource, PreparedTarget, ProgressFn, Score
from .registry import HIGHER, LM, LOWER, NOT_SIMILARITY, REGISTRY, VECTORS, Measure, register

__all__ = ["DEFAULT_REPLICATES", "HIGHER", "LM", "LOWER", "NOT_SIMILARITY", "REGISTRY", "VECTORS", "Measure",
           "MeasureOptions", "PreparedSource", "PreparedTarget", "ProgressFn", "Score", "all_measures", "cost",
           "default_measures", "explained", "family", "get_measure", "parse_measures", "register"]
