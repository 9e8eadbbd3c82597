"""How each measure and the recommendation find the right source as the sample size grows.

Checks, on ../shared/data:
- table3: the five targets' test splits against the five sources; the right source is the winner of
  the paper's Table 3 (CoNLL2003 -> 1BWB; CRAFT, JNLPBA, ScienceIE, WetLab -> MEDLINE).
- self: a held-out part of each source (2,000 random units) as a target, against the five sources
  without that part; the right source is its own.
For each size: hits of each measure (its first choice is the right source) and of the
recommendation for language models (PPL+JSD) and for word vectors (TVcC+TVC+WVV), where a tie that
includes the right source counts as "tie"; how stable each measure's first choices are between two
independent draws of the sub-corpora (seeds 13 and 14); the mean confidence; the time each size costs.

With --costs N: what the bootstrap (200 replicates) adds to scoring, and what one-thread (reproducible)
skip-gram training costs against four threads, at sample size N.

Usage: .venv/bin/python bench/bench_recommendation.py [--sizes 100000,300000,1000000] [--cache DIR] [--costs N]
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.corpus import Corpus  # noqa: E402
from simcore.matrix import Workbench  # noqa: E402
from simcore.measures import MeasureOptions, get_measure  # noqa: E402
from simcore.recommendation import recommend  # noqa: E402
from simcore.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
MEASURES = ["ppl", "jsd", "tvc", "tvcc", "wvv"]
TABLE3 = {"conll2003": "news_1bwb", "craft": "biomed_ohsumed_medline", "jnlpba": "biomed_ohsumed_medline",
          "scienceie": "biomed_ohsumed_medline", "wetlab_wlp": "biomed_ohsumed_medline"}
HELD_OUT_UNITS = 2000


def held_out_split(work: Path) -> tuple[list[Corpus], list[Corpus]]:
    """Each source without 2,000 random units, and those units as a target named after it."""
    (work / "sources").mkdir(parents=True, exist_ok=True)
    (work / "targets").mkdir(parents=True, exist_ok=True)
    for path in sorted((SHARED / "sources").glob("*.txt.gz")):
        name = path.name.removesuffix(".txt.gz")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            units = [line for line in f if line.strip()]
        held = set(random.Random(7).sample(range(len(units)), HELD_OUT_UNITS))
        (work / "sources" / f"{name}.txt").write_text("".join(u for i, u in enumerate(units) if i not in held))
        (work / "targets" / f"{name}.txt").write_text("".join(units[i] for i in sorted(held)))
    sources = [Corpus.from_path(p) for p in sorted((work / "sources").iterdir())]
    targets = [Corpus.from_path(p) for p in sorted((work / "targets").iterdir())]
    return sources, targets


def firsts(long: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(target, measure) -> the source the measure ranks first."""
    out = {}
    for (target, measure), part in long.groupby(["target", "measure"]):
        key = part["value"] * get_measure(measure).direction
        if key.notna().any():
            out[(target, measure)] = part.loc[key.idxmax(), "source"]
    return out


def score(long: pd.DataFrame, truth: dict[str, str]) -> dict[str, str]:
    """Hits per measure and per recommendation, as 'hits/n' (+ ties that include the right source)."""
    first = firsts(long)
    row = {}
    for m in MEASURES:
        row[m] = f"{sum(first.get((t, m)) == s for t, s in truth.items())}/{len(truth)}"
    for kind in ("lm", "vectors"):
        recs = {r.target: r for r in recommend(long, kind)}
        hits = sum(recs[t].recommended == [s] for t, s in truth.items())
        ties = sum(len(recs[t].recommended) > 1 and s in recs[t].recommended for t, s in truth.items())
        confidence = pd.Series([recs[t].confidence for t in truth]).mean()
        row[f"rec_{kind}"] = f"{hits}/{len(truth)}" + (f" +{ties} tie" if ties else "") + f" ({confidence:.0%})"
    return row


def costs(store: ArtefactStore, sources: list[Corpus], targets: list[Corpus], size: int) -> None:
    """What the bootstrap and reproducible WVV cost: warm scoring with and without replicates, and
    skip-gram training with one thread (reproducible) and four."""
    rows = []
    for bootstrap in (0, 200):
        bench = Workbench(store, options=MeasureOptions(bootstrap=bootstrap, seed=21))
        bench.matrix(sources, targets[:1], ["ppl", "jsd", "tvc"], sample_tokens=size)  # prepare (not timed)
        start = time.perf_counter()
        bench.matrix(sources, targets[1:], ["ppl", "jsd", "tvc"], sample_tokens=size)
        rows.append({"what": f"score {len(targets) - 1} targets x {len(sources)} sources (PPL, JSD, TVC), "
                             f"bootstrap {bootstrap}", "seconds": round(time.perf_counter() - start, 1)})
    for workers in (1, 4):
        bench = Workbench(store, options=MeasureOptions(wvv_workers=workers, seed=31 + workers))
        source = bench.source(sources[0], size, 1)[0]
        start = time.perf_counter()
        get_measure("wvv").prepare(source)
        rows.append({"what": f"skip-gram on {source.sample.n_tokens:,} tokens, {workers} thread(s)"
                             + (" (reproducible)" if workers == 1 else ""),
                     "seconds": round(time.perf_counter() - start, 1)})
    print(pd.DataFrame(rows).to_string(index=False), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--cache", default=str(ROOT / "bench" / "out" / "cache-recommendation"))
    parser.add_argument("--costs", type=int, default=0, metavar="TOKENS",
                        help="only time the bootstrap and reproducible WVV at this sample size")
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        sys.exit("../shared/data is not present")
    store = ArtefactStore(Path(args.cache))
    sources = [Corpus.from_path(p) for p in sorted((SHARED / "sources").glob("*.txt.gz"))]
    targets = [Corpus.from_path(SHARED / "targets" / t / "test.conll", name=t) for t in TABLE3]
    if args.costs:
        costs(store, sources, targets, args.costs)
        return
    work = Path(tempfile.mkdtemp(prefix="simcore-bench-rec-"))
    held_sources, held_targets = held_out_split(work)
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        start = time.perf_counter()
        tables = {}
        for seed in (13, 14):
            bench = Workbench(store, options=MeasureOptions(seed=seed))
            tables[seed] = bench.matrix(sources, targets, MEASURES + ["ttr"], sample_tokens=size)
        table3_seconds = (time.perf_counter() - start) / 2
        start = time.perf_counter()
        held = Workbench(store).matrix(held_sources, held_targets, MEASURES, sample_tokens=size)
        self_seconds = time.perf_counter() - start
        a, b = firsts(tables[13]), firsts(tables[14])
        stability = {m: f"{sum(a.get((t, m)) == b.get((t, m)) for t in TABLE3)}/{len(TABLE3)}" for m in MEASURES}
        rows.append({"size": f"{size:,}", "check": "table3", **score(tables[13], TABLE3),
                     "seconds": round(table3_seconds)})
        rows.append({"size": f"{size:,}", "check": "self", **score(held, {c.name: c.name for c in held_sources}),
                     "seconds": round(self_seconds)})
        rows.append({"size": f"{size:,}", "check": "stable (2 draws)", **stability, "seconds": None})
        print(pd.DataFrame(rows[-3:]).to_string(index=False), flush=True)
    print("\nHits: the measure's first choice is the right source; rec_lm/rec_vectors: the recommendation "
          "(ties that include the right source, and the mean confidence, in brackets). Stable: the same first "
          "choice on two independent draws of the sub-corpora. Seconds: cold matrix time per draw.\n")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(rows).fillna("").to_string(index=False))


if __name__ == "__main__":
    main()
