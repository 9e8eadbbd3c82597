"""Writes simcore/analysis/sampling_quantiles.json: the simulated quantiles of r that small-sample
correlation intervals are read from (simcore.analysis.correlation.simulate_quantiles, for 3-9 pairs,
Pearson and Spearman), so that no process simulates them again (0.2-0.6 s each: a server's first
Predictiveness page paid several). Floats are written as Python writes them, which reads back
exactly; tests/test_correlation_table.py checks the file against a new simulation.

Usage: .venv/bin/python bench/sampling_table.py   (after a change to the simulation)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.analysis.correlation import SAMPLING_TABLE, TABLED, simulate_quantiles  # noqa: E402


def main() -> None:
    table = {}
    for n in TABLED:
        for kind in ("pearson", "spearman"):
            low, high = simulate_quantiles(n, kind)
            table[f"{n} {kind}"] = [low.tolist(), high.tolist()]
    SAMPLING_TABLE.write_text(json.dumps(table, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{SAMPLING_TABLE.relative_to(ROOT)}: {len(table)} tables of {len(low)} grid points")


if __name__ == "__main__":
    main()
