"""The audit on measured outcomes, per pretraining kind: would each measure, and the rule, have
chosen well?

A measured outcome table (:mod:`simcore.outcomes`: per kind, target and source, the mean F1 over
seeds and its spread) is audited kind by kind with :func:`.audit.audit`: the word-vector probe's
outcomes against every measure and the word-vector rule (``recommended (vectors)``), the LM probe's
against every measure and the LM rule. Pairs of sources whose F1 differ by less than
``sqrt(std_a² + std_b²)`` (their seed spreads) are ties, left out of the decision accuracy. The
no-pretraining baseline is not a source and is left out.
"""

from __future__ import annotations

import pandas as pd

from ..utils.errors import TableError
from .audit import audit
from .correlation import results_frame

BASELINE = "(none)"


def audit_by_kind(
    long: pd.DataFrame,
    measured: pd.DataFrame,
    *,
    measures: list[str] | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """The audit table (:data:`.audit.COLUMNS`) per kind of ``measured``, ``kind`` column first."""
    needed = {"kind", "target", "source", "f1", "f1_std"}
    if not needed <= set(measured.columns):
        raise TableError(f"the outcome table needs the columns {', '.join(sorted(needed))}")
    parts = []
    for kind, part in measured.groupby("kind", sort=False):
        results = results_frame(
            part[part["source"] != BASELINE][["target", "source", "f1", "f1_std"]]
        )
        table = audit(
            long, results, measures, pretraining=[str(kind)], bootstrap=bootstrap, seed=seed
        )
        frame = pd.DataFrame(table.to_dict(orient="list"))  # without attrs (left_out is a frame)
        parts.append(frame.assign(kind=kind))
    if not parts:
        raise TableError("the outcome table has no rows")
    out = pd.concat(parts, ignore_index=True)
    return out[["kind", *[c for c in out.columns if c != "kind"]]]
