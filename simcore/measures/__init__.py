"""The similarity measures, behind a small registry; this package's names, re-exported.

Modules, each importing only those listed before it:

- ``options``: :class:`MeasureOptions`, every option of every measure;
- ``prepared``: :class:`PreparedSource`, :class:`PreparedTarget` and the :class:`Score` a measure gives;
- ``registry``: what a measure is (its name, direction, options) and the registry it adds itself to;
- one module per measure (``tvc``, ``tvcc``, ``ppl``, ``wvv``, ``jsd``, ``ttr``, ``kl``, ``emb``);
- ``lookup``: the measures by name, importing the built-in ones on first use.

:mod:`simcore.uncertainty` (the bootstrap over the target's sentences) sits between ``prepared``
and the measure modules.
"""

from __future__ import annotations

from .lookup import all_measures, explained, get_measure, parse_measures
from .options import DEFAULT_REPLICATES, MeasureOptions
from .prepared import PreparedSource, PreparedTarget, ProgressFn, Score
from .registry import HIGHER, LOWER, NOT_SIMILARITY, REGISTRY, Measure, register

__all__ = ["DEFAULT_REPLICATES", "HIGHER", "LOWER", "NOT_SIMILARITY", "REGISTRY", "Measure", "MeasureOptions",
           "PreparedSource", "PreparedTarget", "ProgressFn", "Score", "all_measures", "explained", "get_measure",
           "parse_measures", "register"]
