"""The NER probe: what each source's word vectors actually do for a target's NER tagger.

A baseline tagger (no pretrained vectors) and one tagger per source (that source's skip-gram
vectors as spaCy static vectors) are trained with spaCy on the target's train split and scored
with entity-level F1 on its test split; the results table feeds ``correlate`` and ``regret``.
"""

from .config import ProbeCaps
from .data import TargetSplits
from .run import BASELINE, COLUMNS, probe, seed_list
from .scoring import EntityScore, entity_score, spans

__all__ = ["BASELINE", "COLUMNS", "EntityScore", "ProbeCaps", "TargetSplits", "entity_score", "probe",
           "seed_list", "spans"]
