"""Analyses over a similarity matrix: rankings, agreement between measures, and how well each
measure predicts NER results (correlation, regret, and the audit: decision accuracy, regret and NDCG)."""

from .agreement import AgreementResult, agreement, cohen_kappa, fleiss_kappa
from .audit import audit, write_audit
from .correlation import correlate, read_results
from .ranking import first_choices, rank_sources
from .regret import regret
from .tables import read_matrix, to_long, to_wide

__all__ = [
    "AgreementResult", "agreement", "audit", "write_audit", "cohen_kappa", "fleiss_kappa", "correlate", "read_results",
    "first_choices", "rank_sources", "regret", "read_matrix", "to_long", "to_wide",
]
