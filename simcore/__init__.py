"""simcore: which unlabeled corpus to pretrain on for a named-entity-recognition task.

Cheap similarity measures between candidate source corpora and a target NER data set (Dai et
al. 2019, 2020): target vocabulary covered (TVC, TVcC), KenLM perplexity (PPL), word vector
variance (WVV), Jensen-Shannon divergence (JSD), and the source's type-token ratio (TTR).

The public library is what ``__all__`` lists here, in simcore.analysis, simcore.reporting.export and
simcore.selection (the README's "Library" section); those functions raise only simcore's own errors.
"""

from .answer.public import pairwise_table, recommend, recommendation_table
from .answer.recommendation import Recommendation
from .contamination.decontaminate import Decontamination, decontaminate
from .contamination.scan import OverlapOptions
from .corpora.corpus import Corpus, TokenizedCorpus
from .corpora.tokenize import TokenizerOptions
from .matrix.corpus_cache import corpora_in
from .matrix.plan import DEFAULT_MEASURES
from .matrix.workbench import Workbench
from .measures.options import MeasureOptions
from .utils.errors import (
    CorpusError,
    DiskFull,
    InvalidArgument,
    MeasureUnavailable,
    OutputError,
    SimcoreError,
    StoreError,
    TableError,
)
from .utils.store import ArtefactStore

__version__ = "0.1.0"
__all__ = [
    "ArtefactStore", "Corpus", "CorpusError", "DEFAULT_MEASURES", "DiskFull", "InvalidArgument", "MeasureOptions",
    "MeasureUnavailable", "OutputError", "SimcoreError", "StoreError", "TableError", "TokenizedCorpus",
    "TokenizerOptions", "Workbench", "corpora_in", "Recommendation", "recommend", "recommendation_table",
    "pairwise_table", "decontaminate", "Decontamination", "OverlapOptions",
]
