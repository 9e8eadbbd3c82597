"""Collect what bench/lm_outcomes_gpu.py wrote on the GPU machine into bench/results/lm_outcomes/.

The device returns at most a few files per call: runs of a target whose CSV did not come back are
read from ``log.txt``, where every finished run is logged (F1 to 2 decimals, seconds to 1; precision
and recall are then empty). Writes ``runs.csv`` (one row per run), ``adaptation.csv`` and copies the log.

Usage: .venv/bin/python bench/collect_lm_outcomes.py DEVICE_OUT_DIR [--into bench/results/lm_outcomes]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(
    r"^\[[\d:]+\] (?P<target>\S+) (?P<source>\S+) seed (?P<seed>\d+): F1 (?P<f1>[\d.]+) "
    r"\((?P<seconds>[\d.]+) s\)$"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device_out")
    parser.add_argument("--into", default=str(ROOT / "bench" / "results" / "lm_outcomes"))
    args = parser.parse_args()
    src, into = Path(args.device_out), Path(args.into)
    into.mkdir(parents=True, exist_ok=True)
    frames = [pd.read_csv(p).assign(from_file="csv") for p in sorted([*src.glob("runs_*.csv"), *src.glob("runs.csv")])]
    have = {t for f in frames for t in f["target"].unique()}
    logged = [
        m.groupdict() for m in map(LINE.match, (src / "log.txt").read_text().splitlines()) if m
    ]
    extra = pd.DataFrame([r for r in logged if r["target"] not in have])
    if len(extra):
        template = frames[0].iloc[0] if frames else None
        extra = extra.astype({"seed": int, "f1": float, "seconds": float}).assign(from_file="log")
        if template is not None:  # the caps and device are the run's (the same for every worker)
            extra["caps"], extra["device"] = template["caps"], template["device"]
        frames.append(extra)
    runs = pd.concat(frames, ignore_index=True).sort_values(["target", "source", "seed"])
    runs.to_csv(into / "runs.csv", index=False)
    adapt = [json.loads(p.read_text()) for p in sorted(src.glob("adapt_*.json"))]
    if (src / "adaptation.json").is_file():  # the merged file of a run that ended normally
        adapt += json.loads((src / "adaptation.json").read_text())
    pd.DataFrame(adapt).to_csv(into / "adaptation.csv", index=False)
    shutil.copy(src / "log.txt", into / "log.txt")
    print(
        f"{len(runs)} runs ({(runs['from_file'] == 'log').sum()} read from the log), {len(adapt)} adaptations "
        f"-> {into}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
